//! The cost of a miss: an edit whose `old_string` is not in the file (one
//! token misremembered) answered with the diagnosis, against the successful
//! edit of the same file, and the peak RSS of a process doing the miss.

use super::{
    BenchOptions, blind_session, child_peak_rss, marker_edit, marker_edits, median, name, sample,
    show, text_file, timed,
};
use anyhow::{Result, bail};
use dsh_fs::DynProvider;
use dsh_fs::Runtime;
use std::path::Path;
use std::sync::Arc;

/// Prints the figure for each size up to 100 MiB.
pub(super) fn figure(
    opts: &BenchOptions,
    runtime: &Runtime,
    provider: &Arc<DynProvider>,
    exe: &Path,
    sizes: &[u64],
) -> Result<()> {
    let sizes: Vec<u64> = sizes.iter().copied().filter(|&m| m <= 100).collect();
    if sizes.is_empty() {
        return Ok(());
    }
    println!("\nedit miss (one token misremembered) diagnosed vs the successful edit, same file");
    for mib in sizes {
        let file = text_file(&opts.dir, mib)?;
        let mut s = blind_session(runtime, provider.clone())?;
        let miss = marker_edit(&name(&file), mib, "MARKED", "EDITED");
        let misses = sample(opts.reps, || {
            timed(|| {
                let r = s.execute("edit", &miss);
                if r.error.as_ref().map(|e| e.code.as_str()) != Some("FS_EDIT_NOT_FOUND")
                    || !r.text.contains("`MARKER` where old_string has `MARKED`")
                {
                    bail!("the miss was not diagnosed: {}", r.text);
                }
                Ok(())
            })
        })?;
        // Flip the marker back and forth, so each edit finds its text.
        let (there, back) = marker_edits(&name(&file), mib);
        let mut flip = false;
        let edits = sample(opts.reps, || {
            let args = if flip { &back } else { &there };
            flip = !flip;
            timed(|| {
                let r = s.execute("edit", args);
                if r.is_error {
                    bail!("edit failed: {}", r.text);
                }
                Ok(())
            })
        })?;
        if flip {
            let r = s.execute("edit", &back);
            if r.is_error {
                bail!("edit failed: {}", r.text);
            }
        }
        let rss = child_peak_rss(
            exe,
            &opts.dir,
            &["call", "edit", &miss, "--no-policy", "--root"],
        )?;
        println!(
            "  {:>5} MiB  miss {}  edit {}  ratio {:.2}x  peak RSS {} MiB",
            mib,
            show(&misses),
            show(&edits),
            median(&misses).as_secs_f64() / median(&edits).as_secs_f64(),
            rss / 1024
        );
    }
    Ok(())
}

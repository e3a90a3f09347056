//! The object-store figure of `dsh-fs bench --store`: an edit of one line in
//! a large object, timed against uploading the same bytes, with the peak RSS
//! of the `dsh-fs` process that edits.

use super::{marker, median, sample, show, text_file, timed};
use crate::provider::{BucketStore, S3Options};
use anyhow::{Context, Result, bail};
use dsh_fs_core::store::{ByteStore, Guard, Replace};
use std::io::Read;
use std::path::Path;
use std::process::Command;

/// Where the object-store figure runs.
#[derive(Clone, Debug)]
pub struct StoreBench {
    /// `s3://BUCKET/PREFIX`; the bucket must exist.
    pub url: String,
    /// The endpoint (e.g. a local moto or MinIO), else the AWS environment's.
    pub endpoint: Option<String>,
    /// Size of the object in MiB.
    pub mib: u64,
}

/// Uploads the `mib` MiB text file as `bench-MIB.txt` (the baseline), then
/// edits its marker line with `dsh-fs call edit` in a child process.
pub(super) fn figure(exe: &Path, dir: &Path, store: &StoreBench, reps: usize) -> Result<()> {
    let options = S3Options {
        endpoint: store.endpoint.clone(),
        region: None,
    };
    let bucket = BucketStore::from_url(&store.url, &options)?;
    let file = text_file(dir, store.mib)?;
    let key = format!("bench-{}mib.txt", store.mib);
    let target = crate::Target::new(key.clone(), key.clone());
    println!(
        "edit of the marker line in a {} MiB object ({}) vs uploading it",
        store.mib, store.url
    );
    let uploads = sample(reps, || timed(|| upload(&bucket, &target, &file)))?;
    let marker = marker(store.mib);
    let mut flip = false;
    let mut peaks = Vec::new();
    let edits = sample(reps, || {
        let (from, to) = if flip {
            ("EDITED", "MARKER")
        } else {
            ("MARKER", "EDITED")
        };
        flip = !flip;
        let args = serde_json::json!({
            "file_path": key,
            "old_string": marker.replace("MARKER", from),
            "new_string": marker.replace("MARKER", to),
        })
        .to_string();
        let mut cmd = Command::new(exe);
        cmd.args(["call", "edit", &args, "--no-policy", "--store", &store.url])
            .env("DSH_FS_STATS", "1");
        if let Some(endpoint) = &store.endpoint {
            cmd.args(["--endpoint", endpoint]);
        }
        let mut stderr = String::new();
        let time = timed(|| {
            let out = cmd.output().context("spawning dsh-fs call edit")?;
            stderr = String::from_utf8_lossy(&out.stderr).into_owned();
            if !out.status.success() {
                bail!(
                    "the edit failed: {}{stderr}",
                    String::from_utf8_lossy(&out.stdout)
                );
            }
            Ok(())
        })?;
        let peak: u64 = stderr
            .split_once("peak_rss_kib=")
            .and_then(|(_, v)| v.trim().parse().ok())
            .with_context(|| format!("no peak RSS reported: {stderr}"))?;
        peaks.push(peak);
        Ok(time)
    })?;
    let peak = peaks.iter().max().copied().unwrap_or(0);
    println!(
        "  {:>5} MiB  edit {}  upload {}  ratio {:.2}x  peak RSS {} MiB",
        store.mib,
        show(&edits),
        show(&uploads),
        median(&edits).as_secs_f64() / median(&uploads).as_secs_f64(),
        peak / 1024
    );
    Ok(())
}

/// Streams `file` into the store at `target` (in parts), unconditionally.
fn upload(store: &BucketStore, target: &crate::Target, file: &Path) -> Result<()> {
    let (mut replace, _) = store.replace(target, true)?;
    let mut from = std::fs::File::open(file)?;
    let mut buf = vec![0u8; 1 << 20];
    loop {
        match from.read(&mut buf)? {
            0 => break,
            n => replace.write(&buf[..n])?,
        }
    }
    replace.commit(Guard::None)?;
    Ok(())
}

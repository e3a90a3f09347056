//! The object-store figure of `dsh-fs bench --store`: an edit of one line in
//! a large object, timed against uploading the same bytes, with the peak RSS
//! of this process while it edits.

use super::{blind_session, expect_ok, marker_edits, median, sample, show, text_file, timed};
use anyhow::{Context, Result};
use dsh_fs::{BucketStore, S3Options};
use dsh_fs_core::store::{ByteStore, Guard, Replace};
use std::io::Read;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

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
/// edits its marker line through the component.
pub(super) fn figure(dir: &Path, store: &StoreBench, reps: usize) -> Result<()> {
    let options = S3Options {
        endpoint: store.endpoint.clone(),
        region: None,
    };
    let bucket = BucketStore::from_url(&store.url, &options)?;
    let file = text_file(dir, store.mib)?;
    let key = format!("bench-{}mib.txt", store.mib);
    let target = dsh_fs::Target::new(key.clone(), key.clone());
    println!(
        "edit of the marker line in a {} MiB object ({}) vs uploading it",
        store.mib, store.url
    );
    let uploads = sample(reps, || timed(|| upload(&bucket, &target, &file)))?;
    // The edit runs in this process, whose peak RSS is reset just before
    // it, with a call timeout long enough for a slow server (moto).
    let limits = dsh_fs::Limits {
        call_timeout: Duration::from_secs(1800),
        ..dsh_fs::Limits::default()
    };
    let runtime = dsh_fs::Runtime::builder().limits(limits).build()?;
    let layer = Arc::new(dsh_fs::ObjectStoreProvider::new(BucketStore::from_url(
        &store.url, &options,
    )?));
    let mut session = blind_session(&runtime, layer)?;
    let (there, back) = marker_edits(&key, store.mib);
    let mut flip = false;
    let mut peaks = Vec::new();
    let edits = sample(reps, || {
        let args = if flip { &back } else { &there };
        flip = !flip;
        std::fs::write("/proc/self/clear_refs", "5").context("resetting the peak RSS")?;
        let time = timed(|| expect_ok(session.execute("edit", args)))?;
        peaks.push(peak_rss_kib()?);
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
fn upload(store: &BucketStore, target: &dsh_fs::Target, file: &Path) -> Result<()> {
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

/// This process's peak resident memory (`VmHWM`), in KiB.
fn peak_rss_kib() -> Result<u64> {
    let status = std::fs::read_to_string("/proc/self/status")?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .context("no VmHWM in /proc/self/status")
}

//! Directory listing on the local disk: one `readdir` through the root's
//! `cap_std::fs::Dir`, each entry stat'ed without following links.

use super::{map_io, rel_path};
use cap_std::fs::{Dir, Metadata, MetadataExt};
use dsh_fs_core::listing::{Collector, Entries, not_a_directory};
use dsh_fs_core::{DirEntryKind, FsError};
use std::io;

/// Like `std::fs::read_dir` on `key`, but only inside `root`, never following
/// a symlink, sorted by name and bounded by the collector's entry cap.
pub(super) fn list(root: &Dir, key: &str, shown: &str) -> Result<Entries, FsError> {
    let path = rel_path(key);
    let meta = root.symlink_metadata(path).map_err(|e| map_io(e, shown))?;
    if !meta.is_dir() {
        return Err(not_a_directory(shown));
    }
    let dir = root.open_dir(path).map_err(|e| map_io(e, shown))?;
    let mut found = Collector::new(shown);
    for entry in dir.entries().map_err(|e| map_io(e, shown))? {
        let entry = entry.map_err(|e| map_io(e, shown))?;
        let meta = match entry.metadata() {
            Ok(meta) => meta,
            // Removed between `readdir` and the stat: no longer an entry.
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(map_io(e, shown)),
        };
        let name = entry.file_name().into_string().ok();
        found.push(name, kind(&meta), meta.len(), modified(&meta))?;
    }
    Ok(found.finish())
}

fn kind(meta: &Metadata) -> DirEntryKind {
    let t = meta.file_type();
    dsh_fs_core::listing::kind(t.is_symlink(), t.is_dir(), t.is_file())
}

fn modified(meta: &Metadata) -> Option<u64> {
    let secs = u64::try_from(meta.mtime()).ok()?;
    let nanos = u64::try_from(meta.mtime_nsec()).ok()?;
    secs.checked_mul(1_000_000_000)?.checked_add(nanos)
}

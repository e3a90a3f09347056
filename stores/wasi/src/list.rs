//! Directory listing over `std::fs::read_dir` (`wasi:filesystem`
//! `read-directory` inside a WASI runtime), entries stat'ed without
//! following links.

use crate::store::map_io;
use dsh_fs_core::FsError;
use dsh_fs_core::listing::{Collector, Entries, kind_of, modified_ns, not_a_directory};
use std::fs;
use std::io;
use std::path::Path;

/// The entries of the directory at `path` in byte order of their names;
/// like `std::fs::read_dir`, but never following a symlink. `not-found` when
/// missing, `not-directory` for anything but a directory, `too-large` beyond
/// the entry cap.
pub(crate) fn list(path: &Path, shown: &str) -> Result<Entries, FsError> {
    let meta = fs::symlink_metadata(path).map_err(|e| map_io(e, shown))?;
    if !meta.is_dir() {
        return Err(not_a_directory(shown));
    }
    let mut found = Collector::new(shown);
    for entry in fs::read_dir(path).map_err(|e| map_io(e, shown))? {
        let entry = entry.map_err(|e| map_io(e, shown))?;
        let meta = match fs::symlink_metadata(entry.path()) {
            Ok(meta) => meta,
            // Removed between the directory read and the stat.
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(map_io(e, shown)),
        };
        let name = entry.file_name().into_string().ok();
        found.push(name, kind_of(&meta), meta.len(), modified_ns(&meta))?;
    }
    Ok(found.finish())
}

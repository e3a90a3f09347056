//! Directory listing over `std::fs::read_dir` (`wasi:filesystem`
//! `read-directory` inside a WASI runtime), entries stat'ed without
//! following links.

use crate::store::map_io;
use dsh_fs_core::listing::{Collector, SortedListing, not_a_directory};
use dsh_fs_core::{DirEntryKind, FsError};
use std::fs::{self, Metadata};
use std::io;
use std::path::Path;
use std::time::UNIX_EPOCH;

/// The entries of the directory at `path` in byte order of their names;
/// like `std::fs::read_dir`, but never following a symlink. `not-found` when
/// missing, `not-directory` for anything but a directory, `too-large` beyond
/// the entry cap.
pub(crate) fn list(path: &Path, shown: &str) -> Result<SortedListing, FsError> {
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
        found.push(name, kind(&meta), meta.len(), modified(&meta))?;
    }
    Ok(found.finish())
}

fn kind(meta: &Metadata) -> DirEntryKind {
    let t = meta.file_type();
    if t.is_symlink() {
        DirEntryKind::Symlink
    } else if t.is_dir() {
        DirEntryKind::Directory
    } else if t.is_file() {
        DirEntryKind::File
    } else {
        DirEntryKind::Other
    }
}

fn modified(meta: &Metadata) -> Option<u64> {
    let since = meta.modified().ok()?.duration_since(UNIX_EPOCH).ok()?;
    u64::try_from(since.as_nanos()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::WasiProvider;
    use crate::tests::{scratch, symlink};
    use dsh_fs_core::ErrorCode;

    fn names(p: &WasiProvider, path: &str, page: u32) -> Vec<(String, DirEntryKind, u64)> {
        let mut listing = p.list_dir(&p.resolve(path).unwrap()).unwrap();
        let mut out = Vec::new();
        loop {
            let got = listing.next_entries(page);
            if got.is_empty() {
                return out;
            }
            out.extend(got.into_iter().map(|e| (e.name, e.kind, e.size)));
        }
    }

    #[test]
    fn lists_in_name_order_without_following_links() {
        let tmp = scratch();
        let root = tmp.path().join("root");
        fs::create_dir_all(root.join("sub")).unwrap();
        fs::write(root.join("b.txt"), "bb").unwrap();
        fs::write(root.join("B.txt"), "B").unwrap();
        fs::write(tmp.path().join("secret"), "x").unwrap();
        symlink("../secret", root.join("out")).unwrap();
        symlink("loop", root.join("loop")).unwrap();
        let p = WasiProvider::new(crate::WasiStore::new(&root).unwrap());
        use DirEntryKind::*;
        let want = [
            ("B.txt", File, 1),
            ("b.txt", File, 2),
            ("loop", Symlink, 0),
            ("out", Symlink, 0),
            ("sub", Directory, 0),
        ];
        let want: Vec<_> = want
            .iter()
            .map(|(n, k, s)| (n.to_string(), *k, *s))
            .collect();
        assert_eq!(names(&p, ".", 2), want);
        assert!(names(&p, "sub", 1).is_empty());
        let code = |path: &str| {
            p.resolve(path)
                .and_then(|t| p.list_dir(&t))
                .unwrap_err()
                .code
        };
        assert_eq!(code("b.txt"), ErrorCode::NotDirectory);
        assert_eq!(code("missing"), ErrorCode::NotFound);
        assert_eq!(code("out"), ErrorCode::SandboxDenied);
    }
}

//! A [`Tree`] over a directory of the local disk with `std::fs` (native and
//! WASI alike). Links are reported as links and never followed, also when a
//! path given to it passes through one; names that are not UTF-8 are skipped.
//!
//! It resolves every path again by name, so it is confined against the tree
//! as it is, not against a neighbour swapping a directory for a link between
//! two calls, and it does not refuse hard-linked files: it is the portable
//! walk's baseline for tests and `dsh-fs bench`. The local store's own search
//! (`dsh-fs-store-local`) walks held descriptors and applies `read`'s
//! checks.

use crate::tree::{DirEntry, DirEntryKind, Tree};
use dsh_fs_core::listing::{kind_of, modified_ns};
use dsh_fs_core::{FsError, seam::from_io};
use std::fs::{self, File};
use std::io::Read;
use std::path::{Path, PathBuf};

/// The files below one root directory.
#[derive(Clone, Debug)]
pub struct LocalTree {
    root: PathBuf,
}

impl LocalTree {
    /// A tree rooted at `root`.
    pub fn new(root: impl Into<PathBuf>) -> LocalTree {
        LocalTree { root: root.into() }
    }

    fn full(&self, path: &str) -> PathBuf {
        if path.is_empty() {
            self.root.clone()
        } else {
            self.root.join(path)
        }
    }

    /// Whether a directory on the way to `path` is a link.
    fn through_link(&self, path: &str) -> bool {
        let mut at = self.root.clone();
        let mut parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
        parts.pop();
        parts.into_iter().any(|part| {
            at.push(part);
            fs::symlink_metadata(&at).is_ok_and(|m| m.file_type().is_symlink())
        })
    }
}

impl Tree for LocalTree {
    fn list(&self, dir: &str) -> Result<Vec<DirEntry>, FsError> {
        if self.through_link(&format!("{dir}/")) {
            return Err(FsError::sandbox_denied(dir));
        }
        let full = self.full(dir);
        let mut out = Vec::new();
        for item in fs::read_dir(&full).map_err(|e| from_io(&e, dir))? {
            let item = item.map_err(|e| from_io(&e, dir))?;
            let Ok(name) = item.file_name().into_string() else {
                continue;
            };
            let Ok(meta) = item.metadata() else {
                continue;
            };
            let kind = kind_of(&meta);
            let size = if kind == DirEntryKind::File {
                meta.len()
            } else {
                0
            };
            out.push(DirEntry {
                name,
                kind,
                size,
                modified: modified_ns(&meta),
            });
        }
        out.sort_unstable_by(|a, b| a.name.cmp(&b.name));
        Ok(out)
    }

    fn kind(&self, path: &str) -> Result<Option<DirEntryKind>, FsError> {
        if self.through_link(path) {
            return Ok(Some(DirEntryKind::Symlink));
        }
        match fs::symlink_metadata(self.full(path)) {
            Ok(meta) => Ok(Some(kind_of(&meta))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(from_io(&e, path)),
        }
    }

    fn open(&self, path: &str) -> Result<Box<dyn Read + '_>, FsError> {
        if self.through_link(path) {
            return Err(FsError::sandbox_denied(path));
        }
        open_nofollow(&self.full(path))
            .map(|f| Box::new(f) as Box<dyn Read>)
            .map_err(|e| from_io(&e, path))
    }
}

/// Opens a file for reading, refusing a link in the last component (and never
/// blocking on a FIFO, on Unix).
fn open_nofollow(path: &Path) -> std::io::Result<File> {
    let mut options = fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    options.open(path)
}

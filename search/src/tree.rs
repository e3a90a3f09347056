//! The seam discovery walks: one directory listed at a time in name order, and a
//! file's bytes as a reader. It mirrors the store's `list-dir` and ranged reads,
//! so every backend that has those can be searched.

pub use dsh_fs_core::{DirEntry, DirEntryKind};
use dsh_fs_core::{ErrorCode, FsError};
use std::io::Read;

/// A tree discovery can walk. Paths are relative to the tree's root, components
/// joined by `/`, and `""` is the root itself; they never contain `.` or `..`.
pub trait Tree {
    /// The entries of directory `dir` in byte order of their names, without `.`
    /// and `..`; like `list-dir`: missing is `not-found`, a file `not-directory`.
    fn list(&self, dir: &str) -> Result<Vec<DirEntry>, FsError>;

    /// What `path` is, links not followed; `None` when it does not exist.
    fn kind(&self, path: &str) -> Result<Option<DirEntryKind>, FsError>;

    /// A reader over the bytes of file `path`. Its errors carry an [`FsError`]
    /// (see [`io_error`] and [`fs_error`]).
    fn open(&self, path: &str) -> Result<Box<dyn Read + '_>, FsError>;
}

/// `path` joined under `dir` (`""` is the root).
pub fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_owned()
    } else {
        format!("{dir}/{name}")
    }
}

/// An [`FsError`] carried through `std::io::Read`.
pub fn io_error(e: FsError) -> std::io::Error {
    std::io::Error::other(e)
}

/// The [`FsError`] inside an I/O error made by [`io_error`], or an `io-error`.
pub fn fs_error(e: std::io::Error, path: &str) -> FsError {
    match e
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<FsError>())
    {
        Some(fs) => fs.clone(),
        None => FsError::new(ErrorCode::IoError, format!("{path}: {e}")),
    }
}

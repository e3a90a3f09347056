//! [`WasiStore`]: the byte store over one root directory, reached through
//! `std::fs` (`wasi:filesystem` inside a WASI runtime). It knows bytes only;
//! [`dsh_fs_core::layer::TextLayer`] serves the provider contract over it.

use crate::object::{self, WasiObject};
use crate::replace::{self, WasiReplace};
use crate::{list, meta, resolve};
use dsh_fs_core::listing::Entries;
use dsh_fs_core::store::{ByteStore, ObjectMeta, Target};
use dsh_fs_core::{EntryKind, ErrorCode, FsError};
use std::io;
use std::path::{Path, PathBuf};

/// A workspace rooted at one directory.
///
/// Inside a WASI runtime the root is a guest path under a preopened
/// directory and the runtime confines every access to the preopens; the
/// store adds its own symlink checks when it gives a path its identity, so
/// the model gets `sandbox-denied` for symlinks that lead out, at any depth
/// (the text layer refuses `..` and absolute paths outside the root).
#[derive(Debug)]
pub struct WasiStore {
    /// The root, alone: the one absolute spelling model paths may begin with.
    roots: [PathBuf; 1],
    /// Where commits take their locks, when instances may run at once.
    locks: Option<PathBuf>,
}

impl WasiStore {
    /// Opens `root`, an absolute path naming an existing directory, as the workspace.
    pub fn new(root: impl Into<PathBuf>) -> Result<Self, FsError> {
        let root = root.into();
        let unavailable = |why: &str| {
            FsError::new(
                ErrorCode::IoError,
                format!(
                    "the workspace root {} {why}; grant it to the runtime \
                     (wasmtime run --dir HOST_DIR::{})",
                    root.display(),
                    root.display()
                ),
            )
        };
        if !root.is_absolute() {
            return Err(FsError::new(
                ErrorCode::InvalidInput,
                format!("the workspace root {} is not absolute", root.display()),
            ));
        }
        match meta::stat_path(&root) {
            Ok(st) if st.kind == EntryKind::Directory => Ok(WasiStore {
                roots: [root],
                locks: None,
            }),
            Ok(_) => Err(unavailable("is not a directory")),
            Err(e) => Err(unavailable(&format!("cannot be opened ({e})"))),
        }
    }

    /// Opens the root named by the environment variable [`crate::ROOT_ENV`],
    /// or [`crate::DEFAULT_ROOT`] when it is unset or empty.
    pub fn from_env() -> Result<Self, FsError> {
        match std::env::var(crate::ROOT_ENV) {
            Ok(root) if !root.is_empty() => Self::new(root),
            _ => Self::new(crate::DEFAULT_ROOT),
        }
    }

    /// Makes every commit take a lock file in `dir` (outside the root),
    /// so instances sharing `dir` never interleave two commits of one file:
    /// for runtimes that run calls in instances of their own at once. Without
    /// it a commit is guarded by a `stat` right before its rename only.
    pub fn with_lock_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.locks = Some(dir.into());
        self
    }

    /// The lock directory, if commits take locks.
    pub(crate) fn lock_dir(&self) -> Option<&Path> {
        self.locks.as_deref()
    }

    /// The root directory.
    pub fn root(&self) -> &Path {
        &self.roots[0]
    }

    /// The path of a root-relative key.
    pub(crate) fn path(&self, key: &str) -> PathBuf {
        if key.is_empty() {
            self.root().to_path_buf()
        } else {
            self.root().join(key)
        }
    }
}

impl ByteStore for WasiStore {
    type Object = WasiObject;
    type Replace<'s> = WasiReplace;
    type Listing = Entries;

    fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    /// The key with every symlink inside the root resolved; components past
    /// the first missing one are kept as they are.
    fn identity(&self, rel: &str, shown: &str) -> Result<String, FsError> {
        resolve::canonical(self, rel, shown)
    }

    /// Like `std::fs::metadata`, but only under the root.
    fn stat(&self, target: &Target) -> Result<Option<ObjectMeta>, FsError> {
        match meta::stat_path(&self.path(target.key())) {
            Ok(meta) => Ok(Some(meta)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(map_io(e, target.display_path())),
        }
    }

    fn open(&self, target: &Target) -> Result<WasiObject, FsError> {
        object::open_regular(&self.path(target.key()), target.display_path())
    }

    fn list_dir(&self, target: &Target) -> Result<Entries, FsError> {
        list::list(&self.path(target.key()), target.display_path())
    }

    /// Opens what is there and prepares a temp file beside it. WASI has no
    /// locks: the guard is checked again right before the rename instead.
    fn replace(
        &self,
        target: &Target,
        create_parents: bool,
    ) -> Result<(WasiReplace, Option<WasiObject>), FsError> {
        replace::begin(self, target, create_parents)
    }
}

/// Maps an I/O error to the seam's codes. A WASI runtime reports a path that
/// would leave its preopens (a symlink pointing out) as `EPERM`.
pub(crate) fn map_io(e: io::Error, shown: &str) -> FsError {
    match e.raw_os_error() {
        Some(libc::EPERM) => FsError::sandbox_denied(shown),
        Some(libc::ELOOP) => dsh_fs_core::seam::symlink_loop(shown),
        _ => dsh_fs_core::seam::from_io(&e, shown),
    }
}

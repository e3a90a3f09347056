//! The provider seam on the host side. [`Provider`] is the contract every
//! backend implements (its docs restate `wit/provider.wit`); the runtime binds
//! it to the component's `dsh:fs/provider` import.
//!
//! Backends: [`LocalProvider`] (a directory on disk, confined with cap-std),
//! [`MemoryProvider`] (a virtual workspace) and [`ObjectStoreProvider`] (a
//! bucket prefix, compare-and-swap by ETag). They share the helpers at the
//! end of this file, so freshness means the same thing everywhere: a caller's
//! version is fresh while the file's content hash is the one it names.

mod local;
mod memory;
mod object_store;

pub use self::object_store::{ObjectStoreProvider, S3Options};
pub use local::LocalProvider;
pub use memory::MemoryProvider;

use dsh_fs_core::splice::Spliced;
use dsh_fs_core::{
    EditOutcome, EditRequest, ErrorCode, FsError, FsInfo, TextContent, Version, WriteIntent,
    WriteOutcome, splice,
};
use std::fmt;
use std::path::Path;

/// A filesystem backend for the tools component.
///
/// Paths are strings as the model gave them; [`Provider::resolve`] turns one
/// into a [`Target`] or refuses it. All operations are thread-safe: two
/// sessions may call them concurrently on one provider.
pub trait Provider: Send + Sync + fmt::Debug {
    /// Resolves a model path. Relative paths are relative to the root;
    /// absolute paths must lie inside it; a path that leaves the root (by
    /// `..` or a symlink) is [`ErrorCode::SandboxDenied`].
    fn resolve(&self, path: &str) -> Result<Target, FsError>;

    /// Metadata of the target or `None` if it is absent. Never reads content.
    fn stat(&self, target: &Target) -> Result<Option<FsInfo>, FsError>;

    /// The whole file as text (BOM removed) with the version of exactly those
    /// bytes. [`ErrorCode::TooLarge`] when it has more than `max_bytes` bytes,
    /// [`ErrorCode::NotText`] for invalid UTF-8 or NUL bytes,
    /// [`ErrorCode::NotRegularFile`] for anything but a regular file (without
    /// blocking on FIFOs or devices).
    fn read_text(&self, target: &Target, max_bytes: u64) -> Result<TextContent, FsError>;

    /// Like [`Provider::read_text`] in chunks, with memory bounded whatever
    /// the size, from `start` bytes into the text (after any BOM): 0, or an
    /// offset where a chunk of an earlier stream of the same version began.
    /// A stream that starts past 0 reports no version.
    fn stream_text(&self, target: &Target, start: u64) -> Result<Box<dyn TextStream>, FsError>;

    /// Atomically creates or replaces the whole file, creating parent
    /// directories and keeping an existing file's mode. `intent`:
    /// `CreateIfAbsent` on an existing file is [`ErrorCode::NotObserved`];
    /// `ReplaceIfVersion` on a missing or changed file is
    /// [`ErrorCode::StaleVersion`]; `None` writes unconditionally.
    fn write_text(
        &self,
        target: &Target,
        content: &str,
        intent: Option<WriteIntent>,
    ) -> Result<WriteOutcome, FsError>;

    /// Under the target's lock: a missing file is [`ErrorCode::StaleVersion`];
    /// with `expected`, a changed file is [`ErrorCode::StaleVersion`] before
    /// any matching; then the byte-faithful splice of [`dsh_fs_core::splice`]
    /// and an atomic rewrite.
    fn edit_text(
        &self,
        target: &Target,
        edit: &EditRequest,
        expected: Option<&str>,
    ) -> Result<EditOutcome, FsError>;
}

/// A chunked reader made by [`Provider::stream_text`].
pub trait TextStream: Send {
    /// The next chunk of at most `max_bytes` bytes of UTF-8, `None` at the end.
    fn next_chunk(&mut self, max_bytes: u32) -> Result<Option<String>, FsError>;
    /// The version of everything streamed, once `next_chunk` returned `None`.
    fn version(&self) -> Option<Version>;
}

/// A resolved path: made only by [`Provider::resolve`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    display: String,
    key: String,
}

impl Target {
    /// A target a backend resolved: `key` is its canonical root-relative
    /// locator, `display` what the model is shown.
    pub(crate) fn new(display: String, key: String) -> Self {
        Target { display, key }
    }

    /// The path shown to the model.
    pub fn display_path(&self) -> &str {
        &self.display
    }

    /// The canonical root-relative path ("" is the root itself); equal for
    /// every spelling of the same file.
    pub fn key(&self) -> &str {
        &self.key
    }
}

/// Largest chunk a stream hands out, whatever the guest asks for.
pub(crate) const MAX_CHUNK: u32 = 8 << 20;
/// Longest path accepted (Linux's `PATH_MAX`).
pub(crate) const MAX_PATH_BYTES: usize = 4096;
/// Largest file an edit loads.
pub(crate) const MAX_EDIT_BYTES: u64 = 1 << 30;

/// Turns a model path into a normalized root-relative path with `/`
/// separators, purely lexically: `.` dropped, `..` applied, absolute paths
/// accepted only under `root`.
pub(crate) fn normalize(path: &str, roots: &[std::path::PathBuf]) -> Result<String, FsError> {
    if path.is_empty() {
        return Err(FsError::new(ErrorCode::InvalidInput, "the path is empty"));
    }
    if path.len() > MAX_PATH_BYTES {
        return Err(FsError::new(
            ErrorCode::InvalidInput,
            format!(
                "the path is {} bytes long, more than the {MAX_PATH_BYTES} allowed",
                path.len()
            ),
        ));
    }
    if path.contains('\0') {
        return Err(FsError::new(
            ErrorCode::InvalidInput,
            "the path contains a NUL byte",
        ));
    }
    let relative = if Path::new(path).is_absolute() {
        let rel = roots
            .iter()
            .find_map(|root| Path::new(path).strip_prefix(root).ok())
            .ok_or_else(|| FsError::sandbox_denied(path))?;
        rel.to_str().expect("a suffix of a str is a str")
    } else {
        path
    };
    let mut parts: Vec<&str> = Vec::new();
    for part in relative.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop().ok_or_else(|| FsError::sandbox_denied(path))?;
            }
            name => parts.push(name),
        }
    }
    Ok(parts.join("/"))
}

/// The display form of a root-relative key.
pub(crate) fn display(key: &str) -> String {
    if key.is_empty() {
        ".".to_owned()
    } else {
        key.to_owned()
    }
}

/// A version token: backend metadata, then the content hash.
pub(crate) fn version(meta: &str, hash: u128) -> Version {
    format!("{meta}:{hash:032x}")
}

/// Whether `expected` still describes a file whose content hashes to
/// `hash` (metadata `meta`): the content hash decides when the token has one,
/// so a `touch` is not a change; a metadata-only token (from `stat`) must match
/// exactly.
pub(crate) fn still_fresh(expected: &str, meta: &str, hash: u128) -> bool {
    match expected.rsplit_once(':') {
        Some((_, h)) => u128::from_str_radix(h, 16).is_ok_and(|h| h == hash),
        None => expected == meta,
    }
}

/// The shared checks of a write under `intent`, given the current file (if
/// any) as `(metadata token, content hash)`.
pub(crate) fn check_write_intent(
    display: &str,
    intent: Option<&WriteIntent>,
    current: Option<(&str, u128)>,
) -> Result<(), FsError> {
    match (intent, current) {
        (None, _) | (Some(WriteIntent::CreateIfAbsent), None) => Ok(()),
        (Some(WriteIntent::CreateIfAbsent), Some(_)) => Err(FsError::new(
            ErrorCode::NotObserved,
            format!("{display} already exists and has not been read in this session"),
        )),
        (Some(WriteIntent::ReplaceIfVersion(_)), None) => Err(vanished(display)),
        (Some(WriteIntent::ReplaceIfVersion(v)), Some((meta, hash))) => {
            if still_fresh(v, meta, hash) {
                Ok(())
            } else {
                Err(FsError::stale(display))
            }
        }
    }
}

/// The shared part of an edit once the current bytes are loaded: the
/// version check (before matching), then the splice.
pub(crate) fn splice_checked(
    display: &str,
    bytes: &[u8],
    meta: &str,
    edit: &EditRequest,
    expected: Option<&str>,
) -> Result<Spliced, FsError> {
    if let Some(v) = expected
        && !still_fresh(v, meta, dsh_fs_core::text::content_hash(bytes))
    {
        return Err(FsError::stale(display));
    }
    splice::apply(bytes, edit).map_err(|e| e.into_fs_error(display))
}

/// `stale-version` for a file that is gone.
#[cold]
pub(crate) fn vanished(display: &str) -> FsError {
    FsError::new(
        ErrorCode::StaleVersion,
        format!("{display} no longer exists (it was deleted or moved since it was read)"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_is_lexical_and_confined() {
        let root = &[std::path::PathBuf::from("/work/root")];
        let ok = |p: &str| normalize(p, root).unwrap();
        let denied = |p: &str| normalize(p, root).unwrap_err().code;
        assert_eq!(ok("a/./b//c.txt"), "a/b/c.txt");
        assert_eq!(ok("a/../b.txt"), "b.txt");
        assert_eq!(ok("/work/root/x/y"), "x/y");
        assert_eq!(ok("."), "");
        assert_eq!(denied("../x"), ErrorCode::SandboxDenied);
        assert_eq!(denied("a/../../x"), ErrorCode::SandboxDenied);
        assert_eq!(denied("/etc/passwd"), ErrorCode::SandboxDenied);
        assert_eq!(denied("/work/rootx/y"), ErrorCode::SandboxDenied);
        assert_eq!(denied("/work/root/../x"), ErrorCode::SandboxDenied);
        assert_eq!(denied(""), ErrorCode::InvalidInput);
        assert_eq!(denied("a\0b"), ErrorCode::InvalidInput);
    }

    #[test]
    fn freshness_follows_content_not_metadata() {
        let v = version("m1", 42);
        assert!(still_fresh(&v, "m2", 42));
        assert!(!still_fresh(&v, "m1", 43));
        assert!(still_fresh("m1", "m1", 0));
        assert!(!still_fresh("m1", "m2", 0));
    }
}

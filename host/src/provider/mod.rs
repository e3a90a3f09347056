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
mod s3_error;

pub use self::object_store::{ObjectStoreProvider, S3Options};
pub use local::LocalProvider;
pub use memory::MemoryProvider;

use dsh_fs_core::listing::SortedListing;
use dsh_fs_core::{
    DirEntry, EditOutcome, EditRequest, FsError, FsInfo, SearchQuery, TextContent, Version,
    WriteIntent, WriteOutcome,
};
use std::fmt;

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

    /// The entries of the directory `target`, one level deep, in byte order
    /// of their names; like `std::fs::read_dir`, but never following a
    /// symlink (a link is listed as [`DirEntryKind::Symlink`](dsh_fs_core::DirEntryKind))
    /// and never reading content. [`ErrorCode::NotFound`] when it is missing,
    /// [`ErrorCode::NotDirectory`] when it is a file, [`ErrorCode::TooLarge`]
    /// beyond [`dsh_fs_core::listing::MAX_ENTRIES`] entries. Names that are
    /// not UTF-8 are skipped and counted.
    fn list_dir(&self, target: &Target) -> Result<Box<dyn Listing>, FsError>;

    /// The text `dsh-fs-search` renders for `query` below `target`, computed
    /// natively, byte for byte what the component's portable search over
    /// [`Provider::list_dir`] and [`Provider::stream_text`] would give; or
    /// `None` (the default), and the component searches through those.
    fn search(&self, target: &Target, query: &SearchQuery) -> Result<Option<String>, FsError> {
        let _ = (target, query);
        Ok(None)
    }
}

/// A one-pass reader of one directory's entries, made by [`Provider::list_dir`].
pub trait Listing: Send {
    /// The next at most `max` entries (at least one while any remain); empty
    /// at the end.
    fn next_entries(&mut self, max: u32) -> Result<Vec<DirEntry>, FsError>;
    /// How many entries were skipped because their names are not UTF-8.
    fn skipped(&self) -> u64;
}

impl Listing for SortedListing {
    fn next_entries(&mut self, max: u32) -> Result<Vec<DirEntry>, FsError> {
        Ok(SortedListing::next_entries(self, max))
    }

    fn skipped(&self) -> u64 {
        SortedListing::skipped(self)
    }
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

pub(crate) use dsh_fs_core::seam::{
    MAX_CHUNK, check_write_intent, display, normalize, splice_checked, still_fresh, vanished,
    version,
};

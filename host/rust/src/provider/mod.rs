//! The provider seam on the host side. [`Provider`] is the contract every
//! backend implements (its docs restate `wit/since_v0.1.0/provider.wit`); the runtime binds
//! it to the component's `dsh:fs/provider` import.
//!
//! Backends: [`LocalProvider`] (the text layer over [`LocalStore`], a
//! directory on disk confined with cap-std; crate `dsh-fs-store-local`),
//! [`MemoryProvider`] (a virtual workspace) and [`ObjectStoreProvider`] (a
//! bucket prefix, compare-and-swap by ETag; crate
//! `dsh-fs-store-object`). Each is [`TextLayer`] over a byte store,
//! so freshness means the same thing everywhere: a caller's version is fresh
//! while the file's content hash is the one it names.

pub use dsh_fs_core::layer::TextLayer;
pub use dsh_fs_core::store::memory::MemoryStore;
pub use dsh_fs_core::store::{ByteStore, Listing, Target, TextStream};
pub use dsh_fs_store_local::{LocalObject, LocalProvider, LocalReplace, LocalStore};
pub use dsh_fs_store_object::{BucketStore, ObjectStoreProvider, S3Options};

#[cfg(doc)]
use dsh_fs_core::ErrorCode;
use dsh_fs_core::{
    EditOutcome, EditRequest, FsError, FsInfo, PathText, SearchQuery, TextContent, WriteIntent,
    WriteOutcome,
};

/// A virtual workspace held in memory: the text layer over [`MemoryStore`].
pub type MemoryProvider = TextLayer<MemoryStore>;
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

    /// [`Provider::resolve`], then [`Provider::read_text`] of the target:
    /// a read the component asks for in one crossing. A resolve failure is
    /// the outer error; the read's outcome is [`PathText::content`].
    fn read_path(&self, path: &str, max_bytes: u64) -> Result<PathText, FsError> {
        let target = self.resolve(path)?;
        let content = self.read_text(&target, max_bytes);
        Ok(PathText::new(target, content))
    }

    /// Like [`Provider::read_text`] in chunks, with memory bounded whatever
    /// the size, from `start` bytes into the text (after any BOM): 0, or an
    /// offset where a chunk of an earlier stream of the same version began.
    /// A stream that starts past 0 reports no version.
    fn stream_text(&self, target: &Target, start: u64) -> Result<BoxStream, FsError>;

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
    fn list_dir(&self, target: &Target) -> Result<BoxListing, FsError>;

    /// The text `dsh-fs-search` renders for `query` below `target`, computed
    /// natively, byte for byte what the component's portable search over
    /// [`Provider::list_dir`] and [`Provider::stream_text`] would give; or
    /// `None` (the default), and the component searches through those.
    fn search(&self, target: &Target, query: &SearchQuery) -> Result<Option<String>, FsError> {
        let _ = (target, query);
        Ok(None)
    }
}

/// A one-pass directory reader, as [`Provider::list_dir`] hands it out.
pub type BoxListing = Box<dyn Listing + Send>;

/// A chunked text reader, as [`Provider::stream_text`] hands it out.
pub type BoxStream = Box<dyn TextStream + Send>;

/// Every byte store is a provider through the text layer.
impl<S> Provider for TextLayer<S>
where
    S: ByteStore + Send + Sync,
    S::Object: Send + 'static,
    S::Listing: Send + 'static,
{
    fn resolve(&self, path: &str) -> Result<Target, FsError> {
        TextLayer::resolve(self, path)
    }

    fn stat(&self, target: &Target) -> Result<Option<FsInfo>, FsError> {
        TextLayer::stat(self, target)
    }

    fn read_text(&self, target: &Target, max_bytes: u64) -> Result<TextContent, FsError> {
        TextLayer::read_text(self, target, max_bytes)
    }

    fn read_path(&self, path: &str, max_bytes: u64) -> Result<PathText, FsError> {
        TextLayer::read_path(self, path, max_bytes)
    }

    fn stream_text(&self, target: &Target, start: u64) -> Result<BoxStream, FsError> {
        Ok(Box::new(TextLayer::stream_text(self, target, start)?))
    }

    fn write_text(
        &self,
        target: &Target,
        content: &str,
        intent: Option<WriteIntent>,
    ) -> Result<WriteOutcome, FsError> {
        TextLayer::write_text(self, target, content, intent)
    }

    fn edit_text(
        &self,
        target: &Target,
        edit: &EditRequest,
        expected: Option<&str>,
    ) -> Result<EditOutcome, FsError> {
        TextLayer::edit_text(self, target, edit, expected)
    }

    fn list_dir(&self, target: &Target) -> Result<BoxListing, FsError> {
        Ok(Box::new(TextLayer::list_dir(self, target)?))
    }

    fn search(&self, target: &Target, query: &SearchQuery) -> Result<Option<String>, FsError> {
        TextLayer::search(self, target, query)
    }
}

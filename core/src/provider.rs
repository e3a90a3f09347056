//! The provider seam in Rust: `wit/since_v0.1.0/provider.wit` restated once,
//! for everything that speaks it natively. The tools (`dsh-fs-tools`) are
//! written against [`Provider`]; inside the component it is implemented by
//! the WIT import, natively by [`TextLayer`](crate::layer::TextLayer) over
//! any byte store, and by any backend that does text work itself. The hosts
//! serve the component's `dsh:fs/provider` import from it, and the provider
//! components export it ([`crate::wit_provider!`]).

use crate::store::Target;
pub use crate::store::{Listing, TextStream};
use crate::{
    EditOutcome, EditRequest, EditsError, ErrorCode, FsError, FsInfo, PathText, SearchQuery,
    TextContent, WriteIntent, WriteOutcome,
};
use std::fmt;

/// A filesystem the tools can use. Paths are strings as the model gave them;
/// [`Provider::resolve`] turns one into a target or refuses it. Each method
/// restates its function in `provider.wit`, where the contract is whole.
pub trait Provider: fmt::Debug {
    /// A resolved path (the WIT `target` resource).
    type Target: Resolved;
    /// A chunked reader (the WIT `text-stream` resource).
    type Stream: TextStream;
    /// A directory reader (the WIT `listing` resource).
    type Listing: Listing;

    /// Resolves a model path. Relative paths are relative to the root;
    /// absolute paths must lie inside it; a path that leaves the root (by
    /// `..` or a symlink) is `sandbox-denied`.
    fn resolve(&self, path: &str) -> Result<Self::Target, FsError>;

    /// Metadata of the target or `None` if it is absent. Never reads content.
    fn stat(&self, target: &Self::Target) -> Result<Option<FsInfo>, FsError>;

    /// The whole file as text (BOM removed) with the version of exactly those
    /// bytes: `too-large` past `max_bytes`, `not-text` for invalid UTF-8 or
    /// NUL bytes, `not-regular-file` for anything but a regular file (without
    /// blocking on FIFOs or devices).
    fn read_text(&self, target: &Self::Target, max_bytes: u64) -> Result<TextContent, FsError>;

    /// [`Provider::resolve`], then [`Provider::read_text`] of the target, in
    /// one step (one crossing of the component boundary): the resolve error,
    /// or the target's display path and key with the read's outcome.
    fn read_path(&self, path: &str, max_bytes: u64) -> Result<PathText, FsError> {
        let target = self.resolve(path)?;
        Ok(PathText {
            display_path: target.display_path(),
            key: target.key(),
            content: self.read_text(&target, max_bytes),
        })
    }

    /// Like [`Provider::read_text`] in chunks, with memory bounded whatever
    /// the size, from `start` bytes into the text (after any BOM): 0, or an
    /// offset where a chunk of an earlier stream of the same version began.
    /// A stream that starts past 0 reports no version.
    fn stream_text(&self, target: &Self::Target, start: u64) -> Result<Self::Stream, FsError>;

    /// Atomically creates or replaces the whole file, creating parent
    /// directories and keeping an existing file's mode. `intent`:
    /// `CreateIfAbsent` on an existing file is `not-observed`;
    /// `ReplaceIfVersion` on a missing or changed file is `stale-version`;
    /// `None` writes unconditionally.
    fn write_text(
        &self,
        target: &Self::Target,
        content: &str,
        intent: Option<WriteIntent>,
    ) -> Result<WriteOutcome, FsError>;

    /// The guarded, byte-faithful literal edit: a missing file is
    /// `stale-version`; with `expected`, a changed file is `stale-version`
    /// before any matching; then the splice of [`crate::splice`] and an
    /// atomic rewrite.
    fn edit_text(
        &self,
        target: &Self::Target,
        edit: &EditRequest,
        expected: Option<&str>,
    ) -> Result<EditOutcome, FsError>;

    /// Several edits of one file in one guarded, atomic step (see
    /// `edit-texts` in `provider.wit`): each matched against the text the
    /// ones before it left; a failure names the edit and changes nothing.
    /// The default serves a single edit through [`Provider::edit_text`] and
    /// refuses more: a provider that can edit in one commit overrides it.
    fn edit_texts(
        &self,
        target: &Self::Target,
        edits: &[EditRequest],
        expected: Option<&str>,
    ) -> Result<EditOutcome, EditsError> {
        let [edit] = edits else {
            return Err(FsError::new(
                ErrorCode::InvalidInput,
                "this provider applies one edit per call",
            )
            .into());
        };
        self.edit_text(target, edit, expected)
            .map_err(|error| EditsError {
                edit: matches!(
                    error.code,
                    ErrorCode::EditNotFound | ErrorCode::AmbiguousEdit | ErrorCode::InvalidInput
                )
                .then_some(0),
                error,
            })
    }

    /// Removes the file while its content is still the one at `expected`
    /// (see `remove-file` in `provider.wit`). By default a provider cannot:
    /// `invalid-input`, nothing changed.
    fn remove_file(&self, target: &Self::Target, expected: &str) -> Result<(), FsError> {
        let _ = expected;
        Err(FsError::new(
            ErrorCode::InvalidInput,
            format!(
                "{} was left in place: this provider cannot remove files",
                target.display_path()
            ),
        ))
    }

    /// The entries of the directory, one level deep, in byte order of their
    /// names; links never followed, content never read. `not-found`,
    /// `not-directory` for a file, `too-large` beyond
    /// [`crate::listing::MAX_ENTRIES`]; names that are not UTF-8 are skipped
    /// and counted.
    fn list_dir(&self, target: &Self::Target) -> Result<Self::Listing, FsError>;

    /// The text `dsh-fs-search` renders for `query` below the target when
    /// the provider searches natively — byte for byte what the tools'
    /// portable search over [`Provider::list_dir`] and
    /// [`Provider::stream_text`] gives; `None` (the default) asks for that
    /// portable search.
    fn search(
        &self,
        target: &Self::Target,
        query: &SearchQuery,
    ) -> Result<Option<String>, FsError> {
        let _ = (target, query);
        Ok(None)
    }
}

/// What a resolved target tells the tools (the methods of the WIT `target`).
pub trait Resolved {
    /// The path to show to the model.
    fn display_path(&self) -> String;
    /// The stable identity the policy keys observations by.
    fn key(&self) -> String;
}

impl Resolved for Target {
    fn display_path(&self) -> String {
        Target::display_path(self).to_owned()
    }

    fn key(&self) -> String {
        Target::key(self).to_owned()
    }
}

/// A chunked text reader of any provider that can cross threads.
pub type BoxStream = Box<dyn TextStream + Send>;

/// A directory reader of any provider that can cross threads.
pub type BoxListing = Box<dyn Listing + Send>;

/// A provider behind a pointer, shared between sessions and threads: every
/// native provider is one (the text layer over any `Send` store is).
pub type DynProvider =
    dyn Provider<Target = Target, Stream = BoxStream, Listing = BoxListing> + Send + Sync;

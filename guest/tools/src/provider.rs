//! The provider seam as the tools see it: a Rust trait mirroring
//! `dsh:fs/provider`, so the same tool logic runs over the WIT import inside
//! the component and over any native backend in tests and benchmarks.

use dsh_fs_core::{
    EditOutcome, EditRequest, FsError, FsInfo, PathText, SearchQuery, TextContent, WriteIntent,
    WriteOutcome,
};

/// A filesystem the tools can use. See `wit/since_v0.1.0/provider.wit` for the contract of
/// each operation; this trait restates it without the WIT types.
pub trait Provider {
    /// A resolved path (the WIT `target` resource).
    type Target;
    /// A chunked reader (the WIT `text-stream` resource).
    type Stream: TextStream;
    /// A directory reader (the WIT `listing` resource).
    type Listing: Listing;

    /// Turns a model path into a target, refusing paths outside the root.
    fn resolve(&self, path: &str) -> Result<Self::Target, FsError>;
    /// The path to show to the model.
    fn display_path(&self, target: &Self::Target) -> String;
    /// The stable identity the policy keys observations by.
    fn key(&self, target: &Self::Target) -> String;
    /// Metadata, or `None` when the target does not exist.
    fn stat(&self, target: &Self::Target) -> Result<Option<FsInfo>, FsError>;
    /// The whole decoded text; `too-large` beyond `max_bytes`.
    fn read_text(&self, target: &Self::Target, max_bytes: u64) -> Result<TextContent, FsError>;
    /// [`Provider::resolve`], then [`Provider::read_text`] of the target, in
    /// one step (one crossing of the component boundary): the resolve error,
    /// or the target's display path and key with the read's outcome.
    fn read_path(&self, path: &str, max_bytes: u64) -> Result<PathText, FsError> {
        let target = self.resolve(path)?;
        Ok(PathText {
            display_path: self.display_path(&target),
            key: self.key(&target),
            content: self.read_text(&target, max_bytes),
        })
    }

    /// The decoded text in chunks, from text offset `start` (0, or an offset
    /// the caller recorded while streaming the same version).
    fn stream_text(&self, target: &Self::Target, start: u64) -> Result<Self::Stream, FsError>;
    /// Atomic whole-file write under `intent`.
    fn write_text(
        &self,
        target: &Self::Target,
        content: &str,
        intent: Option<WriteIntent>,
    ) -> Result<WriteOutcome, FsError>;
    /// Guarded, byte-faithful literal edit.
    fn edit_text(
        &self,
        target: &Self::Target,
        edit: &EditRequest,
        expected: Option<&str>,
    ) -> Result<EditOutcome, FsError>;
    /// The directory's entries in byte order of their names, links not followed.
    fn list_dir(&self, target: &Self::Target) -> Result<Self::Listing, FsError>;
    /// The rendered result of `query` below `target` when the provider
    /// searches natively; `None` asks for the portable search.
    fn search(
        &self,
        target: &Self::Target,
        query: &SearchQuery,
    ) -> Result<Option<String>, FsError> {
        let _ = (target, query);
        Ok(None)
    }
}

pub use dsh_fs_core::store::{Listing, TextStream};

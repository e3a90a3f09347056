//! The provider seam as the tools see it: a Rust trait mirroring
//! `dsh:fs/provider`, so the same tool logic runs over the WIT import inside
//! the component and over any native backend in tests and benchmarks.

use dsh_fs_core::{
    DirEntry, EditOutcome, EditRequest, FsError, FsInfo, SearchQuery, TextContent, WriteIntent,
    WriteOutcome,
};

/// A filesystem the tools can use. See `wit/provider.wit` for the contract of
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

/// A one-pass reader of one directory's entries.
pub trait Listing {
    /// The next at most `max` entries; empty at the end.
    fn next_entries(&mut self, max: u32) -> Result<Vec<DirEntry>, FsError>;
    /// How many entries were skipped because their names are not UTF-8.
    fn skipped(&self) -> u64;
}

/// A chunked reader of one file's decoded text.
pub trait TextStream {
    /// The next chunk (at most `max_bytes` bytes of UTF-8), `None` at the end.
    fn next_chunk(&mut self, max_bytes: u32) -> Result<Option<String>, FsError>;
    /// The version of everything streamed; `None` before the end.
    fn version(&self) -> Option<String>;
}

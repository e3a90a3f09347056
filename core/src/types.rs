//! Value types that cross the provider seam; each mirrors a record or variant
//! of `wit/since_v0.1.0/types.wit`.

use crate::FsError;

/// Opaque freshness token made by a provider.
pub type Version = String;

/// What a path names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryKind {
    /// A regular file.
    File,
    /// A directory or object-store prefix.
    Directory,
    /// FIFO, socket, device.
    Other,
}

/// Metadata of an existing entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FsInfo {
    /// Metadata-derived version.
    pub version: Version,
    /// What the entry is.
    pub kind: EntryKind,
    /// Size in bytes, when known.
    pub size: Option<u64>,
}

/// A whole file's decoded text and the version of exactly those bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TextContent {
    /// UTF-8 text without a leading BOM.
    pub text: String,
    /// Version of the bytes decoded into `text`.
    pub version: Version,
}

/// The text a [`TextStream::skip`](crate::store::TextStream::skip) passed
/// over without handing it out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Skipped {
    /// Bytes of text passed over (whole characters).
    pub bytes: u64,
    /// Line feeds among them.
    pub lines: u64,
    /// The last byte passed over is not a line feed.
    pub mid_line: bool,
}

/// What `read-path` found at a path: the display path and key of the target
/// it resolves to, and the outcome of reading that target's whole text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathText {
    /// The path to show to the model.
    pub display_path: String,
    /// The target's stable identity.
    pub key: String,
    /// The text and its version, or why it could not be read.
    pub content: Result<TextContent, crate::FsError>,
}

impl PathText {
    /// What `read-path` answers for `target`, whose whole read gave `content`.
    pub fn new(target: crate::store::Target, content: Result<TextContent, crate::FsError>) -> Self {
        let (display_path, key) = target.into_parts();
        PathText {
            display_path,
            key,
            content,
        }
    }
}

/// The guard a write runs under.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WriteIntent {
    /// Create only; an existing file is `not-observed`.
    CreateIfAbsent,
    /// Replace only while the content is still the one at this version.
    ReplaceIfVersion(Version),
}

/// What a write did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteOperation {
    /// The file was created.
    Created,
    /// An existing file was replaced.
    Updated,
}

/// The result of a successful write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WriteOutcome {
    /// Created or updated.
    pub operation: WriteOperation,
    /// Version of the written content.
    pub version: Version,
}

/// A literal replacement inside one text file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EditRequest {
    /// Text to find (CRLF seen as LF); never empty.
    pub old_string: String,
    /// Replacement text.
    pub new_string: String,
    /// Replace every occurrence instead of exactly one.
    pub replace_all: bool,
}

impl EditRequest {
    /// A request replacing `old` by `new`.
    pub fn new(old: impl Into<String>, new: impl Into<String>, replace_all: bool) -> Self {
        EditRequest {
            old_string: old.into(),
            new_string: new.into(),
            replace_all,
        }
    }
}

/// The result of a successful edit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EditOutcome {
    /// Number of occurrences replaced.
    pub replacements: u32,
    /// Version after the edit.
    pub version: Version,
    /// 1-based line where the first replacement starts.
    pub first_line: u64,
    /// The changed lines before and after, with a line of context; `None`
    /// past [`crate::excerpt::MAX_EXCERPT_BYTES`] or for a streamed edit.
    pub excerpt: Option<EditExcerpt>,
}

/// Whole lines around a change, as they read before and after it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EditExcerpt {
    /// 1-based number of the first line of both texts.
    pub first_line: u64,
    /// The lines before the change (line endings as in the file).
    pub before: String,
    /// The same lines after it.
    pub after: String,
}

/// Why a list of edits was not applied; nothing was changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EditsError {
    /// The 0-based index of the failing edit; `None` for a failure of the
    /// file itself (missing, stale, too large, not text).
    pub edit: Option<u32>,
    /// What went wrong.
    pub error: FsError,
}

impl From<FsError> for EditsError {
    fn from(error: FsError) -> Self {
        EditsError { edit: None, error }
    }
}

/// What a directory entry is, without following links.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DirEntryKind {
    /// A regular file.
    File,
    /// A directory or object-store prefix.
    Directory,
    /// A symbolic link, never followed.
    Symlink,
    /// FIFO, socket, device.
    Other,
}

/// One entry of a directory listing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DirEntry {
    /// One path component, valid UTF-8.
    pub name: String,
    /// What the entry is, without following links.
    pub kind: DirEntryKind,
    /// Bytes for files, 0 otherwise.
    pub size: u64,
    /// Nanoseconds since the Unix epoch, when the backend knows it.
    pub modified: Option<u64>,
}

/// A discovery search a provider may run natively (`search-query`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SearchQuery {
    /// Files whose path below the directory matches this glob.
    Glob(String),
    /// Lines matching `pattern` in files whose name matches `include`.
    Grep {
        /// A regular expression.
        pattern: String,
        /// A glob on file names.
        include: Option<String>,
    },
}

//! Pieces every dsh-fs layer shares: the closed set of error codes, the value
//! types that cross the provider seam, and the byte-faithful text handling
//! (decoding, content hashing, CRLF-aware literal edits) that each backend uses.
//!
//! The tools component (`dsh-fs-tools`) and every provider (`dsh-fs` host
//! backends, the provider components) depend on this crate, so an error code
//! or an edit means the same thing on every side of the seam.
//!
//! ```
//! use dsh_fs_core::{EditRequest, splice};
//!
//! // A CRLF file: the model writes "\n", the file keeps "\r\n".
//! let file = b"one\r\ntwo\r\nthree\r\n";
//! let edit = EditRequest::new("two\nthree", "2\n3", false);
//! let out = splice::apply(file, &edit).unwrap();
//! assert_eq!(out.bytes, b"one\r\n2\r\n3\r\n");
//! assert_eq!(out.replacements, 1);
//! ```
#![deny(missing_docs)]

pub mod deadline;
mod error;
pub mod excerpt;
pub mod layer;
pub mod listing;
pub mod provider;
pub mod seam;
pub mod splice;
pub mod store;
pub mod stream_splice;
pub mod text;
mod types;
mod wit;

pub use error::{ErrorCode, FsError};
pub use provider::{DynProvider, Provider};
pub use types::{
    DirEntry, DirEntryKind, EditExcerpt, EditOutcome, EditRequest, EditsError, EntryKind, FsInfo,
    PathText, SearchQuery, Skipped, TextContent, Version, WriteIntent, WriteOperation,
    WriteOutcome,
};

/// Files at or above this size are read through `stream-text`, never whole.
pub const STREAM_THRESHOLD: u64 = 10 * 1024 * 1024;

/// Largest arguments object (JSON text) a tool call accepts.
pub const MAX_ARGUMENT_BYTES: usize = 16 * 1024 * 1024;

/// The message of a call whose arguments are `len` bytes, over
/// [`MAX_ARGUMENT_BYTES`]: the tools give it, and a host that refuses such a
/// call before copying it into the component gives the same.
pub fn too_large_arguments(tool: &str, len: usize) -> String {
    let tool: String = tool.chars().take(64).collect();
    let tool = text::one_line(&tool);
    format!(
        "{tool}: the arguments are {len} bytes, more than the {} MiB limit; split the content \
         into several edits. Fix the arguments and call {tool} again.",
        MAX_ARGUMENT_BYTES >> 20
    )
}

/// Largest file a write or an edit may produce, and the largest file an edit
/// reads. Checked before any allocation or write: `too-large` names the size.
pub const MAX_FILE_BYTES: u64 = 1 << 30;

/// Largest file held in memory at once: what an edit splices in memory (the
/// local disk streams LF files above it) and what an in-memory result (the
/// memory workspace, an object-store upload) may grow to. With the argument
/// cap, it bounds one call's memory.
pub const MAX_IN_MEMORY_BYTES: u64 = 16 << 20;

//! Host for the dsh-fs tools component: run the `read`, `write`, `edit`, `glob`
//! and `grep` tools of `dsh_fs_tools.wasm` in wasmtime against a backend of your choice.
//!
//! - [`Runtime`]: engine + precompiled component (cached on disk) + linker,
//!   built once per process; [`Runtime::session`] opens a [`Session`].
//! - [`Session`]: one agent session, the owner of read-before-edit
//!   observations; [`Session::execute`] runs one call under a memory cap and
//!   a time limit.
//! - [`provider`]: the [`Provider`] trait the component's filesystem import is
//!   served from, with [`LocalProvider`] (a directory, confined with cap-std),
//!   [`MemoryProvider`] (a virtual workspace) and [`ObjectStoreProvider`]
//!   (S3 and other object stores, compare-and-swap by ETag).
//! - `mcp`: the MCP stdio server behind `dsh-fs mcp`; [`cli::main`]: the
//!   whole `dsh-fs` command, for the binary and other launchers.
//!
//! ```no_run
//! use dsh_fs::{LocalProvider, LocalStore, Runtime, SessionOptions};
//! use std::sync::Arc;
//!
//! let runtime = Runtime::new()?;
//! let workspace = Arc::new(LocalProvider::new(LocalStore::new("/path/to/project")?));
//! let mut session = runtime.session(workspace, SessionOptions::default())?;
//! let read = session.execute("read", r#"{"file_path": "src/main.rs", "limit": 40}"#);
//! println!("{}", read.text);
//! let edit = session.execute(
//!     "edit",
//!     r#"{"file_path": "src/main.rs", "old_string": "Hello", "new_string": "Hi"}"#,
//! );
//! assert!(!edit.is_error, "{}", edit.text);
//! # Ok::<(), anyhow::Error>(())
//! ```
#![deny(missing_docs)]

mod bindings;
pub mod cli;
mod demo;
pub mod mcp;
pub mod provider;
mod runtime;
mod session;
mod state;

pub use dsh_fs_core::deadline;
pub use dsh_fs_core::{
    DirEntry, DirEntryKind, EditExcerpt, EditOutcome, EditRequest, EditsError, EntryKind,
    ErrorCode, FsError, FsInfo, Skipped, TextContent, Version, WriteIntent, WriteOperation,
    WriteOutcome,
};
/// The local disk's fast path for `glob` and `grep`.
pub use dsh_fs_store_local::search;
pub use object_store;
pub use provider::{
    BoxListing, BoxStream, BucketStore, ByteStore, Deadline, DynProvider, Listing, LocalProvider,
    LocalShortcuts, LocalStore, MemoryProvider, MemoryStore, ObjectStoreProvider, Provider,
    Resolved, S3Options, Seam, Shortcuts, Target, TextLayer, TextStream,
};
/// The README's embedding example (`examples/embed.rs`), compiled and run as
/// a doctest so it cannot drift from the API.
#[cfg(doctest)]
#[doc = concat!("```\n", include_str!("../examples/embed.rs"), "```")]
pub struct EmbeddingExample;

pub use runtime::{COMPONENT_PATH, ComponentOrigin, Limits, Runtime, RuntimeBuilder, component};
pub use session::{
    DEFAULT_JOURNAL_BYTES, Session, SessionOptions, ToolDefinition, ToolError, ToolHints,
    ToolResult,
};

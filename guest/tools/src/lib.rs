//! The dsh-fs tools: `read`, `write` and `edit` for AI agents, with the
//! read-before-write/edit freshness policy, over an abstract [`Provider`].
//!
//! Built for `wasm32-wasip2` this crate is the `dsh:fs` tools component: the
//! provider is the imported `dsh:fs/provider` interface and the exported
//! `dsh:fs/tools` session forwards to [`Session::execute`]. Built natively it
//! is a plain library over any Rust [`Provider`], for tests and benchmarks.
//!
//! - [`tools`]: definitions, argument parsing, windowing, rendering, result texts;
//! - [`policy`]: per-session observed versions; pure, no I/O;
//! - [`error`]: model-facing error codes and the remedy for each;
//!
//! The seam the tools call is [`dsh_fs_core::provider`].
#![deny(missing_docs)]

pub mod error;
pub mod policy;
pub mod tools;

#[cfg(all(target_arch = "wasm32", feature = "component"))]
mod component;

pub use dsh_fs_core::provider::{Listing, Provider, Resolved, TextStream};
pub use error::ToolError;
pub use policy::{InMemory, Memory};
pub use tools::{
    Hints, JournalKeeper, Session, ToolDefinition, ToolResult, definitions, extra_definitions,
};

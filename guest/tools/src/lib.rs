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
//! - [`provider`]: the seam the tools call.
#![deny(missing_docs)]

pub mod error;
pub mod policy;
pub mod provider;
pub mod tools;

#[cfg(target_arch = "wasm32")]
mod component;

pub use error::ToolError;
pub use provider::{Listing, Provider, TextStream};
pub use tools::{Session, ToolDefinition, ToolResult, definitions};

//! A `dsh:fs` provider over plain `std::fs` under one root directory.
//!
//! Built for `wasm32-wasip2` this crate is the provider component: it exports
//! `dsh:fs/provider` and reaches files only through `wasi:filesystem`, so it
//! sees exactly the directories the runtime preopens (`wasmtime run --dir
//! HOST::/work`) and the runtime refuses every way out of them, symlinks
//! included, on each use. Built natively it is the same provider over the
//! host's filesystem, for unit tests.
//!
//! - [`WasiProvider`]: the operations, one per `dsh:fs/provider` function;
//! - [`Target`] and [`Stream`]: the `target` and `text-stream` resources;
//! - the root is [`DEFAULT_ROOT`] unless the environment variable
//!   [`ROOT_ENV`] names another absolute guest path.
//!
//! ```
//! use dsh_fs_provider_wasi::WasiProvider;
//!
//! let dir = tempfile::tempdir().unwrap();
//! let provider = WasiProvider::new(dir.path()).unwrap();
//! let notes = provider.resolve("notes.txt").unwrap();
//! provider.write_text(&notes, "a\r\nb\r\n", None).unwrap();
//! assert_eq!(provider.read_text(&notes, 1 << 20).unwrap().text, "a\r\nb\r\n");
//! assert!(provider.resolve("../elsewhere").is_err());
//! ```
#![deny(missing_docs)]

mod meta;
mod paths;
mod provider;

#[cfg(target_arch = "wasm32")]
mod component;

pub use provider::{Stream, Target, WasiProvider};

/// The guest path used as the root when [`ROOT_ENV`] is not set.
pub const DEFAULT_ROOT: &str = "/work";

/// The environment variable naming the root (an absolute guest path), e.g.
/// `wasmtime run --env DSH_FS_ROOT=/src --dir HOST::/src ...`.
pub const ROOT_ENV: &str = "DSH_FS_ROOT";

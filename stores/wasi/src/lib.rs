//! A `dsh:fs` byte store over plain `std::fs` under one root directory.
//!
//! Built for `wasm32-wasip2` this crate is the provider component: it
//! reaches files only through `wasi:filesystem`, so it sees exactly the
//! directories the runtime preopens (`wasmtime run --dir HOST::/work`) and
//! the runtime refuses every way out of them, symlinks included, on each
//! use. It exports `dsh:fs/store` from [`WasiStore`] and `dsh:fs/provider`
//! from [`dsh_fs_core::layer::TextLayer`] over it, which holds every text
//! rule. Built natively it is the same store over the host's filesystem,
//! for unit tests.
//!
//! - [`WasiStore`]: the [`ByteStore`](dsh_fs_core::store::ByteStore);
//!   [`WasiObject`] and [`WasiReplace`] its open file and its replacement;
//! - [`WasiProvider`]: the provider contract over it;
//! - the root is [`DEFAULT_ROOT`] unless the environment variable
//!   [`ROOT_ENV`] names another absolute guest path.
//!
//! ```
//! use dsh_fs_core::Provider;
//! use dsh_fs_store_wasi::{WasiProvider, WasiStore};
//!
//! let dir = tempfile::tempdir().unwrap();
//! let provider = WasiProvider::new(WasiStore::new(dir.path()).unwrap());
//! let notes = provider.resolve("notes.txt").unwrap();
//! provider.write_text(&notes, "a\r\nb\r\n", None).unwrap();
//! assert_eq!(provider.read_text(&notes, 1 << 20).unwrap().text, "a\r\nb\r\n");
//! assert!(provider.resolve("../elsewhere").is_err());
//! ```
#![deny(missing_docs)]

mod list;
pub mod lock;
mod meta;
mod object;
mod replace;
mod resolve;
mod store;

#[cfg(all(target_arch = "wasm32", feature = "component"))]
mod component;

#[cfg(test)]
mod tests;

pub use object::WasiObject;
pub use replace::{TEMP_SUFFIX, WasiReplace};
pub use store::WasiStore;

/// The provider contract over a [`WasiStore`].
pub type WasiProvider = dsh_fs_core::layer::TextLayer<WasiStore>;

/// The guest path used as the root when [`ROOT_ENV`] is not set.
pub const DEFAULT_ROOT: &str = "/work";

/// The environment variable naming the root (an absolute guest path), e.g.
/// `wasmtime run --env DSH_FS_ROOT=/src --dir HOST::/src ...`.
pub const ROOT_ENV: &str = "DSH_FS_ROOT";

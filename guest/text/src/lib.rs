//! The text layer as a component: built for `wasm32-wasip2` this crate
//! exports `dsh:fs/provider` (world `fs-text` of `wit/since_v0.1.0/world.wit`) served by
//! [`dsh_fs_core::layer::TextLayer`] over the imported `dsh:fs/store`. A host
//! that can only move bytes (a JavaScript store, `wasi:filesystem`) plugs it
//! into the tools component (`cargo xtask js`) and gets every provider rule
//! (decoding, BOMs, versions, freshness, intents, splices) from Rust.
//!
//! - `store`: [`dsh_fs_core::store::ByteStore`] over the imported WIT store;
//! - `component`: the `provider` export and the conversions between the
//!   WIT value types and the core's.
//!
//! Built natively the crate is empty: the text layer it serves is
//! `dsh-fs-core`'s, tested there.
#![deny(missing_docs)]

#[cfg(target_arch = "wasm32")]
mod component;
#[cfg(target_arch = "wasm32")]
mod store;

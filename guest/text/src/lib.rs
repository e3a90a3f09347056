//! The text layer as a component: built for `wasm32-wasip2` this crate
//! exports `dsh:fs/provider` (world `fs-text` of `wit/since_v0.1.0/world.wit`) served by
//! [`dsh_fs_core::layer::TextLayer`] over the imported `dsh:fs/store`. A host
//! that can only move bytes plugs it into the tools component and gets every
//! provider rule (decoding, BOMs, versions, freshness, intents, splices) from
//! Rust. The JS hosts link the same layer into the tools instead (their
//! `text` feature): one component, no call between two for each chunk. This
//! one serves the byte-store contract suite to the JS stores (`contract`)
//! and the tests that hold the layer, as a component, to the native one.
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

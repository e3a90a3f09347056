//! The providers this host serves the component's `dsh:fs/provider` import
//! from. [`Provider`] is the seam's one Rust trait (from `dsh-fs-core`, where
//! the tools are written against it too); a session holds any native one as
//! a [`DynProvider`].
//!
//! Backends: [`LocalProvider`] (the text layer over [`LocalStore`], a
//! directory on disk confined with cap-std; crate `dsh-fs-store-local`),
//! [`MemoryProvider`] (a virtual workspace) and [`ObjectStoreProvider`] (a
//! bucket prefix, compare-and-swap by ETag; crate
//! `dsh-fs-store-object`). Each is [`TextLayer`] over a byte store,
//! so freshness means the same thing everywhere: a caller's version is fresh
//! while the file's content hash is the one it names.

pub use dsh_fs_core::layer::TextLayer;
pub use dsh_fs_core::store::memory::MemoryStore;
pub use dsh_fs_core::store::{ByteStore, Deadline, Listing, Seam, Shortcuts, Target, TextStream};
pub use dsh_fs_store_local::{
    LocalObject, LocalProvider, LocalReplace, LocalShortcuts, LocalStore,
};
pub use dsh_fs_store_object::{BucketStore, ObjectStoreProvider, S3Options, install_crypto};

pub use dsh_fs_core::provider::{BoxListing, BoxStream, DynProvider, Provider, Resolved};

/// A virtual workspace held in memory: the text layer over [`MemoryStore`].
pub type MemoryProvider = TextLayer<MemoryStore>;

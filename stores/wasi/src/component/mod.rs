//! The WIT glue: exports `dsh:fs/provider` from one [`WasiProvider`] (the
//! text layer over a [`WasiStore`] opened on the root named by the
//! environment; [`dsh_fs_core::wit_provider!`]), and `dsh:fs/store` (in
//! [`store`]) by forwarding to that same store. Nothing else lives here.

mod store;

use crate::{WasiProvider, WasiStore};
use dsh_fs_core as core;
use std::sync::OnceLock;

wit_bindgen::generate!({
    world: "fs-provider-store",
    path: "../../wit/since_v0.1.0",
});

use exports::dsh::fs::provider as api;
use exports::dsh::fs::types as wit;

dsh_fs_core::wit_types!(wit);
dsh_fs_core::wit_store!(store_wit);
use exports::dsh::fs::store as store_wit;

/// The instance's provider, opened on first use; a root the runtime did not
/// grant makes every call fail with the reason.
fn provider() -> Result<&'static WasiProvider, wit::FsError> {
    static PROVIDER: OnceLock<Result<WasiProvider, core::FsError>> = OnceLock::new();
    PROVIDER
        .get_or_init(|| WasiStore::from_env().map(WasiProvider::new))
        .as_ref()
        .map_err(|e| e.clone().into())
}

/// The exported component.
struct Component;

dsh_fs_core::wit_provider!(api, wit, Component, provider());

export!(Component);

//! The WIT glue: exports `dsh:fs/provider` from one [`TextLayer`] over the
//! imported store ([`dsh_fs_core::wit_provider!`]), and converts between the
//! WIT value types (the imported `types` of the store, the exported `types`
//! of the provider) and the core's. Nothing else lives here.

use crate::store::WitStore;
use dsh_fs_core::FsError;
use dsh_fs_core::layer::TextLayer;
use std::sync::OnceLock;

#[cfg(not(feature = "contract"))]
wit_bindgen::generate!({
    world: "fs-text",
    path: "../../wit/since_v0.1.0",
});

#[cfg(feature = "contract")]
wit_bindgen::generate!({
    world: "fs-text-contract",
    path: "../../wit/since_v0.1.0",
});

/// The byte-store contract suite, run against the imported store.
#[cfg(feature = "contract")]
impl exports::dsh::fs::store_contract::Guest for Component {
    fn checks() -> Vec<String> {
        let checks = dsh_fs_core::store::contract::checks::<WitStore>();
        checks.iter().map(|c| c.name.to_owned()).collect()
    }

    fn run(name: String) -> Result<(), String> {
        let checks = dsh_fs_core::store::contract::checks::<WitStore>();
        let check = checks
            .iter()
            .find(|c| c.name == name)
            .ok_or_else(|| format!("no check is named {name}"))?;
        check.run(&WitStore::new())
    }
}

use dsh::fs::store as store_wit;
use dsh::fs::types as inner;
use exports::dsh::fs::provider as api;
use exports::dsh::fs::types as outer;

dsh_fs_core::wit_types!(inner);
dsh_fs_core::wit_types!(outer);
dsh_fs_core::wit_store!(store_wit);

/// The instance's text layer, over the store the host plugged in.
fn layer() -> Result<&'static TextLayer<WitStore>, FsError> {
    static LAYER: OnceLock<TextLayer<WitStore>> = OnceLock::new();
    Ok(LAYER.get_or_init(|| TextLayer::new(WitStore::new())))
}

/// The exported component.
struct Component;

dsh_fs_core::wit_provider!(api, outer, Component, layer());

export!(Component);

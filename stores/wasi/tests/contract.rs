//! The byte-store contract (`dsh_fs_core::store::contract`) against
//! [`WasiStore`] on real directories: natively, and built for
//! `wasm32-wasip2` under the stock `wasmtime` CLI, where every call goes
//! through `wasi:filesystem` (`scripts/wasi-test-runner` grants a scratch
//! directory as the guest's `/tmp`).

use dsh_fs_core::store::contract;
use dsh_fs_store_wasi::WasiStore;

#[test]
fn the_wasi_store_keeps_the_byte_store_contract() {
    let mut dirs = Vec::new();
    let fresh = || {
        // WASI has no `std::env::temp_dir`: the runner names one in TMPDIR.
        let dir = match std::env::var_os("TMPDIR") {
            Some(tmp) if cfg!(target_os = "wasi") => tempfile::tempdir_in(tmp).unwrap(),
            _ => tempfile::tempdir().unwrap(),
        };
        let store = WasiStore::new(dir.path()).unwrap();
        dirs.push(dir);
        store
    };
    let passed = contract::run(fresh).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(passed, contract::checks::<WasiStore>().len());
}

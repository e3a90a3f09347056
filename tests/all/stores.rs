//! The byte-store contract (`dsh_fs_core::store::contract`) against every
//! store of the native host: the same suite the JavaScript and WASI stores run.

use dsh_fs::MemoryStore;
use dsh_fs_core::store::contract;

#[test]
fn the_memory_store_keeps_the_byte_store_contract() {
    let passed = contract::run(MemoryStore::default).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(passed, contract::checks::<MemoryStore>().len());
}

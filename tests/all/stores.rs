//! The byte-store contract (`dsh_fs_core::store::contract`) against every
//! store of the native host: the same suite the JavaScript stores run inside
//! the adapter component and the `wasi:filesystem` store runs under
//! `wasmtime run`. Each check gets a fresh, empty store.

use crate::object_store::Bucket;
use dsh_fs::{ByteStore, LocalStore, MemoryStore};
use dsh_fs_core::store::contract;

fn keeps_the_contract<S: ByteStore>(fresh: impl FnMut() -> S) {
    let passed = contract::run(fresh).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(passed, contract::checks::<S>().len());
}

#[test]
fn the_memory_store_keeps_the_byte_store_contract() {
    keeps_the_contract(MemoryStore::default);
}

#[test]
fn the_local_store_keeps_the_byte_store_contract() {
    // Each check's directory lives until the whole suite has run.
    let mut dirs = Vec::new();
    keeps_the_contract(|| {
        let dir = tempfile::tempdir().unwrap();
        let store = LocalStore::new(dir.path()).unwrap();
        dirs.push(dir);
        store
    });
}

#[test]
fn the_object_store_keeps_the_byte_store_contract() {
    let bucket = Bucket::new();
    let mut n = 0;
    keeps_the_contract(|| {
        n += 1;
        bucket.byte_store(&format!("check{n}"))
    });
}

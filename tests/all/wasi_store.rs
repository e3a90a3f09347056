//! The `dsh:fs/store` export of the `wasi:filesystem` provider component
//! (`stores/wasi`, as `cargo xtask cli` builds it) held to
//! the byte-store contract (`dsh_fs_core::store::contract`): each check
//! instantiates the component on a fresh directory granted as `/work`, and
//! every byte goes through wasmtime's own `wasi:filesystem`. (The store's
//! Rust code runs the same suite under the stock `wasmtime` CLI:
//! `scripts/wasi-test-runner`.)

use dsh_fs_core::store::{
    ByteStore, Guard, Listing, Object, ObjectMeta, Replace, Target, contract,
};
use dsh_fs_core::{DirEntry, FsError};
use std::cell::RefCell;
use std::fmt;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use wasmtime::component::{Component, Linker, ResourceAny, ResourceTable};
use wasmtime::{Engine, Store};
use wasmtime_wasi::{FsPerms, WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};

wasmtime::component::bindgen!({
    world: "fs-store",
    path: "../../wit/since_v0.1.0",
});

use exports::dsh::fs::store as api;
use exports::dsh::fs::types as wit;

dsh_fs_core::wit_types!(wit);
dsh_fs_core::wit_store!(api);

/// What the component's instance sees of the host: WASI with one directory.
struct Host {
    wasi: WasiCtx,
    table: ResourceTable,
}

impl WasiView for Host {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

/// One instance of the component, shared by the store and its resources.
#[derive(Clone)]
struct Instance(Rc<RefCell<(Store<Host>, FsStore)>>);

impl Instance {
    /// Calls the export; a trap fails the test, a store error is returned.
    fn call<T>(
        &self,
        f: impl FnOnce(&api::Guest, &mut Store<Host>) -> wasmtime::Result<Result<T, wit::FsError>>,
    ) -> Result<T, FsError> {
        let mut inner = self.0.borrow_mut();
        let (store, bindings) = &mut *inner;
        f(bindings.dsh_fs_store(), store)
            .expect("the store component trapped")
            .map_err(FsError::from)
    }

    /// Drops a resource the component handed out.
    fn drop_resource(&self, resource: ResourceAny) {
        let mut inner = self.0.borrow_mut();
        resource
            .resource_drop(&mut inner.0)
            .expect("dropping a resource");
    }
}

/// [`ByteStore`] over the component's export, on its own scratch directory.
struct ComponentStore {
    instance: Instance,
    roots: Vec<PathBuf>,
    _dir: tempfile::TempDir,
}

impl fmt::Debug for ComponentStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ComponentStore")
            .field("roots", &self.roots)
            .finish_non_exhaustive()
    }
}

impl ComponentStore {
    fn new(engine: &Engine, component: &Component, linker: &Linker<Host>) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let wasi = WasiCtxBuilder::new()
            .preopened_dir(dir.path(), "/work", FsPerms::ReadWrite)
            .unwrap()
            .build();
        let host = Host {
            wasi,
            table: ResourceTable::new(),
        };
        let mut store = Store::new(engine, host);
        let bindings = FsStore::instantiate(&mut store, component, linker).unwrap();
        let instance = Instance(Rc::new(RefCell::new((store, bindings))));
        let roots = instance
            .call(|api, s| api.call_roots(s).map(Ok))
            .unwrap()
            .into_iter()
            .map(PathBuf::from)
            .collect();
        ComponentStore {
            instance,
            roots,
            _dir: dir,
        }
    }

    fn reader(&self, reader: ResourceAny) -> Result<ComponentObject, FsError> {
        let meta = self
            .instance
            .call(|api, s| api.reader().call_meta(s, reader).map(Ok))?;
        Ok(ComponentObject {
            instance: self.instance.clone(),
            reader: Some(reader),
            meta: meta.into(),
        })
    }
}

fn place(target: &Target) -> api::Place {
    api::Place {
        key: target.key().to_owned(),
        shown: target.display_path().to_owned(),
    }
}

impl ByteStore for ComponentStore {
    type Object = ComponentObject;
    type Replace<'s> = ComponentReplace;
    type Listing = ComponentListing;

    fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    fn identity(&self, rel: &str, shown: &str) -> Result<String, FsError> {
        self.instance
            .call(|api, s| api.call_identity(s, rel, shown))
    }

    fn stat(&self, target: &Target) -> Result<Option<ObjectMeta>, FsError> {
        let meta = self
            .instance
            .call(|api, s| api.call_stat(s, &place(target)))?;
        Ok(meta.map(Into::into))
    }

    fn open(&self, target: &Target) -> Result<ComponentObject, FsError> {
        let reader = self
            .instance
            .call(|api, s| api.call_open(s, &place(target)))?;
        self.reader(reader)
    }

    fn list_dir(&self, target: &Target) -> Result<ComponentListing, FsError> {
        let listing = self
            .instance
            .call(|api, s| api.call_list_dir(s, &place(target)))?;
        Ok(ComponentListing {
            instance: self.instance.clone(),
            listing: Some(listing),
        })
    }

    fn replace(
        &self,
        target: &Target,
        create_parents: bool,
    ) -> Result<(ComponentReplace, Option<ComponentObject>), FsError> {
        let (replacement, reader) = self
            .instance
            .call(|api, s| api.call_replace(s, &place(target), create_parents))?;
        let replace = ComponentReplace {
            instance: self.instance.clone(),
            replacement: Some(replacement),
        };
        let current = reader.map(|r| self.reader(r)).transpose()?;
        Ok((replace, current))
    }
}

/// An open `reader`.
struct ComponentObject {
    instance: Instance,
    reader: Option<ResourceAny>,
    meta: ObjectMeta,
}

impl Object for ComponentObject {
    fn meta(&self) -> &ObjectMeta {
        &self.meta
    }

    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> Result<usize, FsError> {
        let reader = self.reader.expect("open");
        let len = u32::try_from(buf.len()).unwrap_or(u32::MAX);
        let bytes = self
            .instance
            .call(|api, s| api.reader().call_read(s, reader, offset, len))?;
        assert!(bytes.len() <= buf.len(), "a read returned more than asked");
        buf[..bytes.len()].copy_from_slice(&bytes);
        Ok(bytes.len())
    }

    fn token_now(&mut self) -> Result<String, FsError> {
        let reader = self.reader.expect("open");
        self.instance
            .call(|api, s| api.reader().call_token_now(s, reader))
    }
}

impl Drop for ComponentObject {
    fn drop(&mut self) {
        if let Some(reader) = self.reader.take() {
            self.instance.drop_resource(reader);
        }
    }
}

/// A `replacement` in progress.
struct ComponentReplace {
    instance: Instance,
    replacement: Option<ResourceAny>,
}

impl Replace for ComponentReplace {
    type Object = ComponentObject;

    fn check_writable(&mut self) -> Result<(), FsError> {
        let r = self.replacement.expect("not committed");
        self.instance
            .call(|api, s| api.replacement().call_check_writable(s, r))
    }

    fn write(&mut self, bytes: &[u8]) -> Result<(), FsError> {
        let r = self.replacement.expect("not committed");
        self.instance
            .call(|api, s| api.replacement().call_write(s, r, bytes))
    }

    /// The component copies from the file its `replace` opened: `from`.
    fn copy(&mut self, _from: &mut ComponentObject, offset: u64, len: u64) -> Result<(), FsError> {
        let r = self.replacement.expect("not committed");
        self.instance
            .call(|api, s| api.replacement().call_copy(s, r, offset, len))
    }

    fn commit(mut self, guard: Guard<'_>) -> Result<String, FsError> {
        let r = self.replacement.take().expect("not committed");
        let guard = exported(guard);
        self.instance
            .call(|api, s| api.replacement().call_commit(s, r, &guard))
    }

    fn remove(mut self, guard: Guard<'_>, _shown: &str) -> Result<(), FsError> {
        let r = self.replacement.take().expect("not committed");
        let guard = exported(guard);
        self.instance
            .call(|api, s| api.replacement().call_remove(s, r, &guard))
    }
}

/// A guard as the component's export takes it.
fn exported(guard: Guard<'_>) -> api::Guard {
    match guard {
        Guard::Absent => api::Guard::Absent,
        Guard::Unchanged(token) => api::Guard::Unchanged(token.to_owned()),
        Guard::None => api::Guard::None,
    }
}

impl Drop for ComponentReplace {
    fn drop(&mut self) {
        if let Some(r) = self.replacement.take() {
            self.instance.drop_resource(r);
        }
    }
}

/// A `listing` being read.
struct ComponentListing {
    instance: Instance,
    listing: Option<ResourceAny>,
}

impl Listing for ComponentListing {
    fn next_entries(&mut self, max: u32) -> Result<Vec<DirEntry>, FsError> {
        let l = self.listing.expect("open");
        let page = self
            .instance
            .call(|api, s| api.listing().call_next(s, l, max))?;
        Ok(page.into_iter().map(Into::into).collect())
    }

    fn skipped(&self) -> u64 {
        let l = self.listing.expect("open");
        self.instance
            .call(|api, s| api.listing().call_skipped(s, l).map(Ok))
            .unwrap()
    }
}

impl Drop for ComponentListing {
    fn drop(&mut self) {
        if let Some(l) = self.listing.take() {
            self.instance.drop_resource(l);
        }
    }
}

/// The provider component the CLI composition is built from.
fn provider_component() -> PathBuf {
    let composed = crate::wasmtime_cli::composed();
    let guest_dir = composed.parent().unwrap();
    Path::new(guest_dir).join("wasm32-wasip2/release/dsh_fs_store_wasi.wasm")
}

#[test]
fn the_wasi_provider_components_store_export_keeps_the_byte_store_contract() {
    let engine = Engine::default();
    let component = Component::from_file(&engine, provider_component()).unwrap();
    let mut linker = Linker::new(&engine);
    wasmtime_wasi::p2::add_to_linker_sync(&mut linker).unwrap();
    let fresh = || ComponentStore::new(&engine, &component, &linker);
    let passed = contract::run(fresh).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(passed, contract::checks::<ComponentStore>().len());
}

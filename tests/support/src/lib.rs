//! The text layer component (`guest/text`, world `fs-text`) run by wasmtime
//! over a native [`ByteStore`], seen from the host as a [`Provider`]: every
//! provider call crosses into the text layer compiled to wasm, and every
//! store call it makes crosses back to the Rust store. Tests hold this path
//! to the same contract as the native layer; it is not a backend to ship
//! (the component is built only inside the repository).
//!
//! The store's `replacement` resource must outlive the call that opens it,
//! but a Rust store's replacement borrows the store (and may hold a lock
//! guard that cannot cross threads). So the host opens the replacement for
//! `replace` (to check the name, open what is there and ask whether it may
//! be written), records the writes and copies, and replays them through a
//! fresh replacement at `commit`, under the guard the layer asked for. The
//! copies read the object the first `replace` opened, as the seam says.

use dsh_fs_core as core;
use dsh_fs_core::provider::{BoxListing, BoxStream, Provider};
use dsh_fs_core::store::{ByteStore, Listing, Target, TextStream};
use dsh_fs_core::{
    EditOutcome, EditRequest, EditsError, FsError, FsInfo, SearchQuery, Skipped, TextContent,
    WriteIntent, WriteOutcome,
};
use std::collections::HashMap;
use std::fmt;
use std::path::Path;
use std::sync::{Arc, Mutex};
use wasmtime::component::{Component, HasSelf, Linker, ResourceAny, ResourceTable};
use wasmtime::{Engine, Store};
use wasmtime_wasi::WasiCtx;

wasmtime::component::bindgen!({
    world: "fs-text",
    path: "../../wit/since_v0.1.0",
    imports: { default: trappable },
    with: {
        "dsh:fs/store.reader": crate::ReaderHandle,
        "dsh:fs/store.listing": crate::ListingHandle,
        "dsh:fs/store.replacement": crate::ReplacementHandle,
    },
});

use dsh::fs::store as seam;
use dsh::fs::types as inner;
use exports::dsh::fs::provider as api;
use exports::dsh::fs::types as outer;

dsh_fs_core::wit_types!(inner);
dsh_fs_core::wit_types!(outer);
dsh_fs_core::wit_store!(seam);

mod store_host;

use store_host::{AdapterState, lock};
pub use store_host::{ListingHandle, ReaderHandle, ReplacementHandle};

/// The adapter component, compiled once; [`Adapter::provider`] instantiates
/// it over a store.
#[derive(Clone)]
pub struct Adapter {
    engine: Engine,
    component: Component,
}

impl fmt::Debug for Adapter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Adapter").finish_non_exhaustive()
    }
}

impl Adapter {
    /// Compiles the adapter component at `path`.
    pub fn from_file(path: &Path) -> anyhow::Result<Self> {
        let engine = Engine::default();
        let component = Component::from_file(&engine, path)?;
        Ok(Adapter { engine, component })
    }

    /// A new instance of the adapter over `store`, as a provider.
    pub fn provider<S>(&self, store: Arc<S>) -> anyhow::Result<AdapterProvider<S>>
    where
        S: ByteStore + Send + Sync + 'static,
        S::Object: Send + 'static,
        S::Listing: Send + 'static,
    {
        let mut linker = Linker::<AdapterState<S>>::new(&self.engine);
        wasmtime_wasi::p2::add_to_linker_sync(&mut linker)?;
        FsText::add_to_linker::<_, HasSelf<_>>(&mut linker, |s| s)?;
        let state = AdapterState {
            store,
            table: ResourceTable::new(),
            wasi: WasiCtx::builder().build(),
        };
        let mut wasm = Store::new(&self.engine, state);
        let bindings = FsText::instantiate(&mut wasm, &self.component, &linker)?;
        Ok(AdapterProvider {
            instance: Arc::new(Mutex::new(Instance {
                wasm,
                bindings,
                targets: HashMap::new(),
            })),
        })
    }
}

/// One instance of the adapter and the targets it resolved.
struct Instance<S: 'static> {
    wasm: Store<AdapterState<S>>,
    bindings: FsText,
    /// The component's `target` for each (shown path, key) the host handed
    /// out, kept for the instance's life: a host [`Target`] is plain data.
    targets: HashMap<(String, String), ResourceAny>,
}

impl<S: Send + Sync + 'static> Instance<S> {
    /// Calls an export; a trap is an `io-error` naming it.
    fn call<T>(
        &mut self,
        f: impl FnOnce(
            &api::Guest,
            &mut Store<AdapterState<S>>,
        ) -> wasmtime::Result<Result<T, outer::FsError>>,
    ) -> Result<T, FsError> {
        match f(self.bindings.dsh_fs_provider(), &mut self.wasm) {
            Ok(r) => r.map_err(Into::into),
            Err(trap) => Err(FsError::new(
                core::ErrorCode::IoError,
                format!("the adapter component trapped: {trap:?}"),
            )),
        }
    }

    /// The component's resource for a target the host resolved.
    fn target(&self, t: &Target) -> Result<ResourceAny, FsError> {
        let key = (t.display_path().to_owned(), t.key().to_owned());
        self.targets.get(&key).copied().ok_or_else(|| {
            FsError::new(
                core::ErrorCode::InvalidInput,
                format!("{} was not resolved by this provider", t.display_path()),
            )
        })
    }
}

/// The adapter component over a store, as a [`Provider`]: the Rust text
/// layer compiled to wasm, over a native store, across two boundaries.
/// Calls are serialised: one instance runs one call at a time.
pub struct AdapterProvider<S: 'static> {
    instance: Arc<Mutex<Instance<S>>>,
}

impl<S: 'static> fmt::Debug for AdapterProvider<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AdapterProvider").finish_non_exhaustive()
    }
}

impl<S> Provider for AdapterProvider<S>
where
    S: ByteStore + Send + Sync + 'static,
    S::Object: Send + 'static,
    S::Listing: Send + 'static,
{
    type Target = Target;
    type Stream = BoxStream;
    type Listing = BoxListing;

    fn resolve(&self, path: &str) -> Result<Target, FsError> {
        let mut i = lock(&self.instance);
        let resource = i.call(|api, s| api.call_resolve(s, path))?;
        let shown = i.call(|api, s| api.target().call_display_path(s, resource).map(Ok))?;
        let key = i.call(|api, s| api.target().call_key(s, resource).map(Ok))?;
        let target = Target::new(shown.clone(), key.clone());
        match i.targets.entry((shown, key)) {
            std::collections::hash_map::Entry::Occupied(_) => {
                let _ = resource.resource_drop(&mut i.wasm);
            }
            std::collections::hash_map::Entry::Vacant(slot) => {
                slot.insert(resource);
            }
        }
        Ok(target)
    }

    fn stat(&self, target: &Target) -> Result<Option<FsInfo>, FsError> {
        let mut i = lock(&self.instance);
        let t = i.target(target)?;
        let info = i.call(|api, s| api.call_stat(s, t))?;
        Ok(info.map(Into::into))
    }

    fn read_text(&self, target: &Target, max_bytes: u64) -> Result<TextContent, FsError> {
        let mut i = lock(&self.instance);
        let t = i.target(target)?;
        Ok(i.call(|api, s| api.call_read_text(s, t, max_bytes))?.into())
    }

    fn stream_text(&self, target: &Target, start: u64) -> Result<BoxStream, FsError> {
        let mut i = lock(&self.instance);
        let t = i.target(target)?;
        let stream = i.call(|api, s| api.call_stream_text(s, t, start))?;
        drop(i);
        Ok(Box::new(GuestStream(Guest {
            instance: self.instance.clone(),
            resource: stream,
        })))
    }

    fn write_text(
        &self,
        target: &Target,
        content: &str,
        intent: Option<WriteIntent>,
    ) -> Result<WriteOutcome, FsError> {
        let mut i = lock(&self.instance);
        let t = i.target(target)?;
        let intent = intent.map(outer::WriteIntent::from);
        let o = i.call(|api, s| api.call_write_text(s, t, content, intent.as_ref()))?;
        Ok(o.into())
    }

    fn edit_text(
        &self,
        target: &Target,
        edit: &EditRequest,
        expected: Option<&str>,
    ) -> Result<EditOutcome, FsError> {
        let mut i = lock(&self.instance);
        let t = i.target(target)?;
        let edit = outer::EditRequest::from(edit.clone());
        let expected = expected.map(str::to_owned);
        let o = i.call(|api, s| api.call_edit_text(s, t, &edit, expected.as_ref()))?;
        Ok(o.into())
    }

    fn edit_texts(
        &self,
        target: &Target,
        edits: &[EditRequest],
        expected: Option<&str>,
    ) -> Result<EditOutcome, EditsError> {
        let mut i = lock(&self.instance);
        let t = i.target(target)?;
        let edits: Vec<outer::EditRequest> = edits.iter().cloned().map(Into::into).collect();
        let expected = expected.map(str::to_owned);
        let inst = &mut *i;
        let api = inst.bindings.dsh_fs_provider();
        match api.call_edit_texts(&mut inst.wasm, t, &edits, expected.as_ref()) {
            Ok(r) => r.map(Into::into).map_err(Into::into),
            Err(trap) => Err(FsError::new(
                core::ErrorCode::IoError,
                format!("the adapter component trapped: {trap:?}"),
            )
            .into()),
        }
    }

    fn remove_file(&self, target: &Target, expected: &str) -> Result<(), FsError> {
        let mut i = lock(&self.instance);
        let t = i.target(target)?;
        let expected = expected.to_owned();
        i.call(|api, s| api.call_remove_file(s, t, &expected))
    }

    fn list_dir(&self, target: &Target) -> Result<BoxListing, FsError> {
        let mut i = lock(&self.instance);
        let t = i.target(target)?;
        let listing = i.call(|api, s| api.call_list_dir(s, t))?;
        drop(i);
        Ok(Box::new(GuestListing(Guest {
            instance: self.instance.clone(),
            resource: listing,
        })))
    }

    fn search(&self, target: &Target, query: &SearchQuery) -> Result<Option<String>, FsError> {
        let mut i = lock(&self.instance);
        let t = i.target(target)?;
        let query = outer::SearchQuery::from(query.clone());
        i.call(|api, s| api.call_search(s, t, &query))
    }
}

/// A resource the component handed out, dropped in it when dropped here.
struct Guest<S: 'static> {
    instance: Arc<Mutex<Instance<S>>>,
    resource: ResourceAny,
}

impl<S: 'static> Drop for Guest<S> {
    fn drop(&mut self) {
        let mut i = lock(&self.instance);
        let _ = self.resource.resource_drop(&mut i.wasm);
    }
}

/// The component's `text-stream`.
struct GuestStream<S: 'static>(Guest<S>);

impl<S: Send + Sync + 'static> TextStream for GuestStream<S> {
    fn next_chunk(&mut self, max_bytes: u32) -> Result<Option<String>, FsError> {
        let r = self.0.resource;
        lock(&self.0.instance).call(|api, s| api.text_stream().call_next(s, r, max_bytes))
    }

    fn skip(&mut self, max_bytes: u32, max_lines: u64) -> Result<Option<Skipped>, FsError> {
        let r = self.0.resource;
        let skipped = lock(&self.0.instance)
            .call(|api, s| api.text_stream().call_skip(s, r, max_bytes, max_lines))?;
        Ok(skipped.map(Into::into))
    }

    fn version(&self) -> Option<String> {
        let r = self.0.resource;
        lock(&self.0.instance)
            .call(|api, s| api.text_stream().call_version(s, r).map(Ok))
            .ok()
            .flatten()
    }
}

/// The component's `listing`.
struct GuestListing<S: 'static>(Guest<S>);

impl<S: Send + Sync + 'static> Listing for GuestListing<S> {
    fn next_entries(&mut self, max: u32) -> Result<Vec<core::DirEntry>, FsError> {
        let r = self.0.resource;
        let page = lock(&self.0.instance).call(|api, s| api.listing().call_next(s, r, max))?;
        Ok(page.into_iter().map(Into::into).collect())
    }

    fn skipped(&self) -> u64 {
        let r = self.0.resource;
        lock(&self.0.instance)
            .call(|api, s| api.listing().call_skipped(s, r).map(Ok))
            .unwrap_or(0)
    }
}

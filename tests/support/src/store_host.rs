//! The store seam as the host serves it to the adapter component: the
//! store's objects, listings and recorded replacements as WIT resources.

use super::{inner, seam};
use dsh_fs_core::FsError;
use dsh_fs_core::store::{ByteStore, Guard, Listing, Object, Replace, Target};
use std::sync::{Arc, Mutex, MutexGuard};
use wasmtime::component::{Resource, ResourceTable};
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

/// An open object of the store, shared by the `reader` handed to the
/// component and the replacement that may copy from it.
pub struct ReaderHandle(Arc<Mutex<dyn Object + Send>>);

/// A directory listing of the store.
pub struct ListingHandle(Box<dyn Listing + Send>);

/// A replacement recorded on the host, replayed at `commit`.
pub struct ReplacementHandle {
    writable: Result<(), FsError>,
    ops: Vec<Op>,
    replay: Replay,
    remove: Remover,
}

/// Opens a fresh replacement and removes the file under the guard instead.
type Remover = Box<dyn FnOnce(Guard<'_>) -> Result<(), FsError> + Send>;

/// Opens a fresh replacement, writes the recorded steps and commits it.
type Replay = Box<dyn FnOnce(Vec<Op>, Guard<'_>) -> Result<String, FsError> + Send>;

/// One step of a replacement's new content.
enum Op {
    Write(Vec<u8>),
    Copy(u64, u64),
}

/// What the adapter's instance sees of the host: the store, and WASI
/// granting nothing (Rust's `wasm32-wasip2` std imports it).
pub(super) struct AdapterState<S> {
    pub(super) store: Arc<S>,
    pub(super) table: ResourceTable,
    pub(super) wasi: WasiCtx,
}

impl<S: Send + Sync + 'static> WasiView for AdapterState<S> {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

type Res<T> = wasmtime::Result<Result<T, inner::FsError>>;

impl<S> seam::Host for AdapterState<S>
where
    S: ByteStore + Send + Sync + 'static,
    S::Object: Send + 'static,
    S::Listing: Send + 'static,
{
    fn roots(&mut self) -> wasmtime::Result<Vec<String>> {
        Ok(self
            .store
            .roots()
            .iter()
            .map(|r| r.to_string_lossy().into_owned())
            .collect())
    }

    fn max_object_bytes(&mut self) -> wasmtime::Result<u64> {
        Ok(self.store.max_object_bytes())
    }

    fn identity(&mut self, rel: String, shown: String) -> Res<String> {
        Ok(self.store.identity(&rel, &shown).map_err(Into::into))
    }

    fn stat(&mut self, at: seam::Place) -> Res<Option<seam::ObjectMeta>> {
        let meta = self.store.stat(&target(at));
        Ok(meta.map(|m| m.map(Into::into)).map_err(Into::into))
    }

    fn open(&mut self, at: seam::Place) -> Res<Resource<ReaderHandle>> {
        match self.store.open(&target(at)) {
            Ok(object) => Ok(Ok(self
                .table
                .push(ReaderHandle(Arc::new(Mutex::new(object))))?)),
            Err(e) => Ok(Err(e.into())),
        }
    }

    fn list_dir(&mut self, at: seam::Place) -> Res<Resource<ListingHandle>> {
        match self.store.list_dir(&target(at)) {
            Ok(listing) => Ok(Ok(self.table.push(ListingHandle(Box::new(listing)))?)),
            Err(e) => Ok(Err(e.into())),
        }
    }

    fn replace(
        &mut self,
        at: seam::Place,
        create_parents: bool,
    ) -> Res<(Resource<ReplacementHandle>, Option<Resource<ReaderHandle>>)> {
        let target = target(at);
        let (writable, current) = match self.store.replace(&target, create_parents) {
            Ok((mut replacement, current)) => (replacement.check_writable(), current),
            Err(e) => return Ok(Err(e.into())),
        };
        let current = current.map(|o| Arc::new(Mutex::new(o)));
        let (store, at) = (self.store.clone(), target.clone());
        let remove = move |guard: Guard<'_>| {
            let (replacement, _) = store.replace(&at, false)?;
            replacement.remove(guard, at.display_path())
        };
        let store = self.store.clone();
        let from = current.clone();
        let replay = move |ops: Vec<Op>, guard: Guard<'_>| {
            let (mut replacement, _) = store.replace(&target, create_parents)?;
            for op in ops {
                match op {
                    Op::Write(bytes) => replacement.write(&bytes)?,
                    Op::Copy(offset, len) => match &from {
                        Some(from) => replacement.copy(&mut *lock(from), offset, len)?,
                        None => {
                            return Err(FsError::new(
                                dsh_fs_core::ErrorCode::IoError,
                                format!(
                                    "{}: a copy with no file to copy from",
                                    target.display_path()
                                ),
                            ));
                        }
                    },
                }
            }
            replacement.commit(guard)
        };
        let handle = ReplacementHandle {
            writable,
            ops: Vec::new(),
            replay: Box::new(replay),
            remove: Box::new(remove),
        };
        let handle = self.table.push(handle)?;
        let reader = match current {
            Some(object) => Some(self.table.push(ReaderHandle(object))?),
            None => None,
        };
        Ok(Ok((handle, reader)))
    }
}

impl<S: Send + Sync + 'static> seam::HostReader for AdapterState<S> {
    fn meta(&mut self, r: Resource<ReaderHandle>) -> wasmtime::Result<seam::ObjectMeta> {
        Ok(lock(&self.table.get(&r)?.0).meta().clone().into())
    }

    fn read(&mut self, r: Resource<ReaderHandle>, offset: u64, len: u32) -> Res<Vec<u8>> {
        let mut buf = vec![0; len as usize];
        let read = lock(&self.table.get(&r)?.0).read_at(offset, &mut buf);
        Ok(read
            .map(|n| {
                buf.truncate(n);
                buf
            })
            .map_err(Into::into))
    }

    fn token_now(&mut self, r: Resource<ReaderHandle>) -> Res<String> {
        Ok(lock(&self.table.get(&r)?.0).token_now().map_err(Into::into))
    }

    fn drop(&mut self, r: Resource<ReaderHandle>) -> wasmtime::Result<()> {
        self.table.delete(r)?;
        Ok(())
    }
}

impl<S: Send + Sync + 'static> seam::HostListing for AdapterState<S> {
    fn next(&mut self, l: Resource<ListingHandle>, max: u32) -> Res<Vec<inner::DirEntry>> {
        let page = self.table.get_mut(&l)?.0.next_entries(max);
        Ok(page
            .map(|entries| entries.into_iter().map(Into::into).collect())
            .map_err(Into::into))
    }

    fn skipped(&mut self, l: Resource<ListingHandle>) -> wasmtime::Result<u64> {
        Ok(self.table.get(&l)?.0.skipped())
    }

    fn drop(&mut self, l: Resource<ListingHandle>) -> wasmtime::Result<()> {
        self.table.delete(l)?;
        Ok(())
    }
}

impl<S: Send + Sync + 'static> seam::HostReplacement for AdapterState<S> {
    fn check_writable(&mut self, r: Resource<ReplacementHandle>) -> Res<()> {
        Ok(self.table.get(&r)?.writable.clone().map_err(Into::into))
    }

    fn write(&mut self, r: Resource<ReplacementHandle>, bytes: Vec<u8>) -> Res<()> {
        self.table.get_mut(&r)?.ops.push(Op::Write(bytes));
        Ok(Ok(()))
    }

    fn copy(&mut self, r: Resource<ReplacementHandle>, offset: u64, len: u64) -> Res<()> {
        self.table.get_mut(&r)?.ops.push(Op::Copy(offset, len));
        Ok(Ok(()))
    }

    fn commit(&mut self, r: Resource<ReplacementHandle>, guard: seam::Guard) -> Res<String> {
        let handle = self.table.delete(r)?;
        let guard = match &guard {
            seam::Guard::Absent => Guard::Absent,
            seam::Guard::Unchanged(token) => Guard::Unchanged(token),
            seam::Guard::None => Guard::None,
        };
        Ok((handle.replay)(handle.ops, guard).map_err(Into::into))
    }

    fn remove(&mut self, r: Resource<ReplacementHandle>, guard: seam::Guard) -> Res<()> {
        let handle = self.table.delete(r)?;
        let guard = match &guard {
            seam::Guard::Absent => Guard::Absent,
            seam::Guard::Unchanged(token) => Guard::Unchanged(token),
            seam::Guard::None => Guard::None,
        };
        Ok((handle.remove)(guard).map_err(Into::into))
    }

    fn drop(&mut self, r: Resource<ReplacementHandle>) -> wasmtime::Result<()> {
        self.table.delete(r)?;
        Ok(())
    }
}

impl<S: Send + Sync + 'static> inner::Host for AdapterState<S> {}

fn target(at: seam::Place) -> Target {
    Target::new(at.shown, at.key)
}

/// A lock whose holder never panics while holding it, or the test failed.
pub(super) fn lock<T: ?Sized>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

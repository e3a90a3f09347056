//! The WIT glue of `dsh:fs/store`: forwards to the [`WasiStore`] under the
//! exported provider, so both exports see one root.

use super::exports::dsh::fs::store as api;
use super::exports::dsh::fs::types as wit;
use super::{Component, provider};
use crate::{WasiObject, WasiReplace, WasiStore};
use dsh_fs_core::listing::Entries;
use dsh_fs_core::store::{ByteStore, Guard, Object, Replace, Target};
use std::cell::RefCell;
use std::rc::Rc;

fn store() -> Result<&'static WasiStore, wit::FsError> {
    Ok(provider()?.store())
}

fn target(at: api::Place) -> Target {
    Target::new(at.shown, at.key)
}

impl api::Guest for Component {
    type Reader = ReaderResource;
    type Listing = StoreListing;
    type Replacement = ReplacementResource;

    /// None when the root was not granted; every other call says why.
    fn roots() -> Vec<String> {
        store().map_or_else(
            |_| Vec::new(),
            |s| {
                s.roots()
                    .iter()
                    .filter_map(|r| r.to_str().map(str::to_owned))
                    .collect()
            },
        )
    }

    fn max_object_bytes() -> u64 {
        store().map_or(dsh_fs_core::MAX_FILE_BYTES, |s| s.max_object_bytes())
    }

    fn identity(rel: String, shown: String) -> Result<String, wit::FsError> {
        Ok(store()?.identity(&rel, &shown)?)
    }

    fn stat(at: api::Place) -> Result<Option<api::ObjectMeta>, wit::FsError> {
        Ok(store()?.stat(&target(at))?.map(Into::into))
    }

    fn open(at: api::Place) -> Result<api::Reader, wit::FsError> {
        let object = store()?.open(&target(at))?;
        Ok(api::Reader::new(ReaderResource(Rc::new(RefCell::new(
            object,
        )))))
    }

    fn list_dir(at: api::Place) -> Result<api::Listing, wit::FsError> {
        let listing = store()?.list_dir(&target(at))?;
        Ok(api::Listing::new(StoreListing(RefCell::new(listing))))
    }

    fn replace(
        at: api::Place,
        create_parents: bool,
    ) -> Result<(api::Replacement, Option<api::Reader>), wit::FsError> {
        let (replace, current) = store()?.replace(&target(at), create_parents)?;
        let current = current.map(|o| Rc::new(RefCell::new(o)));
        let reader = current.clone().map(|o| api::Reader::new(ReaderResource(o)));
        let replacement = ReplacementResource(RefCell::new(Some(Replacing { replace, current })));
        Ok((api::Replacement::new(replacement), reader))
    }
}

/// The exported `reader` resource; shared with the replacement that opened it.
pub(super) struct ReaderResource(Rc<RefCell<WasiObject>>);

impl api::GuestReader for ReaderResource {
    fn meta(&self) -> api::ObjectMeta {
        self.0.borrow().meta().clone().into()
    }

    fn read(&self, offset: u64, len: u32) -> Result<Vec<u8>, wit::FsError> {
        let mut buf = vec![0; len as usize];
        let n = self.0.borrow_mut().read_at(offset, &mut buf)?;
        buf.truncate(n);
        Ok(buf)
    }

    fn token_now(&self) -> Result<String, wit::FsError> {
        Ok(self.0.borrow_mut().token_now()?)
    }
}

/// The exported `listing` resource of the store.
pub(super) struct StoreListing(RefCell<Entries>);

impl api::GuestListing for StoreListing {
    fn next(&self, max: u32) -> Result<Vec<wit::DirEntry>, wit::FsError> {
        let page = self.0.borrow_mut().next_entries(max);
        Ok(page.into_iter().map(Into::into).collect())
    }

    fn skipped(&self) -> u64 {
        self.0.borrow().skipped()
    }
}

/// A replacement and the file it opened (the source of `copy`).
struct Replacing {
    replace: WasiReplace,
    current: Option<Rc<RefCell<WasiObject>>>,
}

/// The exported `replacement` resource; empty once committed.
pub(super) struct ReplacementResource(RefCell<Option<Replacing>>);

impl ReplacementResource {
    fn with<T>(
        &self,
        f: impl FnOnce(&mut Replacing) -> Result<T, dsh_fs_core::FsError>,
    ) -> Result<T, wit::FsError> {
        let mut inner = self.0.borrow_mut();
        let r = inner
            .as_mut()
            .expect("a replacement is used until committed");
        Ok(f(r)?)
    }
}

impl api::GuestReplacement for ReplacementResource {
    fn check_writable(&self) -> Result<(), wit::FsError> {
        self.with(|r| r.replace.check_writable())
    }

    fn write(&self, bytes: Vec<u8>) -> Result<(), wit::FsError> {
        self.with(|r| r.replace.write(&bytes))
    }

    fn copy(&self, offset: u64, len: u64) -> Result<(), wit::FsError> {
        self.with(|r| match &r.current {
            Some(from) => r.replace.copy(&mut from.borrow_mut(), offset, len),
            None => Err(dsh_fs_core::FsError::new(
                dsh_fs_core::ErrorCode::InvalidInput,
                "copy from a replacement of a name that held no file",
            )),
        })
    }

    fn commit(this: api::Replacement, guard: api::Guard) -> Result<String, wit::FsError> {
        let Replacing { replace, .. } = this
            .into_inner::<ReplacementResource>()
            .0
            .into_inner()
            .expect("a replacement is committed once");
        let guard = guarded(&guard);
        Ok(replace.commit(guard)?)
    }

    fn remove(this: api::Replacement, guard: api::Guard) -> Result<(), wit::FsError> {
        let Replacing { replace, .. } = this
            .into_inner::<ReplacementResource>()
            .0
            .into_inner()
            .expect("a replacement is ended once");
        let guard = guarded(&guard);
        let shown = replace.shown().to_owned();
        Ok(replace.remove(guard, &shown)?)
    }
}

/// The core guard of an exported one.
fn guarded(guard: &api::Guard) -> Guard<'_> {
    match guard {
        api::Guard::Absent => Guard::Absent,
        api::Guard::Unchanged(token) => Guard::Unchanged(token),
        api::Guard::None => Guard::None,
    }
}

//! [`ByteStore`] over the imported `dsh:fs/store`: each trait method is one
//! WIT call, the `reader` and `replacement` resources are the store's objects
//! and replacements. A directory's entries are passed on in the store's
//! order: the text layer sorts them, as it sorts every store's.

use crate::component::dsh::fs::store as wit;
use dsh_fs_core::store::{ByteStore, Guard, Listing, Object, ObjectMeta, Replace, Target};
use dsh_fs_core::{DirEntry, FsError};
use std::fmt;
use std::path::PathBuf;

/// The store the host plugged in; its roots asked once per instance.
pub struct WitStore {
    roots: Vec<PathBuf>,
    max_object_bytes: u64,
}

impl WitStore {
    /// The imported store.
    pub fn new() -> Self {
        WitStore {
            roots: wit::roots().into_iter().map(PathBuf::from).collect(),
            max_object_bytes: wit::max_object_bytes(),
        }
    }
}

impl fmt::Debug for WitStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WitStore")
            .field("roots", &self.roots)
            .field("max_object_bytes", &self.max_object_bytes)
            .finish()
    }
}

fn place(target: &Target) -> wit::Place {
    wit::Place {
        key: target.key().to_owned(),
        shown: target.display_path().to_owned(),
    }
}

impl ByteStore for WitStore {
    type Object = WitObject;
    type Replace<'s> = WitReplace;
    type Listing = WitListing;

    fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    fn max_object_bytes(&self) -> u64 {
        self.max_object_bytes
    }

    fn identity(&self, rel: &str, shown: &str) -> Result<String, FsError> {
        Ok(wit::identity(rel, shown)?)
    }

    fn stat(&self, target: &Target) -> Result<Option<ObjectMeta>, FsError> {
        Ok(wit::stat(&place(target))?.map(Into::into))
    }

    fn open(&self, target: &Target) -> Result<WitObject, FsError> {
        Ok(WitObject::new(wit::open(&place(target))?))
    }

    fn list_dir(&self, target: &Target) -> Result<WitListing, FsError> {
        Ok(WitListing(wit::list_dir(&place(target))?))
    }

    fn replace(
        &self,
        target: &Target,
        create_parents: bool,
    ) -> Result<(WitReplace, Option<WitObject>), FsError> {
        let (replacement, current) = wit::replace(&place(target), create_parents)?;
        Ok((WitReplace(replacement), current.map(WitObject::new)))
    }
}

/// A directory of the store as its `listing` gives it, in any order.
pub struct WitListing(wit::Listing);

impl Listing for WitListing {
    fn next_entries(&mut self, max: u32) -> Result<Vec<DirEntry>, FsError> {
        Ok(self.0.next(max)?.into_iter().map(Into::into).collect())
    }

    fn skipped(&self) -> u64 {
        self.0.skipped()
    }
}

/// An open file of the store: its `reader` and the metadata it had when opened.
pub struct WitObject {
    reader: wit::Reader,
    meta: ObjectMeta,
}

impl WitObject {
    fn new(reader: wit::Reader) -> Self {
        let meta = reader.meta().into();
        WitObject { reader, meta }
    }
}

impl fmt::Debug for WitObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WitObject")
            .field("meta", &self.meta)
            .finish()
    }
}

impl Object for WitObject {
    fn meta(&self) -> &ObjectMeta {
        &self.meta
    }

    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> Result<usize, FsError> {
        let want = buf.len().min(u32::MAX as usize);
        let bytes = self.reader.read(offset, want as u32)?;
        // A store that hands out more than asked is cut to the request.
        let n = bytes.len().min(want);
        buf[..n].copy_from_slice(&bytes[..n]);
        Ok(n)
    }

    fn token_now(&mut self) -> Result<String, FsError> {
        Ok(self.reader.token_now()?)
    }
}

/// A replacement in progress in the store.
pub struct WitReplace(wit::Replacement);

impl fmt::Debug for WitReplace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("WitReplace")
    }
}

impl Replace for WitReplace {
    type Object = WitObject;

    fn check_writable(&mut self) -> Result<(), FsError> {
        Ok(self.0.check_writable()?)
    }

    fn write(&mut self, bytes: &[u8]) -> Result<(), FsError> {
        Ok(self.0.write(bytes)?)
    }

    /// The store copies from the file its `replace` opened, which is the
    /// only object the text layer ever copies from.
    fn copy(&mut self, _from: &mut WitObject, offset: u64, len: u64) -> Result<(), FsError> {
        Ok(self.0.copy(offset, len)?)
    }

    fn commit(self, guard: Guard<'_>) -> Result<String, FsError> {
        let guard = match guard {
            Guard::Absent => wit::Guard::Absent,
            Guard::Unchanged(token) => wit::Guard::Unchanged(token.to_owned()),
            Guard::None => wit::Guard::None,
        };
        Ok(wit::Replacement::commit(self.0, &guard)?)
    }

    fn remove(self, guard: Guard<'_>, _shown: &str) -> Result<(), FsError> {
        let guard = match guard {
            Guard::Absent => wit::Guard::Absent,
            Guard::Unchanged(token) => wit::Guard::Unchanged(token.to_owned()),
            Guard::None => wit::Guard::None,
        };
        Ok(wit::Replacement::remove(self.0, &guard)?)
    }
}

//! [`ByteStore`] over the imported `dsh:fs/store`: each trait method is one
//! WIT call, the `reader` and `replacement` resources are the store's objects
//! and replacements. A directory's entries are gathered and sorted here, so
//! the rules of a listing (byte order, the entry cap, `.` and `..`) hold
//! whatever order the store hands them out in.

use crate::component::dsh::fs::store as wit;
use dsh_fs_core::listing::{Collector, SortedListing};
use dsh_fs_core::store::{ByteStore, Guard, Object, ObjectMeta, Replace, Target};
use dsh_fs_core::{FsError, listing::MAX_PAGE};
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
    type Listing = SortedListing;

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

    fn list_dir(&self, target: &Target) -> Result<SortedListing, FsError> {
        let listing = wit::list_dir(&place(target))?;
        let mut found = Collector::new(target.display_path());
        loop {
            let page = listing.next(MAX_PAGE)?;
            if page.is_empty() {
                break;
            }
            for e in page {
                found.push(Some(e.name), e.kind.into(), e.size, e.modified)?;
            }
        }
        for _ in 0..listing.skipped() {
            found.push(None, dsh_fs_core::DirEntryKind::Other, 0, None)?;
        }
        Ok(found.finish())
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
}

//! The byte-store seam: what a backend must do so the text layer
//! ([`crate::layer::TextLayer`]) can serve the provider contract over it.
//!
//! A store speaks bytes only: it resolves a root-relative path to its
//! identity, reports metadata (kind, size, a metadata token that changes
//! whenever the bytes may have), reads ranges of an open object, lists a
//! directory, and replaces one object atomically under a [`Guard`]. UTF-8,
//! BOMs, content hashes, versions, freshness, intents and splices are the
//! layer's business, written once. `wit/since_v0.1.0/store.wit` is the same seam for
//! stores that live outside Rust or outside this process.

#[cfg(any(test, feature = "contract"))]
pub mod contract;
pub mod memory;

use crate::{DirEntry, EntryKind, FsError, SearchQuery, Skipped, Version};
use std::fmt;
use std::path::PathBuf;

/// A resolved path: made by the layer's `resolve`, checked again by the
/// store at every use.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    display: String,
    key: String,
}

impl Target {
    /// A target whose canonical root-relative locator is `key` and whose
    /// path shown to the model is `display`.
    pub fn new(display: String, key: String) -> Self {
        Target { display, key }
    }

    /// The path shown to the model; every store message names it.
    pub fn display_path(&self) -> &str {
        &self.display
    }

    /// The canonical root-relative path (`""` is the root itself), `/`
    /// separated; equal for every spelling of the same file.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The display path and the key, by value.
    pub fn into_parts(self) -> (String, String) {
        (self.display, self.key)
    }

    /// The last component of the key, or `None` for the root.
    pub fn name(&self) -> Option<&str> {
        self.key.rsplit('/').next().filter(|n| !n.is_empty())
    }
}

/// What a store knows of one entry without reading it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObjectMeta {
    /// File, directory (or prefix), or anything else.
    pub kind: EntryKind,
    /// Size in bytes, when the store knows it (always for files).
    pub size: Option<u64>,
    /// Changes whenever the bytes may have changed (inode, size and times on
    /// a disk; an ETag in a bucket; a generation in memory). Equal tokens
    /// promise equal bytes; different tokens promise nothing.
    pub token: String,
}

/// What must hold at the moment a replacement commits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Guard<'a> {
    /// The name must not exist (a create).
    Absent,
    /// The name must still hold the object whose metadata token this is.
    Unchanged(&'a str),
    /// Nothing: an unconditional replace.
    None,
}

/// A byte store: a local directory, a bucket prefix, a map in memory, a
/// `wasi:filesystem` preopen, or a host's store across `wit/since_v0.1.0/store.wit`.
///
/// Its methods are the functions of `store.wit`, one to one: `roots`,
/// `max-object-bytes`, `identity`, `stat`, `open` (the `reader` is
/// [`Object`]), `list-dir` ([`Listing`]) and `replace` ([`Replace`]). What
/// a store in this process can do beyond the seam (open a path that needs
/// no resolving at once, search natively, stop at the call's deadline) it
/// offers separately, as [`Shortcuts`] the text layer uses.
///
/// Every method names the target it works on; errors are [`FsError`]s whose
/// messages name `target.display_path()`.
pub trait ByteStore: fmt::Debug {
    /// An open object, read by ranges.
    type Object: Object;
    /// A replacement in progress, holding whatever the store serialises
    /// mutations of one name with (a directory lock, a mutex, nothing).
    type Replace<'s>: Replace<Object = Self::Object>
    where
        Self: 's;
    /// A one-pass directory reader.
    type Listing: Listing;

    /// Absolute spellings of the root that an absolute model path may begin with.
    fn roots(&self) -> &[PathBuf];

    /// The canonical key of the normalized root-relative path `rel` (links
    /// inside the root resolved, so two spellings of one file share a key);
    /// a path that leaves the root is `sandbox-denied`. By default the
    /// normalized path itself: a store without links has one spelling.
    fn identity(&self, rel: &str, shown: &str) -> Result<String, FsError> {
        let _ = shown;
        Ok(rel.to_owned())
    }

    /// Metadata of the target, `None` when it does not exist. Never reads content.
    fn stat(&self, target: &Target) -> Result<Option<ObjectMeta>, FsError>;

    /// Opens the regular file at the target for ranged reads: `not-found`,
    /// `not-regular-file` (directories, FIFOs, devices: never blocking),
    /// `not-directory` for a file used as a parent.
    fn open(&self, target: &Target) -> Result<Self::Object, FsError>;

    /// The entries of the directory at the target, one level deep, in any
    /// order (the layer sorts them), links never followed: `not-found`,
    /// `not-directory`, `too-large` past
    /// [`MAX_ENTRIES`](crate::listing::MAX_ENTRIES).
    fn list_dir(&self, target: &Target) -> Result<Self::Listing, FsError>;

    /// Begins replacing the target: takes the store's lock for its name and
    /// opens what is there now (`None` when absent). The parent directories
    /// are created when `create_parents` is set; otherwise a missing parent
    /// is `not-found`.
    fn replace(
        &self,
        target: &Target,
        create_parents: bool,
    ) -> Result<(Self::Replace<'_>, Option<Self::Object>), FsError>;

    /// The largest object this store takes: a write or an edit whose result
    /// would be larger is `too-large` before any byte of it is written. A
    /// store that holds a replacement in memory answers
    /// [`MAX_IN_MEMORY_BYTES`](crate::MAX_IN_MEMORY_BYTES); the default is
    /// [`MAX_FILE_BYTES`](crate::MAX_FILE_BYTES), which no store exceeds.
    fn max_object_bytes(&self) -> u64 {
        crate::MAX_FILE_BYTES
    }
}

/// What a store in this process can do faster or better than `store.wit`
/// lets it, used by the text layer behind the provider seam: the same
/// answers as the seam's way, sooner. Every method has a default that keeps
/// to the seam; [`Seam`] takes them all.
pub trait Shortcuts<S: ByteStore>: fmt::Debug {
    /// Opens the regular file at the normalized path `rel` when the store
    /// can tell, in that same step, that `rel` is already its identity (no
    /// link on the way): resolve and open at once, for the common read.
    /// `None` otherwise and on any failure, and by default: the layer then
    /// resolves and opens as usual, which reports the error.
    fn open_direct(&self, store: &S, rel: &str) -> Option<S::Object> {
        let _ = (store, rel);
        None
    }

    /// Called between chunks of long work: an error stops it with nothing
    /// changed. Nothing by default; a store that must give up at the call's
    /// deadline answers [`crate::deadline::check`] ([`Deadline`]).
    fn progress(&self, store: &S, target: &Target) -> Result<(), FsError> {
        let _ = (store, target);
        Ok(())
    }

    /// The text `dsh-fs-search` renders for `query` below the target when
    /// the store can search natively — byte for byte what the tools'
    /// portable search over the seam gives; `None` (the default) otherwise.
    fn search(
        &self,
        store: &S,
        target: &Target,
        query: &SearchQuery,
    ) -> Result<Option<String>, FsError> {
        let _ = (store, target, query);
        Ok(None)
    }
}

/// No shortcuts: the text layer uses the store through the seam alone.
#[derive(Clone, Copy, Debug, Default)]
pub struct Seam;

impl<S: ByteStore> Shortcuts<S> for Seam {}

/// One shortcut: long work stops at the call's deadline
/// ([`crate::deadline::check`]), for stores whose waits the host cannot
/// interrupt (a bucket across the network).
#[derive(Clone, Copy, Debug, Default)]
pub struct Deadline;

impl<S: ByteStore> Shortcuts<S> for Deadline {
    fn progress(&self, _: &S, target: &Target) -> Result<(), FsError> {
        crate::deadline::check(target.display_path())
    }
}

/// One open regular file.
pub trait Object {
    /// Its metadata when it was opened.
    fn meta(&self) -> &ObjectMeta;

    /// Reads up to `buf.len()` bytes at `offset`; the count, 0 at the end.
    /// A 0 before the size it was opened at, with the token unchanged, is
    /// taken by the layer for a failed read (`io-error`), never for the end.
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> Result<usize, FsError>;

    /// Like [`Object::read_at`], into `buf`'s spare capacity: appends at
    /// most that many bytes and returns how many. A store that can read into
    /// memory not yet written spares the caller zeroing it first (5–6% of a
    /// large first read's time, measured on the local disk). An empty `buf`
    /// may be replaced by a buffer the store already holds the bytes in, so
    /// callers must not count on its capacity afterwards.
    fn read_append(&mut self, offset: u64, buf: &mut Vec<u8>) -> Result<usize, FsError> {
        let len = buf.len();
        buf.resize(buf.capacity(), 0);
        let read = self.read_at(offset, &mut buf[len..]);
        buf.truncate(len + read.as_ref().map_or(0, |&n| n));
        read
    }

    /// Its metadata token now: differs from [`Object::meta`]'s when the
    /// object was changed in place since it was opened. Objects that cannot
    /// change (a snapshot, an ETag-pinned read) keep the default.
    fn token_now(&mut self) -> Result<String, FsError> {
        Ok(self.meta().token.clone())
    }
}

/// The new content of one name, written front to back, then committed.
/// Dropped without [`Replace::commit`], it leaves nothing behind.
pub trait Replace {
    /// The store's open object type, for [`Replace::copy`].
    type Object: Object;

    /// `permission-denied` when the existing object may not be replaced by
    /// this process (write-protected), as an editor would refuse it.
    fn check_writable(&mut self) -> Result<(), FsError> {
        Ok(())
    }

    /// Appends bytes to the new content.
    fn write(&mut self, bytes: &[u8]) -> Result<(), FsError>;

    /// Appends `len` bytes of `from` (the object [`ByteStore::replace`]
    /// opened) starting at `offset`. Stores that can copy without moving the
    /// bytes through this process (`copy_file_range`, a server-side part
    /// copy) override this.
    fn copy(&mut self, from: &mut Self::Object, offset: u64, len: u64) -> Result<(), FsError> {
        copy_through(self, from, offset, len)
    }

    /// Puts the new content in place if `guard` holds at this moment,
    /// atomically: readers see the old bytes or the new, never a mix.
    /// Returns the new object's metadata token. A guard that fails is
    /// `stale-version` (changed or vanished) or `not-observed` (created by
    /// someone else meanwhile).
    fn commit(self, guard: Guard<'_>) -> Result<String, FsError>;

    /// Removes the object at the name instead, if `guard` (which must be
    /// [`Guard::Unchanged`]) holds at this moment: `stale-version` when it
    /// changed or vanished. By default a store cannot remove objects: it
    /// answers `invalid-input`, and nothing is changed.
    fn remove(self, guard: Guard<'_>, shown: &str) -> Result<(), FsError>
    where
        Self: Sized,
    {
        let _ = guard;
        Err(FsError::new(
            crate::ErrorCode::InvalidInput,
            format!("{shown} was left in place: this store cannot remove files"),
        ))
    }
}

/// Buffer of the default [`Replace::copy`].
const COPY_CHUNK: usize = 1 << 20;

/// The default [`Replace::copy`]: reads the range and writes it, through a
/// buffer of at most 1 MiB; stops early where `from` ends. For stores whose
/// native copy does not apply to some ranges (another filesystem, a part
/// too small to copy on the server).
pub fn copy_through<R: Replace + ?Sized>(
    replace: &mut R,
    from: &mut R::Object,
    offset: u64,
    len: u64,
) -> Result<(), FsError> {
    let mut buf = vec![0; len.min(COPY_CHUNK as u64) as usize];
    let (mut at, end) = (offset, offset + len);
    while at < end {
        let want = ((end - at) as usize).min(buf.len());
        let n = from.read_at(at, &mut buf[..want])?;
        if n == 0 {
            break;
        }
        replace.write(&buf[..n])?;
        at += n as u64;
    }
    Ok(())
}

/// A one-pass reader of one directory's entries.
pub trait Listing {
    /// The next at most `max` entries (at least one while any remain); empty
    /// at the end.
    fn next_entries(&mut self, max: u32) -> Result<Vec<DirEntry>, FsError>;
    /// How many entries were skipped because their names are not UTF-8.
    fn skipped(&self) -> u64;
}

impl Listing for crate::listing::Entries {
    fn next_entries(&mut self, max: u32) -> Result<Vec<DirEntry>, FsError> {
        Ok(crate::listing::Entries::next_entries(self, max))
    }

    fn skipped(&self) -> u64 {
        crate::listing::Entries::skipped(self)
    }
}

/// A chunked reader of one file's decoded text.
pub trait TextStream {
    /// The next chunk of at most `max_bytes` bytes of UTF-8, `None` at the end.
    fn next_chunk(&mut self, max_bytes: u32) -> Result<Option<String>, FsError>;
    /// Passes over the next text as [`Self::next_chunk`] would hand it out
    /// (decoded, checked and hashed alike) without handing it out: at most
    /// `max_bytes` bytes of whole characters, stopping just after the
    /// `max_lines`-th line feed; `None` at the end, and nothing passed over
    /// for a `max_lines` of 0.
    fn skip(&mut self, max_bytes: u32, max_lines: u64) -> Result<Option<Skipped>, FsError>;
    /// The version of everything streamed, once `next_chunk` or `skip`
    /// returned `None`; `None` for a stream that began past the start.
    fn version(&self) -> Option<Version>;
}

impl<T: Listing + ?Sized> Listing for Box<T> {
    fn next_entries(&mut self, max: u32) -> Result<Vec<DirEntry>, FsError> {
        (**self).next_entries(max)
    }

    fn skipped(&self) -> u64 {
        (**self).skipped()
    }
}

impl<T: TextStream + ?Sized> TextStream for Box<T> {
    fn next_chunk(&mut self, max_bytes: u32) -> Result<Option<String>, FsError> {
        (**self).next_chunk(max_bytes)
    }

    fn skip(&mut self, max_bytes: u32, max_lines: u64) -> Result<Option<Skipped>, FsError> {
        (**self).skip(max_bytes, max_lines)
    }

    fn version(&self) -> Option<Version> {
        (**self).version()
    }
}

//! [`LocalStore`]: a directory on the local disk as a byte store, confined
//! with cap-std; [`LocalProvider`] is the text layer over it.
//!
//! Every operation goes through a `cap_std::fs::Dir` opened on the root, so
//! `..`, absolute symlinks and symlinks whose target leaves the root fail at
//! each use, not only at resolve time. Opens never block (`O_NONBLOCK`, the
//! type checked on the descriptor). Replacements hold an exclusive `flock` on
//! the parent directory from [`ByteStore::replace`] to the commit, which
//! serialises threads and processes alike (see [`commit`]).

mod ahead;
mod aside;
mod commit;
mod list;
pub mod search;

use cap_std::ambient_authority;
use cap_std::fs::{Dir, File, Metadata, MetadataExt, OpenOptions, OpenOptionsExt};
use dsh_fs_core::layer::TextLayer;
use dsh_fs_core::listing::Entries;
use dsh_fs_core::store::{ByteStore, Object, ObjectMeta, Shortcuts, Target};
use dsh_fs_core::{EntryKind, ErrorCode, FsError, SearchQuery};
use rustix::fs::OFlags;
use rustix::io::Errno;
use std::io;
use std::path::{Path, PathBuf};

pub use commit::LocalReplace;

/// A workspace rooted at one local directory: the text layer over [`LocalStore`].
pub type LocalProvider = TextLayer<LocalStore, LocalShortcuts>;

/// The bytes of one local directory tree.
#[derive(Debug)]
pub struct LocalStore {
    dir: Dir,
    /// Absolute spellings of the root that absolute model paths may start with.
    roots: Vec<PathBuf>,
    /// Whether files with more than one hard link may be read and edited.
    hard_links: bool,
}

impl LocalStore {
    /// Opens `root` (which must be an existing directory) as the workspace.
    /// The error names the root: `workspace root /x: No such file or
    /// directory (os error 2)`.
    pub fn new(root: impl AsRef<Path>) -> io::Result<Self> {
        let root = root.as_ref();
        let named = |e: io::Error| {
            io::Error::new(e.kind(), format!("workspace root {}: {e}", root.display()))
        };
        let dir = Dir::open_ambient_dir(root, ambient_authority()).map_err(named)?;
        let absolute = std::path::absolute(root).map_err(named)?;
        let canonical = std::fs::canonicalize(root).map_err(named)?;
        let mut roots = vec![canonical];
        if roots[0] != absolute {
            roots.push(absolute);
        }
        Ok(LocalStore {
            dir,
            roots,
            hard_links: false,
        })
    }

    /// Allows reading and editing files that have other hard links. Off by
    /// default: a hard link is indistinguishable from its twin, which may lie
    /// outside the root, so such files are `sandbox-denied`. (Writes never
    /// modify a linked twin: they put a new file under the name.)
    pub fn allow_hard_links(mut self, allow: bool) -> Self {
        self.hard_links = allow;
        self
    }

    /// The canonical absolute path of the root.
    pub fn root(&self) -> &Path {
        &self.roots[0]
    }

    fn open_parent(&self, key: &str) -> io::Result<Dir> {
        self.dir.open_dir(parent_of(key))
    }
}

impl ByteStore for LocalStore {
    type Object = LocalObject;
    type Replace<'s> = LocalReplace;
    type Listing = Entries;

    fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    /// Symlinks inside the root resolved, so every spelling of a file has
    /// one key. For a path that does not exist yet, its deepest existing
    /// ancestor is resolved.
    fn identity(&self, rel: &str, shown: &str) -> Result<String, FsError> {
        if rel.is_empty() {
            return Ok(String::new());
        }
        let path = Path::new(rel);
        let mut missing: Vec<&std::ffi::OsStr> = Vec::new();
        let mut at = Some(path);
        // A final component that is not a symlink is kept by name: resolving
        // it would race with writers renaming new versions over it (the old
        // inode's name reads as "NAME (deleted)"). Its parents are resolved.
        match self.dir.symlink_metadata(path) {
            Ok(meta) if meta.file_type().is_symlink() => {}
            Ok(_) | Err(_) if path.parent().is_some() => {
                missing.extend(path.file_name());
                at = path.parent();
            }
            _ => {}
        }
        while let Some(p) = at.filter(|p| !p.as_os_str().is_empty()) {
            match self.dir.canonicalize(p) {
                Ok(mut real) => {
                    real.extend(missing.iter().rev());
                    return real
                        .to_str()
                        .map(|s| s.trim_start_matches("./").to_owned())
                        .ok_or_else(|| {
                            FsError::new(ErrorCode::InvalidInput, "the path is not UTF-8")
                        });
                }
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    missing.extend(p.file_name());
                    at = p.parent();
                }
                Err(e) => return Err(map_io(e, shown)),
            }
        }
        Ok(rel.to_owned())
    }

    fn stat(&self, target: &Target) -> Result<Option<ObjectMeta>, FsError> {
        match self.dir.metadata(rel_path(target.key())) {
            Ok(meta) => Ok(Some(object_meta(&meta))),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(map_io(e, target.display_path())),
        }
    }

    fn open(&self, target: &Target) -> Result<LocalObject, FsError> {
        let shown = target.display_path();
        open_regular(&self.dir, rel_path(target.key()), shown, self.hard_links)
    }

    fn list_dir(&self, target: &Target) -> Result<Entries, FsError> {
        list::list(&self.dir, target.key(), target.display_path())
    }

    /// Opens the parent directory (creating it when asked), takes its lock,
    /// then opens the current file, so what the layer reads is what the
    /// lock protects.
    fn replace(
        &self,
        target: &Target,
        create_parents: bool,
    ) -> Result<(LocalReplace, Option<LocalObject>), FsError> {
        let shown = target.display_path();
        let name = target.name().ok_or_else(|| {
            FsError::new(
                ErrorCode::NotRegularFile,
                format!("{shown} is the workspace root, a directory"),
            )
        })?;
        let mut created = commit::Created::none();
        let parent = match self.open_parent(target.key()) {
            Ok(dir) => dir,
            Err(e) if e.kind() == io::ErrorKind::NotFound && create_parents => {
                created = commit::Created::make(&self.dir, parent_of(target.key()))
                    .map_err(|e| map_io(e, shown))?;
                self.open_parent(target.key())
                    .map_err(|e| map_io(e, shown))?
            }
            Err(e) => return Err(map_io(e, shown)),
        };
        let lock = commit::lock(&parent, shown)?;
        let current = match open_regular(&parent, Path::new(name), shown, self.hard_links) {
            Ok(found) => Some(found),
            Err(e) if e.code == ErrorCode::NotFound => None,
            Err(e) => return Err(e),
        };
        let replace = LocalReplace::new(lock, name, shown, current.as_ref(), created)?;
        Ok((replace, current))
    }
}

/// What the local disk does beyond the byte seam: a read that resolves and
/// opens in one step, long work stopped at the call's deadline, and glob and
/// grep as a parallel walk over held directory descriptors ([`crate::search`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct LocalShortcuts;

impl Shortcuts<LocalStore> for LocalShortcuts {
    /// One `openat2` beneath the root that follows no link at all: when it
    /// opens a regular file, no component of `rel` is a link, so `rel` is
    /// the key the store's `identity` would give. Anything else (a link on
    /// the way, an escape, absence, a kernel without `openat2`) is left to
    /// the resolve-then-open path, which tells the cases apart.
    fn open_direct(&self, store: &LocalStore, rel: &str) -> Option<LocalObject> {
        if rel.is_empty() {
            return None;
        }
        open_unlinked(&store.dir, rel, store.hard_links)
    }

    /// Long work stops at the call's deadline.
    fn progress(&self, _: &LocalStore, target: &Target) -> Result<(), FsError> {
        dsh_fs_core::deadline::check(target.display_path())
    }

    /// The parallel walk and search of [`crate::search`], from the path the
    /// model gave (a link on the way is refused as the portable walk refuses it).
    fn search(
        &self,
        store: &LocalStore,
        target: &Target,
        query: &SearchQuery,
    ) -> Result<Option<String>, FsError> {
        let shown = target.display_path();
        let at = if shown == "." { "" } else { shown };
        let budget = dsh_fs_search::Budget::for_call();
        crate::search::search(&store.dir, at, query, store.hard_links, &budget).map(Some)
    }
}

/// One open regular file, read with `pread`.
#[derive(Debug)]
pub struct LocalObject {
    file: File,
    /// The descriptor's metadata when opened, for the owner and mode a
    /// replacement keeps.
    stat: Metadata,
    meta: ObjectMeta,
    shown: String,
    /// Where the last read ended, to see a pass from start to end.
    next: u64,
    /// The thread reading ahead of such a pass, once one started.
    ahead: Option<ahead::ReadAhead>,
    /// Whether one was started (a pass gets one at most).
    started: bool,
}

impl LocalObject {
    /// Whether a read into `spare` bytes at `offset` continues a pass that
    /// has a large part of the file left: worth a thread reading ahead.
    fn reads_on(&self, offset: u64, spare: usize) -> bool {
        !self.started
            && offset == self.next
            && offset > 0
            && spare >= ahead::BLOCK / 4
            && self
                .meta
                .size
                .is_some_and(|size| size.saturating_sub(offset) >= ahead::MIN_LEFT)
    }
}

impl Object for LocalObject {
    fn meta(&self) -> &ObjectMeta {
        &self.meta
    }

    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> Result<usize, FsError> {
        loop {
            match rustix::io::pread(&self.file, &mut *buf, offset) {
                Err(Errno::INTR) => continue,
                other => return other.map_err(|e| map_io(e.into(), &self.shown)),
            }
        }
    }

    /// `pread` into the spare capacity itself: nothing to zero first. From
    /// the second read of a pass over a large file on, the bytes come from
    /// a thread reading ahead ([`ahead`]).
    fn read_append(&mut self, offset: u64, buf: &mut Vec<u8>) -> Result<usize, FsError> {
        if self.reads_on(offset, buf.capacity() - buf.len()) {
            self.started = true;
            self.ahead = ahead::ReadAhead::start(&self.file, offset).ok();
        }
        if let Some(ahead) = &mut self.ahead {
            if ahead.at() == offset
                && let Some(read) = ahead.read_append(buf)
            {
                return read.map_err(|e| map_io(e, &self.shown));
            }
            // A read elsewhere, or the thread is gone: read here.
            self.ahead = None;
        }
        let n = loop {
            match rustix::io::pread(&self.file, rustix::buffer::spare_capacity(buf), offset) {
                Err(Errno::INTR) => continue,
                other => break other.map_err(|e| map_io(e.into(), &self.shown))?,
            }
        };
        self.next = offset + n as u64;
        Ok(n)
    }

    /// `fstat` of the open descriptor: a rename over the name does not
    /// concern the bytes read through it, an in-place write does.
    fn token_now(&mut self) -> Result<String, FsError> {
        let now = self.file.metadata().map_err(|e| map_io(e, &self.shown))?;
        if token_fields(&now) == token_fields(&self.stat) {
            return Ok(self.meta.token.clone());
        }
        Ok(meta_token(&now))
    }
}

/// `key` as a path for cap-std: the root itself is `.`.
fn rel_path(key: &str) -> &Path {
    Path::new(if key.is_empty() { "." } else { key })
}

fn parent_of(key: &str) -> &Path {
    rel_path(key.rsplit_once('/').map_or("", |(p, _)| p))
}

/// Opens a regular file for reading without ever blocking: `O_NONBLOCK`
/// keeps a FIFO's open from waiting for a writer, and the type is checked on
/// the open descriptor, so a swap after a check cannot slip a FIFO in.
fn open_regular(
    dir: &Dir,
    path: &Path,
    shown: &str,
    hard_links: bool,
) -> Result<LocalObject, FsError> {
    let flags = (OFlags::NONBLOCK | OFlags::NOCTTY).bits() as i32;
    let mut options = OpenOptions::new();
    options.read(true).custom_flags(flags);
    let file = dir
        .open_with(path, &options)
        .map_err(|e| map_io(e, shown))?;
    regular(file, shown, hard_links)
}

/// [`open_regular`] of a path in which no component is a link, in one
/// `openat2` confined beneath `dir`; `None` when it fails for any reason.
#[cfg(target_os = "linux")]
fn open_unlinked(dir: &Dir, rel: &str, hard_links: bool) -> Option<LocalObject> {
    use rustix::fs::{Mode, ResolveFlags};
    let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
    let resolve = ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
    let fd = loop {
        match rustix::fs::openat2(dir, rel, flags, Mode::empty(), resolve) {
            Err(Errno::INTR) => continue,
            other => break other.ok()?,
        }
    };
    let file = File::from_std(std::fs::File::from(fd));
    regular(file, rel, hard_links).ok()
}

#[cfg(not(target_os = "linux"))]
fn open_unlinked(_: &Dir, _: &str, _: bool) -> Option<LocalObject> {
    None
}

/// `file` as an object if it is a regular file it may read (the type and the
/// link count checked on the open descriptor).
fn regular(file: File, shown: &str, hard_links: bool) -> Result<LocalObject, FsError> {
    let stat = file.metadata().map_err(|e| map_io(e, shown))?;
    check_regular(
        stat.is_file(),
        stat.is_dir(),
        stat.nlink(),
        shown,
        hard_links,
    )?;
    Ok(LocalObject {
        meta: object_meta(&stat),
        file,
        stat,
        shown: shown.to_owned(),
        next: 0,
        ahead: None,
        started: false,
    })
}

/// What `read` refuses of an open descriptor, from its type and link count:
/// anything but a regular file, and (unless `hard_links`) a file with more
/// than one hard link. Search opens files through the same check.
fn check_regular(
    is_file: bool,
    is_dir: bool,
    nlink: u64,
    shown: &str,
    hard_links: bool,
) -> Result<(), FsError> {
    if !is_file {
        let what = if is_dir {
            "a directory"
        } else {
            "not a regular file (FIFO, socket or device)"
        };
        return Err(FsError::new(
            ErrorCode::NotRegularFile,
            format!("{shown} is {what}"),
        ));
    }
    if nlink > 1 && !hard_links {
        return Err(FsError::new(
            ErrorCode::SandboxDenied,
            format!(
                "{shown} has {nlink} hard links, and a linked copy may lie outside the workspace"
            ),
        ));
    }
    Ok(())
}

fn object_meta(meta: &Metadata) -> ObjectMeta {
    ObjectMeta {
        kind: if meta.is_file() {
            EntryKind::File
        } else if meta.is_dir() {
            EntryKind::Directory
        } else {
            EntryKind::Other
        },
        size: Some(meta.len()),
        token: meta_token(meta),
    }
}

/// The metadata token of `m`.
fn meta_token(m: &Metadata) -> String {
    token_of(token_fields(m))
}

/// What the token is made of: inode, size, and mtime and ctime in nanoseconds.
fn token_fields(m: &Metadata) -> (u64, u64, i128, i128) {
    (
        m.ino(),
        m.size(),
        ns((m.mtime(), m.mtime_nsec())),
        ns((m.ctime(), m.ctime_nsec())),
    )
}

/// The metadata token: inode, size, mtime and ctime in nanoseconds.
fn token(ino: u64, size: u64, mtime: (i64, i64), ctime: (i64, i64)) -> String {
    token_of((ino, size, ns(mtime), ns(ctime)))
}

fn ns((s, n): (i64, i64)) -> i128 {
    (s as i128) * 1_000_000_000 + n as i128
}

/// The fields in hex, `.` between them, as `{:x}` writes them (written out
/// by hand: this runs twice a read).
fn token_of((ino, size, mtime, ctime): (u64, u64, i128, i128)) -> String {
    let mut token = String::with_capacity(64);
    push_hex(&mut token, ino.into());
    token.push('.');
    push_hex(&mut token, size.into());
    token.push('.');
    push_hex(&mut token, mtime as u128);
    token.push('.');
    push_hex(&mut token, ctime as u128);
    token
}

/// `v` in lowercase hex without leading zeros, as `{:x}` writes it (a
/// negative time as its 128-bit two's complement).
fn push_hex(out: &mut String, v: u128) {
    let digits = (128 - v.leading_zeros()).div_ceil(4).max(1);
    for i in (0..digits).rev() {
        let d = (v >> (i * 4)) as u32 & 0xf;
        out.push(char::from_digit(d, 16).unwrap_or('0'));
    }
}

/// Maps an I/O error to the seam's codes. cap-std reports an escape from the
/// root as `PermissionDenied` without an OS error number.
fn map_io(e: io::Error, shown: &str) -> FsError {
    match (e.kind(), e.raw_os_error().map(Errno::from_raw_os_error)) {
        (io::ErrorKind::PermissionDenied, None) => FsError::sandbox_denied(shown),
        (_, Some(Errno::LOOP)) => dsh_fs_core::seam::symlink_loop(shown),
        _ => dsh_fs_core::seam::from_io(&e, shown),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open(store: &LocalStore, name: &str) -> LocalObject {
        let key = store.identity(name, name).unwrap();
        store.open(&Target::new(name.into(), key)).unwrap()
    }

    /// Appends from `offset` until the end in buffers of `room` bytes.
    fn pass(o: &mut LocalObject, mut offset: u64, room: usize, until: Option<u64>) -> Vec<u8> {
        let mut out = Vec::new();
        loop {
            let mut buf = Vec::with_capacity(room);
            let n = o.read_append(offset, &mut buf).unwrap();
            assert_eq!(buf.len(), n);
            assert!(n <= room, "{n} bytes appended into room for {room}");
            if n == 0 || until.is_some_and(|u| offset + n as u64 >= u) {
                out.extend_from_slice(&buf);
                return out;
            }
            out.extend_from_slice(&buf);
            offset += n as u64;
        }
    }

    /// A pass over a large file, read ahead on another thread, gives the
    /// bytes a plain read gives, whatever the buffer and wherever it jumps.
    #[test]
    fn reading_ahead_gives_the_bytes_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let bytes: Vec<u8> = (0..(9u32 << 20) + 12_345)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 11) as u8)
            .collect();
        std::fs::write(dir.path().join("big.bin"), &bytes).unwrap();
        let store = LocalStore::new(dir.path()).unwrap();
        for room in [
            ahead::BLOCK,
            ahead::BLOCK - 3,
            ahead::BLOCK + 1000,
            100_000,
            1 << 20,
        ] {
            let mut o = open(&store, "big.bin");
            assert!(pass(&mut o, 0, room, None) == bytes, "room {room}");
            assert!(o.started, "a pass in rooms of {room} reads ahead");
        }
        // Jumping back mid-pass stops reading ahead; reads go on from there.
        let mut o = open(&store, "big.bin");
        let head = pass(&mut o, 0, ahead::BLOCK, Some(3 << 20));
        assert!(head[..] == bytes[..head.len()]);
        assert!(o.ahead.is_some());
        assert!(pass(&mut o, 1000, ahead::BLOCK, None)[..] == bytes[1000..]);
        assert!(o.ahead.is_none());
        // A file cut short during the pass ends where it now ends.
        let mut o = open(&store, "big.bin");
        let head = pass(&mut o, 0, ahead::BLOCK, Some(1 << 20));
        std::fs::OpenOptions::new()
            .write(true)
            .open(dir.path().join("big.bin"))
            .unwrap()
            .set_len(5 << 20)
            .unwrap();
        let rest = pass(&mut o, head.len() as u64, ahead::BLOCK, None);
        let all = [head, rest].concat();
        assert!(all[..] == bytes[..5 << 20], "{} bytes", all.len());
    }

    #[test]
    fn the_token_is_written_as_format_writes_it() {
        for (ino, size, mtime, ctime) in [
            (0, 0, (0, 0), (0, 0)),
            (
                1,
                4096,
                (1_700_000_000, 123_456_789),
                (1_700_000_001, 999_999_999),
            ),
            (u64::MAX, u64::MAX, (i64::MAX, 999_999_999), (i64::MIN, 0)),
            (0xabc, 15, (-1, 0), (-5, 7)),
        ] {
            let ns = |(s, n): (i64, i64)| (s as i128) * 1_000_000_000 + n as i128;
            let expected = format!("{ino:x}.{size:x}.{:x}.{:x}", ns(mtime), ns(ctime));
            assert_eq!(super::token(ino, size, mtime, ctime), expected);
        }
    }
}

//! The one commit point of the local disk: a replacement file is written
//! aside, made to carry what the user owns (owner, group, mode, extended
//! attributes and with them ACLs), made durable, and only then put in place
//! under a guard that is checked again right before it is, so a
//! neighbour that does not take our lock is caught rather than overwritten.
//!
//! The replacement is exchanged with what is at the name (`RENAME_EXCHANGE`)
//! and what comes out is checked to be the file the guard checked, or put
//! back: a neighbour's save that lands between the check and the exchange
//! is not lost. What remains is a write into the old file by a process that
//! opened it before the exchange, and filesystems without exchange, where
//! the window is the two system calls between the check and the rename.
//! Creates have none: the file is linked with `linkat`, which fails when the
//! name exists.

use super::aside::{create_named, keep_attributes, link_anonymous, link_unique, temp_name};
use super::{LocalObject, map_io, token};
use cap_std::fs::{Dir, File, Metadata, MetadataExt};
use dsh_fs_core::deadline;
use dsh_fs_core::seam::vanished;
use dsh_fs_core::store::{Guard, Replace, copy_through};
use dsh_fs_core::{ErrorCode, FsError};
use rustix::fs::{AtFlags, FlockOperation, Mode, OFlags as O, RenameFlags};
use rustix::io::Errno;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How long a lock is waited for outside a tool call (no deadline).
const LOCK_WAIT: Duration = Duration::from_secs(30);

/// Takes the exclusive lock that serialises mutations in `dir`, waiting at
/// most until the call's deadline; released when the handle is dropped.
/// (cap-std opens directories with `O_PATH`, which cannot be locked or
/// synced, hence a readable handle.)
pub(super) fn lock(dir: &Dir, shown: &str) -> Result<File, FsError> {
    let handle = dir.open(".").map_err(|e| map_io(e, shown))?;
    let until = Instant::now() + deadline::remaining().unwrap_or(LOCK_WAIT);
    let mut pause = Duration::from_millis(1);
    loop {
        match rustix::fs::flock(&handle, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => return Ok(handle),
            Err(Errno::WOULDBLOCK) => {}
            Err(Errno::INTR) => continue,
            Err(e) => return Err(map_io(e.into(), shown)),
        }
        let now = Instant::now();
        if now >= until {
            return Err(FsError::new(
                ErrorCode::Busy,
                format!(
                    "another process holds the lock on the directory of {shown}; nothing was changed"
                ),
            ));
        }
        std::thread::sleep(pause.min(until - now));
        pause = (pause * 2).min(Duration::from_millis(50));
    }
}

/// `permission-denied` when this process may not write `name`, as an editor
/// would refuse it: write-protected by its mode or ACL, or on a read-only
/// mount. Replacing by rename would otherwise succeed anyway.
fn check_writable(dir: &File, name: &str, shown: &str) -> Result<(), FsError> {
    use rustix::fs::Access;
    match rustix::fs::accessat(dir, name, Access::WRITE_OK, AtFlags::EACCESS) {
        Ok(()) => Ok(()),
        Err(Errno::ACCESS | Errno::PERM) => Err(FsError::new(
            ErrorCode::PermissionDenied,
            format!("{shown} is write-protected; nothing was changed"),
        )),
        Err(e) => Err(map_io(e.into(), shown)),
    }
}

/// The new content of one name in a locked directory (see
/// [`ByteStore::replace`](dsh_fs_core::store::ByteStore::replace)).
///
/// The content goes into an anonymous `O_TMPFILE` (a kill while writing
/// leaves nothing), made on the first byte. At the commit it gets the
/// original's owner, attributes and mode and is fsynced; then, past the
/// call's deadline, nothing happens (`aborted`). A create is one `linkat` to
/// the name; a replacement is linked under a fresh temp name of its own
/// (`.NAME.dsh-fs-NONCE.tmp`, never one a user file has), the guard is
/// checked, and it is exchanged with the name (renamed over it where the
/// filesystem cannot exchange). Only temp names this replacement made are
/// ever removed. A process killed between link and exchange leaves its temp
/// file behind.
#[derive(Debug)]
pub struct LocalReplace {
    /// The parent directory, readable and locked while this lives.
    dir: File,
    name: String,
    shown: String,
    /// The file being replaced (its own descriptor) and its metadata: its
    /// owner, mode and attributes are kept.
    original: Option<(File, Metadata)>,
    /// The replacement file, once made.
    out: Option<std::fs::File>,
    /// The temp name this replacement linked or created, while it has one.
    tmp: Option<String>,
    /// Bytes written so far.
    len: u64,
    /// Bytes whose writeback to the disk was started.
    started: u64,
    /// The parent directories this replacement created, removed again
    /// unless it commits.
    created: Created,
}

/// Directories made for a create, removed again (when still empty) if the
/// create does not commit: a failed write leaves the tree as it found it.
#[derive(Debug)]
pub(super) struct Created {
    root: Option<Dir>,
    /// Made by this call, outermost first.
    dirs: Vec<PathBuf>,
}

impl Created {
    /// Nothing made.
    pub(super) fn none() -> Created {
        Created {
            root: None,
            dirs: Vec::new(),
        }
    }

    /// Makes `path` and its missing ancestors below `root`, remembering
    /// those this call made (one another process made meanwhile is not).
    pub(super) fn make(root: &Dir, path: &Path) -> io::Result<Created> {
        let mut made = Created {
            root: Some(root.try_clone()?),
            dirs: Vec::new(),
        };
        let mut at = PathBuf::new();
        for part in path.components() {
            at.push(part);
            match root.create_dir(&at) {
                Ok(()) => made.dirs.push(at.clone()),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(e),
            }
        }
        Ok(made)
    }

    /// Keeps what was made: the create committed.
    fn keep(&mut self) {
        self.dirs.clear();
    }
}

impl Drop for Created {
    fn drop(&mut self) {
        if let Some(root) = &self.root {
            // Innermost first; one that is no longer empty stays, with its parents.
            for dir in self.dirs.iter().rev() {
                if root.remove_dir(dir).is_err() {
                    break;
                }
            }
        }
    }
}

/// How many new bytes start their writeback: the disk works while the rest
/// is written, and the fsync of the commit waits for less.
const WRITEBACK_STEP: u64 = 8 << 20;

impl LocalReplace {
    pub(super) fn new(
        dir: File,
        name: &str,
        shown: &str,
        original: Option<&LocalObject>,
        created: Created,
    ) -> Result<Self, FsError> {
        let original = match original {
            Some(o) => {
                let file = o.file.try_clone().map_err(|e| map_io(e, shown))?;
                Some((file, o.stat.clone()))
            }
            None => None,
        };
        Ok(LocalReplace {
            dir,
            name: name.to_owned(),
            shown: shown.to_owned(),
            original,
            out: None,
            tmp: None,
            len: 0,
            started: 0,
            created,
        })
    }

    fn fail(&self, e: Errno) -> FsError {
        map_io(e.into(), &self.shown)
    }

    fn mode(&self) -> Option<u32> {
        self.original.as_ref().map(|(_, m)| m.mode() & 0o7777)
    }

    /// The replacement file, made on first use.
    fn out(&mut self) -> Result<&mut std::fs::File, FsError> {
        if self.out.is_none() {
            let create_mode = Mode::from_raw_mode(self.mode().unwrap_or(0o666));
            let flags = O::TMPFILE | O::WRONLY | O::CLOEXEC;
            let fd = match rustix::fs::openat(&self.dir, ".", flags, create_mode) {
                Ok(fd) => fd,
                // Filesystems without O_TMPFILE get a named temp file from the start.
                Err(Errno::OPNOTSUPP | Errno::ISDIR | Errno::INVAL | Errno::NOENT) => {
                    let (fd, named) = create_named(&self.dir, &self.name, create_mode)
                        .map_err(|e| self.fail(e))?;
                    self.tmp = Some(named);
                    fd
                }
                Err(e) => return Err(self.fail(e)),
            };
            self.out = Some(std::fs::File::from(fd));
        }
        Ok(self.out.as_mut().expect("made above"))
    }

    /// Counts `n` more bytes written and starts the writeback of each
    /// [`WRITEBACK_STEP`] (a hint: its failure is the fsync's to report).
    fn wrote(&mut self, n: u64) {
        self.len += n;
        if self.len - self.started >= WRITEBACK_STEP
            && let Some(out) = &self.out
        {
            use std::os::fd::AsRawFd;
            let (from, count) = (self.started as i64, (self.len - self.started) as i64);
            // SAFETY: a plain system call on a descriptor this owns; no memory is passed.
            unsafe {
                libc::sync_file_range(out.as_raw_fd(), from, count, libc::SYNC_FILE_RANGE_WRITE)
            };
            self.started = self.len;
        }
    }

    /// Everything up to and including the exchange (or rename, or link);
    /// on error the caller's drop removes the temp name.
    fn put_in_place(&mut self, guard: Guard<'_>) -> Result<(), FsError> {
        self.out()?;
        let fail = |e: Errno| map_io(e.into(), &self.shown);
        let (dir, name, shown) = (&self.dir, self.name.as_str(), self.shown.as_str());
        let file = self.out.as_ref().expect("made above");
        if let Some((original, meta)) = &self.original {
            keep_attributes(original, meta, file);
            // The create mode is masked by the umask, and chown clears
            // set-id bits: the old mode is set last, exactly.
            let mode = Mode::from_raw_mode(meta.mode() & 0o7777);
            rustix::fs::fchmod(file, mode).map_err(fail)?;
        }
        rustix::fs::fsync(file).map_err(fail)?;
        deadline::check(shown)?;
        if matches!(guard, Guard::Absent) {
            let linked = match self.tmp.as_deref() {
                None => link_anonymous(file, dir, name),
                Some(named) => {
                    rustix::fs::renameat_with(dir, named, dir, name, RenameFlags::NOREPLACE)
                }
            };
            return match linked {
                Ok(()) => {
                    self.tmp = None;
                    Ok(())
                }
                Err(Errno::EXIST) => Err(FsError::new(
                    ErrorCode::NotObserved,
                    format!(
                        "{shown} was created by another process during this write; nothing was changed"
                    ),
                )),
                Err(e) => Err(fail(e)),
            };
        }
        let named = match self.tmp.clone() {
            Some(named) => named,
            None => {
                let named = link_unique(file, dir, name).map_err(fail)?;
                self.tmp = Some(named.clone());
                named
            }
        };
        let Guard::Unchanged(expected) = guard else {
            rustix::fs::renameat(dir, &named, dir, name).map_err(fail)?;
            self.tmp = None;
            return Ok(());
        };
        let checked = match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) if stat_token(&st) == expected => st,
            Ok(_) => return Err(FsError::stale(shown)),
            Err(Errno::NOENT) => return Err(vanished(shown)),
            Err(e) => return Err(fail(e)),
        };
        // Exchanged rather than renamed over: what was at the name is kept
        // under the temp name until it is known to be the file just checked.
        // A neighbour's save that landed since (an editor renames its new
        // file over ours) or an in-place write since is put back, not lost.
        match rustix::fs::renameat_with(dir, &named, dir, name, RenameFlags::EXCHANGE) {
            Ok(()) => {}
            // A filesystem without exchange: rename over, as POSIX allows.
            Err(Errno::INVAL | Errno::NOSYS | Errno::OPNOTSUPP) => {
                rustix::fs::renameat(dir, &named, dir, name).map_err(fail)?;
                self.tmp = None;
                return Ok(());
            }
            Err(Errno::NOENT) => return Err(vanished(shown)),
            Err(e) => return Err(fail(e)),
        }
        // The temp name now holds what was replaced: removed here when it is
        // the file checked, so the directory's sync below records both.
        // Unless it cannot be checked: then it is put back too.
        let replaced = rustix::fs::statat(dir, &named, AtFlags::SYMLINK_NOFOLLOW);
        if let Ok(st) = &replaced
            && same_content(st, &checked)
        {
            self.tmp = None;
            // Left behind if this fails: a stray temp name, not a lost file.
            let _ = rustix::fs::unlinkat(dir, &named, AtFlags::empty());
            return Ok(());
        }
        let why = match replaced {
            Ok(_) => FsError::stale(shown),
            Err(e) => fail(e),
        };
        match rustix::fs::renameat_with(dir, &named, dir, name, RenameFlags::EXCHANGE) {
            Ok(()) => Err(why),
            Err(e) => {
                // Their file stays under the temp name rather than be removed.
                self.tmp = None;
                Err(FsError::new(
                    ErrorCode::IoError,
                    format!(
                        "{shown} changed during this write and could not be put back ({e}); \
                         the changed file was kept beside it as {named}"
                    ),
                ))
            }
        }
    }
}

/// Whether two stats of a name show the same file with the same content:
/// same inode, size and modification time. (The change time is left out:
/// the exchange itself sets it.)
fn same_content(a: &rustix::fs::Stat, b: &rustix::fs::Stat) -> bool {
    (a.st_dev, a.st_ino, a.st_size, a.st_mtime, a.st_mtime_nsec)
        == (b.st_dev, b.st_ino, b.st_size, b.st_mtime, b.st_mtime_nsec)
}

impl Replace for LocalReplace {
    type Object = LocalObject;

    fn check_writable(&mut self) -> Result<(), FsError> {
        check_writable(&self.dir, &self.name, &self.shown)
    }

    fn write(&mut self, bytes: &[u8]) -> Result<(), FsError> {
        use std::io::Write;
        let out = self.out()?;
        out.write_all(bytes).map_err(|e| map_io(e, &self.shown))?;
        self.wrote(bytes.len() as u64);
        Ok(())
    }

    /// `copy_file_range`: the kernel copies (or, on filesystems that share
    /// extents, reflinks) the range without it passing through this
    /// process; where it cannot (another filesystem), the bytes are read
    /// and written.
    fn copy(&mut self, from: &mut LocalObject, offset: u64, len: u64) -> Result<(), FsError> {
        let (mut at, end) = (offset, offset.saturating_add(len));
        while at < end {
            let out = self.out()?;
            let want = (end - at).min(WRITEBACK_STEP) as usize;
            match rustix::fs::copy_file_range(&from.file, Some(&mut at), &*out, None, want) {
                Ok(n) if n > 0 => self.wrote(n as u64),
                Err(Errno::INTR) => {}
                // Some filesystems copy nothing rather than fail: reading
                // tells a refusal from the end of the file.
                Ok(_) | Err(Errno::XDEV | Errno::NOSYS | Errno::OPNOTSUPP | Errno::INVAL) => {
                    return copy_through(self, from, at, end - at);
                }
                Err(e) => return Err(self.fail(e)),
            }
        }
        Ok(())
    }

    /// Once the replacement is in place nothing turns into an error: the
    /// directory's fsync is best effort (the change is made and visible; an
    /// error would say it was not), and the version is read from the
    /// replacement's own descriptor, not from a name a neighbour may have
    /// replaced since.
    fn commit(mut self, guard: Guard<'_>) -> Result<String, FsError> {
        self.put_in_place(guard)?;
        self.created.keep();
        let _ = rustix::fs::fsync(&self.dir);
        // The replaced file is unlinked: the last close of it frees its
        // blocks (a third of a 1 MiB edit's time here, with online discard),
        // done off the answer's path.
        if let Some((replaced, _)) = self.original.take() {
            close_later(replaced);
        }
        let out = self.out.as_ref().expect("put in place");
        let st = rustix::fs::fstat(out).map_err(|e| self.fail(e))?;
        Ok(stat_token(&st))
    }

    /// Moves the file aside under a temp name first, and removes what was
    /// moved only once it is known to be the file the guard checked: a
    /// neighbour's save that landed between the check and the move is put
    /// back, not lost.
    fn remove(self, guard: Guard<'_>, shown: &str) -> Result<(), FsError> {
        let (dir, name) = (&self.dir, self.name.as_str());
        let fail = |e: Errno| map_io(e.into(), shown);
        deadline::check(shown)?;
        let Guard::Unchanged(expected) = guard else {
            return Err(FsError::new(
                ErrorCode::InvalidInput,
                format!("{shown} is removed only while it is a version named; nothing was changed"),
            ));
        };
        let checked = match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) if stat_token(&st) == expected => st,
            Ok(_) => return Err(FsError::stale(shown)),
            Err(Errno::NOENT) => return Err(vanished(shown)),
            Err(e) => return Err(fail(e)),
        };
        let aside = loop {
            let named = temp_name(name);
            match rustix::fs::renameat_with(dir, name, dir, &named, RenameFlags::NOREPLACE) {
                Ok(()) => break named,
                Err(Errno::EXIST) => continue,
                Err(Errno::NOENT) => return Err(vanished(shown)),
                // A filesystem without the flag: unlinked right after the check.
                Err(Errno::INVAL | Errno::NOSYS | Errno::OPNOTSUPP) => {
                    rustix::fs::unlinkat(dir, name, AtFlags::empty()).map_err(fail)?;
                    let _ = rustix::fs::fsync(dir);
                    return Ok(());
                }
                Err(e) => return Err(fail(e)),
            }
        };
        match rustix::fs::statat(dir, &aside, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) if same_content(&st, &checked) => {
                rustix::fs::unlinkat(dir, &aside, AtFlags::empty()).map_err(fail)?;
                let _ = rustix::fs::fsync(dir);
                Ok(())
            }
            _ => {
                // Not the file checked: back where it was (unless a new one
                // took the name meanwhile: then it keeps the temp name).
                let _ = rustix::fs::renameat_with(dir, &aside, dir, name, RenameFlags::NOREPLACE);
                Err(FsError::stale(shown))
            }
        }
    }
}

impl Drop for LocalReplace {
    fn drop(&mut self) {
        if let Some(named) = &self.tmp {
            let _ = rustix::fs::unlinkat(&self.dir, named, AtFlags::empty());
        }
    }
}

/// Closes `file` on a thread of its own (one per process, made on first
/// use), or here if that thread cannot be made. Only for a handle whose
/// close has nothing to report: a file read from, or one replaced.
fn close_later(file: File) {
    use std::sync::OnceLock;
    use std::sync::mpsc::{Sender, channel};
    static CLOSER: OnceLock<Option<Sender<File>>> = OnceLock::new();
    let closer = CLOSER.get_or_init(|| {
        let (send, receive) = channel::<File>();
        std::thread::Builder::new()
            .name("dsh-fs-close".into())
            .spawn(move || receive.into_iter().for_each(drop))
            .ok()
            .map(|_| send)
    });
    // A send that fails hands the file back, dropped here.
    if let Some(send) = closer {
        let _ = send.send(file);
    }
}

fn stat_token(st: &rustix::fs::Stat) -> String {
    token(
        st.st_ino,
        st.st_size as u64,
        (st.st_mtime, st.st_mtime_nsec as i64),
        (st.st_ctime, st.st_ctime_nsec as i64),
    )
}

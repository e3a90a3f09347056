//! The one commit point of the local disk: a replacement file is written
//! aside, made to carry what the user owns (owner, group, mode, extended
//! attributes and with them ACLs), made durable, and only then put in place
//! under a guard that is checked again right before the rename, so a
//! neighbour that does not take our lock is caught rather than overwritten.
//!
//! The residual window is between that last `stat` and the `rename`: two
//! system calls, microseconds. Creates have none: the file is linked with
//! `linkat`, which fails when the name exists.

use super::{map_io, meta_token, token};
use crate::deadline;
use cap_std::fs::{Dir, File, Metadata, MetadataExt};
use dsh_fs_core::seam::vanished;
use dsh_fs_core::{ErrorCode, FsError};
use rustix::fs::{AtFlags, FlockOperation, Mode, OFlags as O};
use rustix::io::Errno;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// What must hold at the moment of the commit.
pub(super) enum Guard<'a> {
    /// The name must not exist (a create).
    Absent,
    /// The name must still be the file that was checked: same inode, size,
    /// mtime and ctime as `Metadata`.
    Unchanged(&'a Metadata),
    /// Nothing (an unconditional write).
    None,
}

/// The file being replaced, whose owner, mode and attributes are kept.
pub(super) struct Original<'a> {
    pub file: &'a File,
    pub meta: &'a Metadata,
}

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
pub(super) fn check_writable(dir: &File, name: &str, shown: &str) -> Result<(), FsError> {
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

/// Replaces (or creates) `name` in the locked directory `dir` by what
/// `fill` writes, atomically and durably, and returns the new file's
/// metadata token.
///
/// The content goes into an anonymous `O_TMPFILE` (a kill while writing
/// leaves nothing), gets `original`'s owner, attributes and mode, is fsynced;
/// then, past the call's deadline, nothing happens (`aborted`). A create is
/// one `linkat` to the name; a replacement is linked under a fresh temp name
/// of its own (`.NAME.dsh-fs-NONCE.tmp`, never one a user file has), the
/// guard is checked, and it is renamed over the name. Only temp names this
/// call made are ever removed. A process killed between link and rename
/// leaves its temp file behind.
pub(super) fn replace(
    dir: &File,
    name: &str,
    original: Option<Original<'_>>,
    guard: Guard<'_>,
    shown: &str,
    fill: impl FnOnce(&mut std::fs::File) -> Result<(), FsError>,
) -> Result<String, FsError> {
    let fail = |e: Errno| map_io(e.into(), shown);
    let mode = original.as_ref().map(|o| o.meta.mode() & 0o7777);
    let create_mode = Mode::from_raw_mode(mode.unwrap_or(0o666));
    // `tmp`: the temp name this call linked or created, once it did.
    let (fd, mut tmp) =
        match rustix::fs::openat(dir, ".", O::TMPFILE | O::WRONLY | O::CLOEXEC, create_mode) {
            Ok(fd) => (fd, None),
            // Filesystems without O_TMPFILE get a named temp file from the start.
            Err(Errno::OPNOTSUPP | Errno::ISDIR | Errno::INVAL | Errno::NOENT) => {
                let (fd, named) = create_named(dir, name, create_mode).map_err(fail)?;
                (fd, Some(named))
            }
            Err(e) => return Err(fail(e)),
        };
    let mut file = std::fs::File::from(fd);
    let committed = (|| -> Result<(), FsError> {
        fill(&mut file)?;
        if let Some(original) = &original {
            keep_attributes(original, &file);
        }
        if let Some(mode) = mode {
            // The create mode is masked by the umask, and chown clears
            // set-id bits: the old mode is set last, exactly.
            rustix::fs::fchmod(&file, Mode::from_raw_mode(mode)).map_err(fail)?;
        }
        rustix::fs::fsync(&file).map_err(fail)?;
        deadline::check(shown)?;
        if matches!(guard, Guard::Absent) {
            return match tmp.as_deref() {
                None => link_anonymous(&file, dir, name),
                Some(named) => {
                    use rustix::fs::RenameFlags;
                    rustix::fs::renameat_with(dir, named, dir, name, RenameFlags::NOREPLACE)
                }
            }
            .map_err(|e| match e {
                Errno::EXIST => FsError::new(
                    ErrorCode::NotObserved,
                    format!(
                        "{shown} was created by another process during this write; nothing was changed"
                    ),
                ),
                e => fail(e),
            })
            .map(|()| tmp = None);
        }
        let named = match tmp.clone() {
            Some(named) => named,
            None => {
                let named = link_unique(&file, dir, name).map_err(fail)?;
                tmp = Some(named.clone());
                named
            }
        };
        if let Guard::Unchanged(expected) = guard {
            match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
                Ok(st) if stat_token(&st) == meta_token(expected) => {}
                Ok(_) => return Err(FsError::stale(shown)),
                Err(Errno::NOENT) => return Err(vanished(shown)),
                Err(e) => return Err(fail(e)),
            }
        }
        rustix::fs::renameat(dir, &named, dir, name).map_err(fail)?;
        tmp = None;
        Ok(())
    })();
    if let Err(e) = committed {
        if let Some(named) = &tmp {
            let _ = rustix::fs::unlinkat(dir, named, AtFlags::empty());
        }
        return Err(e);
    }
    rustix::fs::fsync(dir).map_err(fail)?;
    let st = rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW).map_err(fail)?;
    Ok(stat_token(&st))
}

fn stat_token(st: &rustix::fs::Stat) -> String {
    token(
        st.st_ino,
        st.st_size as u64,
        (st.st_mtime, st.st_mtime_nsec as i64),
        (st.st_ctime, st.st_ctime_nsec as i64),
    )
}

/// Gives an anonymous file the name `name`; fails with `EXIST` when taken.
fn link_anonymous(file: &std::fs::File, dir: &File, name: &str) -> Result<(), Errno> {
    match rustix::fs::linkat(file, "", dir, name, AtFlags::EMPTY_PATH) {
        // Without CAP_DAC_READ_SEARCH, AT_EMPTY_PATH is refused; the
        // /proc link of the descriptor does the same.
        Err(Errno::NOENT | Errno::PERM) => {
            let proc_path = format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(file));
            rustix::fs::linkat(
                rustix::fs::CWD,
                &proc_path,
                dir,
                name,
                AtFlags::SYMLINK_FOLLOW,
            )
        }
        other => other,
    }
}

/// Links an anonymous file under a fresh temp name next to `name`.
fn link_unique(file: &std::fs::File, dir: &File, name: &str) -> Result<String, Errno> {
    loop {
        let named = temp_name(name);
        match link_anonymous(file, dir, &named) {
            Ok(()) => return Ok(named),
            Err(Errno::EXIST) => continue,
            Err(e) => return Err(e),
        }
    }
}

/// Creates a fresh named temp file next to `name`.
fn create_named(
    dir: &File,
    name: &str,
    mode: Mode,
) -> Result<(std::os::fd::OwnedFd, String), Errno> {
    loop {
        let named = temp_name(name);
        let flags = O::CREATE | O::EXCL | O::WRONLY | O::CLOEXEC | O::NOFOLLOW;
        match rustix::fs::openat(dir, &named, flags, mode) {
            Ok(fd) => return Ok((fd, named)),
            Err(Errno::EXIST) => continue,
            Err(e) => return Err(e),
        }
    }
}

/// `.NAME.dsh-fs-NONCE.tmp`, with NAME cut to keep within `NAME_MAX` and a
/// nonce no other call of any process picks.
fn temp_name(name: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut cut = name.len().min(180);
    while !name.is_char_boundary(cut) {
        cut -= 1;
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos();
    let seed = format!(
        "{}.{now}.{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    );
    let nonce = dsh_fs_core::text::content_hash(seed.as_bytes()) as u64;
    format!(".{}.dsh-fs-{nonce:016x}.tmp", &name[..cut])
}

/// Gives the replacement the original's owner, group and extended
/// attributes (ACLs are extended attributes), as far as this process may:
/// an unprivileged process keeps what it cannot set (another owner, a
/// `trusted.*` attribute) as the new file has it.
fn keep_attributes(original: &Original<'_>, file: &std::fs::File) {
    use rustix::fs::{Gid, Uid};
    let (uid, gid) = (original.meta.uid(), original.meta.gid());
    let owner = (Uid::from_raw(uid), Gid::from_raw(gid));
    if rustix::fs::fchown(file, Some(owner.0), Some(owner.1)).is_err() {
        // Not allowed to give the file away: keep at least the group if ours.
        let _ = rustix::fs::fchown(file, None, Some(owner.1));
    }
    let Ok(len) = rustix::fs::flistxattr_query(original.file) else {
        return;
    };
    let mut names = vec![0u8; len];
    let Ok(len) = rustix::fs::flistxattr(original.file, &mut names[..]) else {
        return;
    };
    for attr in names[..len].split(|&b| b == 0).filter(|n| !n.is_empty()) {
        let Ok(attr) = std::ffi::CString::new(attr) else {
            continue;
        };
        let Ok(size) = rustix::fs::fgetxattr_query(original.file, attr.as_c_str()) else {
            continue;
        };
        let mut value = vec![0u8; size];
        if let Ok(n) = rustix::fs::fgetxattr(original.file, attr.as_c_str(), &mut value[..]) {
            let _ = rustix::fs::fsetxattr(
                file,
                attr.as_c_str(),
                &value[..n],
                rustix::fs::XattrFlags::empty(),
            );
        }
    }
}

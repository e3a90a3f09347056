//! The replacement's file beside the name it will take: an anonymous file
//! linked under the name or under a temp name of its own, and the owner,
//! group and extended attributes it takes from the original.
//!
//! Hand-written rather than `cap-tempfile` or `tempfile`: the commit needs
//! the temp name (to exchange it with the target, and to name a neighbour's
//! file kept under it) and a link to the target that fails when the name
//! exists; `cap_tempfile::TempFile` hides its name and only renames over the
//! target, and `tempfile` opens by path, outside the held directory.

use cap_std::fs::{File, Metadata, MetadataExt};
use rustix::fs::{AtFlags, Mode, OFlags as O};
use rustix::io::Errno;
use std::sync::atomic::{AtomicU64, Ordering};

/// Gives an anonymous file the name `name`; fails with `EXIST` when taken.
pub(super) fn link_anonymous(file: &std::fs::File, dir: &File, name: &str) -> Result<(), Errno> {
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
pub(super) fn link_unique(file: &std::fs::File, dir: &File, name: &str) -> Result<String, Errno> {
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
pub(super) fn create_named(
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
pub(super) fn temp_name(name: &str) -> String {
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
pub(super) fn keep_attributes(original: &File, meta: &Metadata, file: &std::fs::File) {
    use rustix::fs::{Gid, Uid};
    let (uid, gid) = (meta.uid(), meta.gid());
    let owner = (Uid::from_raw(uid), Gid::from_raw(gid));
    if rustix::fs::fchown(file, Some(owner.0), Some(owner.1)).is_err() {
        // Not allowed to give the file away: keep at least the group if ours.
        let _ = rustix::fs::fchown(file, None, Some(owner.1));
    }
    let Ok(len) = rustix::fs::flistxattr_query(original) else {
        return;
    };
    let mut names = vec![0u8; len];
    let Ok(len) = rustix::fs::flistxattr(original, &mut names[..]) else {
        return;
    };
    for attr in names[..len].split(|&b| b == 0).filter(|n| !n.is_empty()) {
        let Ok(attr) = std::ffi::CString::new(attr) else {
            continue;
        };
        let Ok(size) = rustix::fs::fgetxattr_query(original, attr.as_c_str()) else {
            continue;
        };
        let mut value = vec![0u8; size];
        if let Ok(n) = rustix::fs::fgetxattr(original, attr.as_c_str(), &mut value[..]) {
            let _ = rustix::fs::fsetxattr(
                file,
                attr.as_c_str(),
                &value[..n],
                rustix::fs::XattrFlags::empty(),
            );
        }
    }
}

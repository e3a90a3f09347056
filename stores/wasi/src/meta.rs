//! Entry metadata as the store reports it: kind, size and the metadata
//! token (inode, size, mtime and ctime in nanoseconds), which changes
//! whenever the bytes may have.

use dsh_fs_core::EntryKind;
use dsh_fs_core::store::ObjectMeta;
use std::fs::File;
use std::io;
use std::path::Path;

fn meta(kind: EntryKind, ino: u64, size: u64, mtime_ns: i128, ctime_ns: i128) -> ObjectMeta {
    ObjectMeta {
        kind,
        size: Some(size),
        token: format!("{ino:x}.{size:x}.{mtime_ns:x}.{ctime_ns:x}"),
    }
}

fn ns(secs: i64, nanos: i64) -> i128 {
    secs as i128 * 1_000_000_000 + nanos as i128
}

#[cfg(target_os = "wasi")]
mod sys {
    //! `stat`/`fstat` through wasi-libc: std's metadata extension traits are
    //! unstable on WASI.

    use super::{meta, ns};
    use dsh_fs_core::EntryKind;
    use dsh_fs_core::store::ObjectMeta;
    use std::ffi::CString;
    use std::fs::File;
    use std::io;
    use std::mem::MaybeUninit;
    use std::os::fd::AsRawFd;
    use std::path::Path;

    fn from_raw(st: &libc::stat) -> ObjectMeta {
        let kind = match st.st_mode & libc::S_IFMT {
            libc::S_IFREG => EntryKind::File,
            libc::S_IFDIR => EntryKind::Directory,
            _ => EntryKind::Other,
        };
        meta(
            kind,
            st.st_ino,
            st.st_size as u64,
            ns(st.st_mtim.tv_sec, st.st_mtim.tv_nsec as i64),
            ns(st.st_ctim.tv_sec, st.st_ctim.tv_nsec as i64),
        )
    }

    pub(crate) fn stat_path(path: &Path) -> io::Result<ObjectMeta> {
        let path = path
            .to_str()
            .and_then(|p| CString::new(p).ok())
            .ok_or_else(|| io::Error::from(io::ErrorKind::InvalidInput))?;
        let mut st = MaybeUninit::<libc::stat>::uninit();
        // SAFETY: `path` is NUL-terminated and `st` is valid for one `stat`.
        if unsafe { libc::stat(path.as_ptr(), st.as_mut_ptr()) } != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `stat` returned 0, so it initialised `st`.
        Ok(from_raw(unsafe { st.assume_init_ref() }))
    }

    pub(crate) fn stat_file(file: &File) -> io::Result<ObjectMeta> {
        let mut st = MaybeUninit::<libc::stat>::uninit();
        // SAFETY: the descriptor is open for the borrow of `file`; `st` is valid for one `fstat`.
        if unsafe { libc::fstat(file.as_raw_fd(), st.as_mut_ptr()) } != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fstat` returned 0, so it initialised `st`.
        Ok(from_raw(unsafe { st.assume_init_ref() }))
    }
}

#[cfg(unix)]
mod sys {
    //! Native metadata through std's Unix extension traits.

    use super::{meta, ns};
    use dsh_fs_core::EntryKind;
    use dsh_fs_core::store::ObjectMeta;
    use std::fs::{File, Metadata};
    use std::io;
    use std::os::unix::fs::MetadataExt;
    use std::path::Path;

    fn from_std(m: &Metadata) -> ObjectMeta {
        let kind = if m.is_file() {
            EntryKind::File
        } else if m.is_dir() {
            EntryKind::Directory
        } else {
            EntryKind::Other
        };
        meta(
            kind,
            m.ino(),
            m.size(),
            ns(m.mtime(), m.mtime_nsec()),
            ns(m.ctime(), m.ctime_nsec()),
        )
    }

    pub(crate) fn stat_path(path: &Path) -> io::Result<ObjectMeta> {
        std::fs::metadata(path).map(|m| from_std(&m))
    }

    pub(crate) fn stat_file(file: &File) -> io::Result<ObjectMeta> {
        file.metadata().map(|m| from_std(&m))
    }
}

/// Metadata of the entry at `path`, following symlinks; like `std::fs::metadata`.
pub(crate) fn stat_path(path: &Path) -> io::Result<ObjectMeta> {
    sys::stat_path(path)
}

/// Metadata of an open file; like `std::fs::File::metadata`.
pub(crate) fn stat_file(file: &File) -> io::Result<ObjectMeta> {
    sys::stat_file(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_reports_kind_and_size() {
        let dir = crate::tests::scratch();
        let file = dir.path().join("f");
        std::fs::write(&file, b"12345").unwrap();
        let st = stat_path(&file).unwrap();
        assert_eq!((st.kind, st.size), (EntryKind::File, Some(5)));
        assert_eq!(st, stat_file(&File::open(&file).unwrap()).unwrap());
        assert_eq!(stat_path(dir.path()).unwrap().kind, EntryKind::Directory);
    }
}

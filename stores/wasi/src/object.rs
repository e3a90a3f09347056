//! [`WasiObject`]: one open regular file, read by ranges on its descriptor.

use crate::meta;
use crate::store::map_io;
use dsh_fs_core::store::{Object, ObjectMeta};
use dsh_fs_core::{EntryKind, ErrorCode, FsError};
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;

/// An open regular file and its metadata when it was opened.
#[derive(Debug)]
pub struct WasiObject {
    file: File,
    meta: ObjectMeta,
    /// The descriptor's offset: sequential reads need no seek.
    at: u64,
    shown: String,
}

impl WasiObject {
    /// The open file, for the permissions a replacement keeps.
    pub(crate) fn file(&self) -> &File {
        &self.file
    }
}

/// Opens a regular file for reading, never waiting on a FIFO or device.
///
/// The type is checked by name first, so a FIFO or device there is refused
/// without an open, and again on the open file. A FIFO renamed over the
/// name between the two would make a read-only open wait for a writer,
/// forever: WASI 0.2's `open-at` has no non-blocking flag, and wasmtime
/// opens what it is asked to with a blocking `openat2`. An open for reading
/// *and writing* never waits for a FIFO's other end (Linux, macOS, the
/// BSDs), so that is tried first; nothing is ever written through it, and
/// the file's bytes and times are untouched (an inotify watcher sees a
/// close after writing; overlayfs copies a lower layer's file up). Where
/// writing is refused (a read-only grant or file system, a file this
/// process may not write, a running executable) the name is checked again
/// and opened read-only: there alone a FIFO renamed in between the second
/// check and the open can still make the call wait.
pub(crate) fn open_regular(path: &Path, shown: &str) -> Result<WasiObject, FsError> {
    let before = meta::stat_path(path).map_err(|e| map_io(e, shown))?;
    not_regular(before.kind, shown)?;
    #[cfg(test)]
    tests::before_open(path);
    let file = match OpenOptions::new().read(true).write(true).open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(map_io(e, shown)),
        Err(_) => {
            let again = meta::stat_path(path).map_err(|e| map_io(e, shown))?;
            not_regular(again.kind, shown)?;
            File::open(path).map_err(|e| map_io(e, shown))?
        }
    };
    let meta = meta::stat_file(&file).map_err(|e| map_io(e, shown))?;
    not_regular(meta.kind, shown)?;
    Ok(WasiObject {
        file,
        meta,
        at: 0,
        shown: shown.to_owned(),
    })
}

fn not_regular(kind: EntryKind, shown: &str) -> Result<(), FsError> {
    let what = match kind {
        EntryKind::File => return Ok(()),
        EntryKind::Directory => "a directory",
        EntryKind::Other => "not a regular file (FIFO, socket or device)",
    };
    Err(FsError::new(
        ErrorCode::NotRegularFile,
        format!("{shown} is {what}"),
    ))
}

impl Object for WasiObject {
    fn meta(&self) -> &ObjectMeta {
        &self.meta
    }

    /// Like `pread`: a seek (skipped when reading on from the last read) and a read.
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> Result<usize, FsError> {
        if offset != self.at {
            self.file
                .seek(SeekFrom::Start(offset))
                .map_err(|e| map_io(e, &self.shown))?;
            self.at = offset;
        }
        loop {
            match self.file.read(buf) {
                Ok(n) => {
                    self.at += n as u64;
                    return Ok(n);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(map_io(e, &self.shown)),
            }
        }
    }

    /// The token of the open descriptor now (`fstat`): a writer working in
    /// place changes it; a rename over the name does not touch these bytes.
    fn token_now(&mut self) -> Result<String, FsError> {
        meta::stat_file(&self.file)
            .map(|m| m.token)
            .map_err(|e| map_io(e, &self.shown))
    }
}

// A FIFO is made by the host only: native.
#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::path::Path;

    /// What a test runs at the pause point, given the path.
    type Hook = Box<dyn FnOnce(&Path)>;

    thread_local! {
        /// Run once by this thread's next open, between the check by name
        /// and the open.
        static BEFORE_OPEN: RefCell<Option<Hook>> = RefCell::new(None);
    }

    pub(super) fn before_open(path: &Path) {
        if let Some(hook) = BEFORE_OPEN.with(|h| h.borrow_mut().take()) {
            hook(path);
        }
    }

    #[test]
    fn a_directory_is_synced_through_its_dot_entry() {
        let dir = crate::tests::scratch();
        assert!(crate::replace::sync_dir(dir.path()));
        assert!(!crate::replace::sync_dir(&dir.path().join("missing")));
    }

    #[cfg(unix)]
    mod native {
        use super::super::*;
        use super::BEFORE_OPEN;
        use std::sync::mpsc;
        use std::time::Duration;

        fn mkfifo(path: &Path) {
            let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
            // SAFETY: a NUL-terminated path.
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        }

        /// A FIFO renamed over the file between its check and its open is
        /// refused at once, not waited on.
        #[test]
        fn a_fifo_swapped_in_after_the_check_is_refused_without_waiting() {
            let dir = tempfile::tempdir().unwrap();
            let file = dir.path().join("a.txt");
            std::fs::write(&file, "text\n").unwrap();
            let (done, opened) = mpsc::channel();
            let worker = std::thread::spawn({
                let file = file.clone();
                move || {
                    BEFORE_OPEN.with(|h| {
                        *h.borrow_mut() = Some(Box::new(|path: &Path| {
                            let fifo = path.with_file_name("fifo");
                            mkfifo(&fifo);
                            std::fs::rename(&fifo, path).unwrap();
                        }))
                    });
                    let _ = done.send(open_regular(&file, "a.txt").map(drop));
                }
            });
            let answer = opened.recv_timeout(Duration::from_secs(5));
            if answer.is_err() {
                // Let the waiting open go before failing.
                let _ = std::fs::OpenOptions::new().write(true).open(&file);
            }
            worker.join().unwrap();
            let e = answer.expect("the open waited on the FIFO").unwrap_err();
            assert_eq!(e.code, ErrorCode::NotRegularFile, "{}", e.message);
        }

        /// A commit's directory sync opens the directory through `DIR/.`:
        /// a FIFO in its place is not opened.
        #[test]
        fn a_fifo_in_a_directorys_place_is_not_opened_to_sync_it() {
            let dir = tempfile::tempdir().unwrap();
            let sub = dir.path().join("sub");
            std::fs::create_dir(&sub).unwrap();
            assert!(
                File::open(sub.join("."))
                    .unwrap()
                    .metadata()
                    .unwrap()
                    .is_dir()
            );
            std::fs::remove_dir(&sub).unwrap();
            mkfifo(&sub);
            let (done, synced) = mpsc::channel();
            let worker = std::thread::spawn({
                let sub = sub.clone();
                move || {
                    assert!(!crate::replace::sync_dir(&sub));
                    let _ = done.send(());
                }
            });
            let answer = synced.recv_timeout(Duration::from_secs(5));
            if answer.is_err() {
                let _ = std::fs::OpenOptions::new().write(true).open(&sub);
            }
            worker.join().unwrap();
            answer.expect("the sync waited on the FIFO");
        }

        /// A file that cannot be opened for writing (a running executable:
        /// `ETXTBSY`) is read as usual.
        #[test]
        fn a_file_that_cannot_be_opened_for_writing_is_read() {
            let dir = tempfile::tempdir().unwrap();
            let exe = dir.path().join("sleep");
            std::fs::copy("/bin/sleep", &exe).unwrap();
            let mut running = loop {
                // A copy still open for writing elsewhere is ETXTBSY to exec: retry.
                match std::process::Command::new(&exe).arg("5").spawn() {
                    Ok(child) => break child,
                    Err(e) if e.raw_os_error() == Some(libc::ETXTBSY) => continue,
                    Err(e) => panic!("{e}"),
                }
            };
            let e = std::fs::OpenOptions::new().write(true).open(&exe);
            assert_eq!(e.unwrap_err().raw_os_error(), Some(libc::ETXTBSY));
            let mut object = open_regular(&exe, "sleep").unwrap();
            let mut head = [0; 4];
            assert_eq!(object.read_at(0, &mut head).unwrap(), 4);
            assert_eq!(&head, b"\x7fELF");
            running.kill().unwrap();
            running.wait().unwrap();
        }
    }
}

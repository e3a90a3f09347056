//! [`WasiObject`]: one open regular file, read by ranges on its descriptor.

use crate::meta;
use crate::store::map_io;
use dsh_fs_core::store::{Object, ObjectMeta};
use dsh_fs_core::{EntryKind, ErrorCode, FsError};
use std::fs::File;
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

/// Opens a regular file for reading. The type is checked before opening, so
/// a FIFO or device is refused without an open that could block, and again
/// on the open file.
pub(crate) fn open_regular(path: &Path, shown: &str) -> Result<WasiObject, FsError> {
    let before = meta::stat_path(path).map_err(|e| map_io(e, shown))?;
    not_regular(before.kind, shown)?;
    let file = File::open(path).map_err(|e| map_io(e, shown))?;
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

//! Edits on the local disk, under the directory lock: the freshness check
//! before any matching, then one of two splices, both writing their result
//! through a buffer straight into the replacement file (never a second copy
//! in memory):
//! - LF files over [`STREAM_EDIT_BYTES`]: planned in chunks, then copied
//!   around the matches in a second pass; memory is two chunk buffers
//!   whatever the file size or the number of matches.
//! - everything else up to [`MAX_IN_MEMORY_BYTES`] (CRLF files, strings
//!   with a CR or a BOM): loaded, matched with CRLF folded, written out.

use super::commit::{self, Guard, Original};
use super::{map_io, meta_token, version};
use crate::deadline;
use cap_std::fs::{File, Metadata};
use dsh_fs_core::splice::{self, SpliceError};
use dsh_fs_core::stream_splice::{PlanError, Planner, Splicer};
use dsh_fs_core::text::{ContentHasher, HashingWriter, content_hash};
use dsh_fs_core::{
    EditOutcome, EditRequest, ErrorCode, FsError, MAX_FILE_BYTES, MAX_IN_MEMORY_BYTES,
};
use std::io::{self, BufWriter, Read, Seek};

/// LF files above this size are edited by streaming.
const STREAM_EDIT_BYTES: u64 = 8 << 20;
/// Read and write buffer of the streamed paths.
pub(super) const CHUNK: usize = 1 << 20;

/// One edit of an open, locked file.
pub(super) struct Edit<'a> {
    pub lock: &'a File,
    pub name: &'a str,
    pub shown: &'a str,
    pub file: File,
    pub meta: Metadata,
    pub edit: &'a EditRequest,
    pub expected: Option<&'a str>,
}

pub(super) fn apply(e: Edit<'_>) -> Result<EditOutcome, FsError> {
    let size = e.meta.len();
    if size > MAX_FILE_BYTES {
        return Err(too_large(e.shown, size, MAX_FILE_BYTES, "edited"));
    }
    if size > STREAM_EDIT_BYTES
        && let Some(outcome) = streamed(&e)?
    {
        return Ok(outcome);
    }
    if size > MAX_IN_MEMORY_BYTES {
        return Err(too_large(
            e.shown,
            size,
            MAX_IN_MEMORY_BYTES,
            "edited with CRLF line endings (or a CR or BOM in old_string or new_string)",
        ));
    }
    in_memory(e)
}

fn too_large(shown: &str, size: u64, limit: u64, what: &str) -> FsError {
    FsError::new(
        ErrorCode::TooLarge,
        format!("{shown} has {size} bytes; files over {limit} bytes cannot be {what}"),
    )
}

fn in_memory(e: Edit<'_>) -> Result<EditOutcome, FsError> {
    let io = |err| map_io(err, e.shown);
    // The streamed path may have read part of the file before handing over.
    (&e.file).seek(io::SeekFrom::Start(0)).map_err(io)?;
    let mut bytes = Vec::new();
    bytes
        .try_reserve_exact(e.meta.len() as usize + 1)
        .map_err(|_| too_large(e.shown, e.meta.len(), MAX_IN_MEMORY_BYTES, "loaded"))?;
    (&e.file)
        .take(MAX_IN_MEMORY_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    // Bytes and metadata of one state: a writer working in place right now
    // makes the file stale, not half-read.
    let after = e.file.metadata().map_err(io)?;
    if meta_token(&after) != meta_token(&e.meta) || bytes.len() as u64 > MAX_IN_MEMORY_BYTES {
        return Err(FsError::stale(e.shown));
    }
    if let Some(v) = e.expected
        && !super::super::still_fresh(v, &meta_token(&e.meta), content_hash(&bytes))
    {
        return Err(FsError::stale(e.shown));
    }
    let plan =
        splice::plan(&bytes, e.edit, MAX_FILE_BYTES).map_err(|s| s.into_fs_error(e.shown))?;
    let mut hash = 0;
    let after = commit(&e, |out| {
        let mut w = BufWriter::with_capacity(CHUNK, HashingWriter::new(out));
        plan.write_to(&mut w).map_err(io)?;
        hash = w
            .into_inner()
            .map_err(|err| io(err.into_error()))?
            .finish()
            .0;
        Ok(())
    })?;
    Ok(EditOutcome {
        replacements: plan.replacements,
        version: version(&after, hash),
        first_line: plan.first_line,
    })
}

/// Puts the edited file in place of `e.file` (see [`commit::replace`]):
/// refused when write-protected, and only while the name is still the file
/// that was checked.
fn commit(
    e: &Edit<'_>,
    fill: impl FnOnce(&mut std::fs::File) -> Result<(), FsError>,
) -> Result<String, FsError> {
    commit::check_writable(e.lock, e.name, e.shown)?;
    let original = Original {
        file: &e.file,
        meta: &e.meta,
    };
    commit::replace(
        e.lock,
        e.name,
        Some(original),
        Guard::Unchanged(&e.meta),
        e.shown,
        fill,
    )
}

/// The streamed edit of an LF file; `None` when it needs the in-memory path.
fn streamed(e: &Edit<'_>) -> Result<Option<EditOutcome>, FsError> {
    let io = |err| map_io(err, e.shown);
    let mut planner = match Planner::new(e.edit) {
        Ok(p) => p,
        Err(PlanError::InMemory) => return Ok(None),
        Err(PlanError::Splice(s)) => return Err(s.into_fs_error(e.shown)),
    };
    let mut buf = vec![0u8; CHUNK];
    let mut source = &e.file;
    loop {
        let n = read_some(&mut source, &mut buf).map_err(io)?;
        if n == 0 {
            break;
        }
        // Anything unusual (a CR, bytes that are not text) is judged by the
        // in-memory path, which also orders staleness before other errors.
        if planner.push(&buf[..n]).is_err() {
            return Ok(None);
        }
        deadline::check(e.shown)?;
    }
    let (hash, plan) = planner.finish();
    if let Some(v) = e.expected
        && !super::super::still_fresh(v, &meta_token(&e.meta), hash)
    {
        return Err(FsError::stale(e.shown));
    }
    let plan = match plan {
        Ok(plan) => plan,
        Err(PlanError::InMemory) => return Ok(None),
        Err(PlanError::Splice(s)) => return Err(s.into_fs_error(e.shown)),
    };
    if plan.size > MAX_FILE_BYTES {
        return Err(SpliceError::TooLarge {
            size: plan.size,
            limit: MAX_FILE_BYTES,
        }
        .into_fs_error(e.shown));
    }
    let mut written = 0;
    let after = commit(e, |out| {
        let mut seen = ContentHasher::new();
        let mut source = &e.file;
        source.seek(io::SeekFrom::Start(0)).map_err(io)?;
        let sink = BufWriter::with_capacity(CHUNK, HashingWriter::new(out));
        let mut splicer = Splicer::new(e.edit, sink);
        loop {
            let n = read_some(&mut source, &mut buf).map_err(io)?;
            if n == 0 {
                break;
            }
            seen.update(&buf[..n]);
            splicer.push(&buf[..n]).map_err(io)?;
        }
        let sink = splicer.finish().map_err(io)?;
        written = sink
            .into_inner()
            .map_err(|err| io(err.into_error()))?
            .finish()
            .0;
        // The lock keeps other dsh-fs writers out; this catches anyone
        // who changed the bytes in place since the plan.
        if seen.finish() != plan.hash {
            return Err(FsError::stale(e.shown));
        }
        Ok(())
    })?;
    Ok(Some(EditOutcome {
        replacements: u32::try_from(plan.replacements).unwrap_or(u32::MAX),
        version: version(&after, written),
        first_line: plan.first_line,
    }))
}

pub(super) fn read_some(source: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        match source.read(buf) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            other => return other,
        }
    }
}

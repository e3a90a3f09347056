//! Edits, under the store's lock for the name: the freshness check before
//! any matching, then one of two splices, both writing their result straight
//! into the replacement (never a second copy in memory):
//! - LF files over [`STREAM_EDIT_BYTES`]: planned in chunks (which finds the
//!   matches and hashes the result), then made of the unchanged ranges,
//!   copied by the store ([`Replace::copy`]: natively where it can), and the
//!   new string between them. Past the plan's cap on recorded matches, a
//!   second pass reads the file again and splices it through a buffer.
//!   Memory is a chunk buffer or two whatever the file size.
//! - everything else up to [`MAX_IN_MEMORY_BYTES`] (CRLF files, strings
//!   with a CR or a BOM): loaded, matched with CRLF folded, written out.

use super::{CHUNK, read_all, read_at, read_full};
use crate::seam::{still_fresh, version};
use crate::splice::{self, SpliceError};
use crate::store::{ByteStore, Guard, Object, Replace, Shortcuts, Target};
use crate::stream_splice::{Plan, PlanError, Planner, Splicer};
use crate::text::{self, ContentHasher, HashingWriter, content_hash};
use crate::{
    EditExcerpt, EditOutcome, EditRequest, EditsError, ErrorCode, FsError, MAX_FILE_BYTES,
    MAX_IN_MEMORY_BYTES, excerpt,
};
use std::io::{self, BufWriter, Write};

/// LF files above this size are edited by streaming.
const STREAM_EDIT_BYTES: u64 = 8 << 20;

/// One edit of an open object whose name is locked for replacement.
pub(super) struct Edit<'a, S: ByteStore + 'a, N> {
    pub store: &'a S,
    pub shortcuts: &'a N,
    pub target: &'a Target,
    pub replace: S::Replace<'a>,
    pub object: S::Object,
    pub edit: &'a EditRequest,
    pub expected: Option<&'a str>,
}

pub(super) fn apply<S: ByteStore, N: Shortcuts<S>>(
    mut e: Edit<'_, S, N>,
) -> Result<EditOutcome, FsError> {
    let shown = e.target.display_path();
    let size = e.object.meta().size.unwrap_or(0);
    if size > MAX_FILE_BYTES {
        return Err(too_large(shown, size, MAX_FILE_BYTES, "edited"));
    }
    if size > STREAM_EDIT_BYTES
        && let Some((plan, head)) = plan_streamed(&mut e)?
    {
        return write_streamed(e, plan, head);
    }
    if size > MAX_IN_MEMORY_BYTES {
        return Err(too_large(
            shown,
            size,
            MAX_IN_MEMORY_BYTES,
            "edited with CRLF line endings (or a CR or BOM in old_string or new_string)",
        ));
    }
    in_memory(e)
}

/// The largest result an edit may make: the file limit, or the store's own
/// when it is smaller (a store that holds replacements in memory).
fn result_limit<S: ByteStore>(store: &S) -> u64 {
    store.max_object_bytes().min(MAX_FILE_BYTES)
}

fn too_large(shown: &str, size: u64, limit: u64, what: &str) -> FsError {
    FsError::new(
        ErrorCode::TooLarge,
        format!("{shown} has {size} bytes; files over {limit} bytes cannot be {what}"),
    )
}

fn in_memory<S: ByteStore, N: Shortcuts<S>>(mut e: Edit<'_, S, N>) -> Result<EditOutcome, FsError> {
    let shown = e.target.display_path();
    let token = e.object.meta().token.clone();
    let bytes = read_all(&mut e.object, shown, MAX_IN_MEMORY_BYTES, |_| {
        FsError::stale(shown)
    })?;
    // Bytes and token of one state: a writer working in place right now
    // makes the file stale, not half-read.
    if e.object.token_now()? != token {
        return Err(FsError::stale(shown));
    }
    if let Some(v) = e.expected
        && !still_fresh(v, &token, content_hash(&bytes))
    {
        return Err(FsError::stale(shown));
    }
    let plan =
        splice::plan(&bytes, e.edit, result_limit(e.store)).map_err(|s| s.into_fs_error(shown))?;
    e.replace.check_writable()?;
    let mut out = Output::new(&mut e.replace);
    plan.write_to(&mut out.writer)
        .map_err(|err| out.error(err))?;
    let hash = out.finish()?;
    // Closed before the commit: the replacement's handle is then the last
    // on the replaced file, and the store may release it off the answer's
    // path (freeing a large file's blocks costs a local disk a while).
    drop(e.object);
    let after = e.replace.commit(Guard::Unchanged(&token))?;
    let text = &bytes[text::bom_len(&bytes)..];
    Ok(EditOutcome {
        replacements: plan.replacements,
        version: version(&after, hash),
        first_line: plan.first_line,
        excerpt: excerpt::of_edit(text, plan.first_line, e.edit),
    })
}

/// Several edits of one open object whose name is locked for replacement,
/// in memory: each applied to what the ones before it left, the result
/// written and committed once.
pub(super) fn apply_all<S: ByteStore>(
    store: &S,
    target: &Target,
    mut replace: S::Replace<'_>,
    mut object: S::Object,
    edits: &[EditRequest],
    expected: Option<&str>,
) -> Result<EditOutcome, EditsError> {
    let shown = target.display_path();
    let size = object.meta().size.unwrap_or(0);
    let limit = result_limit(store).min(MAX_IN_MEMORY_BYTES);
    if size > limit {
        return Err(too_large(shown, size, limit, "edited several times in one call").into());
    }
    let token = object.meta().token.clone();
    let original = read_all(&mut object, shown, limit, |_| FsError::stale(shown))?;
    if object.token_now()? != token {
        return Err(FsError::stale(shown).into());
    }
    if let Some(v) = expected
        && !still_fresh(v, &token, content_hash(&original))
    {
        return Err(FsError::stale(shown).into());
    }
    // Each edit's result is made in the buffer the edit before last made
    // its own in: two buffers whatever the number of edits, and the first
    // edit reads the original rather than a copy of it.
    let mut made: Option<Vec<u8>> = None;
    let mut spare = Vec::new();
    let mut replacements = 0u32;
    for (i, edit) in edits.iter().enumerate() {
        let failed = |s: SpliceError| EditsError {
            edit: (!matches!(s, SpliceError::NotText(_))).then_some(i as u32),
            error: s.into_fs_error(shown),
        };
        let plan =
            splice::plan(made.as_deref().unwrap_or(&original), edit, limit).map_err(failed)?;
        spare.clear();
        spare
            .try_reserve_exact(plan.size as usize)
            .map_err(|_| too_large(shown, plan.size, limit, "made"))?;
        plan.write_to(&mut spare)
            .expect("writing to a Vec cannot fail");
        replacements = replacements.saturating_add(plan.replacements);
        spare = made.replace(spare).unwrap_or_default();
    }
    let current = made.as_deref().unwrap_or(&original);
    replace.check_writable()?;
    let mut out = Output::new(&mut replace);
    out.writer
        .write_all(current)
        .map_err(|err| out.error(err))?;
    let hash = out.finish()?;
    drop(object);
    let after = replace.commit(Guard::Unchanged(&token))?;
    let base = text::bom_len(&original);
    let (old, new) = (&original[base..], &current[base..]);
    let prefix = old.iter().zip(new).take_while(|(a, b)| a == b).count();
    Ok(EditOutcome {
        replacements,
        version: version(&after, hash),
        first_line: memchr::memchr_iter(b'\n', &old[..prefix]).count() as u64 + 1,
        excerpt: excerpt::between(old, new),
    })
}

/// The first pass of the streamed edit of an LF file: the plan, checked
/// for freshness and size; `None` when the edit needs the in-memory path.
///
/// An edit of one occurrence in a file too large for that path also writes
/// the result as it goes, from the moment the occurrence is found (what
/// precedes it, the new string, then each chunk scanned), so the store
/// copies and the disk writes while the rest is scanned; with it comes the
/// offset up to which the file was copied, or the store's error, to report
/// only once every check of the plan has passed. If the plan fails, the
/// replacement is dropped and nothing is changed.
fn plan_streamed<S: ByteStore, N: Shortcuts<S>>(
    e: &mut Edit<'_, S, N>,
) -> Result<Option<(Plan, Head)>, FsError> {
    let shown = e.target.display_path();
    let mut planner = match Planner::new(e.edit) {
        Ok(p) => p,
        Err(PlanError::InMemory) => return Ok(None),
        Err(PlanError::Splice(s)) => return Err(s.into_fs_error(shown)),
    };
    let early = !e.edit.replace_all && e.object.meta().size > Some(MAX_IN_MEMORY_BYTES);
    let mut head = None;
    let mut buf = vec![0u8; CHUNK];
    let mut at = 0;
    loop {
        let n = read_at(&mut e.object, at, &mut buf, shown)?;
        if n == 0 {
            break;
        }
        at += n as u64;
        // Anything unusual (a CR, bytes that are not text) is judged by the
        // in-memory path, which also orders staleness before other errors.
        if planner.push(&buf[..n]).is_err() {
            return Ok(None);
        }
        if early
            && head.is_none()
            && let Some(found) = planner.first_match()
        {
            head = Some(write_head(e, found));
        }
        // Past the occurrence, the result is the file's bytes (a second
        // occurrence fails the edit): copy what was scanned.
        if let Some(Ok(from)) = head
            && from < at
        {
            head = Some(e.replace.copy(&mut e.object, from, at - from).map(|()| at));
        }
        e.shortcuts.progress(e.store, e.target)?;
    }
    let (hash, plan) = planner.finish();
    if let Some(v) = e.expected
        && !still_fresh(v, &e.object.meta().token, hash)
    {
        return Err(FsError::stale(shown));
    }
    let plan = match plan {
        Ok(plan) => plan,
        Err(PlanError::InMemory) => return Ok(None),
        Err(PlanError::Splice(s)) => return Err(s.into_fs_error(shown)),
    };
    let limit = result_limit(e.store);
    if plan.size > limit {
        return Err(SpliceError::TooLarge {
            size: plan.size,
            limit,
        }
        .into_fs_error(shown));
    }
    Ok(Some((plan, head)))
}

/// The result written during the plan: the offset in the file up to which
/// it was copied, or why writing failed. `None` when nothing was written early.
type Head = Option<Result<u64, FsError>>;

/// Copies what precedes the occurrence at `found` and writes the new string.
fn write_head<S: ByteStore, N: Shortcuts<S>>(
    e: &mut Edit<'_, S, N>,
    found: u64,
) -> Result<u64, FsError> {
    e.replace.copy(&mut e.object, 0, found)?;
    e.replace.write(e.edit.new_string.as_bytes())?;
    Ok(found + e.edit.old_string.len() as u64)
}

/// Writes the planned result and commits it while the name still holds the
/// object that was planned (the guard is what catches a writer who changed
/// the bytes in place since: the store's lock keeps out only its own writers).
fn write_streamed<S: ByteStore, N: Shortcuts<S>>(
    mut e: Edit<'_, S, N>,
    mut plan: Plan,
    head: Head,
) -> Result<EditOutcome, FsError> {
    e.replace.check_writable()?;
    // Where the first occurrence starts, when the plan or the early write
    // knows it (not past the plan's cap on recorded matches).
    let first = match (&head, &plan.matches) {
        (Some(Ok(rest)), _) => rest.checked_sub(e.edit.old_string.len() as u64),
        (None, Some(matches)) => matches.first().copied(),
        _ => None,
    };
    let excerpt = first.and_then(|at| streamed_excerpt(&mut e, at, plan.first_line));
    let written = match (head, plan.matches.take()) {
        (Some(rest), _) => {
            let rest = rest?;
            e.replace
                .copy(&mut e.object, rest, plan.source_size - rest)?;
            plan.result_hash
        }
        (None, Some(matches)) => {
            copy_around(&mut e, &plan, &matches)?;
            plan.result_hash
        }
        (None, None) => splice_again(&mut e, &plan)?,
    };
    let token = e.object.meta().token.clone();
    drop(e.object);
    let after = e.replace.commit(Guard::Unchanged(&token))?;
    Ok(EditOutcome {
        replacements: u32::try_from(plan.replacements).unwrap_or(u32::MAX),
        version: version(&after, written),
        first_line: plan.first_line,
        excerpt,
    })
}

/// The excerpt of a streamed edit whose first occurrence starts at byte
/// `at`: one read of the file around it, before the commit (up to 64 KiB
/// each side); `None` when the lines around it are longer.
fn streamed_excerpt<S: ByteStore, N: Shortcuts<S>>(
    e: &mut Edit<'_, S, N>,
    at: u64,
    first_line: u64,
) -> Option<EditExcerpt> {
    let reach = excerpt::MAX_EXCERPT_BYTES as u64;
    let old = e.edit.old_string.len() as u64;
    if old > reach {
        return None;
    }
    let start = at.saturating_sub(reach);
    let mut window = vec![0u8; (at - start + old + reach) as usize];
    let n = read_full(&mut e.object, start, &mut window, e.target.display_path()).ok()?;
    let ends = start + n as u64 == e.object.meta().size?;
    window.truncate(n);
    excerpt::in_window(
        &window,
        (at - start) as usize,
        first_line,
        (start == 0, ends),
        e.edit,
    )
}

/// The result from the plan's match offsets: the ranges between them copied
/// from the object, the new string written in their place.
fn copy_around<S: ByteStore, N: Shortcuts<S>>(
    e: &mut Edit<'_, S, N>,
    plan: &Plan,
    matches: &[u64],
) -> Result<(), FsError> {
    let (old, new) = (e.edit.old_string.len() as u64, e.edit.new_string.as_bytes());
    let mut at = 0;
    for &found in matches {
        e.replace.copy(&mut e.object, at, found - at)?;
        e.replace.write(new)?;
        at = found + old;
    }
    e.replace.copy(&mut e.object, at, plan.source_size - at)
}

/// The second pass, for more matches than a plan records: the original read
/// again and spliced into the replacement; its content hash, once the bytes
/// read are checked to be the ones planned.
fn splice_again<S: ByteStore, N: Shortcuts<S>>(
    e: &mut Edit<'_, S, N>,
    plan: &Plan,
) -> Result<u128, FsError> {
    let shown = e.target.display_path();
    let mut seen = ContentHasher::new();
    let mut buf = vec![0u8; CHUNK];
    let mut out = Output::new(&mut e.replace);
    let mut splicer = Splicer::new(e.edit, &mut out.writer);
    let mut at = 0;
    let pass = loop {
        let n = read_at(&mut e.object, at, &mut buf, shown)?;
        if n == 0 {
            break splicer.finish().map(drop);
        }
        at += n as u64;
        seen.update(&buf[..n]);
        if let Err(err) = splicer.push(&buf[..n]) {
            break Err(err);
        }
    };
    if let Err(err) = pass {
        return Err(out.error(err));
    }
    let written = out.finish()?;
    if seen.finish() != plan.hash {
        return Err(FsError::stale(shown));
    }
    Ok(written)
}

/// How many bytes [`Output`] gathers into one write to the store. Pieces of
/// this size or more go to the store as they are: an in-memory edit's
/// unchanged ranges are written from the bytes read, not copied into a
/// buffer first (which, the size of the file, was a fresh allocation and
/// most of a 1 MiB edit's CPU time in page faults).
const GATHER: usize = 64 << 10;

/// Buffers small writes into a replacement and hashes them.
struct Output<'r, R: Replace> {
    writer: BufWriter<HashingWriter<Sink<'r, R>>>,
}

impl<'r, R: Replace> Output<'r, R> {
    fn new(replace: &'r mut R) -> Self {
        Output {
            writer: BufWriter::with_capacity(
                GATHER,
                HashingWriter::new(Sink {
                    replace,
                    failed: None,
                }),
            ),
        }
    }

    /// The error behind a failed write: the store's own when it failed.
    fn error(&mut self, err: io::Error) -> FsError {
        self.writer
            .get_mut()
            .get_mut()
            .failed
            .take()
            .unwrap_or_else(|| FsError::new(ErrorCode::IoError, err.to_string()))
    }

    /// Flushes and returns the content hash of everything written.
    fn finish(mut self) -> Result<u128, FsError> {
        self.writer.flush().map_err(|err| self.error(err))?;
        let (hash, _) = self
            .writer
            .into_inner()
            .map_err(|_| FsError::new(ErrorCode::IoError, "flush failed"))?
            .finish();
        Ok(hash)
    }
}

/// `io::Write` over a replacement, keeping the store's error.
struct Sink<'r, R> {
    replace: &'r mut R,
    failed: Option<FsError>,
}

impl<R: Replace> Write for Sink<'_, R> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self.replace.write(buf) {
            Ok(()) => Ok(buf.len()),
            Err(e) => {
                let message = e.message.clone();
                self.failed = Some(e);
                Err(io::Error::other(message))
            }
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

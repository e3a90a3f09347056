//! `read`: a window of numbered lines with a footer that says what was shown
//! and how to continue. Small files are read whole; large ones are streamed,
//! so memory stays bounded by the window, not the file. The rendering is
//! [`super::window`]'s; this file picks the path and keeps the line index.

use super::Hints;
use super::Session;
use super::args::{Args, FILE_PATH, Field, Kind, Spec};
use super::window::{LineIndex, Window};
use crate::error::{Tool, ToolError};
use dsh_fs_core::provider::{Provider, Resolved, TextStream};
use dsh_fs_core::{ErrorCode, FsError, STREAM_THRESHOLD, TextContent};

/// Default and maximum number of lines per call.
pub const MAX_LINES: u64 = 2000;
/// Chunk size asked of `stream-text`: small enough that the host's buffer,
/// the copy in the component and the file's pages stay in a core's cache
/// while the chunk is decoded, hashed and scanned (a 100 MiB first read took
/// 32.5 ms in 1 MiB chunks, 27.9 in 256 KiB ones; 64 KiB was slower again).
pub(super) const STREAM_CHUNK: u32 = 256 << 10;

/// Most text one `skip` passes over: the provider counts the lines the
/// window does not show where it reads them, and the line index gets a mark
/// at each skip's start (so paging resumes at most this far before its window).
const SKIP_BYTES: u32 = 1 << 20;

pub(super) static SPEC: Spec = Spec {
    name: "read",
    title: "Read file",
    // Reads change nothing.
    hints: Hints::READS,
    description: "Read a UTF-8 text file as numbered lines `N: text` (the prefix is not part \
of the file), up to 2000 from offset; the footer gives the total and the offset to continue. \
Read-before-write policy: reading any window of a file lets this session write or edit it until it \
changes; a change since fails with FS_STALE_VERSION (read again).",
    guidance: "Page through a long file with offset and limit. Lines over 2000 characters are \
cut; output stops at 50 KiB.",
    fields: &[
        FILE_PATH,
        Field {
            name: "offset",
            kind: Kind::Positive { maximum: None },
            required: false,
            description: "First line, 1-based (default 1)",
            hint: None,
        },
        Field {
            name: "limit",
            kind: Kind::Positive {
                maximum: Some(MAX_LINES),
            },
            required: false,
            description: "Lines to return (default 2000)",
            hint: None,
        },
    ],
};

pub(super) fn run<P: Provider>(session: &mut Session<P>, json: &str) -> Result<String, ToolError> {
    let mut args = Args::parse(&SPEC, json)?;
    let path = args.string("file_path")?;
    let offset = args.positive("offset")?.unwrap_or(1);
    let limit = args.positive("limit")?.unwrap_or(MAX_LINES).min(MAX_LINES);

    // The common case, a file small enough to read whole, in one provider
    // call; a trailing `/` (checked by `Session::resolve`), a large file and
    // a path that is not a file take the path below, which holds a target.
    if !(path.len() > 1 && path.ends_with('/')) {
        let found = session
            .provider
            .read_path(&path, STREAM_THRESHOLD - 1)
            .map_err(fail)?;
        let display = crate::error::one_line(found.display_path);
        match found.content {
            Ok(content) => return whole(session, found.key, &display, content, offset, limit),
            Err(e) if e.code == ErrorCode::NotFound => {
                return Err(super::suggest::not_found(
                    &session.provider,
                    Tool::Read,
                    &path,
                    &display,
                ));
            }
            Err(e) if !matches!(e.code, ErrorCode::TooLarge | ErrorCode::NotRegularFile) => {
                return Err(fail(e));
            }
            Err(_) => {}
        }
    }

    let target = session.resolve(Tool::Read, &path)?;
    let provider = &session.provider;
    let display = session.display(&target);
    let key = target.key();
    let (rendered, version) = match provider.read_text(&target, STREAM_THRESHOLD - 1) {
        Ok(content) => return whole(session, key, &display, content, offset, limit),
        Err(e) if e.code == ErrorCode::TooLarge => {
            // Metadata before the stream opens: if the file changes while it is
            // scanned, the next stat differs and the index is not trusted.
            let meta = provider.stat(&target).map_err(fail)?.map(|i| i.version);
            let known = session
                .indexed(&key)
                .filter(|ix| offset > 1 && meta.as_ref() == Some(&ix.meta));
            let paged = match known {
                Some(ix) => page(provider, &target, ix, &meta, &display, offset, limit)?,
                None => None,
            };
            match paged {
                Some(answer) => answer,
                None => {
                    let (answer, index) = scan(provider, &target, meta, &display, offset, limit)?;
                    if let Some(index) = index {
                        session.remember(key.clone(), index);
                    }
                    answer
                }
            }
        }
        Err(e) if e.code == ErrorCode::NotFound => {
            return Err(super::suggest::not_found(
                provider,
                Tool::Read,
                &path,
                &display,
            ));
        }
        Err(e) if e.code == ErrorCode::NotRegularFile => {
            return Err(super::suggest::not_a_file(provider, &target, &display, e));
        }
        Err(e) => return Err(fail(e)),
    };
    let rendered = rendered?;
    session.policy.observe(key, version);
    Ok(rendered)
}

/// The window of a file read whole, observed at the version read.
fn whole<P: Provider>(
    session: &mut Session<P>,
    key: String,
    display: &str,
    content: TextContent,
    offset: u64,
    limit: u64,
) -> Result<String, ToolError> {
    let mut window = Window::new(offset, limit);
    window.push(&content.text);
    let rendered = window.finish(display, None)?;
    session.policy.observe(key, content.version);
    Ok(rendered)
}

type Answer = (Result<String, ToolError>, String);

fn fail(e: FsError) -> ToolError {
    ToolError::from_fs(Tool::Read, e)
}

/// A window of a large file read from its line index, or `None` when the
/// file was swapped between the stat that matched the index and the open.
fn page<P: Provider>(
    provider: &P,
    target: &P::Target,
    ix: &LineIndex,
    meta: &Option<String>,
    display: &str,
    offset: u64,
    limit: u64,
) -> Result<Option<Answer>, ToolError> {
    let (start, line) = ix.resume_point(offset);
    let mut window = Window::resume(offset, limit, line);
    let mut stream = provider.stream_text(target, start).map_err(fail)?;
    // The stat before and this one bracket the open: when both name the
    // indexed metadata, the stream reads the indexed version.
    if provider.stat(target).map_err(fail)?.map(|i| i.version) != *meta {
        return Ok(None);
    }
    while !window.complete() && feed(&mut window, &mut stream)? {}
    Ok(Some((
        window.finish(display, Some(ix.total)),
        ix.version.clone(),
    )))
}

/// A window of a large file from a scan of all of it, with the line index of
/// the scanned version when the metadata did not move during the scan.
fn scan<P: Provider>(
    provider: &P,
    target: &P::Target,
    meta: Option<String>,
    display: &str,
    offset: u64,
    limit: u64,
) -> Result<(Answer, Option<LineIndex>), ToolError> {
    let mut window = Window::new(offset, limit).indexing();
    let mut stream = provider.stream_text(target, 0).map_err(fail)?;
    while feed(&mut window, &mut stream)? {}
    let version = stream.version().ok_or_else(|| {
        fail(FsError::new(
            ErrorCode::IoError,
            "the provider gave no version at the end of the stream",
        ))
    })?;
    // A swap before the open would pair this content with the old metadata.
    let after = provider.stat(target).map_err(fail)?.map(|i| i.version);
    let index = match meta {
        Some(meta) if after.as_ref() == Some(&meta) => {
            Some(window.take_index(meta, version.clone()))
        }
        _ => None,
    };
    Ok(((window.finish(display, None), version), index))
}

/// Moves `window` on by the stream's next text: skipped where the window
/// needs no line of it, pushed where it does. `false` at the end.
fn feed(window: &mut Window, stream: &mut impl TextStream) -> Result<bool, ToolError> {
    match window.skippable() {
        Some(lines) => match stream.skip(SKIP_BYTES, lines).map_err(fail)? {
            Some(s) if s.lines > lines || s.bytes > u64::from(SKIP_BYTES) || s.bytes < s.lines => {
                return Err(fail(FsError::new(
                    ErrorCode::IoError,
                    format!(
                        "the provider skipped {} bytes and {} lines when asked for at most {} \
                         and {lines}",
                        s.bytes, s.lines, SKIP_BYTES
                    ),
                )));
            }
            Some(skipped) => window.skipped(skipped),
            None => return Ok(false),
        },
        None => match stream.next_chunk(STREAM_CHUNK).map_err(fail)? {
            Some(chunk) => window.push(&chunk),
            None => return Ok(false),
        },
    }
    Ok(true)
}

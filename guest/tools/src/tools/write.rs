//! `write`: create a file or replace it whole. Under the policy an existing
//! file must have been observed, and must not have changed since. Content
//! identical to the file's is not written again; an update answers with the
//! hunks that changed, diffed against the version the session observed.
//! Content that elides part of the file with a placeholder comment is
//! refused, and so is a new path that misspells an existing one
//! ([`super::spelling`]).

use super::Hints;
use super::args::{Args, FILE_PATH, Field, Kind, Spec};
use super::diagnose::numbered_like_read;
use super::diff::{MAX_DIFF_BYTES, diff};
use super::{Session, elided, plural, refuse_unobserved, spelling};
use crate::error::{Tool, ToolError};
use dsh_fs_core::provider::{Provider, Resolved};
use dsh_fs_core::{EntryKind, ErrorCode, Version, WriteIntent, WriteOperation};

/// Lines of a new file shown after it is created.
const EXCERPT_LINES: usize = 4;

pub(super) static SPEC: Spec = Spec {
    name: "write",
    title: "Write file",
    // Replaces a whole file; writing the same content again changes nothing.
    hints: Hints {
        read_only: false,
        destructive: true,
        idempotent: true,
    },
    description: "Create a UTF-8 text file, or replace one whole, atomically; missing \
directories are created. Replacing a file needs a read of it first (read-before-write). The answer \
shows the lines that changed.",
    guidance: "Prefer edit to change part of a file.",
    fields: &[
        FILE_PATH,
        Field {
            name: "content",
            kind: Kind::String { non_empty: false },
            required: true,
            description: "The whole new content",
            hint: None,
        },
    ],
};

pub(super) fn run<P: Provider>(session: &mut Session<P>, json: &str) -> Result<String, ToolError> {
    let mut args = Args::parse(&SPEC, json)?;
    let path = args.string("file_path")?;
    let content = args.string("content")?;
    if let Some((first, last)) = numbered_like_read(&content) {
        return Err(ToolError::invalid_args(
            "write",
            format_args!(
                "every line of `content` starts with read's line-number prefix \
(`{first}: ` to `{last}: `); remove the `N: ` prefixes, they are not part of the file"
            ),
        ));
    }
    let target = session.resolve(Tool::Write, &path)?;
    let key = target.key();
    let display = session.display(&target);
    let current = Current::of(&session.provider, &target, content.len() as u64);
    if let Current::Text(text, version) = &current
        && *text == content
    {
        // Nothing to write; the session now knows the content exactly.
        session.policy.observe(key, version.clone());
        return Ok(format!(
            "Unchanged {display}: the content is identical ({}).",
            plural(line_count(&content), "line", "lines")
        ));
    }
    if let Current::Text(old, _) = &current
        && let Some(e) = elided::elision(old, &content)
    {
        return Err(ToolError::refused(format!(
            "write: line {} of `content` is a placeholder, `{}`, not the lines it stands for: \
{display} would lose {} of its {}. Write the whole content, or use edit to change part of the \
file; {display} is unchanged.",
            e.line,
            e.text,
            e.lost,
            plural(line_count(old), "line", "lines"),
        )));
    }
    if let Current::Absent = current {
        if let Some(e) = spelling::refuse_slips(&session.provider, &path) {
            return Err(e);
        }
        if !session.policy.twin_allowed(&key)
            && let Some(e) = spelling::refuse_twin(&session.provider, &display)
        {
            session.policy.allow_twin(key);
            return Err(e);
        }
    }
    let read = match &current {
        Current::Text(text, version) => Some((text.as_str(), version.as_str())),
        _ => None,
    };
    let journaled = session.before_change(&target, read);
    // With a journal, the write is guarded by the version it keeps the text of.
    let intent = session.policy.write_intent(&key).or_else(|| {
        Some(match journaled.as_ref()?.version() {
            None => WriteIntent::CreateIfAbsent,
            Some(v) => WriteIntent::ReplaceIfVersion(v.to_owned()),
        })
    });
    // The diff is against the observed version only: the text read above
    // counts when its version is the one the write is conditioned on.
    let before = match (current, &intent) {
        (Current::Text(text, _), _) if text.len() as u64 > MAX_DIFF_BYTES => Current::Large,
        (Current::Text(text, read), Some(WriteIntent::ReplaceIfVersion(observed)))
            if read == *observed =>
        {
            Current::Text(text, read)
        }
        (current @ Current::Text(..), None) => current,
        (Current::Text(..), _) => Current::Unknown,
        (other, _) => other,
    };
    let outcome = match session.provider.write_text(&target, &content, intent) {
        Ok(outcome) => outcome,
        Err(e) if e.code == ErrorCode::NotObserved => {
            return Err(refuse_unobserved(
                &session.provider,
                &target,
                &path,
                &display,
                Tool::Write,
                e,
            ));
        }
        Err(e) => return Err(ToolError::from_fs(Tool::Write, e)),
    };
    session.journal_change(&target, &display, journaled, &outcome.version);
    session.policy.observe(key, outcome.version);

    let lines = line_count(&content);
    let size = format!(
        "{}, {}",
        plural(lines, "line", "lines"),
        plural(content.len() as u64, "byte", "bytes")
    );
    if outcome.operation == WriteOperation::Created {
        let mut out = format!("Created {display} ({size}).");
        for line in content.lines().take(EXCERPT_LINES) {
            out.push_str("\n+");
            out.extend(line.chars().take(200));
        }
        if lines > EXCERPT_LINES as u64 {
            let more = lines - EXCERPT_LINES as u64;
            out.push_str(&format!("\n… {}", plural(more, "more line", "more lines")));
        }
        return Ok(out);
    }
    Ok(match before {
        Current::Text(old, _) => {
            let d = diff(&old, &content, 1);
            format!("Updated {display} ({size}): {}.\n{}", d.counts(), d.hunks)
        }
        Current::Large => format!(
            "Updated {display} ({size}). The old file was over {} MiB, so no diff is shown.",
            MAX_DIFF_BYTES >> 20
        ),
        Current::Unknown | Current::Absent => format!(
            "Updated {display} ({size}). The file was touched since it was read, so no diff is shown."
        ),
    })
}

/// What the file holds before a write, as far as the answer needs it.
enum Current {
    /// Its text (without a BOM) and the version read.
    Text(String, Version),
    /// A regular file larger than [`MAX_DIFF_BYTES`].
    Large,
    /// Nothing there.
    Absent,
    /// Not a regular text file, unreadable, or not the observed version.
    Unknown,
}

impl Current {
    /// Reads `target` when it is a regular file of at most [`MAX_DIFF_BYTES`],
    /// or of exactly `len` bytes (it may be identical). Any failure means
    /// "unknown": the write itself reports what is wrong.
    fn of<P: Provider>(provider: &P, target: &P::Target, len: u64) -> Self {
        let info = match provider.stat(target) {
            Ok(Some(info)) => info,
            Ok(None) => return Current::Absent,
            Err(_) => return Current::Unknown,
        };
        if info.kind != EntryKind::File {
            return Current::Unknown;
        }
        let limit = match info.size {
            Some(n) if n == len => len.max(MAX_DIFF_BYTES),
            Some(n) if n > MAX_DIFF_BYTES => return Current::Large,
            _ => MAX_DIFF_BYTES,
        };
        match provider.read_text(target, limit) {
            Ok(current) => Current::Text(current.text, current.version),
            Err(e) if e.code == ErrorCode::TooLarge => Current::Large,
            Err(_) => Current::Unknown,
        }
    }
}

/// Lines in `text` as `read` counts them: a final newline ends the last line.
pub(super) fn line_count(text: &str) -> u64 {
    let breaks = memchr::memchr_iter(b'\n', text.as_bytes()).count() as u64;
    breaks + u64::from(!text.is_empty() && !text.ends_with('\n'))
}

#[cfg(test)]
mod tests {
    #[test]
    fn line_count_matches_read() {
        assert_eq!(super::line_count(""), 0);
        assert_eq!(super::line_count("a"), 1);
        assert_eq!(super::line_count("a\n"), 1);
        assert_eq!(super::line_count("a\r\nb"), 2);
    }
}

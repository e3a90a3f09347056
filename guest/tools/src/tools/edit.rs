//! `edit`: literal replacement of `old_string` by `new_string`. The provider
//! matches and splices under its lock; this file validates, asks the policy
//! for the expected version, renders a compact diff, and after a miss asks
//! [`super::diagnose`] for the nearest text and what differs.

use super::Hints;
use super::args::{Args, FILE_PATH, Field, Kind, Spec};
use super::artefacts::{Haystack, Text};
use super::diagnose::{
    Diagnoser, Spelling, first_difference, first_difference_in, numbered_like_read,
};
use super::diff::diff;
use super::window::Window;
use super::{Session, plural, refuse_unobserved, stream_each, stream_lines};
use crate::error::{Tool, ToolError};
use dsh_fs_core::provider::{Provider, Resolved};
use dsh_fs_core::text::fold_crlf;
use dsh_fs_core::{EditRequest, ErrorCode, FsError, STREAM_THRESHOLD};

pub(super) static SPEC: Spec = Spec {
    name: "edit",
    title: "Edit file",
    // Replaces text in place; the same edit again may apply again
    // (`new_string` can contain `old_string`).
    hints: Hints {
        read_only: false,
        destructive: true,
        idempotent: false,
    },
    description: "Replace old_string by new_string in a UTF-8 text file. old_string is \
matched literally (CRLF and LF alike) and must occur exactly once unless replace_all; every other \
byte is kept. The file must have been read first (read-before-write).",
    guidance: "Copy old_string from read's output without the `N: ` prefixes, indentation \
exact, with enough lines to be unique. A miss names what differs and shows the nearest lines.",
    fields: &[
        FILE_PATH,
        Field {
            name: "old_string",
            kind: Kind::String { non_empty: true },
            required: true,
            description: "Exact text to replace",
            hint: None,
        },
        Field {
            name: "new_string",
            kind: Kind::String { non_empty: false },
            required: true,
            description: "Replacement; \"\" deletes old_string",
            hint: Some("an empty string \"\" deletes old_string"),
        },
        Field {
            name: "replace_all",
            kind: Kind::Flag,
            required: false,
            description: "Replace every occurrence",
            hint: None,
        },
    ],
};

pub(super) fn run<P: Provider>(session: &mut Session<P>, json: &str) -> Result<String, ToolError> {
    let mut args = Args::parse(&SPEC, json)?;
    let path = args.string("file_path")?;
    let old = args.string("old_string")?;
    let new = args.string("new_string")?;
    let replace_all = args.flag("replace_all")?;
    if let Some(what) = refusal(&old, &new) {
        return Err(ToolError::invalid_args("edit", what));
    }

    let fail = |e| ToolError::from_fs(Tool::Edit, e);
    let target = session.resolve(Tool::Edit, &path)?;
    let key = target.key();
    let display = session.display(&target);
    let expected = guard(session, &target, &path, &display)?;
    // With a journal, the edit is guarded by the version it keeps the text of.
    let before = session.before_change(&target, None);
    let expected = expected.or_else(|| before.as_ref()?.version().map(str::to_owned));
    let request = EditRequest {
        old_string: old,
        new_string: new,
        replace_all,
    };
    let outcome = match session
        .provider
        .edit_text(&target, &request, expected.as_deref())
    {
        Ok(outcome) => outcome,
        Err(e) if e.code == ErrorCode::EditNotFound => {
            return Err(explain_miss(
                &session.provider,
                &target,
                &display,
                &request,
                None,
            ));
        }
        // Without the policy there is no version to be stale: a missing
        // file is simply missing.
        Err(e) if e.code == ErrorCode::StaleVersion && expected.is_none() => {
            return Err(match session.provider.stat(&target) {
                Ok(None) => {
                    super::suggest::not_found(&session.provider, Tool::Edit, &path, &display)
                }
                _ => fail(e),
            });
        }
        Err(e) => return Err(fail(e)),
    };
    session.journal_change(&target, &display, before, &outcome.version);
    session.policy.observe(key, outcome.version);

    let mut out = if outcome.replacements == 1 {
        format!(
            "Edited {display}: 1 replacement at line {}.",
            outcome.first_line
        )
    } else {
        format!(
            "Edited {display}: {} (first at line {}).",
            plural(outcome.replacements.into(), "replacement", "replacements"),
            outcome.first_line
        )
    };
    let change = match &outcome.excerpt {
        Some(lines) => diff(&lines.before, &lines.after, lines.first_line),
        None => diff(&request.old_string, &request.new_string, outcome.first_line),
    };
    if !change.hunks.is_empty() {
        out.push('\n');
        out.push_str(&change.hunks);
    }
    Ok(out)
}

/// Why the replacement of `old` by `new` is refused before the file is
/// looked at, if it is: `edit`'s checks, which `multi_edit` makes of each edit.
pub(super) fn refusal(old: &str, new: &str) -> Option<String> {
    if old.is_empty() {
        return Some("`old_string` must not be empty (use write to create a file)".into());
    }
    if fold_crlf(old) == fold_crlf(new) {
        return Some("`new_string` is identical to `old_string`, so nothing would change".into());
    }
    let (first, last) = numbered_like_read(new).filter(|_| numbered_like_read(old).is_none())?;
    Some(format!(
        "every line of `new_string` starts with read's line-number prefix (`{first}: ` to \
`{last}: `); remove the `N: ` prefixes, they are not part of the file"
    ))
}

/// The version an edit of `target` must find, from the policy; a file the
/// session has not read is refused (with what the model can do instead).
pub(super) fn guard<P: Provider>(
    session: &Session<P>,
    target: &P::Target,
    path: &str,
    display: &str,
) -> Result<Option<String>, ToolError> {
    session.policy.edit_guard(&target.key()).map_err(|_| {
        let not_observed = FsError::new(
            ErrorCode::NotObserved,
            format!("{display} has not been read in this session"),
        );
        refuse_unobserved(
            &session.provider,
            target,
            path,
            display,
            Tool::Edit,
            not_observed,
        )
    })
}

/// FS_EDIT_NOT_FOUND for `request` on `target`, with the diagnosis of the
/// current text: one more pass over the file (streamed when large), and one
/// more up to the quoted lines when the file was streamed and the diagnosis
/// did not keep them. `given` is the text to diagnose instead of the file's
/// (what earlier edits of a list would have made of it).
#[cold]
pub(super) fn explain_miss<P: Provider>(
    provider: &P,
    target: &P::Target,
    display: &str,
    request: &EditRequest,
    given: Option<String>,
) -> ToolError {
    let plain = || {
        ToolError::from_fs(
            Tool::Edit,
            FsError::new(
                ErrorCode::EditNotFound,
                format!("old_string was not found in {display}"),
            ),
        )
    };
    // The file whole when it is small enough; a larger one is streamed
    // through the diagnosis below.
    let text = match given {
        Some(text) => Some(text),
        None => match provider.read_text(target, STREAM_THRESHOLD - 1) {
            Ok(content) => Some(content.text),
            Err(e) if e.code == ErrorCode::TooLarge => None,
            Err(_) => return plain(),
        },
    };
    let (at_hand, streamed) = (text.as_deref().map(Text), Streamed { provider, target });
    let haystack: &dyn Haystack = match &at_hand {
        Some(text) => text,
        None => &streamed,
    };
    if let Some(artefact) = super::artefacts::find(&request.old_string, Some(haystack)) {
        let (message, at) = super::artefacts::explain(&artefact, Some(haystack));
        // The lines around where the part before a placeholder stands; a
        // cut line is not shown again (its marker is what went wrong).
        let quoted = matches!(artefact, super::artefacts::Artefact::Placeholder { .. });
        let excerpt = match at {
            Some(line) if quoted => {
                let mut window = Window::new(line, super::diagnose::EXCERPT_LINES);
                fill(&mut window, text.as_deref(), provider, target);
                window.excerpt()
            }
            _ => String::new(),
        };
        return ToolError::edit_not_found(display, &message, excerpt);
    }
    let mut diagnoser = Diagnoser::new(&request.old_string, &request.new_string);
    match &text {
        Some(text) => diagnoser.push(text),
        None => {
            let streamed = stream_each(provider, target, |chunk| {
                diagnoser.push(chunk);
                true
            });
            if streamed.is_err() {
                return plain();
            }
        }
    }
    let mut diagnosis = diagnoser.finish();
    // Past the lines the scan compares, the file names the line.
    if let Some(from) = diagnosis.head_from {
        let old = &request.old_string;
        let found = match &text {
            Some(text) => first_difference(text, from, old),
            None => {
                // The lines old_string spans from `from`, each cut at the
                // length of old_string (a longer one differs anyway).
                let wanted = old.split('\n').count() as u64;
                let mut lines = Vec::new();
                let _ = stream_lines(provider, target, old.len() + 1, |no, line| {
                    if no >= from {
                        lines.push(line.to_owned());
                    }
                    no < from + wanted
                });
                first_difference_in(lines.iter().map(String::as_str), from, old)
            }
        };
        if let Some((message, line)) = found {
            diagnosis.message = message;
            diagnosis.excerpt = Some((line.saturating_sub(2).max(1), 5));
            diagnosis.kept = None;
        }
    }
    // Nothing similar: the words of a one-line old_string the file may
    // misspell (a one-word old_string: the word), and for several words
    // whether old_string spelt as the file spells them is there.
    let one_word = Spelling::new(&request.old_string);
    let whole = one_word.is_none();
    if diagnosis.excerpt.is_none()
        && let Some(mut spelling) = one_word.or_else(|| Spelling::words(&request.old_string))
    {
        match &text {
            Some(text) => {
                for (i, line) in text.lines().enumerate() {
                    spelling.line(i as u64 + 1, line);
                }
            }
            None => {
                let _ = stream_lines(provider, target, LONGEST_WORD_LINE, |no, line| {
                    spelling.line(no, line);
                    true
                });
            }
        }
        let found = if whole {
            misspelt(spelling.misspelt(), request, haystack)
        } else {
            spelling.nearest().map(|(word, count, line)| {
                let message = format!(
                    "`{}` is not in the file, but `{word}` is, {} (first at line {line}): if \
                     that is the word meant, send it as old_string:",
                    request.old_string.trim(),
                    plural(count, "time", "times"),
                );
                (message, line)
            })
        };
        if let Some((message, line)) = found {
            diagnosis.message = message;
            diagnosis.excerpt = Some((line, 1));
            diagnosis.kept = None;
        }
    }
    let excerpt = match diagnosis.excerpt {
        Some((first, count)) => {
            let window = match (&text, &diagnosis.kept) {
                (None, Some(kept)) => {
                    let mut window = Window::from_line(first, count);
                    window.push(kept);
                    window
                }
                _ => {
                    let mut window = Window::new(first, count);
                    fill(&mut window, text.as_deref(), provider, target);
                    window
                }
            };
            window.excerpt()
        }
        None => String::new(),
    };
    ToolError::edit_not_found(display, &diagnosis.message, excerpt)
}

/// What to say of the words of old_string the file spells otherwise
/// ([`Spelling::misspelt`]), and the line to show: where old_string spelt
/// the file's way is, else where the first such word is.
fn misspelt(
    swaps: Vec<(String, String, u64, u64)>,
    request: &EditRequest,
    haystack: &dyn Haystack,
) -> Option<(String, u64)> {
    let (old, word, count, line) = swaps.first()?;
    let spelt: Vec<String> = swaps
        .iter()
        .map(|(old, word, ..)| format!("`{word}` for `{old}`"))
        .collect();
    let respelt = super::diagnose::respelt(&request.old_string, &swaps);
    let spelt = spelt.join(", ");
    Some(match haystack.occurrences(&respelt, usize::MAX) {
        (1, Some(at)) => (
            format!(
                "old_string with {spelt} (the file's spelling) is at line {at}: if that is the \
                 text meant, send it as old_string:"
            ),
            at,
        ),
        (n, Some(at)) => (
            format!(
                "old_string with {spelt} (the file's spelling) is in the file {n} times, first \
                 at line {at}: if that is the text meant, send it with enough lines to be unique, \
                 or with replace_all:"
            ),
            at,
        ),
        _ => (
            format!(
                "`{old}` is not in the file, but `{word}` is, {} (first at line {line}); copy \
                 old_string from the file's text:",
                plural(*count, "time", "times"),
            ),
            *line,
        ),
    })
}

/// Fills `window` from the text at hand, or by streaming the file until
/// the window is complete (a read error leaves it as far as it got).
fn fill<P: Provider>(window: &mut Window, text: Option<&str>, provider: &P, target: &P::Target) {
    match text {
        Some(text) => window.push(text),
        None => {
            let _ = stream_each(provider, target, |chunk| {
                window.push(chunk);
                !window.complete()
            });
        }
    }
}

/// Lines of a streamed file longer than this are searched for a spelling
/// in their first this many bytes only.
const LONGEST_WORD_LINE: usize = 64 * 1024;

/// A file too large to hold, asked about by streaming it once per question.
struct Streamed<'a, P: Provider> {
    provider: &'a P,
    target: &'a P::Target,
}

impl<P: Provider> Haystack for Streamed<'_, P> {
    fn occurrences(&self, needle: &str, max: usize) -> (usize, Option<u64>) {
        let finder = memchr::memmem::Finder::new(needle.as_bytes());
        let keep = needle.len().saturating_sub(1);
        // The bytes of the last chunk a match may still start in, and the
        // lines before them.
        let mut carry: Vec<u8> = Vec::new();
        let (mut lines, mut count, mut first) = (0u64, 0usize, None);
        let _ = stream_each(self.provider, self.target, |chunk| {
            carry.extend_from_slice(chunk.as_bytes());
            for at in finder.find_iter(&carry) {
                if count == 0 {
                    first =
                        Some(lines + 1 + memchr::memchr_iter(b'\n', &carry[..at]).count() as u64);
                }
                count += 1;
                if count == max {
                    return false;
                }
            }
            let done = carry.len().saturating_sub(keep);
            lines += memchr::memchr_iter(b'\n', &carry[..done]).count() as u64;
            carry.drain(..done);
            true
        });
        (count, first)
    }
}

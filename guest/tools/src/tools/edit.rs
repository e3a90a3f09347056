//! `edit`: literal replacement of `old_string` by `new_string`. The provider
//! matches and splices under its lock; this file validates, asks the policy
//! for the expected version, renders a compact diff, and after a miss asks
//! [`super::diagnose`] for the nearest text and what differs.

use super::Hints;
use super::args::{Args, FILE_PATH, Field, Kind, Spec};
use super::diagnose::{Diagnoser, first_difference, nearest_spelling, numbered_like_read};
use super::diff::diff;
use super::window::Window;
use super::{Session, plural, refuse_unobserved, stream_each};
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
    if old.is_empty() {
        return Err(ToolError::invalid_args(
            "edit",
            "`old_string` must not be empty (use write to create a file)",
        ));
    }
    if fold_crlf(&old) == fold_crlf(&new) {
        return Err(ToolError::invalid_args(
            "edit",
            "`new_string` is identical to `old_string`, so nothing would change",
        ));
    }

    if let Some((first, last)) = numbered_like_read(&new)
        && numbered_like_read(&old).is_none()
    {
        return Err(ToolError::invalid_args(
            "edit",
            format_args!(
                "every line of `new_string` starts with read's line-number prefix \
(`{first}: ` to `{last}: `); remove the `N: ` prefixes, they are not part of the file"
            ),
        ));
    }

    let fail = |e| ToolError::from_fs(Tool::Edit, e);
    let target = session.resolve(Tool::Edit, &path)?;
    let key = target.key();
    let display = session.display(&target);
    let expected = match session.policy.edit_guard(&key) {
        Ok(expected) => expected,
        Err(_) => {
            let not_observed = FsError::new(
                ErrorCode::NotObserved,
                format!("{display} has not been read in this session"),
            );
            return Err(refuse_unobserved(
                &session.provider,
                &target,
                &path,
                &display,
                Tool::Edit,
                not_observed,
            ));
        }
    };
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
            return Err(explain_miss(&session.provider, &target, &display, &request));
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
    let change = diff(&request.old_string, &request.new_string, outcome.first_line);
    if !change.hunks.is_empty() {
        out.push('\n');
        out.push_str(&change.hunks);
    }
    Ok(out)
}

/// FS_EDIT_NOT_FOUND for `request` on `target`, with the diagnosis of the
/// current text: one more pass over the file (streamed when large), and one
/// more up to the quoted lines when the file was streamed and the diagnosis
/// did not keep them.
#[cold]
fn explain_miss<P: Provider>(
    provider: &P,
    target: &P::Target,
    display: &str,
    request: &EditRequest,
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
    let text = match provider.read_text(target, STREAM_THRESHOLD - 1) {
        Ok(content) => Some(content.text),
        Err(e) if e.code == ErrorCode::TooLarge => None,
        Err(_) => return plain(),
    };
    if let Some(artefact) = super::artefacts::find(&request.old_string, text.as_deref()) {
        let (message, at) = super::artefacts::explain(&artefact, text.as_deref());
        // The lines around where the part before a placeholder stands; a
        // cut line is not shown again (its marker is what went wrong).
        let quoted = matches!(artefact, super::artefacts::Artefact::Placeholder { .. });
        let excerpt = match (&text, at) {
            (Some(text), Some(line)) if quoted => {
                let mut window = Window::new(line, super::diagnose::EXCERPT_LINES);
                window.push(text);
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
    // Past the lines the scan compares, the file at hand names the line.
    if let (Some(text), Some(from)) = (&text, diagnosis.head_from)
        && let Some((message, line)) = first_difference(text, from, &request.old_string)
    {
        diagnosis.message = message;
        diagnosis.excerpt = Some((line.saturating_sub(2).max(1), 5));
        diagnosis.kept = None;
    }
    // Nothing similar to a one-word old_string: the word it may misspell.
    if let (Some(text), None) = (&text, diagnosis.excerpt)
        && let Some((word, count, line)) = nearest_spelling(text, &request.old_string)
    {
        let times = plural(count, "time", "times");
        diagnosis.message = format!(
            "`{}` is not in the file, but `{word}` is, {times} (first at line {line}): if that is \
             the word meant, send it as old_string:",
            request.old_string.trim()
        );
        diagnosis.excerpt = Some((line, 1));
    }
    let excerpt = match diagnosis.excerpt {
        Some((first, count)) => {
            let mut window = Window::new(first, count);
            match (&text, &diagnosis.kept) {
                (Some(text), _) => window.push(text),
                (None, Some(kept)) => {
                    window = Window::from_line(first, count);
                    window.push(kept);
                }
                (None, None) => {
                    let _ = stream_each(provider, target, |chunk| {
                        window.push(chunk);
                        !window.complete()
                    });
                }
            }
            window.excerpt()
        }
        None => String::new(),
    };
    ToolError::edit_not_found(display, &diagnosis.message, excerpt)
}

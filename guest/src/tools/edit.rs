//! `edit`: literal replacement of `old_string` by `new_string`. The provider
//! matches and splices under its lock; this file validates, asks the policy
//! for the expected version, renders a compact diff, and after a miss asks
//! [`super::diagnose`] for the nearest text and what differs.

use super::args::Args;
use super::diagnose::{Diagnoser, numbered_like_read};
use super::diff::diff;
use super::read::Window;
use super::{Session, ToolDefinition, plural, refuse_unobserved, stream_each};
use crate::error::{Tool, ToolError};
use crate::provider::Provider;
use dsh_fs_core::splice::fold_crlf;
use dsh_fs_core::{EditRequest, ErrorCode, FsError, STREAM_THRESHOLD};

const FIELDS: &[&str] = &["file_path", "old_string", "new_string", "replace_all"];

pub(super) fn definition() -> ToolDefinition {
    ToolDefinition {
        name: "edit",
        description: concat!(
            "Replace exact text in an existing UTF-8 text file: old_string is matched literally ",
            "(no regex; line endings CRLF and LF are treated alike) and must occur exactly once unless ",
            "replace_all is true. Only the matched text changes; every other byte, including line ",
            "endings, is kept. ",
            policy_note!()
        ),
        guidance: "Copy old_string from the read output without the `N: ` line-number prefix, \
keeping indentation exactly. Include enough surrounding lines to make it unique; \
FS_AMBIGUOUS_EDIT lists the lines where it matched. FS_EDIT_NOT_FOUND means the text is not \
there as given: it names what differs (indentation, whitespace, quotes, pasted line numbers...) \
and shows the nearest lines; copy old_string from them. An empty new_string deletes the match.",
        parameters: serde_json::json!({
            "type": "object",
            "properties": {
                "file_path": {
                    "type": "string",
                    "description": "Path of the file to edit, relative to the workspace root (or absolute inside it)."
                },
                "old_string": {
                    "type": "string", "minLength": 1,
                    "description": "The exact text to replace, without line-number prefixes."
                },
                "new_string": {
                    "type": "string",
                    "description": "The replacement text; must differ from old_string. Empty deletes the match."
                },
                "replace_all": {
                    "type": "boolean", "default": false,
                    "description": "Replace every occurrence of old_string instead of requiring exactly one."
                }
            },
            "required": ["file_path", "old_string", "new_string"],
            "additionalProperties": false
        })
        .to_string(),
    }
}

pub(super) fn run<P: Provider>(session: &mut Session<P>, json: &str) -> Result<String, ToolError> {
    let mut args = Args::parse("edit", FIELDS, json)?;
    let path = args.string("file_path")?;
    let old = args.string("old_string")?;
    let new = args.string_hinted("new_string", "an empty string \"\" deletes old_string")?;
    let replace_all = args.flag("replace_all")?.unwrap_or(false);
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
    let key = session.provider.key(&target);
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
                Ok(None) => fail(FsError::not_found(&display)),
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
/// more up to the quoted lines when the file was streamed.
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
    let mut diagnoser = Diagnoser::new(&request.old_string, &request.new_string);
    let text = match provider.read_text(target, STREAM_THRESHOLD - 1) {
        Ok(content) => {
            diagnoser.push(&content.text);
            Some(content.text)
        }
        Err(e) if e.code == ErrorCode::TooLarge => {
            let streamed = stream_each(provider, target, |chunk| {
                diagnoser.push(chunk);
                true
            });
            if streamed.is_err() {
                return plain();
            }
            None
        }
        Err(_) => return plain(),
    };
    let diagnosis = diagnoser.finish();
    let excerpt = match diagnosis.excerpt {
        Some((first, count)) => {
            let mut window = Window::new(first, count);
            match &text {
                Some(text) => window.push(text),
                None => {
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

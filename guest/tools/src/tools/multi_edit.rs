//! `multi_edit`: several `edit` replacements in one file, in order, all or
//! none, one commit. A tool of its own, offered only when the host turns it
//! on ([`super::extra_definitions`]): `edit`'s schema, and so the tool list
//! every model is given, stay as they are.
//!
//! The provider applies the list under one lock and one guard
//! (`edit-texts`); a miss is diagnosed against the text the edits before it
//! would have left, which is the text the model meant.

use super::Hints;
use super::args::{Args, FILE_PATH, Field, Kind, Spec};
use super::diff::diff;
use super::edit::{explain_miss, guard, refusal};
use super::{Session, plural};
use crate::error::{Tool, ToolError};
use dsh_fs_core::provider::{Provider, Resolved};
use dsh_fs_core::{EditRequest, EditsError, ErrorCode, MAX_IN_MEMORY_BYTES, splice};

pub(super) static SPEC: Spec = Spec {
    name: "multi_edit",
    title: "Edit file in several places",
    hints: Hints {
        read_only: false,
        destructive: true,
        idempotent: false,
    },
    description: "Several edits of one UTF-8 text file in one atomic change: each old_string \
is matched as by edit, in the text the edits before it left; all apply or none. The file must have \
been read first (read-before-write).",
    guidance: "Use it for several changes to one file, listed top to bottom. A miss names the \
edit and changes nothing.",
    fields: &[
        FILE_PATH,
        Field {
            name: "edits",
            kind: Kind::Edits,
            required: true,
            description: "The replacements, applied in order",
            hint: None,
        },
    ],
};

pub(super) fn run<P: Provider>(session: &mut Session<P>, json: &str) -> Result<String, ToolError> {
    let mut args = Args::parse(&SPEC, json)?;
    let path = args.string("file_path")?;
    let edits = args.edits("edits")?;
    let count = edits.len();
    for (i, edit) in edits.iter().enumerate() {
        if let Some(what) = refusal(&edit.old_string, &edit.new_string) {
            let n = i + 1;
            return Err(ToolError::invalid_args(
                "multi_edit",
                format_args!("edit {n} of {count}: {what}"),
            ));
        }
    }

    let target = session.resolve(Tool::Edit, &path)?;
    let display = session.display(&target);
    let expected = guard(session, &target, &path, &display)?;
    // With a journal, the edits are guarded by the version it keeps the text of.
    let before = session.before_change(&target, None);
    let expected = expected.or_else(|| before.as_ref()?.version().map(str::to_owned));
    let outcome = match session
        .provider
        .edit_texts(&target, &edits, expected.as_deref())
    {
        Ok(outcome) => outcome,
        Err(EditsError {
            edit: Some(i),
            error,
        }) => {
            let i = i as usize;
            let mut e = match (error.code, edits.get(i)) {
                (ErrorCode::EditNotFound, Some(edit)) => {
                    let given = (i > 0)
                        .then(|| applied(&session.provider, &target, &edits[..i]))
                        .flatten();
                    explain_miss(&session.provider, &target, &display, edit, given)
                }
                _ => ToolError::from_fs(Tool::Edit, error),
            };
            e.message = format!(
                "edit {} of {count}: {} No edit was applied; {display} is unchanged.",
                i + 1,
                e.message
            );
            return Err(e);
        }
        Err(EditsError { edit: None, error })
            if error.code == ErrorCode::StaleVersion && expected.is_none() =>
        {
            return Err(match session.provider.stat(&target) {
                Ok(None) => {
                    super::suggest::not_found(&session.provider, Tool::Edit, &path, &display)
                }
                _ => ToolError::from_fs(Tool::Edit, error),
            });
        }
        Err(EditsError { edit: None, error }) => return Err(ToolError::from_fs(Tool::Edit, error)),
    };
    session.journal_change(&target, &display, before, &outcome.version);
    session.policy.observe(target.key(), outcome.version);

    let mut out = format!(
        "Edited {display}: {}, {} (first change at line {}).",
        plural(count as u64, "edit", "edits"),
        plural(outcome.replacements.into(), "replacement", "replacements"),
        outcome.first_line
    );
    match &outcome.excerpt {
        Some(lines) => {
            let change = diff(&lines.before, &lines.after, lines.first_line);
            if !change.hunks.is_empty() {
                out.push('\n');
                out.push_str(&change.hunks);
            }
        }
        None => out.push_str(" The changed lines span more than 64 KiB: read them to check."),
    }
    Ok(out)
}

/// The file's text with `edits` applied, as the provider applied them
/// before the one that missed; `None` when it cannot be had.
fn applied<P: Provider>(provider: &P, target: &P::Target, edits: &[EditRequest]) -> Option<String> {
    let mut text = provider.read_text(target, MAX_IN_MEMORY_BYTES).ok()?.text;
    for edit in edits {
        text = String::from_utf8(splice::apply(text.as_bytes(), edit).ok()?.bytes).ok()?;
    }
    Some(text)
}

//! `write`: create a file or replace it whole. Under the policy an existing
//! file must have been observed, and must not have changed since. Content
//! identical to the file's is not written again.

use super::args::Args;
use super::diagnose::numbered_like_read;
use super::{Session, ToolDefinition, plural, refuse_unobserved};
use crate::error::{Tool, ToolError};
use crate::provider::Provider;
use dsh_fs_core::{EntryKind, ErrorCode, Version, WriteOperation};

const FIELDS: &[&str] = &["file_path", "content"];
/// Lines of the new content shown after a write.
const EXCERPT_LINES: usize = 4;

pub(super) fn definition() -> ToolDefinition {
    ToolDefinition {
        name: "write",
        description: concat!(
            "Create a UTF-8 text file, or replace an existing one with new content. ",
            policy_note!(),
            " Creating a new file needs no read."
        ),
        guidance: "Prefer edit for changing part of an existing file: it sends less and cannot \
clobber unrelated lines. Use write for new files or complete rewrites. Missing parent directories \
are created. The write is atomic: readers see the old or the new content, never a mix. Under the \
read-before-write policy, replacing a file you have not read fails with FS_NOT_OBSERVED, and \
replacing one that changed since your read fails with FS_STALE_VERSION.",
        parameters: serde_json::json!({
            "type": "object",
            "properties": {
                "file_path": {
                    "type": "string",
                    "description": "Path of the file to create or replace, relative to the workspace root (or absolute inside it)."
                },
                "content": {
                    "type": "string",
                    "description": "The complete new content of the file, as UTF-8 text."
                }
            },
            "required": ["file_path", "content"],
            "additionalProperties": false
        })
        .to_string(),
    }
}

pub(super) fn run<P: Provider>(session: &mut Session<P>, json: &str) -> Result<String, ToolError> {
    let mut args = Args::parse("write", FIELDS, json)?;
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
    let key = session.provider.key(&target);
    let display = session.display(&target);
    if let Some(version) = identical(&session.provider, &target, &content) {
        // Nothing to write; the session now knows the content exactly.
        session.policy.observe(key, version);
        return Ok(format!(
            "Unchanged {display}: the content is identical ({}).",
            plural(line_count(&content), "line", "lines")
        ));
    }
    let intent = session.policy.write_intent(&key);
    let outcome = match session.provider.write_text(&target, &content, intent) {
        Ok(outcome) => outcome,
        Err(e) if e.code == ErrorCode::NotObserved => {
            return Err(refuse_unobserved(
                &session.provider,
                &target,
                &display,
                Tool::Write,
                e,
            ));
        }
        Err(e) => return Err(ToolError::from_fs(Tool::Write, e)),
    };
    session.policy.observe(key, outcome.version);

    let verb = match outcome.operation {
        WriteOperation::Created => "Created",
        WriteOperation::Updated => "Updated",
    };
    let lines = line_count(&content);
    let mut out = format!(
        "{verb} {display} ({}, {}).",
        plural(lines, "line", "lines"),
        plural(content.len() as u64, "byte", "bytes")
    );
    for line in content.lines().take(EXCERPT_LINES) {
        out.push_str("\n+");
        out.extend(line.chars().take(200));
    }
    if lines > EXCERPT_LINES as u64 {
        let more = lines - EXCERPT_LINES as u64;
        out.push_str(&format!("\n… {}", plural(more, "more line", "more lines")));
    }
    Ok(out)
}

/// The version of `target` when it already holds exactly `content` (same
/// size, same text, no BOM). Any failure means "not known to be identical".
fn identical<P: Provider>(provider: &P, target: &P::Target, content: &str) -> Option<Version> {
    let info = provider.stat(target).ok()??;
    if info.kind != EntryKind::File || info.size != Some(content.len() as u64) {
        return None;
    }
    let current = provider.read_text(target, content.len() as u64).ok()?;
    (current.text == content).then_some(current.version)
}

/// Lines in `text` as `read` counts them: a final newline ends the last line.
fn line_count(text: &str) -> u64 {
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

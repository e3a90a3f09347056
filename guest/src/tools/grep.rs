//! `grep`: lines matching a regular expression, grouped by file, at most 250
//! shown. Written once in `dsh-fs-search` with ripgrep's rules; this file
//! parses the arguments, confines the path and maps errors.

use super::args::Args;
use super::{Session, ToolDefinition};
use crate::error::{Tool, ToolError};
use crate::provider::Provider;
use dsh_fs_core::SearchQuery;

const FIELDS: &[&str] = &["pattern", "path", "include"];

pub(super) fn definition() -> ToolDefinition {
    ToolDefinition {
        name: "grep",
        description: "Search contents by regex (Rust syntax) like ripgrep: skips hidden, \
ignored and binary files. Shows `Line N: text` by file (max 250).",
        guidance: "A grep is not a read: read a file before editing it.",
        parameters: serde_json::json!({
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "Regular expression"},
                "path": {"type": "string", "description": "File or directory (default: root)"},
                "include": {"type": "string", "description": "Names, e.g. `*.{ts,tsx}`"}
            },
            "required": ["pattern"],
            "additionalProperties": false
        })
        .to_string(),
    }
}

pub(super) fn run<P: Provider>(session: &mut Session<P>, json: &str) -> Result<String, ToolError> {
    let mut args = Args::parse("grep", FIELDS, json)?;
    let pattern = args.string("pattern")?;
    let path = args.optional_string("path")?;
    let include = args.optional_string("include")?;
    session.discover(Tool::Grep, path, SearchQuery::Grep { pattern, include })
}

//! `glob`: the files below a directory whose names match a pattern, newest
//! first, at most 100 shown. Written once in `dsh-fs-search`; this file parses
//! the arguments, confines the path and maps errors.

use super::args::Args;
use super::{Session, ToolDefinition};
use crate::error::{Tool, ToolError};
use crate::provider::Provider;
use dsh_fs_core::SearchQuery;

const FIELDS: &[&str] = &["pattern", "path"];

pub(super) fn definition() -> ToolDefinition {
    ToolDefinition {
        name: "glob",
        description: "Find files by glob, newest first (max 100). `*.rs` matches at any depth, \
`**` crosses directories. Lists hidden and ignored files.",
        guidance: "Find files by name with glob, by content with grep.",
        parameters: serde_json::json!({
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "e.g. `src/**/*.ts`"},
                "path": {"type": "string", "description": "Directory (default: root)"}
            },
            "required": ["pattern"],
            "additionalProperties": false
        })
        .to_string(),
    }
}

pub(super) fn run<P: Provider>(session: &mut Session<P>, json: &str) -> Result<String, ToolError> {
    let mut args = Args::parse("glob", FIELDS, json)?;
    let pattern = args.string("pattern")?;
    let path = args.optional_string("path")?;
    session.discover(Tool::Glob, path, SearchQuery::Glob(pattern))
}

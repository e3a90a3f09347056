//! `grep`: lines matching a regular expression, grouped by file, at most 250
//! shown. Written once in `dsh-fs-search` with ripgrep's rules; this file
//! parses the arguments, confines the path and maps errors.

use super::Session;
use super::args::{Args, Field, Kind, Spec};
use crate::error::{Tool, ToolError};
use crate::provider::Provider;
use dsh_fs_core::SearchQuery;

pub(super) static SPEC: Spec = Spec {
    name: "grep",
    description: "Search contents by regex (Rust syntax) like ripgrep: skips hidden, \
ignored and binary files. Shows `Line N: text` by file (max 250).",
    guidance: "A grep is not a read: read a file before editing it.",
    fields: &[
        Field {
            name: "pattern",
            kind: Kind::String { non_empty: false },
            required: true,
            description: "Regular expression",
            hint: None,
        },
        Field {
            name: "path",
            kind: Kind::String { non_empty: false },
            required: false,
            description: "File or directory (default: root)",
            hint: None,
        },
        Field {
            name: "include",
            kind: Kind::String { non_empty: false },
            required: false,
            description: "Names, e.g. `*.{ts,tsx}`",
            hint: None,
        },
    ],
};

pub(super) fn run<P: Provider>(session: &mut Session<P>, json: &str) -> Result<String, ToolError> {
    let mut args = Args::parse(&SPEC, json)?;
    let pattern = args.string("pattern")?;
    let path = args.optional_string("path")?;
    let include = args.optional_string("include")?;
    session.discover(Tool::Grep, path, SearchQuery::Grep { pattern, include })
}

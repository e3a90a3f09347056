//! `glob`: the files below a directory whose names match a pattern, newest
//! first, at most 100 shown. Written once in `dsh-fs-search`; this file parses
//! the arguments, confines the path and maps errors.

use super::Session;
use super::args::{Args, Field, Kind, Spec};
use crate::error::{Tool, ToolError};
use crate::provider::Provider;
use dsh_fs_core::SearchQuery;

pub(super) static SPEC: Spec = Spec {
    name: "glob",
    description: "Find files by glob, newest first (max 100). `*.rs` matches at any depth, \
`**` crosses directories. Lists hidden and ignored files.",
    guidance: "Find files by name with glob, by content with grep.",
    fields: &[
        Field {
            name: "pattern",
            kind: Kind::String { non_empty: false },
            required: true,
            description: "e.g. `src/**/*.ts`",
            hint: None,
        },
        Field {
            name: "path",
            kind: Kind::String { non_empty: false },
            required: false,
            description: "Directory (default: root)",
            hint: None,
        },
    ],
};

pub(super) fn run<P: Provider>(session: &mut Session<P>, json: &str) -> Result<String, ToolError> {
    let mut args = Args::parse(&SPEC, json)?;
    let pattern = args.string("pattern")?;
    let path = args.optional_string("path")?;
    session.discover(Tool::Glob, path, SearchQuery::Glob(pattern))
}

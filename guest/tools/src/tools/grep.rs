//! `grep`: lines matching a regular expression, grouped by file, at most 250
//! shown. Written once in `dsh-fs-search` with ripgrep's rules; this file
//! parses the arguments, confines the path and maps errors. A glob given as
//! the pattern (`*.rs`, `src/**/*.ts`) is named as one when it is not a valid
//! regex or matches nothing.

use super::Hints;
use super::Session;
use super::args::{Args, Field, Kind, Spec};
use crate::error::{Tool, ToolError};
use dsh_fs_core::provider::Provider;
use dsh_fs_core::text::one_line;
use dsh_fs_core::{ErrorCode, SearchQuery};

pub(super) static SPEC: Spec = Spec {
    name: "grep",
    title: "Search file contents",
    // Discovery lists names and reads lines; it changes nothing.
    hints: Hints::READS,
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
    let glob = looks_like_glob(&pattern).then(|| pattern.clone());
    let found = session.discover(Tool::Grep, path, SearchQuery::Grep { pattern, include });
    let Some(glob) = glob else {
        return found;
    };
    let glob = one_line(&glob);
    let hint = format!(
        "`{glob}` is a glob, but grep's pattern is a regex matched against file contents: \
find files by name with glob, or search only those files with include `{glob}`"
    );
    match found {
        Ok(text) => Ok(match text.strip_prefix(NOTHING) {
            Some(rest) => format!("{NOTHING}: {hint}.{rest}"),
            None => text,
        }),
        Err(e)
            if e.code == ErrorCode::InvalidInput.as_str()
                && e.message.starts_with("invalid regex") =>
        {
            Err(ToolError {
                message: format!("invalid regex: {hint}."),
                ..e
            })
        }
        Err(e) => Err(e),
    }
}

/// What the search answers when no line matches.
const NOTHING: &str = "No matches found";

/// Whether `pattern` reads as a file-name glob: no spaces, and a leading
/// `*`, a `**`, a `/*`, or a `*.ext` ending.
fn looks_like_glob(pattern: &str) -> bool {
    let star_ext = pattern.rsplit_once("*.").is_some_and(|(head, ext)| {
        !head.ends_with('\\')
            && !ext.is_empty()
            && ext
                .chars()
                .all(|c| c.is_alphanumeric() || matches!(c, '{' | '}' | ','))
    });
    !pattern.contains(char::is_whitespace)
        && (pattern.starts_with('*')
            || pattern.contains("**")
            || pattern.contains("/*")
            || star_ext)
}

#[cfg(test)]
mod tests {
    #[test]
    fn globs_are_told_from_regexes() {
        for p in ["*.rs", "**/x", "src/*.ts", "src/**/*.{ts,tsx}", "test*.py"] {
            assert!(super::looks_like_glob(p), "{p}");
        }
        for p in ["fn main", "foo.*bar", "TODO|FIXME", "a*b", "\\*.rs", "x* y"] {
            assert!(!super::looks_like_glob(p), "{p}");
        }
    }
}

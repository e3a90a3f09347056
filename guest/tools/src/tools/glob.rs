//! `glob`: the files below a directory whose names match a pattern, newest
//! first, at most 100 shown. Written once in `dsh-fs-search`; this file parses
//! the arguments, confines the path and maps errors. When nothing matches,
//! it says why if it can: a regular expression given for a glob, or names
//! that match only ignoring case (listed, a few).

use super::Hints;
use super::Session;
use super::args::{Args, Field, Kind, Spec};
use crate::error::{Tool, ToolError};
use dsh_fs_core::SearchQuery;
use dsh_fs_core::provider::Provider;
use dsh_fs_core::text::one_line;

pub(super) static SPEC: Spec = Spec {
    name: "glob",
    title: "Find files",
    // Discovery lists names and reads lines; it changes nothing.
    hints: Hints::READS,
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
    let found = session.discover(Tool::Glob, path.clone(), SearchQuery::Glob(pattern.clone()))?;
    let Some(rest) = found.strip_prefix(NOTHING) else {
        return Ok(found);
    };
    if looks_like_regex(&pattern) {
        let example = as_glob(&pattern).map_or(String::new(), |g| format!(", e.g. `{g}`"));
        return Ok(format!(
            "{NOTHING}: `{}` is a regular expression, but glob takes wildcards (`*` within a \
name, `**` across directories){example}.{rest}",
            one_line(&pattern)
        ));
    }
    let folded = ignoring_case(&pattern);
    if folded == pattern {
        return Ok(found);
    }
    let Ok(other) = session.discover(Tool::Glob, path, SearchQuery::Glob(folded)) else {
        return Ok(found);
    };
    if other.starts_with(NOTHING) {
        return Ok(found);
    }
    let names: Vec<&str> = other.lines().take_while(|l| !l.is_empty()).collect();
    let mut out = format!(
        "{NOTHING}: glob matching is case-sensitive; ignoring case, `{}` matches:",
        one_line(&pattern)
    );
    for name in names.iter().take(SHOWN_NAMES) {
        out.push_str("\n  ");
        out.push_str(name);
    }
    if names.len() > SHOWN_NAMES {
        out.push_str("\n  …");
    }
    out.push_str(rest);
    Ok(out)
}

/// What the search answers when no file matches.
const NOTHING: &str = "No files found";

/// Names matching ignoring case that an empty answer lists.
const SHOWN_NAMES: usize = 3;

/// Whether `pattern` reads as a regular expression rather than a glob:
/// anchors, `.*`, `\.`, a class escape or a `(a|b)` group.
fn looks_like_regex(pattern: &str) -> bool {
    pattern.starts_with('^')
        || (pattern.ends_with('$') && !pattern.ends_with("\\$"))
        || [".*", ".+", "\\.", "\\d", "\\w", "\\s", "\\b"]
            .iter()
            .any(|s| pattern.contains(s))
        || (pattern.contains('(') && pattern.contains('|') && pattern.contains(')'))
}

/// The glob a simple regular expression means: `.*\.go$` is `*.go`. `None`
/// when it uses more than anchors, `.*`, `.+`, `.`, `\.` and `(a|b)`.
fn as_glob(regex: &str) -> Option<String> {
    let body = regex.strip_prefix('^').unwrap_or(regex);
    let body = body.strip_suffix('$').unwrap_or(body);
    let mut out = String::new();
    let mut chars = body.chars().peekable();
    let mut group = false;
    while let Some(c) = chars.next() {
        match c {
            '.' if matches!(chars.peek(), Some('*' | '+')) => {
                chars.next();
                if !out.ends_with('*') {
                    out.push('*');
                }
            }
            '.' => out.push('?'),
            '\\' => match chars.next() {
                Some(e @ ('.' | '-' | '_' | '/')) => out.push(e),
                _ => return None,
            },
            '(' if !group => {
                group = true;
                out.push('{');
            }
            '|' if group => out.push(','),
            ')' if group => {
                group = false;
                out.push('}');
            }
            '*' | '+' | '?' | '[' | ']' | '{' | '}' | '(' | ')' | '|' | '^' | '$' => return None,
            c => out.push(c),
        }
    }
    (!group && !out.is_empty() && out != "*").then_some(out)
}

/// `pattern` matching names in any case: each cased letter outside a
/// `[...]` class becomes a class of both cases (`a` → `[aA]`).
fn ignoring_case(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len() * 2);
    let mut chars = pattern.chars();
    let mut class = false;
    while let Some(c) = chars.next() {
        if c == '\\' {
            out.push(c);
            out.extend(chars.next());
            continue;
        }
        if class {
            class = c != ']';
            out.push(c);
            continue;
        }
        let (lower, upper) = (single(c.to_lowercase()), single(c.to_uppercase()));
        match (lower, upper) {
            (Some(l), Some(u)) if l != u => {
                out.push('[');
                out.push(l);
                out.push(u);
                out.push(']');
            }
            _ => {
                out.push(c);
                if c == '[' {
                    class = true;
                    // In `[!]a]` and `[]a]` the first `]` is a member.
                    if matches!(chars.clone().next(), Some('!' | '^')) {
                        out.extend(chars.next());
                    }
                    if chars.clone().next() == Some(']') {
                        out.extend(chars.next());
                    }
                }
            }
        }
    }
    out
}

fn single(mut it: impl Iterator<Item = char>) -> Option<char> {
    let c = it.next()?;
    it.next().is_none().then_some(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regexes_are_told_from_globs() {
        for p in [".*\\.go$", "^src/", "\\.rs", "(foo|bar)\\.ts", "test_\\d+"] {
            assert!(looks_like_regex(p), "{p}");
        }
        for p in [
            "*.go",
            "**/*.{ts,tsx}",
            "src/[a-z]*.rs",
            ".env*",
            "Makefile",
        ] {
            assert!(!looks_like_regex(p), "{p}");
        }
    }

    #[test]
    fn simple_regexes_become_globs() {
        assert_eq!(as_glob(".*\\.go$").as_deref(), Some("*.go"));
        assert_eq!(
            as_glob("^src/.*\\.(ts|tsx)$").as_deref(),
            Some("src/*.{ts,tsx}")
        );
        assert_eq!(as_glob("test_\\d+").as_deref(), None);
        assert_eq!(as_glob(".*").as_deref(), None);
    }

    #[test]
    fn case_is_folded_outside_classes() {
        assert_eq!(
            ignoring_case("**/readme.md"),
            "**/[rR][eE][aA][dD][mM][eE].[mM][dD]"
        );
        assert_eq!(ignoring_case("[a-z]x"), "[a-z][xX]");
        assert_eq!(ignoring_case("[]a]x"), "[]a][xX]");
        assert_eq!(ignoring_case("\\*a"), "\\*[aA]");
        assert_eq!(ignoring_case("*.{rs,go}"), "*.{[rR][sS],[gG][oO]}");
        assert_eq!(ignoring_case("1_2"), "1_2");
    }
}

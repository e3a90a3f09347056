//! Turning the model's patterns into matchers: globs with `globset`, regular
//! expressions with `grep-regex`, and every mistake as one `FS_INVALID_INPUT`
//! line that names the character where it is and how to fix it.

use dsh_fs_core::{ErrorCode, FsError};
use globset::{ErrorKind, GlobBuilder, GlobMatcher};
use grep_regex::{RegexMatcher, RegexMatcherBuilder};

/// A compiled file-name glob. A pattern without `/` matches base names at any
/// depth; one with `/` matches the path below the searched directory.
#[derive(Clone, Debug)]
pub struct NameGlob {
    matcher: GlobMatcher,
    base_name_only: bool,
}

impl NameGlob {
    /// Compiles `pattern` (`*` stays within one path component, `**` crosses
    /// them, `{a,b}` alternates, `\` escapes).
    pub fn new(pattern: &str) -> Result<NameGlob, FsError> {
        if pattern.is_empty() {
            return Err(FsError::new(
                ErrorCode::InvalidInput,
                "the glob is empty; give one such as `*.rs` or `src/**/*.ts`",
            ));
        }
        let trimmed = pattern.strip_prefix("./").unwrap_or(pattern);
        let glob = GlobBuilder::new(trimmed)
            .literal_separator(true)
            .backslash_escape(true)
            .empty_alternates(true)
            .build()
            .map_err(|e| glob_error(pattern, e.kind()))?;
        Ok(NameGlob {
            matcher: glob.compile_matcher(),
            base_name_only: !trimmed.contains('/'),
        })
    }

    /// Whether the file at `relative` (below the searched directory, `/`-joined)
    /// matches.
    pub fn is_match(&self, relative: &str) -> bool {
        if self.base_name_only {
            let name = relative.rsplit('/').next().unwrap_or(relative);
            self.matcher.is_match(name)
        } else {
            self.matcher.is_match(relative)
        }
    }
}

/// Compiles a regular expression (the `regex` crate's syntax) for line search:
/// `$` also matches before `\r\n`, and a match never spans lines.
pub fn regex(pattern: &str) -> Result<RegexMatcher, FsError> {
    if pattern.is_empty() {
        return Err(FsError::new(
            ErrorCode::InvalidInput,
            "the pattern is empty; give a regular expression such as `fn main` or `TODO|FIXME`",
        ));
    }
    if let Err(e) = regex_syntax::Parser::new().parse(pattern) {
        let (column, why) = match &e {
            regex_syntax::Error::Parse(p) => (p.span().start.column, p.kind().to_string()),
            regex_syntax::Error::Translate(t) => (t.span().start.column, t.kind().to_string()),
            other => (1, other.to_string()),
        };
        return Err(invalid_regex(pattern, column, &why));
    }
    // `multi_line` as ripgrep always sets it: `^` and `$` match at every line
    // of a buffer searched at once, not only at its ends.
    RegexMatcherBuilder::new()
        .multi_line(true)
        .line_terminator(Some(b'\n'))
        .crlf(true)
        .build(pattern)
        .map_err(|e| {
            let why = e.to_string().replace('\n', " ");
            let column = pattern
                .find("\\n")
                .map_or(1, |at| pattern[..at].chars().count() + 1);
            invalid_regex(pattern, column, why.trim())
        })
}

#[cold]
fn invalid_regex(pattern: &str, column: usize, why: &str) -> FsError {
    FsError::new(
        ErrorCode::InvalidInput,
        format!(
            "invalid regex `{pattern}` at character {column}: {why}; fix it there, or escape \
             special characters with `\\` to match them literally (a match never spans lines)"
        ),
    )
}

#[cold]
fn glob_error(pattern: &str, kind: &ErrorKind) -> FsError {
    let (at, why, fix) = match kind {
        ErrorKind::UnclosedClass => (
            scan(pattern).class,
            "unclosed character class",
            "close it with `]` or escape the `[` as `\\[`",
        ),
        ErrorKind::UnopenedAlternates => (
            scan(pattern).unopened,
            "`}` without a matching `{`",
            "remove it or escape it as `\\}`",
        ),
        ErrorKind::UnclosedAlternates => (
            scan(pattern).unclosed,
            "unclosed alternation",
            "close it with `}` or escape the `{` as `\\{`",
        ),
        ErrorKind::DanglingEscape => (
            Some(pattern.chars().count()),
            "the pattern ends with a lone `\\`",
            "remove it or write `\\\\` for a backslash",
        ),
        ErrorKind::InvalidRange(a, b) => (
            pattern
                .find(&format!("{a}-{b}"))
                .map(|i| pattern[..i].chars().count() + 1),
            "invalid range in character class",
            "write the range low to high, such as `[a-z]`",
        ),
        _ => (None, "invalid glob", "simplify the pattern"),
    };
    let place = at.map_or(String::new(), |n| format!(" at character {n}"));
    FsError::new(
        ErrorCode::InvalidInput,
        format!("invalid glob `{pattern}`{place}: {why}; {fix}"),
    )
}

/// Where the glob's brackets go wrong, as 1-based character positions.
#[derive(Default)]
struct Scan {
    class: Option<usize>,
    unopened: Option<usize>,
    unclosed: Option<usize>,
}

fn scan(pattern: &str) -> Scan {
    let mut out = Scan::default();
    let mut braces = Vec::new();
    let mut chars = pattern.chars().enumerate().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' => {
                chars.next();
            }
            '[' => {
                let start = i + 1;
                // `]` first (after an optional `!`/`^`) is a literal member.
                if matches!(chars.peek(), Some((_, '!' | '^'))) {
                    chars.next();
                }
                if matches!(chars.peek(), Some((_, ']'))) {
                    chars.next();
                }
                if !chars.by_ref().any(|(_, c)| c == ']') {
                    out.class = Some(start);
                }
            }
            '{' => braces.push(i + 1),
            '}' if braces.pop().is_none() => {
                out.unopened.get_or_insert(i + 1);
            }
            _ => {}
        }
    }
    out.unclosed = braces.last().copied();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(r: Result<impl std::fmt::Debug, FsError>) -> String {
        let e = r.unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidInput);
        e.message
    }

    #[test]
    fn base_name_globs_match_at_any_depth() {
        let g = NameGlob::new("*.rs").unwrap();
        assert!(g.is_match("a/b/c.rs"));
        assert!(!g.is_match("a/b/c.rsx"));
        let g = NameGlob::new("src/*.rs").unwrap();
        assert!(g.is_match("src/a.rs"));
        assert!(!g.is_match("src/x/a.rs"));
        assert!(
            NameGlob::new("**/*.{rs,toml}")
                .unwrap()
                .is_match("x/Cargo.toml")
        );
    }

    #[test]
    fn invalid_globs_name_the_character() {
        assert!(
            message(NameGlob::new("src/[ab.rs"))
                .contains("at character 5: unclosed character class")
        );
        assert!(message(NameGlob::new("a}b")).contains("at character 2"));
        assert!(message(NameGlob::new("x/{a,b")).contains("at character 3: unclosed alternation"));
        assert!(message(NameGlob::new("[z-a]")).contains("at character 2: invalid range"));
        assert!(message(NameGlob::new("abc\\")).contains("at character 4"));
    }

    #[test]
    fn invalid_regexes_name_the_character() {
        let m = message(regex("fn (main"));
        assert!(
            m.starts_with("invalid regex `fn (main` at character 4: "),
            "{m}"
        );
        assert!(message(regex("a{2,1}")).contains("at character 2"));
        assert!(message(regex("")).contains("empty"));
        assert!(!message(regex("a\\nb")).contains('\n'));
    }
}

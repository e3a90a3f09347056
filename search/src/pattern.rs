//! Turning the model's patterns into matchers: globs with `globset`, regular
//! expressions with `grep-regex`, and every mistake as one `FS_INVALID_INPUT`
//! line that names the character where it is and how to fix it.
//!
//! Every pattern is compiled under fixed bounds, whatever the model sends: at
//! most [`MAX_PATTERN_BYTES`], a regex automaton of at most [`NFA_BYTES`], and
//! a lazy DFA cache of [`DFA_CACHE_BYTES`] per searching thread; how long a
//! search may run is the [`crate::Budget`]'s, enforced in [`crate::lines`].

use dsh_fs_core::text::one_line;
use dsh_fs_core::{ErrorCode, FsError};
use globset::{ErrorKind, GlobBuilder, GlobSet, GlobSetBuilder};
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use regex_automata::hybrid::dfa::DFA;
use regex_automata::nfa::thompson;
use regex_automata::util::syntax;

/// Longest pattern, glob or include accepted (bytes). Parsing costs memory
/// in proportion, and no search a model needs is longer.
pub const MAX_PATTERN_BYTES: usize = 16 << 10;
/// Largest compiled regex automaton (bytes of its NFA on a 64-bit target,
/// half on a 32-bit one such as wasm32, whose NFA states are half the size:
/// so the same patterns pass on every host): `(a{1000}){1000}` and its kind
/// are refused here instead of taking gigabytes.
pub const NFA_BYTES: usize = (2 << 20) / 8 * size_of::<usize>();
/// Largest lazy DFA cache of one searching thread.
pub const DFA_CACHE_BYTES: usize = 8 << 20;

/// Characters of a pattern quoted back in an error.
const QUOTED_CHARS: usize = 120;

/// A compiled file-name glob. A pattern without `/` matches base names at any
/// depth; one with `/` matches the path below the searched directory.
#[derive(Clone, Debug)]
pub struct NameGlob {
    matcher: GlobSet,
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
        too_long("glob", pattern)?;
        let trimmed = pattern.strip_prefix("./").unwrap_or(pattern);
        let glob = GlobBuilder::new(trimmed)
            .literal_separator(true)
            .backslash_escape(true)
            .empty_alternates(true)
            .build()
            .map_err(|e| glob_error(pattern, e.kind()))?;
        // A set of one, not `compile_matcher`: a set reports a glob its regex
        // engine refuses as an error, where the single matcher panics.
        let matcher = GlobSetBuilder::new()
            .add(glob)
            .build()
            .map_err(|_| glob_error(pattern, &ErrorKind::Regex(String::new())))?;
        Ok(NameGlob {
            matcher,
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

/// A regular expression compiled for line search: `grep-regex`'s matcher, and
/// a lazy DFA of the same pattern that [`crate::lines`] steps through by hand,
/// checking the budget, where one call of the matcher could outlast it.
#[derive(Clone, Debug)]
pub struct LineRegex {
    /// The matcher ripgrep uses (literal prefilters, the meta engine).
    pub matcher: RegexMatcher,
    /// The same pattern as a lazy DFA for a haystack too long for one call.
    pub dfa: DFA,
    /// States of the pattern's NFA: a call's worst case is this many steps
    /// per byte searched.
    pub states: usize,
}

/// Compiles a regular expression (the `regex` crate's syntax) for line search:
/// `$` also matches before `\r\n`, and a match never spans lines.
pub fn regex(pattern: &str) -> Result<LineRegex, FsError> {
    if pattern.is_empty() {
        return Err(FsError::new(
            ErrorCode::InvalidInput,
            "the pattern is empty; give a regular expression such as `fn main` or `TODO|FIXME`",
        ));
    }
    too_long("pattern", pattern)?;
    if let Err(e) = regex_syntax::Parser::new().parse(pattern) {
        let (column, why) = match &e {
            regex_syntax::Error::Parse(p) => (p.span().start.column, p.kind().to_string()),
            regex_syntax::Error::Translate(t) => (t.span().start.column, t.kind().to_string()),
            other => (1, other.to_string()),
        };
        return Err(invalid_regex(pattern, column, &why));
    }
    // The automaton first: its size limit refuses a pattern that would
    // compile to gigabytes before the matcher tries to.
    let dfa = DFA::builder()
        .syntax(syntax::Config::new().multi_line(true).crlf(true))
        .thompson(thompson::Config::new().nfa_size_limit(Some(NFA_BYTES)))
        .configure(
            DFA::config()
                .cache_capacity(DFA_CACHE_BYTES)
                .skip_cache_capacity_check(true)
                .minimum_cache_clear_count(None)
                .unicode_word_boundary(true),
        )
        .build(pattern)
        .map_err(|_| too_complex(pattern))?;
    let states = dfa.get_nfa().states().len().max(1);
    // `multi_line` as ripgrep always sets it: `^` and `$` match at every line
    // of a buffer searched at once, not only at its ends.
    let matcher = RegexMatcherBuilder::new()
        .multi_line(true)
        .line_terminator(Some(b'\n'))
        .crlf(true)
        .size_limit(NFA_BYTES)
        .dfa_size_limit(DFA_CACHE_BYTES)
        .build(pattern)
        .map_err(|e| {
            let why = e.to_string().replace('\n', " ");
            if why.contains("size limit") {
                return too_complex(pattern);
            }
            let column = pattern
                .find("\\n")
                .map_or(1, |at| pattern[..at].chars().count() + 1);
            invalid_regex(pattern, column, why.trim())
        })?;
    Ok(LineRegex {
        matcher,
        dfa,
        states,
    })
}

/// Refuses a pattern over [`MAX_PATTERN_BYTES`].
fn too_long(what: &str, pattern: &str) -> Result<(), FsError> {
    if pattern.len() <= MAX_PATTERN_BYTES {
        return Ok(());
    }
    Err(FsError::new(
        ErrorCode::InvalidInput,
        format!(
            "the {what} is {} bytes, more than the {} allowed; search for a shorter, \
             distinctive part of it",
            pattern.len(),
            MAX_PATTERN_BYTES
        ),
    ))
}

/// `pattern` as quoted in an error: one line, and cut when long.
fn quoted(pattern: &str) -> String {
    let line = one_line(pattern);
    match line.char_indices().nth(QUOTED_CHARS) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line.into_owned(),
    }
}

#[cold]
fn too_complex(pattern: &str) -> FsError {
    FsError::new(
        ErrorCode::InvalidInput,
        format!(
            "the regex `{}` compiles to an automaton too large to search in bounded memory \
             (large counted repetitions such as `{{1000}}`, or Unicode classes repeated many \
             times); use smaller counts, `+` or `*`, or `(?-u)` for ASCII-only classes",
            quoted(pattern)
        ),
    )
}

#[cold]
fn invalid_regex(pattern: &str, column: usize, why: &str) -> FsError {
    FsError::new(
        ErrorCode::InvalidInput,
        format!(
            "invalid regex `{}` at character {column}: {why}; fix it there, or escape \
             special characters with `\\` to match them literally (a match never spans lines)",
            quoted(pattern)
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
        ErrorKind::Regex(_) => (
            None,
            "too many wildcards to match in time",
            "use fewer `?`, `*` and `[...]`",
        ),
        _ => (None, "invalid glob", "simplify the pattern"),
    };
    let place = at.map_or(String::new(), |n| format!(" at character {n}"));
    FsError::new(
        ErrorCode::InvalidInput,
        format!("invalid glob `{}`{place}: {why}; {fix}", quoted(pattern)),
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

//! Content that stands for lines it leaves out: a comment such as
//! `// ... rest unchanged ...` or `# ... existing code ...` where a model
//! elided part of a file. Written whole, it would destroy those lines.

use super::diff::diff;

/// Characters of a placeholder line quoted back.
const QUOTED_CHARS: usize = 80;

/// Fewest lines of the old file lost for a write to count as destructive.
const MIN_LOST: u64 = 2;

/// A placeholder in a write's content, and what the write would lose.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Elision {
    /// 1-based line of the content holding it.
    pub line: u64,
    /// The line, trimmed and shortened.
    pub text: String,
    /// Lines of the old text the write removes.
    pub lost: u64,
}

/// The first placeholder line of `content` that `old` does not have, when
/// replacing `old` by `content` removes at least [`MIN_LOST`] of its lines.
pub(super) fn elision(old: &str, content: &str) -> Option<Elision> {
    let (line, text) = content
        .lines()
        .enumerate()
        .find(|(_, l)| is_placeholder(l) && !old.lines().any(|o| o.trim() == l.trim()))?;
    let lost = diff(old, content, 1).removed;
    (lost >= MIN_LOST).then(|| {
        let text = text.trim();
        let text = match text.char_indices().nth(QUOTED_CHARS) {
            Some((at, _)) => format!("{}…", &text[..at]),
            None => text.to_owned(),
        };
        Elision {
            line: line as u64 + 1,
            text,
            lost,
        }
    })
}

/// Words a placeholder comment is made of.
const WORDS: &[&str] = &[
    "above",
    "all",
    "and",
    "are",
    "as",
    "before",
    "below",
    "body",
    "brevity",
    "case",
    "cases",
    "class",
    "code",
    "content",
    "contents",
    "else",
    "elided",
    "etc",
    "everything",
    "existing",
    "fields",
    "file",
    "for",
    "function",
    "functions",
    "here",
    "identical",
    "implementation",
    "imports",
    "in",
    "is",
    "it",
    "keep",
    "kept",
    "left",
    "line",
    "lines",
    "method",
    "methods",
    "more",
    "no",
    "of",
    "omitted",
    "original",
    "other",
    "others",
    "out",
    "previous",
    "remain",
    "remaining",
    "remains",
    "rest",
    "same",
    "shown",
    "snip",
    "snipped",
    "stay",
    "stays",
    "tests",
    "that",
    "the",
    "this",
    "unchanged",
    "unmodified",
    "untouched",
    "etc",
];

/// Words that make a comment a placeholder without an ellipsis.
const TELLING: &[&str] = &[
    "unchanged",
    "unmodified",
    "untouched",
    "omitted",
    "elided",
    "existing",
    "remaining",
    "snipped",
];

/// Comment openers, longest first.
const OPENERS: &[&str] = &["<!--", "{/*", "/*", "//", "--", "#", ";", "%", "*"];

/// Whether `line` is a comment standing for code it does not contain: a
/// comment made only of placeholder words, with `...` or `…` or a telling
/// word (`// ... existing code ...`, `# rest of file unchanged`, `/* ... */`).
pub(super) fn is_placeholder(line: &str) -> bool {
    let mut body = line.trim();
    let Some(opener) = OPENERS.iter().find(|o| body.starts_with(**o)) else {
        return false;
    };
    body = body[opener.len()..].trim_start_matches(['/', '!', '*', '#']);
    for closer in ["-->", "*/}", "*/"] {
        body = body.strip_suffix(closer).unwrap_or(body);
    }
    let ellipsis = body.contains("...") || body.contains('…');
    let mut telling = false;
    for word in body
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        let word = word.to_lowercase();
        if word.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        if !WORDS.contains(&word.as_str()) {
            return false;
        }
        telling |= TELLING.contains(&word.as_str());
    }
    ellipsis || telling
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_comments_of_placeholder_words() {
        for line in [
            "// ...rest unchanged...",
            "    # ... existing code ...",
            "/* ... */",
            "// ...",
            "<!-- … rest of the file unchanged … -->",
            "# rest of the file is unchanged",
            "-- ... 120 lines omitted ...",
            "  // ... (other methods remain the same) ...",
            "/// ... existing implementation ...",
        ] {
            assert!(is_placeholder(line), "{line}");
        }
        for line in [
            "...",
            "  ...rest,",
            "// TODO: handle the rest",
            "# Same as above",
            "// see the existing tests in foo.rs",
            "// wait...",
            "print('... existing code ...')",
            "",
        ] {
            assert!(!is_placeholder(line), "{line}");
        }
    }

    #[test]
    fn an_elision_needs_a_new_placeholder_and_lost_lines() {
        let old = "a\nb\nc\nd\n";
        let e = elision(old, "a\n// ... rest unchanged ...\n").unwrap();
        assert_eq!(
            (e.line, e.text.as_str(), e.lost),
            (2, "// ... rest unchanged ...", 3)
        );
        // A rewrite without one, a placeholder the file already had, one
        // line lost: not an elision.
        assert_eq!(elision(old, "x\n"), None);
        assert_eq!(elision("// ...\na\nb\nc\n", "// ...\n"), None);
        assert_eq!(elision(old, "a\nb\nc\n// ...\n"), None);
    }
}

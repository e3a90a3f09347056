//! What a model pastes into `old_string` that the file cannot hold: read's
//! cut marker of a long line, a placeholder comment standing for lines it
//! leaves out, a markdown fence around the text. No spelling of the file
//! matches them, so a miss that holds one is answered by naming it, with
//! the part before it placed in the file when the file is at hand.

use super::elided::is_placeholder;

/// The file a miss is judged against: its text at hand, or the file read
/// as a stream once per question (`edit::Streamed`).
pub(super) trait Haystack {
    /// How often `needle` occurs in the file, counted up to `max`, and the
    /// line (1-based) the first starts on.
    fn occurrences(&self, needle: &str, max: usize) -> (usize, Option<u64>);
}

/// The file's text at hand.
pub(super) struct Text<'a>(pub(super) &'a str);

impl Haystack for Text<'_> {
    fn occurrences(&self, needle: &str, max: usize) -> (usize, Option<u64>) {
        let mut found = self.0.match_indices(needle).map(|(at, _)| at).take(max);
        let Some(first) = found.next() else {
            return (0, None);
        };
        let line = 1 + memchr::memchr_iter(b'\n', &self.0.as_bytes()[..first]).count() as u64;
        (1 + found.count(), Some(line))
    }
}

/// The marker `read` ends a cut line with: `… [line cut: N more characters]`.
const CUT_OPEN: &str = "… [line cut: ";
const CUT_CLOSE: &str = " more characters]";

/// One artefact in `old_string`.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Artefact {
    /// Read's cut marker on line `line` (1-based) of old_string; `before` is
    /// old_string up to the marker.
    Cut {
        line: usize,
        marker: String,
        before: String,
    },
    /// A placeholder comment on line `line` of old_string; `before` is
    /// old_string up to that line.
    Placeholder {
        line: usize,
        text: String,
        before: String,
    },
    /// A markdown fence around old_string.
    Fence { fence: String },
}

/// The first artefact in `old`, judged against the file's `text` when it is
/// at hand (a line the file holds is no artefact). A placeholder needs the
/// file: a comment of placeholder words may be real.
pub(super) fn find(old: &str, text: Option<&dyn Haystack>) -> Option<Artefact> {
    let absent = |s: &str| text.is_none_or(|t| t.occurrences(s, 1).0 == 0);
    let mut offset = 0;
    for (i, line) in old.split_inclusive('\n').enumerate() {
        if let Some(at) = line.find(CUT_OPEN)
            && let Some(len) = line[at + CUT_OPEN.len()..].find(CUT_CLOSE)
            && line[at + CUT_OPEN.len()..at + CUT_OPEN.len() + len]
                .bytes()
                .all(|b| b.is_ascii_digit())
        {
            let end = at + CUT_OPEN.len() + len + CUT_CLOSE.len();
            let marker = &line[at..end];
            if absent(marker) {
                return Some(Artefact::Cut {
                    line: i + 1,
                    marker: marker.to_owned(),
                    before: old[..offset + at].to_owned(),
                });
            }
        }
        let bare = line.trim();
        if text.is_some() && is_placeholder(bare) && absent(bare) {
            return Some(Artefact::Placeholder {
                line: i + 1,
                text: bare.to_owned(),
                before: old[..offset].to_owned(),
            });
        }
        offset += line.len();
    }
    let mut lines = old.lines().filter(|l| !l.trim().is_empty());
    let (first, last) = (lines.next()?.trim(), lines.next_back()?.trim());
    (first.starts_with("```") && last == "```" && absent(first)).then(|| Artefact::Fence {
        fence: first.to_owned(),
    })
}

/// The sentence naming `artefact`, after "old_string was not found in
/// PATH; ", and the line of the file where the part of old_string before
/// it stands, when `text` holds that part once.
pub(super) fn explain(artefact: &Artefact, text: Option<&dyn Haystack>) -> (String, Option<u64>) {
    let placed = |before: &str| -> Option<u64> {
        let (text, before) = (text?, before.trim_end_matches('\n'));
        if before.trim().is_empty() {
            return None;
        }
        match text.occurrences(before, 2) {
            (1, line) => line,
            _ => None,
        }
    };
    match artefact {
        Artefact::Cut {
            line,
            marker,
            before,
        } => {
            let at = placed(before);
            let fix = match at {
                Some(n) => format!(
                    "old_string up to the marker matches once, at line {n}: send that part, and \
                     the change to it as new_string"
                ),
                None => "end old_string before the marker, with enough of the line to be unique"
                    .to_owned(),
            };
            (
                format!(
                    "line {line} of old_string ends with read's cut marker `{marker}`, which is \
                     not in the file (the line goes on); {fix}."
                ),
                at,
            )
        }
        Artefact::Placeholder {
            line,
            text: placeholder,
            before,
        } => {
            let at = placed(before);
            let place = at.map_or(String::new(), |n| {
                format!(" (the lines before it match at line {n})")
            });
            (
                format!(
                    "line {line} of old_string, `{placeholder}`, is a placeholder for lines it \
                     leaves out, and the file has no such line{place}: copy the lines it stands \
                     for from read's output, or make one edit before it and one after."
                ),
                at,
            )
        }
        Artefact::Fence { fence } => (
            format!(
                "old_string is wrapped in a markdown fence ({fence} … ```), which is not in the \
                 file: send only the lines between the fences."
            ),
            None,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cut_marker_is_found_with_the_part_before_it() {
        let old = "a\nlong start… [line cut: 120 more characters]\n";
        // A multi-byte character right where the part begins.
        let file = "é\na\nlong start and more\n";
        let found = find(old, Some(&Text(file))).unwrap();
        assert_eq!(
            found,
            Artefact::Cut {
                line: 2,
                marker: "… [line cut: 120 more characters]".into(),
                before: "a\nlong start".into(),
            }
        );
        let (message, at) = explain(&found, Some(&Text(file)));
        assert_eq!(at, Some(2));
        assert!(message.contains("matches once, at line 2"), "{message}");
    }

    #[test]
    fn a_placeholder_needs_the_file_and_is_no_artefact_when_the_file_has_it() {
        let old = "fn a() {\n    // ... existing code ...\n}\n";
        assert_eq!(find(old, None), None);
        assert_eq!(
            find(
                old,
                Some(&Text("fn a() {\n    // ... existing code ...\n}\n"))
            ),
            None
        );
        let found = find(old, Some(&Text("fn a() {\n    let x = 1;\n}\n"))).unwrap();
        assert!(
            matches!(found, Artefact::Placeholder { line: 2, .. }),
            "{found:?}"
        );
    }

    #[test]
    fn a_fence_around_the_text_is_named() {
        let old = "```rust\nlet x = 1;\n```\n";
        assert_eq!(
            find(old, Some(&Text("let x = 1;\n"))),
            Some(Artefact::Fence {
                fence: "```rust".into()
            })
        );
        assert_eq!(find("let x = 1;\n", Some(&Text("let y = 1;\n"))), None);
    }
}

//! Why `old_string` was not found: after a miss, one bounded pass over the
//! file finds the nearest region by line similarity and names the difference
//! (indentation, trailing whitespace, typographic characters, read's
//! line-number prefixes, escape sequences, line endings), or sees that the
//! edit was already applied. It only explains; it never changes what an edit
//! matches.
//!
//! The text arrives in chunks ([`Diagnoser::push`]), so a file of any size
//! costs one linear scan and bounded memory: each line is scored against at
//! most [`MAX_OLD_LINES`] lines of `old_string` through a token index, and
//! only a ring of recent lines and a few candidate windows are kept. The
//! candidates are then aligned line by line with `old_string` to name the
//! difference.

mod candidates;
mod difference;
mod lines;
mod pasted;
mod render;
mod scan;
#[cfg(test)]
mod tests;

use super::window::LineSink;
use candidates::Matcher;
use difference::Report;
use dsh_fs_core::text::fold_crlf;
use lines::{Lines, RARE_PLACES};
pub use pasted::numbered_like_read;
use pasted::{Pasted, decode_escapes, pasted_prefixes, split_lines, strip_prefixes};
pub use render::{Spelling, first_difference, first_difference_in, respelt};
use render::{compose, fix_phrase, lines_phrase, plural, range_phrase};
use scan::{Features, LooseEnds, Needle, Ring};

/// Lines of `old_string` compared; a longer one is compared by its start.
pub const MAX_OLD_LINES: usize = 128;
/// Bytes of a line kept for comparison (the rest of a longer line is ignored).
const LINE_CAP: usize = 16 * 1024;
/// Lines kept around a candidate window, so alignment can absorb a missing
/// or an extra line.
const SLACK: usize = 2;
/// Candidate windows kept for the precise comparison.
const CANDIDATES: usize = 3;
/// Longest text searched verbatim (`new_string`, for "already applied").
const MAX_NEEDLE: usize = 1 << 20;
/// Below this similarity nothing is called similar.
const SIMILAR: f32 = 0.5;
/// Most lines shown under the message.
pub const EXCERPT_LINES: u64 = 12;
/// Longest snippet of text quoted in the message, in characters.
const SNIPPET_CHARS: usize = 60;
/// The message is cut (dropping causes) beyond this many bytes.
const MESSAGE_BYTES: usize = 520;
/// Context quoted on each side of a difference, in bytes.
const CONTEXT_BYTES: usize = 12;
/// Tokens per line compared by the longest-common-subsequence diff.
const MAX_DIFF_CELLS: usize = 300 * 300;

/// What to tell the model about a miss.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnosis {
    /// One line: the cause, the fix and the place. It follows
    /// "old_string was not found in PATH; ".
    pub message: String,
    /// Lines to show under the message as `read` renders them:
    /// `(first line, number of lines)`.
    pub excerpt: Option<(u64, u64)>,
    /// The excerpt's lines, each followed by `\n`, when the scan kept them
    /// whole (no line cut, no CR), so they need not be read again.
    pub kept: Option<String>,
    /// The file line old_string's first [`MAX_OLD_LINES`] lines match from,
    /// when they match cleanly and the difference lies past them: the
    /// caller, holding the file, can name the first line that differs.
    pub head_from: Option<u64>,
}

/// A transformation of `old_string` that explains a miss by itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fix {
    /// `old_string` as given.
    None,
    /// Every line carried read's `N: ` prefix.
    Prefixes,
    /// The first line carried the prefix `N: `.
    FirstPrefix(u64),
    /// `\n` and `\t` were written as two characters.
    Escapes,
    /// Lines were separated by bare CRs.
    BareCr,
}

/// One reading of `old_string` and its matcher.
#[derive(Debug)]
struct Variant {
    fix: Fix,
    matcher: Matcher,
}

/// Finds why `old_string` is not in a text fed chunk by chunk.
#[derive(Debug)]
pub struct Diagnoser {
    variants: Vec<Variant>,
    /// `new_string`, when it is specific enough to mean "already applied".
    applied: Option<Needle>,
    /// `old_string` with its line breaks as bare CRs.
    cr_lines: Option<Needle>,
    /// Lines in `new_string`.
    new_lines: u64,
    /// The last chunk ended with a CR that may start a CRLF.
    held_cr: bool,
    /// CRs not followed by LF.
    bare_cr: u64,
    /// The line being assembled (at most [`LINE_CAP`] bytes of it).
    line: String,
    /// Number of the line being assembled, 1-based.
    line_no: u64,
    /// The line being assembled has at least one byte.
    open: bool,
    /// The last byte seen was a line break.
    ends_nl: bool,
    ring: Ring,
    features: Features,
    /// Places of the applied needle's rare byte in the chunk being fed.
    places: Vec<usize>,
    /// The ends of every reading's loose lines.
    loose_ends: LooseEnds,
    /// Lines in `old_string` as given.
    old_lines: usize,
}

impl Diagnoser {
    /// A diagnoser for an edit of `old` by `new` (CRLF is seen as LF, as the
    /// edit sees it).
    pub fn new(old: &str, new: &str) -> Self {
        let old = fold_crlf(old).into_owned();
        let new = fold_crlf(new).into_owned();
        let mut variants = Vec::new();
        let (lines, _) = split_lines(&old);
        match pasted_prefixes(&lines) {
            Some(Pasted::Every) => variants.push(Variant {
                fix: Fix::Prefixes,
                matcher: Matcher::new(&strip_prefixes(&old, false)),
            }),
            Some(Pasted::First(n)) => {
                variants.push(Variant {
                    fix: Fix::None,
                    matcher: Matcher::new(&old),
                });
                variants.push(Variant {
                    fix: Fix::FirstPrefix(n),
                    matcher: Matcher::new(&strip_prefixes(&old, true)),
                });
            }
            None => variants.push(Variant {
                fix: Fix::None,
                matcher: Matcher::new(&old),
            }),
        }
        if let Some(decoded) = decode_escapes(&old) {
            variants.push(Variant {
                fix: Fix::Escapes,
                matcher: Matcher::new(&decoded),
            });
        }
        if old.contains('\r') {
            variants.push(Variant {
                fix: Fix::BareCr,
                matcher: Matcher::new(&old.replace('\r', "\n")),
            });
        }
        let specific = new.trim().chars().filter(|c| c.is_alphanumeric()).count() >= 3;
        let applied = (specific && new.len() <= MAX_NEEDLE && !old.contains(new.as_str()))
            .then(|| Needle::new(new.as_bytes()));
        let cr_lines = (old.contains('\n') && old.len() <= MAX_NEEDLE)
            .then(|| Needle::new(old.trim_end_matches('\n').replace('\n', "\r").as_bytes()));
        let ring = variants
            .iter()
            .map(|v| v.matcher.old.len() + 2 * SLACK + 1)
            .max()
            .unwrap_or(1);
        let mut loose_ends = LooseEnds::default();
        for v in &variants {
            v.matcher.loose_ends(&mut loose_ends);
        }
        Diagnoser {
            variants,
            applied,
            cr_lines,
            new_lines: split_lines(&new).0.len() as u64,
            held_cr: false,
            bare_cr: 0,
            line: String::new(),
            line_no: 1,
            open: false,
            ends_nl: false,
            ring: Ring::new(ring),
            features: Features::default(),
            places: Vec::new(),
            loose_ends,
            old_lines: lines.len(),
        }
    }

    /// Feeds the next chunk of the file's text (without its BOM).
    pub fn push(&mut self, chunk: &str) {
        if chunk.is_empty() {
            return;
        }
        let folded: std::borrow::Cow<'_, str> =
            if !self.held_cr && memchr::memchr(b'\r', chunk.as_bytes()).is_none() {
                chunk.into()
            } else {
                let mut s = String::with_capacity(chunk.len() + 1);
                if std::mem::take(&mut self.held_cr) {
                    s.push('\r');
                }
                s.push_str(chunk);
                let mut s = match fold_crlf(&s) {
                    std::borrow::Cow::Borrowed(_) => s,
                    std::borrow::Cow::Owned(folded) => folded,
                };
                if s.ends_with('\r') {
                    s.pop();
                    self.held_cr = true;
                }
                s.into()
            };
        self.feed(&folded);
    }

    fn feed(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        self.bare_cr += memchr::memchr_iter(b'\r', text.as_bytes()).count() as u64;
        let first = self.line_no;
        self.ends_nl = text.ends_with('\n');
        let mut rest = text;
        if self.open {
            // The line the last chunk left open.
            let newline = memchr::memchr(b'\n', rest.as_bytes());
            rest = self.feed_line(rest, newline).unwrap_or("");
        }
        // The scan keeps the places of the applied needle's rare byte.
        let rare = self
            .applied
            .as_ref()
            .filter(|n| n.found.is_none())
            .map_or(0, |n| n.rare);
        let mut lines = Lines::new(rest, rare);
        let mut places = std::mem::take(&mut self.places);
        places.clear();
        loop {
            // With one reading the scan counts its words in the line.
            let index = match &self.variants[..] {
                [only] => Some(&only.matcher.by_token),
                _ => None,
            };
            let Some((line, scanned)) =
                lines.next(&mut self.features, &self.loose_ends, index, &mut places)
            else {
                break;
            };
            if scanned {
                self.score(line);
            } else if line.len() <= LINE_CAP {
                self.features.of(line, Some(&self.loose_ends));
                self.score(line);
            } else {
                self.take(line);
                self.end_line();
            }
        }
        self.take(lines.rest());
        // Places relative to `text`, all of them kept.
        let skip = text.len() - rest.len();
        let kept = (rare != 0 && places.len() <= RARE_PLACES).then(|| {
            places.iter_mut().for_each(|at| *at += skip);
            (skip, &places[..])
        });
        if let Some(needle) = &mut self.applied {
            needle.feed(text.as_bytes(), first, self.line_no, kept);
        }
        if let Some(needle) = &mut self.cr_lines {
            needle.feed(text.as_bytes(), first, self.line_no, None);
        }
        self.places = places;
    }

    /// Scores line `line` (at most [`LINE_CAP`] bytes), whose features are
    /// in `self.features`, and moves to the next.
    fn score(&mut self, line: &str) {
        let no = self.line_no;
        self.ring.push(no, line);
        for v in &mut self.variants {
            v.matcher.on_line(no, &self.features, &self.ring);
        }
        self.line_no += 1;
        self.open = false;
    }

    /// The diagnosis, once the whole text was fed.
    pub fn finish(mut self) -> Diagnosis {
        let mut d = self.conclude();
        d.kept = d.excerpt.and_then(|(first, count)| self.kept(first, count));
        d
    }

    /// Lines `first` to `first + count - 1` as the scan kept them, if it kept
    /// all of them whole: in a candidate window or in the ring.
    fn kept(&self, first: u64, count: u64) -> Option<String> {
        let mut held: Vec<(u64, &[String])> = vec![];
        let (front, back) = self.ring.lines.as_slices();
        held.push((self.ring.first, front));
        held.push((self.ring.first + front.len() as u64, back));
        for v in &self.variants {
            for c in &v.matcher.candidates {
                held.push((c.first, &c.lines));
            }
        }
        let lines = held.into_iter().find_map(|(at, lines)| {
            let from = usize::try_from(first.checked_sub(at)?).ok()?;
            lines.get(from..from.checked_add(usize::try_from(count).ok()?)?)
        })?;
        let mut out = String::new();
        for line in lines {
            if line.len() >= LINE_CAP || line.contains('\r') {
                return None;
            }
            out.push_str(line);
            out.push('\n');
        }
        Some(out)
    }

    fn conclude(&mut self) -> Diagnosis {
        if std::mem::take(&mut self.held_cr) {
            self.feed("\r");
        }
        if self.open {
            self.end_line();
        }
        let total = self.line_no - 1;
        for v in &mut self.variants {
            v.matcher.finish(total, &self.ring);
        }
        let facts = Facts {
            lines: total,
            ends_nl: self.ends_nl,
        };

        if self.bare_cr > 0
            && let Some(line) = self.cr_lines.as_ref().and_then(|n| n.found)
        {
            return Diagnosis {
                message: format!(
                    "the file separates its lines with bare CR characters (old Mac line endings), \
which read and edit do not count as line breaks, so read shows that text inside line {line}. \
Rewrite the file with write using \\n line breaks, or edit within one line:"
                ),
                excerpt: Some((line, 1)),
                kept: None,
                head_from: None,
            };
        }

        let mut found: Vec<(Fix, Report)> = Vec::new();
        for v in &self.variants {
            if let Some(r) = v.matcher.report() {
                found.push((v.fix, r));
            }
        }
        // A lone `N: ` at the start counts as read's prefix only where it
        // names the line the text is on, or when removing it leaves a clean match.
        let raw_clean = found
            .iter()
            .any(|(f, r)| *f == Fix::None && r.clean() && r.score >= 0.9);
        found.retain(|(f, r)| match f {
            Fix::FirstPrefix(n) => r.first == *n || (r.clean() && !raw_clean),
            _ => true,
        });

        let clean = found
            .iter()
            .filter(|(_, r)| r.clean() && r.score >= 0.9)
            .max_by(|a, b| rank(a).total_cmp(&rank(b)));
        if let Some((fix, r)) = clean {
            return self.explain_clean(*fix, r, &facts);
        }

        if let Some(line) = self.applied.as_ref().and_then(|n| n.found) {
            return Diagnosis {
                message: format!(
                    "new_string is already present at {} and old_string is not, so the edit looks \
already applied. Check the lines below before changing anything else:",
                    lines_phrase(line, line + self.new_lines.max(1) - 1)
                ),
                excerpt: Some((line, self.new_lines.clamp(1, EXCERPT_LINES))),
                kept: None,
                head_from: None,
            };
        }

        let raw_score = found
            .iter()
            .find(|(f, _)| *f == Fix::None)
            .map_or(0.0, |(_, r)| r.score);
        let best = found
            .iter()
            .filter(|(f, r)| *f == Fix::None || *f == Fix::Prefixes || r.score > raw_score + 0.2)
            .max_by(|a, b| rank(a).total_cmp(&rank(b)));
        match best {
            Some((fix, r)) if r.score >= SIMILAR => {
                let mut causes = r.causes();
                if let Some(f) = fix_phrase(*fix) {
                    causes.insert(0, f.to_owned());
                }
                let head = format!("the nearest text is {}: ", range_phrase(r));
                let tail = ". Copy old_string from these lines exactly (without the `N: ` \
prefixes), or read the file again:";
                Diagnosis {
                    message: compose(&head, &causes, tail),
                    excerpt: Some(r.excerpt()),
                    kept: None,
                    head_from: None,
                }
            }
            _ => Diagnosis {
                message: if total == 0 {
                    "nothing similar; the file is empty. Use write to give it content.".to_owned()
                } else {
                    format!(
                        "nothing similar; the file has {}. Read the file again and copy old_string \
from its current text.",
                        plural(total, "line", "lines")
                    )
                },
                excerpt: None,
                kept: None,
                head_from: None,
            },
        }
    }
}

impl LineSink for Diagnoser {
    fn take(&mut self, piece: &str) {
        if piece.is_empty() {
            return;
        }
        self.open = true;
        let room = LINE_CAP - self.line.len();
        if piece.len() <= room {
            self.line.push_str(piece);
        } else {
            let mut cut = room;
            while !piece.is_char_boundary(cut) {
                cut -= 1;
            }
            self.line.push_str(&piece[..cut]);
        }
    }

    /// Ends the line assembled by [`LineSink::take`].
    fn end_line(&mut self) {
        let mut line = std::mem::take(&mut self.line);
        self.features.of(&line, Some(&self.loose_ends));
        self.score(&line);
        line.clear();
        self.line = line;
    }
}

/// What the scan learned about the whole file.
struct Facts {
    lines: u64,
    ends_nl: bool,
}

/// Orders reports: the best score, then the fewest differences.
fn rank((_, r): &(Fix, Report)) -> f32 {
    r.score - 0.001 * r.differences() as f32
}

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

use memchr::memmem;
use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};
use std::ops::Range;

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
    /// Lines in `old_string` as given.
    old_lines: usize,
}

impl Diagnoser {
    /// A diagnoser for an edit of `old` by `new` (CRLF is seen as LF, as the
    /// edit sees it).
    pub fn new(old: &str, new: &str) -> Self {
        let old = old.replace("\r\n", "\n");
        let new = new.replace("\r\n", "\n");
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
                let mut s = if s.contains("\r\n") {
                    s.replace("\r\n", "\n")
                } else {
                    s
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
        for needle in [&mut self.applied, &mut self.cr_lines]
            .into_iter()
            .flatten()
        {
            needle.feed(text.as_bytes(), self.line_no);
        }
        self.ends_nl = text.ends_with('\n');
        let mut rest = text;
        while let Some(at) = memchr::memchr(b'\n', rest.as_bytes()) {
            self.take(&rest[..at]);
            self.end_line();
            rest = &rest[at + 1..];
        }
        self.take(rest);
    }

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

    fn end_line(&mut self) {
        let no = self.line_no;
        self.features.of(&self.line);
        self.ring.push(no, &self.line);
        for v in &mut self.variants {
            v.matcher.on_line(no, &self.features, &self.ring);
        }
        self.line.clear();
        self.line_no += 1;
        self.open = false;
    }

    /// The diagnosis, once the whole text was fed.
    pub fn finish(mut self) -> Diagnosis {
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
            },
        }
    }

    /// A region that differs from `old_string` (after `fix`) only in
    /// whitespace or typography, or not at all.
    fn explain_clean(&self, fix: Fix, r: &Report, facts: &Facts) -> Diagnosis {
        let matcher = &self
            .variants
            .iter()
            .find(|v| v.fix == fix)
            .expect("a report comes from a variant")
            .matcher;
        let mut causes = r.causes();
        let fix_text = fix_phrase(fix).map(str::to_owned).or_else(|| {
            (matcher.ends_nl && r.last == facts.lines && !facts.ends_nl).then(|| {
                format!(
                    "old_string ends with a line break, but the file's last line ({}) has none: \
drop the final line break from old_string",
                    facts.lines
                )
            })
        });
        let matches = if r.first == r.last {
            "matches"
        } else {
            "match"
        };
        let message = match (fix_text, causes.is_empty()) {
            (Some(fix_text), true) => {
                let then = match fix {
                    Fix::Prefixes => "Without them",
                    Fix::Escapes => "With real line breaks",
                    Fix::BareCr => "With \\n line breaks",
                    Fix::FirstPrefix(_) | Fix::None => "Without it",
                };
                format!(
                    "{fix_text}. {then}, old_string matches {}:",
                    range_phrase(r)
                )
            }
            (Some(fix), false) => {
                causes.insert(0, fix);
                let head = format!("{} {matches} old_string except that ", range_phrase(r));
                compose(
                    &head,
                    &causes,
                    ". Copy old_string from these lines exactly (without the `N: ` prefixes):",
                )
            }
            (None, false) => {
                let head = format!("{} {matches} it except that ", range_phrase(r));
                compose(
                    &head,
                    &causes,
                    ". Copy old_string from these lines exactly (without the `N: ` prefixes):",
                )
            }
            (None, true) if matcher.total > MAX_OLD_LINES => format!(
                "its first {MAX_OLD_LINES} lines match {}; the difference is further on in \
old_string ({} lines). Edit a smaller part at a time:",
                range_phrase(r),
                self.old_lines
            ),
            (None, true) => format!(
                "{} now {} that text; the file may have changed meanwhile. Read it again:",
                range_phrase(r),
                if r.first == r.last { "holds" } else { "hold" }
            ),
        };
        Diagnosis {
            message,
            excerpt: Some(r.excerpt()),
        }
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

/// The fix sentence for a transformation of `old_string`.
fn fix_phrase(fix: Fix) -> Option<&'static str> {
    match fix {
        Fix::None => None,
        Fix::Prefixes => Some(
            "old_string carries read's `N: ` line-number prefixes on every line: remove the `N: ` prefixes",
        ),
        Fix::FirstPrefix(_) => Some(
            "old_string starts with read's `N: ` line-number prefix on its first line only: remove the `N: ` prefix",
        ),
        Fix::Escapes => Some(
            "old_string contains literal escape sequences (`\\n` or `\\t` written as two characters): use real line breaks and tabs",
        ),
        Fix::BareCr => {
            Some("old_string separates lines with bare CR characters: use \\n line breaks")
        }
    }
}

/// `head` + causes joined by "; " + `tail`, dropping causes beyond the
/// message budget.
fn compose(head: &str, causes: &[String], tail: &str) -> String {
    let mut out = head.to_owned();
    let mut shown = 0;
    for cause in causes {
        if shown > 0 && out.len() + cause.len() + tail.len() > MESSAGE_BYTES {
            break;
        }
        if shown > 0 {
            out.push_str("; ");
        }
        out.push_str(cause);
        shown += 1;
    }
    if shown < causes.len() {
        out.push_str(&format!("; and {} more", causes.len() - shown));
    }
    out.push_str(tail);
    out
}

/// `line 7` or `lines 7-9`.
fn lines_phrase(first: u64, last: u64) -> String {
    if first == last {
        format!("line {first}")
    } else {
        format!("lines {first}-{last}")
    }
}

fn range_phrase(r: &Report) -> String {
    lines_phrase(r.first, r.last)
}

fn plural(n: u64, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

// ---------------------------------------------------------------------------
// Pasted prefixes and escapes

/// How read's `N: ` prefixes appear in a text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pasted {
    /// On every non-empty line (at least two), numbers increasing.
    Every,
    /// On the first line only, with this number.
    First(u64),
}

/// `N: text` (or `N:` alone, read's empty line with its space trimmed):
/// the number and the text.
fn line_prefix(line: &str) -> Option<(u64, &str)> {
    let digits = line.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || digits > 12 {
        return None;
    }
    let n = line[..digits].parse().ok()?;
    let rest = &line[digits..];
    match rest.strip_prefix(": ") {
        Some(text) => Some((n, text)),
        None if rest == ":" => Some((n, "")),
        None => None,
    }
}

fn pasted_prefixes(lines: &[&str]) -> Option<Pasted> {
    let first = line_prefix(lines.first()?)?.0;
    let mut last = None;
    let mut count = 0;
    let mut every = true;
    for line in lines {
        match line_prefix(line) {
            Some((n, _)) if last.is_none_or(|l| n > l) => {
                last = Some(n);
                count += 1;
            }
            None if line.is_empty() => {}
            _ => every = false,
        }
    }
    if every && count >= 2 {
        Some(Pasted::Every)
    } else {
        Some(Pasted::First(first))
    }
}

/// `text` without read's prefixes (on the first line only, or on every line).
fn strip_prefixes(text: &str, first_only: bool) -> String {
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        match line_prefix(line) {
            Some((_, rest)) if i == 0 || !first_only => out.push_str(rest),
            _ => out.push_str(line),
        }
    }
    out
}

/// Whether every line of `text` starts with read's `N: ` prefix, numbered
/// consecutively (at least two lines; read's `File:` header and footer may be
/// there too): the first and last numbers. Ordinary numbered text (`1. step`,
/// one line `1: one`) does not qualify.
pub fn numbered_like_read(text: &str) -> Option<(u64, u64)> {
    let (mut lines, _) = split_lines(text);
    if lines.first().is_some_and(|l| l.starts_with("File: ")) {
        lines.remove(0);
    }
    if lines
        .last()
        .is_some_and(|l| l.starts_with('(') && l.ends_with(')'))
    {
        lines.pop();
    }
    if lines.len() < 2 {
        return None;
    }
    let first = line_prefix(lines[0].trim_end_matches('\r'))?.0;
    for (i, line) in lines.iter().enumerate() {
        let (n, _) = line_prefix(line.trim_end_matches('\r'))?;
        if n != first + i as u64 {
            return None;
        }
    }
    Some((first, first + lines.len() as u64 - 1))
}

/// `text` with `\n`, `\t`, `\r`, `\"`, `\'` and `\\` decoded, when it has at
/// least one `\n` or `\t`.
fn decode_escapes(text: &str) -> Option<String> {
    if !text.contains("\\n") && !text.contains("\\t") {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.peek() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some(&q @ ('"' | '\'' | '\\')) => out.push(q),
            _ => {
                out.push('\\');
                continue;
            }
        }
        chars.next();
    }
    Some(out.replace("\r\n", "\n"))
}

/// The lines of `text` and whether it ends with a line break (which then
/// does not start another line).
fn split_lines(text: &str) -> (Vec<&str>, bool) {
    match text.strip_suffix('\n') {
        Some(body) => (body.split('\n').collect(), true),
        None => (text.split('\n').collect(), false),
    }
}

// ---------------------------------------------------------------------------
// Verbatim search

/// One text searched verbatim across chunks: the line of its first occurrence.
#[derive(Debug)]
struct Needle {
    bytes: Vec<u8>,
    /// The last `len - 1` bytes seen, for occurrences across chunks.
    carry: Vec<u8>,
    /// Line number of `carry[0]`.
    carry_line: u64,
    found: Option<u64>,
}

impl Needle {
    fn new(bytes: &[u8]) -> Self {
        Needle {
            bytes: bytes.to_vec(),
            carry: Vec::new(),
            carry_line: 1,
            found: None,
        }
    }

    /// Searches the next chunk, whose first byte is on line `line`.
    fn feed(&mut self, chunk: &[u8], line: u64) {
        let n = self.bytes.len();
        if self.found.is_some() || n == 0 {
            return;
        }
        let lines_in = |b: &[u8]| memchr::memchr_iter(b'\n', b).count() as u64;
        if !self.carry.is_empty() {
            let take = (n - 1).min(chunk.len());
            let mut joined = Vec::with_capacity(self.carry.len() + take);
            joined.extend_from_slice(&self.carry);
            joined.extend_from_slice(&chunk[..take]);
            if let Some(at) = memmem::find(&joined, &self.bytes)
                && at < self.carry.len()
            {
                self.found = Some(self.carry_line + lines_in(&joined[..at]));
                return;
            }
        }
        if let Some(at) = memmem::find(chunk, &self.bytes) {
            self.found = Some(line + lines_in(&chunk[..at]));
            return;
        }
        let keep = n - 1;
        if chunk.len() >= keep {
            let from = chunk.len() - keep;
            self.carry.clear();
            self.carry.extend_from_slice(&chunk[from..]);
            self.carry_line = line + lines_in(&chunk[..from]);
        } else {
            self.carry.extend_from_slice(chunk);
            let drop = self.carry.len().saturating_sub(keep);
            self.carry_line += lines_in(&self.carry[..drop]);
            self.carry.drain(..drop);
        }
    }
}

// ---------------------------------------------------------------------------
// Line features

/// A hasher for keys that are already hashes.
#[derive(Default)]
struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8) | u64::from(b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

type IdMap<V> = HashMap<u64, V, BuildHasherDefault<IdHasher>>;

/// FNV-1a.
fn hash(bytes: &[u8]) -> u64 {
    bytes.iter().copied().fold(0xcbf2_9ce4_8422_2325, fnv)
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// What a line is compared by: its words, and its loose form.
#[derive(Clone, Debug, Default)]
struct Features {
    /// Hashes of its words (runs of letters, digits and `_`), sorted, distinct.
    tokens: Vec<u64>,
    /// The line with whitespace collapsed and trimmed, typographic quotes,
    /// dashes and ellipses folded to ASCII, invisible characters dropped
    /// (only made by [`Features::full`]; the scan needs just its hash).
    loose: String,
    loose_hash: u64,
}

impl Features {
    /// Words and the loose form's hash: what the scan needs of every line.
    fn of(&mut self, line: &str) {
        self.tokens.clear();
        const SEED: u64 = 0xcbf2_9ce4_8422_2325;
        if line.is_ascii() {
            // One pass over the bytes for both the words and the loose hash
            // (ASCII folds nothing but whitespace runs and dash runs).
            let (mut word, mut loose) = (None, SEED);
            let (mut space, mut dash, mut any) = (false, false, false);
            for &b in line.as_bytes() {
                if b.is_ascii_alphanumeric() || b == b'_' {
                    word = Some(fnv(word.unwrap_or(SEED), b));
                } else if let Some(t) = word.take() {
                    self.tokens.push(t);
                }
                if matches!(b, b' ' | b'\t'..=b'\r') {
                    space = true;
                    continue;
                }
                if b == b'-' && dash && !space {
                    continue;
                }
                if std::mem::take(&mut space) && any {
                    loose = fnv(loose, b' ');
                }
                loose = fnv(loose, b);
                any = true;
                dash = b == b'-';
            }
            self.tokens.extend(word);
            self.tokens.sort_unstable();
            self.tokens.dedup();
            self.loose_hash = loose;
            return;
        }
        let mut start = None;
        for (i, c) in line.char_indices() {
            match (is_word(c), start) {
                (true, None) => start = Some(i),
                (false, Some(s)) => {
                    self.tokens.push(hash(&line.as_bytes()[s..i]));
                    start = None;
                }
                _ => {}
            }
        }
        if let Some(s) = start {
            self.tokens.push(hash(&line.as_bytes()[s..]));
        }
        self.tokens.sort_unstable();
        self.tokens.dedup();
        let mut h = SEED;
        loosen(line, |piece| h = piece.bytes().fold(h, fnv));
        self.loose_hash = h;
    }

    /// [`Features::of`] and the loose form itself.
    fn full(line: &str) -> Self {
        let mut f = Features::default();
        f.of(line);
        loosen(line, |piece| f.loose.push_str(piece));
        f
    }
}

/// Whether `c` is invisible (zero-width characters and a stray BOM).
fn invisible(c: char) -> bool {
    matches!(
        c,
        '\u{200B}' | '\u{200C}' | '\u{200D}' | '\u{2060}' | '\u{FEFF}'
    )
}

/// The loose form of `s` (see [`Features::loose`]), piece by piece.
fn loosen(s: &str, mut out: impl FnMut(&str)) {
    let (mut space, mut dash, mut any) = (false, false, false);
    let mut emit = |piece: &str, is_dash: bool, space: &mut bool| {
        if is_dash && dash && !*space {
            return;
        }
        if std::mem::take(space) && any {
            out(" ");
        }
        out(piece);
        any = true;
        dash = is_dash;
    };
    let mut buf = [0u8; 4];
    for c in s.chars() {
        if c.is_whitespace() {
            space = true;
            continue;
        }
        match c {
            c if invisible(c) => {}
            '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' | '\u{2032}' => {
                emit("'", false, &mut space)
            }
            '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' | '\u{2033}' => {
                emit("\"", false, &mut space)
            }
            '-' | '\u{2010}' | '\u{2011}' | '\u{2012}' | '\u{2013}' | '\u{2014}' | '\u{2015}'
            | '\u{2212}' => emit("-", true, &mut space),
            '\u{2026}' => emit("...", false, &mut space),
            c => emit(c.encode_utf8(&mut buf), false, &mut space),
        }
    }
}

fn fnv(h: u64, b: u8) -> u64 {
    (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
}

/// Number of values two sorted, distinct lists share.
fn common(a: &[u64], b: &[u64]) -> usize {
    let (mut i, mut j, mut n) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                n += 1;
                i += 1;
                j += 1;
            }
        }
    }
    n
}

/// The last lines seen, by number.
#[derive(Debug)]
struct Ring {
    lines: VecDeque<String>,
    cap: usize,
    /// Number of `lines[0]`.
    first: u64,
}

impl Ring {
    fn new(cap: usize) -> Self {
        Ring {
            lines: VecDeque::with_capacity(cap),
            cap,
            first: 1,
        }
    }

    fn push(&mut self, no: u64, text: &str) {
        let mut slot = if self.lines.len() == self.cap {
            self.first += 1;
            self.lines.pop_front().unwrap_or_default()
        } else {
            String::new()
        };
        slot.clear();
        slot.push_str(text);
        self.lines.push_back(slot);
        debug_assert_eq!(self.first + self.lines.len() as u64 - 1, no);
    }

    fn get(&self, no: u64) -> Option<&str> {
        let i = no.checked_sub(self.first)? as usize;
        self.lines.get(i).map(String::as_str)
    }
}

// ---------------------------------------------------------------------------
// Matching

/// One line of `old_string`, with where it may sit in a file line.
#[derive(Debug)]
struct OldLine {
    text: String,
    features: Features,
    /// The match may start inside the file line (the first line).
    start_free: bool,
    /// The match may end inside the file line (the last line, when
    /// `old_string` does not end with a line break).
    end_free: bool,
}

impl OldLine {
    /// Whether `c` holds this line where a match would need it.
    fn fits(&self, c: &str) -> bool {
        fits(&self.text, c, self.start_free, self.end_free)
    }

    fn fits_loosely(&self, loose: &str) -> bool {
        self.features.loose.len() >= 3
            && fits(&self.features.loose, loose, self.start_free, self.end_free)
    }

    /// Similarity with a file line from shared words: Dice, averaged with
    /// coverage for a line that may be part of a file line.
    fn word_similarity(&self, shared: usize, words: usize) -> f32 {
        let own = self.features.tokens.len();
        if own + words == 0 {
            return 0.0;
        }
        let dice = 2.0 * shared as f32 / (own + words) as f32;
        if (self.start_free || self.end_free) && own > 0 {
            0.5 * dice + 0.5 * shared as f32 / own as f32
        } else {
            dice
        }
    }
}

fn fits(o: &str, c: &str, start_free: bool, end_free: bool) -> bool {
    match (start_free, end_free) {
        (false, false) => c == o,
        (true, false) => c.ends_with(o),
        (false, true) => c.starts_with(o),
        (true, true) => c.contains(o),
    }
}

/// A window of the file kept for the precise comparison.
#[derive(Debug)]
struct Candidate {
    /// Line the window starts on.
    start: u64,
    score: f32,
    /// Number of `lines[0]` (a few lines before `start`).
    first: u64,
    lines: Vec<String>,
}

/// Scores every window of the file against one reading of `old_string`
/// and keeps the best few.
#[derive(Debug)]
struct Matcher {
    old: Vec<OldLine>,
    /// Lines in this reading of `old_string` (`old` holds at most [`MAX_OLD_LINES`]).
    total: usize,
    ends_nl: bool,
    by_token: IdMap<Vec<u16>>,
    by_loose: IdMap<Vec<u16>>,
    /// Words shared with the current file line, per old line.
    shared: Vec<u32>,
    /// The file line `shared` counts for, per old line.
    stamp: Vec<u64>,
    touched: Vec<u16>,
    /// Summed similarity of each live window, by start line modulo its length.
    acc: Vec<f32>,
    /// Complete windows waiting for the lines after them.
    pending: VecDeque<(u64, f32)>,
    candidates: Vec<Candidate>,
}

impl Matcher {
    fn new(text: &str) -> Self {
        let (lines, ends_nl) = split_lines(text);
        let total = lines.len();
        let kept = total.min(MAX_OLD_LINES);
        let mut old = Vec::with_capacity(kept);
        let mut by_token: IdMap<Vec<u16>> = IdMap::default();
        let mut by_loose: IdMap<Vec<u16>> = IdMap::default();
        for (m, line) in lines.iter().take(kept).enumerate() {
            let mut cut = line.len().min(LINE_CAP);
            while !line.is_char_boundary(cut) {
                cut -= 1;
            }
            let features = Features::full(&line[..cut]);
            for &t in &features.tokens {
                by_token.entry(t).or_default().push(m as u16);
            }
            by_loose
                .entry(features.loose_hash)
                .or_default()
                .push(m as u16);
            old.push(OldLine {
                text: line[..cut].to_owned(),
                features,
                start_free: m == 0,
                end_free: m + 1 == total && !ends_nl,
            });
        }
        Matcher {
            shared: vec![0; kept],
            stamp: vec![0; kept],
            acc: vec![0.0; kept.max(1)],
            old,
            total,
            ends_nl,
            by_token,
            by_loose,
            touched: Vec::new(),
            pending: VecDeque::new(),
            candidates: Vec::new(),
        }
    }

    /// Scores file line `j` against every old line it shares something with
    /// and adds the scores to the windows that would align them.
    fn on_line(&mut self, j: u64, f: &Features, ring: &Ring) {
        let k = self.old.len();
        if k == 0 {
            return;
        }
        for t in &f.tokens {
            if let Some(ms) = self.by_token.get(t) {
                for &m in ms {
                    let m = m as usize;
                    if self.stamp[m] != j {
                        self.stamp[m] = j;
                        self.shared[m] = 0;
                        self.touched.push(m as u16);
                    }
                    self.shared[m] += 1;
                }
            }
        }
        if let Some(ms) = self.by_loose.get(&f.loose_hash) {
            for &m in ms {
                let m = m as usize;
                if self.stamp[m] != j {
                    self.stamp[m] = j;
                    self.shared[m] = 0;
                    self.touched.push(m as u16);
                }
            }
        }
        for &m in &self.touched {
            let m = m as usize;
            if j > m as u64 {
                let o = &self.old[m];
                let sim = if o.features.loose_hash == f.loose_hash {
                    1.0
                } else {
                    o.word_similarity(self.shared[m] as usize, f.tokens.len())
                };
                self.acc[((j - m as u64) % k as u64) as usize] += sim;
            }
        }
        self.touched.clear();

        if j >= k as u64 {
            let start = j + 1 - k as u64;
            let slot = (start % k as u64) as usize;
            let score = std::mem::take(&mut self.acc[slot]) / k as f32;
            if score > 0.0 {
                self.pending.push_back((start, score));
            }
        }
        while let Some(&(start, score)) = self.pending.front() {
            if start + (k + SLACK) as u64 - 1 > j {
                break;
            }
            self.pending.pop_front();
            self.offer(start, score, j, ring);
        }
    }

    /// Keeps the window starting at `start` if it is among the best,
    /// with the lines around it (up to line `upto`).
    fn offer(&mut self, start: u64, score: f32, upto: u64, ring: &Ring) {
        let k = self.old.len() as u64;
        let overlaps = |c: &Candidate| c.start.abs_diff(start) < k;
        if self
            .candidates
            .iter()
            .any(|c| overlaps(c) && c.score >= score)
        {
            return;
        }
        let worst = self
            .candidates
            .iter()
            .map(|c| c.score)
            .fold(f32::INFINITY, f32::min);
        let replaces = self.candidates.iter().any(overlaps);
        if !replaces && self.candidates.len() == CANDIDATES && score <= worst {
            return;
        }
        self.candidates.retain(|c| !overlaps(c));
        if self.candidates.len() == CANDIDATES
            && let Some(i) = (0..self.candidates.len()).min_by(|&a, &b| {
                self.candidates[a]
                    .score
                    .total_cmp(&self.candidates[b].score)
            })
        {
            self.candidates.remove(i);
        }
        let first = start.saturating_sub(SLACK as u64).max(1).max(ring.first);
        let last = (start + k - 1 + SLACK as u64).min(upto);
        let lines = (first..=last)
            .filter_map(|n| ring.get(n).map(str::to_owned))
            .collect();
        self.candidates.push(Candidate {
            start,
            score,
            first,
            lines,
        });
    }

    /// Ends the scan: windows still waiting or cut off by the end of the file.
    fn finish(&mut self, total: u64, ring: &Ring) {
        let k = self.old.len() as u64;
        if k == 0 || total == 0 {
            return;
        }
        while let Some((start, score)) = self.pending.pop_front() {
            self.offer(start, score, total, ring);
        }
        for start in (total + 2).saturating_sub(k).max(1)..=total {
            let score = std::mem::take(&mut self.acc[(start % k) as usize]) / k as f32;
            if score > 0.0 {
                self.offer(start, score, total, ring);
            }
        }
    }

    /// The best candidate, aligned with `old_string` and compared line by line.
    fn report(&self) -> Option<Report> {
        let mut best: Option<Report> = None;
        for c in &self.candidates {
            if let Some(r) = self.align(c)
                && best.as_ref().is_none_or(|b| r.score > b.score)
            {
                best = Some(r);
            }
        }
        best
    }

    /// Aligns the old lines with a candidate's lines (old lines may be
    /// missing from the file and the file may have extra lines), then
    /// compares each aligned pair.
    fn align(&self, cand: &Candidate) -> Option<Report> {
        const COST: f32 = 0.25;
        let (a, b) = (self.old.len(), cand.lines.len());
        if a == 0 || b == 0 {
            return None;
        }
        let feats: Vec<Features> = cand.lines.iter().map(|l| Features::full(l)).collect();
        let sim = |x: usize, y: usize| -> f32 {
            let o = &self.old[x];
            let (c, f) = (&cand.lines[y], &feats[y]);
            if o.fits(c) {
                1.0
            } else if o.features.loose_hash == f.loose_hash && o.features.loose == f.loose {
                0.97
            } else if (o.start_free || o.end_free) && o.fits_loosely(&f.loose) {
                0.95
            } else {
                0.9 * o.word_similarity(common(&o.features.tokens, &f.tokens), f.tokens.len())
            }
        };
        let w = b + 1;
        let mut sims = vec![0f32; a * b];
        for x in 0..a {
            for y in 0..b {
                sims[x * b + y] = sim(x, y);
            }
        }
        // dp[x][y]: best score of old[..x] against lines[..y]; lines before
        // the first pair are free.
        let mut dp = vec![0f32; (a + 1) * w];
        let mut step = vec![0u8; (a + 1) * w]; // 1 pair, 2 old line missing, 3 file line extra
        for x in 1..=a {
            dp[x * w] = dp[(x - 1) * w] - COST;
            step[x * w] = 2;
            for y in 1..=b {
                let pair = dp[(x - 1) * w + y - 1] + sims[(x - 1) * b + y - 1] - COST;
                let missing = dp[(x - 1) * w + y] - COST;
                let extra = dp[x * w + y - 1] - COST;
                let (best, s) = if pair >= missing && pair >= extra {
                    (pair, 1)
                } else if missing >= extra {
                    (missing, 2)
                } else {
                    (extra, 3)
                };
                dp[x * w + y] = best;
                step[x * w + y] = s;
            }
        }
        let mut y = (0..=b)
            .max_by(|&p, &q| dp[a * w + p].total_cmp(&dp[a * w + q]).then(q.cmp(&p)))
            .unwrap_or(b);
        let mut x = a;
        let mut pairs = Vec::new();
        let mut missing = Vec::new(); // (old line, file line before it)
        while x > 0 {
            match step[x * w + y] {
                1 => {
                    pairs.push((x - 1, y - 1));
                    x -= 1;
                    y -= 1;
                }
                3 => y -= 1,
                _ => {
                    missing.push((x - 1, y));
                    x -= 1;
                }
            }
        }
        pairs.reverse();
        missing.reverse();
        let (&(_, lo), &(_, hi)) = (pairs.first()?, pairs.last()?);
        let total: f32 = pairs.iter().map(|&(x, y)| sims[x * b + y]).sum();
        let span = hi - lo + 1;
        let mut r = Report {
            first: cand.first + lo as u64,
            last: cand.first + hi as u64,
            score: total / a.max(span) as f32,
            focus: None,
            ..Report::default()
        };
        for &(x, y) in &pairs {
            r.compare(&self.old[x], &cand.lines[y], cand.first + y as u64);
        }
        let paired: Vec<usize> = pairs.iter().map(|&(_, y)| y).collect();
        for y in lo..=hi {
            if !paired.contains(&y) {
                let no = cand.first + y as u64;
                r.note(no);
                r.extra.push((no, cand.lines[y].clone()));
            }
        }
        for (x, y) in missing {
            // Between file lines `y - 1` and `y` of the candidate.
            let at = cand.first + y as u64;
            r.note(at.saturating_sub(1).max(r.first));
            r.missing.push((at, self.old[x].text.clone()));
        }
        Some(r)
    }
}

// ---------------------------------------------------------------------------
// Naming the difference

/// How a region differs from `old_string`.
#[derive(Debug, Default)]
struct Report {
    first: u64,
    last: u64,
    /// 0..=1: how much of `old_string` the region holds.
    score: f32,
    /// The first line with a difference.
    focus: Option<u64>,
    /// Leading whitespace of aligned lines that start at a line start:
    /// `(line, old_string's, the file's)`.
    indents: Vec<(u64, String, String)>,
    /// Lines whose indentation differs.
    indent_lines: Vec<u64>,
    /// Trailing whitespace: `(line, whether the file has more)`.
    trailing: Vec<(u64, bool)>,
    /// Typographic differences, distinct: `(old_string's, the file's)`.
    typo: Vec<(String, String)>,
    typo_lines: Vec<u64>,
    /// Spacing inside a line: `(line, old_string's, the file's)`.
    spacing: Vec<(u64, String, String)>,
    /// Other differences: `(line, old_string's, the file's)`.
    content: Vec<(u64, String, String)>,
    /// Old lines not in the file: `(file line after them, text)`.
    missing: Vec<(u64, String)>,
    /// File lines not in `old_string`.
    extra: Vec<(u64, String)>,
}

/// Token spans of a line: words, whitespace runs, single other characters.
fn spans(s: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut it = s.char_indices().peekable();
    while let Some((i, c)) = it.next() {
        let mut end = i + c.len_utf8();
        let same: fn(char) -> bool = if is_word(c) {
            is_word
        } else if c.is_whitespace() {
            char::is_whitespace
        } else {
            |_| false
        };
        while let Some(&(j, d)) = it.peek() {
            if !same(d) {
                break;
            }
            end = j + d.len_utf8();
            it.next();
        }
        out.push(i..end);
    }
    out
}

/// Pairs of equal tokens in a longest common subsequence of `a` and `b`.
fn lcs(a: &[&str], b: &[&str]) -> Vec<(usize, usize)> {
    let (n, m) = (a.len(), b.len());
    let w = m + 1;
    let mut t = vec![0u16; (n + 1) * w];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            t[i * w + j] = if a[i] == b[j] {
                t[(i + 1) * w + j + 1] + 1
            } else {
                t[(i + 1) * w + j].max(t[i * w + j + 1])
            };
        }
    }
    let (mut i, mut j, mut out) = (0, 0, Vec::new());
    while i < n && j < m {
        if a[i] == b[j] {
            out.push((i, j));
            i += 1;
            j += 1;
        } else if t[(i + 1) * w + j] >= t[i * w + j + 1] {
            i += 1;
        } else {
            j += 1;
        }
    }
    out
}

/// A line split into tokens ([`spans`]) and their texts.
struct Tokens<'a> {
    text: &'a str,
    spans: Vec<Range<usize>>,
}

impl<'a> Tokens<'a> {
    fn new(text: &'a str) -> Self {
        Tokens {
            text,
            spans: spans(text),
        }
    }

    fn get(&self, i: usize) -> &'a str {
        &self.text[self.spans[i].clone()]
    }

    /// The bytes of tokens `r` (an empty range sits before token `r.start`).
    fn bytes(&self, r: &Range<usize>) -> Range<usize> {
        if r.is_empty() {
            let at = self.spans.get(r.start).map_or(self.text.len(), |s| s.start);
            at..at
        } else {
            self.spans[r.start].start..self.spans[r.end - 1].end
        }
    }
}

/// The differing tokens `or` of `o` and `cr` of `c` with the equal tokens
/// around them, up to [`CONTEXT_BYTES`] a side and not across whitespace:
/// enough to recognise the place.
fn in_context(
    o: &Tokens<'_>,
    or: &Range<usize>,
    c: &Tokens<'_>,
    cr: &Range<usize>,
) -> (String, String) {
    let shared = |i: Option<usize>, j: Option<usize>, room: usize| match (i, j) {
        (Some(i), Some(j)) if i < o.spans.len() && j < c.spans.len() => {
            let t = o.get(i);
            (t == c.get(j) && !t.starts_with(char::is_whitespace) && t.len() <= room)
                .then_some(t.len())
        }
        _ => None,
    };
    let (mut before, mut room) = (0, CONTEXT_BYTES);
    while let Some(len) = shared(
        or.start.checked_sub(before + 1),
        cr.start.checked_sub(before + 1),
        room,
    ) {
        before += 1;
        room -= len;
    }
    let (mut after, mut room) = (0, CONTEXT_BYTES);
    while let Some(len) = shared(Some(or.end + after), Some(cr.end + after), room) {
        after += 1;
        room -= len;
    }
    let quote = |t: &Tokens<'_>, r: &Range<usize>| {
        t.text[t.bytes(&(r.start - before..r.end + after))]
            .trim()
            .to_owned()
    };
    (quote(o, or), quote(c, cr))
}

/// The differing stretches of `o` and `c` as token ranges, where `o` may
/// start (`start_free`) or end (`end_free`) inside `c`.
fn diff_runs(
    o: &Tokens<'_>,
    c: &Tokens<'_>,
    start_free: bool,
    end_free: bool,
) -> Vec<(Range<usize>, Range<usize>)> {
    let (on, cn) = (o.spans.len(), c.spans.len());
    let mut p = 0;
    if !start_free {
        while p < on && p < cn && o.get(p) == c.get(p) {
            p += 1;
        }
    }
    let mut q = 0;
    if !end_free {
        while q < on - p && q < cn - p && o.get(on - 1 - q) == c.get(cn - 1 - q) {
            q += 1;
        }
    }
    let (oe, ce) = (on - q, cn - q);
    let matches: Vec<(usize, usize)> = if (oe - p) * (ce - p) <= MAX_DIFF_CELLS {
        let ot: Vec<&str> = (p..oe).map(|i| o.get(i)).collect();
        let ct: Vec<&str> = (p..ce).map(|i| c.get(i)).collect();
        lcs(&ot, &ct)
            .into_iter()
            .map(|(i, j)| (i + p, j + p))
            .collect()
    } else {
        Vec::new()
    };
    // The stretches between matched tokens; the ends are sentinels.
    let mut bounds = vec![(p as isize - 1, p as isize - 1)];
    bounds.extend(matches.iter().map(|&(i, j)| (i as isize, j as isize)));
    bounds.push((oe as isize, ce as isize));
    let mut runs = Vec::new();
    for (n, pair) in bounds.windows(2).enumerate() {
        let (o_from, c_from) = ((pair[0].0 + 1) as usize, (pair[0].1 + 1) as usize);
        let (o_to, c_to) = (pair[1].0 as usize, pair[1].1 as usize);
        let (mut c_from, mut c_to) = (c_from, c_to);
        let count = o_to - o_from;
        // Where old_string may start or end inside the line, the file's
        // extra text there is outside the match.
        if n == 0 && start_free {
            c_from = c_to.saturating_sub(count).max(c_from);
        }
        if n + 2 == bounds.len() && end_free {
            c_to = (c_from + count).min(c_to);
        }
        if o_from == o_to && c_from == c_to {
            continue;
        }
        runs.push((o_from..o_to, c_from..c_to));
    }
    runs
}

impl Report {
    fn note(&mut self, line: u64) {
        if self.focus.is_none_or(|f| line < f) {
            self.focus = Some(line);
        }
    }

    /// Compares old line `o` with file line `c` (number `no`).
    fn compare(&mut self, o: &OldLine, c: &str, no: u64) {
        let (otext, blank) = (
            o.text.as_str(),
            o.text.trim().is_empty() && c.trim().is_empty(),
        );
        let lead = |s: &str| s.len() - s.trim_start().len();
        if (!o.start_free || otext.starts_with(char::is_whitespace)) && !blank {
            let (ol, cl) = (&otext[..lead(otext)], &c[..lead(c)]);
            if !otext.trim().is_empty() && !c.trim().is_empty() {
                self.indents.push((no, ol.to_owned(), cl.to_owned()));
            }
        }
        if o.fits(c) {
            return;
        }
        let (ot, ct) = (Tokens::new(otext), Tokens::new(c));
        let mut content: Vec<(Range<usize>, Range<usize>)> = Vec::new();
        for (otr, ctr) in diff_runs(&ot, &ct, o.start_free, o.end_free) {
            let (or, cr) = (ot.bytes(&otr), ct.bytes(&ctr));
            let (os, cs) = (&otext[or.clone()], &c[cr.clone()]);
            let at_start = or.start == 0 && cr.start == 0;
            let at_end = or.end == otext.len() && cr.end == c.len();
            let ws = |s: &str| s.chars().all(char::is_whitespace);
            self.note(no);
            if ws(os) && ws(cs) {
                let exotic = os
                    .chars()
                    .chain(cs.chars())
                    .any(|ch| ch != ' ' && ch != '\t');
                if exotic {
                    self.typo(no, os, cs);
                } else if at_start && !(at_end && blank) {
                    if !self.indent_lines.contains(&no) {
                        self.indent_lines.push(no);
                    }
                } else if at_end || blank {
                    self.trailing.push((no, cs.len() > os.len()));
                } else {
                    let (oq, cq) = in_context(&ot, &otr, &ct, &ctr);
                    self.spacing.push((no, oq, cq));
                }
                continue;
            }
            let (mut lo, mut lc) = (String::new(), String::new());
            loosen(os, |p| lo.push_str(p));
            loosen(cs, |p| lc.push_str(p));
            if lo == lc {
                self.typo(no, os.trim(), cs.trim());
                continue;
            }
            // Differences a token or two apart read best as one.
            match content.last_mut() {
                Some(last) if otr.start - last.0.end <= 2 && ctr.start - last.1.end <= 2 => {
                    last.0.end = otr.end;
                    last.1.end = ctr.end;
                }
                _ => content.push((otr, ctr)),
            }
        }
        for (otr, ctr) in content {
            let (oq, cq) = in_context(&ot, &otr, &ct, &ctr);
            self.content.push((no, oq, cq));
        }
    }

    fn typo(&mut self, no: u64, os: &str, cs: &str) {
        if !self.typo_lines.contains(&no) {
            self.typo_lines.push(no);
        }
        let pair = (os.to_owned(), cs.to_owned());
        if !self.typo.contains(&pair) {
            self.typo.push(pair);
        }
    }

    /// Only whitespace or typography differs.
    fn clean(&self) -> bool {
        self.content.is_empty() && self.missing.is_empty() && self.extra.is_empty()
    }

    fn differences(&self) -> usize {
        self.indent_lines.len()
            + self.trailing.len()
            + self.typo_lines.len()
            + self.spacing.len()
            + self.content.len()
            + self.missing.len()
            + self.extra.len()
    }

    /// The lines to show: the region, or [`EXCERPT_LINES`] of it from just
    /// before the first difference.
    fn excerpt(&self) -> (u64, u64) {
        let len = self.last - self.first + 1;
        if len <= EXCERPT_LINES {
            return (self.first, len);
        }
        let from = self
            .focus
            .map_or(self.first, |f| f.saturating_sub(2).max(self.first))
            .min(self.last + 1 - EXCERPT_LINES);
        (from, EXCERPT_LINES)
    }

    /// Each difference as a clause naming the cause, the place and the text.
    fn causes(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(indent) = self.indentation() {
            out.push(indent);
        }
        let lines_where = |more: bool| -> Vec<u64> {
            self.trailing
                .iter()
                .filter(|t| t.1 == more)
                .map(|t| t.0)
                .collect()
        };
        let (file_more, old_more) = (lines_where(true), lines_where(false));
        if !file_more.is_empty() {
            out.push(format!(
                "trailing whitespace differs: {} {} trailing whitespace that old_string lacks",
                line_list(&file_more),
                if file_more.len() == 1 { "has" } else { "have" }
            ));
        }
        if !old_more.is_empty() {
            out.push(format!(
                "trailing whitespace differs: old_string has trailing whitespace where {} {} none",
                line_list(&old_more),
                if old_more.len() == 1 { "has" } else { "have" }
            ));
        }
        if !self.typo.is_empty() {
            let pairs: Vec<String> = self
                .typo
                .iter()
                .take(4)
                .enumerate()
                .map(|(i, (o, c))| {
                    let who = if i == 0 { "old_string" } else { "it" };
                    format!("{} where {who} has {}", chars(c), chars(o))
                })
                .collect();
            out.push(format!(
                "typographic characters differ on {}: the file has {}",
                line_list(&self.typo_lines),
                match pairs.split_last() {
                    Some((last, rest)) if !rest.is_empty() => {
                        format!("{} and {last}", rest.join(", "))
                    }
                    _ => pairs.join(""),
                }
            ));
        }
        for (no, o, c) in self.spacing.iter().take(2) {
            out.push(format!(
                "spacing differs on line {no}: the file has {} where old_string has {}",
                snippet(c),
                snippet(o)
            ));
        }
        // Differences on one line read as one clause.
        let mut lines: Vec<(u64, Vec<String>)> = Vec::new();
        for (no, o, c) in &self.content {
            let said = match (o.is_empty(), c.is_empty()) {
                (true, _) => format!("{} that old_string lacks", snippet(c)),
                (_, true) => format!("nothing where old_string has {}", snippet(o)),
                _ => format!("{} where old_string has {}", snippet(c), snippet(o)),
            };
            match lines.last_mut() {
                Some((last, said_there)) if last == no => said_there.push(said),
                _ => lines.push((*no, vec![said])),
            }
        }
        for (no, said) in lines.iter().take(2) {
            out.push(format!("line {no} has {}", said.join(", and ")));
        }
        if lines.len() > 2 {
            out.push(format!("{} more differing lines", lines.len() - 2));
        }
        for (at, text) in self.missing.iter().take(2) {
            let place = if *at > self.first {
                format!("after line {}", at - 1)
            } else {
                format!("before line {at}")
            };
            out.push(if text.trim().is_empty() {
                format!("old_string has a blank line that the file lacks {place}")
            } else {
                format!(
                    "old_string has a line the file lacks {place}: {}",
                    snippet(text.trim())
                )
            });
        }
        for (no, text) in self.extra.iter().take(2) {
            out.push(if text.trim().is_empty() {
                format!("the file has a blank line {no} that old_string lacks")
            } else {
                format!(
                    "the file has line {no} ({}) that old_string lacks",
                    snippet(text.trim())
                )
            });
        }
        out
    }

    /// The indentation difference, named: tabs against spaces, the width of
    /// a level, or a constant shift.
    fn indentation(&self) -> Option<String> {
        if self.indent_lines.is_empty() {
            return None;
        }
        let tabs = |f: fn(&(u64, String, String)) -> &String| {
            self.indents.iter().any(|i| f(i).contains('\t'))
        };
        let (o_tab, c_tab) = (tabs(|i| &i.1), tabs(|i| &i.2));
        let detail = if c_tab && !o_tab {
            "the file indents with tabs, old_string with spaces".to_owned()
        } else if o_tab && !c_tab {
            "the file indents with spaces, old_string with tabs".to_owned()
        } else if !o_tab {
            // The shift of the lines whose indentation differs.
            let differing: Vec<&(u64, String, String)> = self
                .indents
                .iter()
                .filter(|i| self.indent_lines.contains(&i.0))
                .collect();
            let deltas: Vec<i64> = differing
                .iter()
                .map(|(_, o, c)| c.len() as i64 - o.len() as i64)
                .collect();
            let shifted =
                !deltas.is_empty() && deltas.iter().all(|&d| d == deltas[0]) && deltas[0] != 0;
            let widths = |f: fn(&(u64, String, String)) -> usize| {
                let mut v: Vec<usize> = self.indents.iter().map(f).filter(|&n| n > 0).collect();
                v.sort_unstable();
                v.dedup();
                v
            };
            let (o_widths, c_widths) = (widths(|i| i.1.len()), widths(|i| i.2.len()));
            let unit_o = o_widths.iter().copied().fold(0, gcd);
            let unit_c = c_widths.iter().copied().fold(0, gcd);
            // A level width shows only where old_string has two levels or more.
            let proportional = o_widths.len() >= 2
                && unit_c > 0
                && unit_o != unit_c
                && self
                    .indents
                    .iter()
                    .all(|(_, o, c)| c.len() * unit_o == o.len() * unit_c);
            if proportional {
                format!("the file indents by {unit_c} spaces per level, old_string by {unit_o}")
            } else if shifted {
                let (no, _, c) = differing[0];
                format!(
                    "old_string is indented {} {} than the file (line {no} starts with {})",
                    plural(deltas[0].unsigned_abs(), "space", "spaces"),
                    if deltas[0] > 0 { "less" } else { "more" },
                    plural(c.len() as u64, "space", "spaces")
                )
            } else {
                format!("it differs on {}", line_list(&self.indent_lines))
            }
        } else {
            format!("it differs on {}", line_list(&self.indent_lines))
        };
        Some(format!("indentation differs: {detail}"))
    }
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// `line 7`, `lines 7 and 9`, `lines 7, 9 and 12` (at most five named).
fn line_list(lines: &[u64]) -> String {
    let mut v = lines.to_vec();
    v.sort_unstable();
    v.dedup();
    let shown: Vec<String> = v.iter().take(5).map(u64::to_string).collect();
    let more = if v.len() > 5 { " and more" } else { "" };
    match shown.len() {
        0 => String::new(),
        1 => format!("line {}", shown[0]),
        n => format!(
            "lines {} and {}{more}",
            shown[..n - 1].join(", "),
            shown[n - 1]
        ),
    }
}

/// `text` quoted for the message: in backticks, control characters escaped,
/// at most [`SNIPPET_CHARS`] characters.
fn snippet(text: &str) -> String {
    let mut out = String::from("`");
    for (i, c) in text.chars().enumerate() {
        if i == SNIPPET_CHARS {
            out.push('…');
            break;
        }
        match c {
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.extend(c.escape_default()),
            c => out.push(c),
        }
    }
    out.push('`');
    out
}

/// Characters named for the message: `'`, `’` (U+2019), a non-breaking
/// space (U+00A0), nothing.
fn chars(s: &str) -> String {
    if s.is_empty() {
        return "nothing".to_owned();
    }
    let mut named = Vec::new();
    let mut plain = String::new();
    for c in s.chars() {
        let name = match c {
            ' ' => Some("a space".to_owned()),
            '\t' => Some("a tab".to_owned()),
            '\u{00A0}' => Some("a non-breaking space (U+00A0)".to_owned()),
            c if c.is_whitespace() => Some(format!("a U+{:04X} space", c as u32)),
            c if invisible(c) => Some(format!("an invisible U+{:04X}", c as u32)),
            c if !c.is_ascii() => Some(format!("`{c}` (U+{:04X})", c as u32)),
            _ => None,
        };
        match name {
            Some(n) => {
                if !plain.is_empty() {
                    named.push(snippet(&std::mem::take(&mut plain)));
                }
                named.push(n);
            }
            None => plain.push(c),
        }
    }
    if !plain.is_empty() {
        named.push(snippet(&plain));
    }
    named.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn diagnose(file: &str, old: &str, new: &str) -> Diagnosis {
        let mut d = Diagnoser::new(old, new);
        d.push(file);
        d.finish()
    }

    fn diagnose_chunked(file: &str, old: &str, new: &str, size: usize) -> Diagnosis {
        let mut d = Diagnoser::new(old, new);
        let mut rest = file;
        while !rest.is_empty() {
            let mut cut = size.min(rest.len());
            while !rest.is_char_boundary(cut) {
                cut += 1;
            }
            d.push(&rest[..cut]);
            rest = &rest[cut..];
        }
        d.finish()
    }

    const RUST: &str = "use std::io;\n\nfn total(items: &[Item]) -> u64 {\n\tlet sum = items.iter().map(|i| i.price).sum::<u64>();\n\tif sum > 100 {\n\t\treturn sum - 10;\n\t}\n\tsum\n}\n";

    #[test]
    fn tabs_against_spaces() {
        let d = diagnose(
            RUST,
            "    if sum > 100 {\n        return sum - 10;\n    }",
            "x",
        );
        assert!(
            d.message.contains(
                "indentation differs: the file indents with tabs, old_string with spaces"
            ),
            "{}",
            d.message
        );
        assert!(
            d.message.starts_with("lines 5-7 match it except"),
            "{}",
            d.message
        );
        assert_eq!(d.excerpt, Some((5, 3)));
    }

    #[test]
    fn one_misremembered_token() {
        let d = diagnose(RUST, "let sum = items.iter().map(|x| x.price)", "y");
        assert!(
            d.message.starts_with("the nearest text is line 4: "),
            "{}",
            d.message
        );
        assert!(
            d.message.contains("line 4 has `iter().map(|i| i.price)` where old_string has `iter().map(|x| x.price)`"),
            "{}",
            d.message
        );
        assert_eq!(d.excerpt, Some((4, 1)));
    }

    #[test]
    fn a_misremembered_block_with_a_missing_line() {
        let d = diagnose(
            RUST,
            "\tlet sum = items.iter().map(|i| i.price).sum::<u64>();\n\tif sum > 100 {\n\t}\n\tsum\n",
            "y",
        );
        assert!(d.message.contains("lines 4-8"), "{}", d.message);
        assert!(d.message.contains("the file has line 6"), "{}", d.message);
    }

    #[test]
    fn prefixes_everywhere_or_first() {
        let d = diagnose(RUST, "5: \tif sum > 100 {\n6: \t\treturn sum - 10;", "x");
        assert!(
            d.message.contains("remove the `N: ` prefixes"),
            "{}",
            d.message
        );
        assert!(d.message.contains("matches lines 5-6"), "{}", d.message);
        let d = diagnose(RUST, "5: \tif sum > 100 {\n\t\treturn sum - 10;", "x");
        assert!(d.message.contains("first line only"), "{}", d.message);
    }

    #[test]
    fn escapes_already_applied_and_nothing() {
        let d = diagnose(RUST, "if sum > 100 {\\n\\t\\treturn sum - 10;", "x");
        assert!(
            d.message.contains("literal escape sequences"),
            "{}",
            d.message
        );
        let d = diagnose(RUST, "return sum - 5;", "return sum - 10;");
        assert!(
            d.message.contains("already present at line 6"),
            "{}",
            d.message
        );
        let d = diagnose(RUST, "zebra giraffe", "x");
        assert_eq!(
            d.message,
            "nothing similar; the file has 9 lines. Read the file again and copy old_string from its current text."
        );
        assert_eq!(d.excerpt, None);
    }

    #[test]
    fn typography_and_final_newline() {
        let md = "# Notes\n\nIt's a \"quoted\" -- thing.\nend";
        let d = diagnose(md, "It’s a “quoted” — thing.", "x");
        assert!(
            d.message
                .contains("typographic characters differ on line 3"),
            "{}",
            d.message
        );
        assert!(d.message.contains("`’` (U+2019)"), "{}", d.message);
        let d = diagnose(md, "end\n", "x");
        assert!(
            d.message.contains("has none: drop the final line break"),
            "{}",
            d.message
        );
    }

    #[test]
    fn chunking_never_changes_the_diagnosis() {
        let file: String = (1..=400)
            .map(|i| format!("    value_{i} = compute({i}, \"x\");\r\n"))
            .collect();
        for old in [
            "value_200 = compute(201, \"x\")",
            "\tvalue_10 = compute(10, \"x\");\n\tvalue_11 = compute(11, \"x\");",
            "value_399 = compute(399, \"x\");\nvalue_400",
        ] {
            let whole = diagnose(&file, old, "z");
            for size in [1, 7, 64, 1000] {
                assert_eq!(
                    diagnose_chunked(&file, old, "z", size),
                    whole,
                    "{old} {size}"
                );
            }
        }
    }

    #[test]
    fn odd_inputs_never_panic_and_chunking_never_matters() {
        const ALPHABET: &[&str] = &[
            "a",
            "b",
            "fn",
            " ",
            "  ",
            "\t",
            "\n",
            "\r\n",
            "\r",
            "’",
            "—",
            "--",
            "\u{a0}",
            "é",
            "\u{200b}",
            "1: ",
            "\\n",
            "{",
            "}",
            "x.y",
            "\u{1F600}",
        ];
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        let text = |len: usize, next: &mut dyn FnMut(usize) -> usize| -> String {
            (0..len).map(|_| ALPHABET[next(ALPHABET.len())]).collect()
        };
        for round in 0..300 {
            let file = text(next(80), &mut next);
            let old = text(1 + next(20), &mut next);
            let new = text(next(6), &mut next);
            let whole = diagnose(&file, &old, &new);
            assert!(whole.message.len() < 600, "{round}: {}", whole.message);
            if let Some((first, count)) = whole.excerpt {
                assert!(
                    first >= 1 && (1..=EXCERPT_LINES).contains(&count),
                    "{round}"
                );
            }
            for size in [1, 3, 16] {
                assert_eq!(
                    diagnose_chunked(&file, &old, &new, size),
                    whole,
                    "{round} {size}: {file:?} {old:?}"
                );
            }
        }
        for (file, old) in [
            ("", "x"),
            ("\n\n\n", "\n"),
            ("a\n", "\r"),
            ("a", "   "),
            ("x\n", &"y\n".repeat(500)),
            (&"long ".repeat(10_000), "long long lung"),
        ] {
            let d = diagnose(file, old, "z");
            assert!(d.message.len() < 600, "{}", d.message);
        }
    }

    #[test]
    fn the_ascii_fast_path_hashes_like_the_general_one() {
        for line in [
            "",
            "  a  -- b\t-c ",
            "x-  -y",
            "--",
            " \x0b\x0c\r",
            "fn a() { b - c }",
        ] {
            let mut f = Features::default();
            f.of(line);
            let mut h = 0xcbf2_9ce4_8422_2325;
            loosen(line, |p| h = p.bytes().fold(h, fnv));
            assert_eq!(f.loose_hash, h, "{line:?}");
            assert_eq!(
                f.loose_hash,
                hash(Features::full(line).loose.as_bytes()),
                "{line:?}"
            );
        }
    }

    #[test]
    fn read_prefixes_in_new_text() {
        assert_eq!(numbered_like_read("12: a\n13: b\n"), Some((12, 13)));
        assert_eq!(
            numbered_like_read("File: x\n1: a\n2:\n(End of file: 2 lines.)"),
            Some((1, 2))
        );
        assert_eq!(numbered_like_read("1: one"), None);
        assert_eq!(numbered_like_read("1. step\n2. step"), None);
        assert_eq!(numbered_like_read("1: a\n3: b"), None);
    }
}

//! The words of a diagnosis: each difference as a clause, quoted snippets,
//! line lists, and the message assembled within its budget.

use super::difference::Report;
use super::scan::invisible;
use super::{Diagnoser, Diagnosis, Facts, Fix, MAX_OLD_LINES, MESSAGE_BYTES, SNIPPET_CHARS};
use dsh_fs_core::text::fold_crlf;

impl Diagnoser {
    /// A region that differs from `old_string` (after `fix`) only in
    /// whitespace or typography, or not at all.
    pub(super) fn explain_clean(&self, fix: Fix, r: &Report, facts: &Facts) -> Diagnosis {
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
        let clean = fix_text.is_none() && causes.is_empty();
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
            kept: None,
            head_from: (clean && matcher.total > MAX_OLD_LINES).then_some(r.first),
        }
    }
}

impl Report {
    /// Each difference as a clause naming the cause, the place and the text.
    pub(super) fn causes(&self) -> Vec<String> {
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
                "spacing differs on line {no}: the file has {} where old_string has {} \
                 (`·` a space, `\\t` a tab)",
                spaced(c),
                spaced(o)
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
    pub(super) fn indentation(&self) -> Option<String> {
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

pub(super) fn gcd(a: usize, b: usize) -> usize {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// `line 7`, `lines 7 and 9`, `lines 7, 9 and 12` (at most five named).
pub(super) fn line_list(lines: &[u64]) -> String {
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
pub(super) fn snippet(text: &str) -> String {
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

/// [`snippet`] with each space shown as `·`, for a difference in spacing.
fn spaced(text: &str) -> String {
    snippet(text).replace(' ', "·")
}

/// Characters named for the message: `'`, `’` (U+2019), a non-breaking
/// space (U+00A0), nothing.
pub(super) fn chars(s: &str) -> String {
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

/// The fix sentence for a transformation of `old_string`.
pub(super) fn fix_phrase(fix: Fix) -> Option<&'static str> {
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
pub(super) fn compose(head: &str, causes: &[String], tail: &str) -> String {
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
pub(super) fn lines_phrase(first: u64, last: u64) -> String {
    if first == last {
        format!("line {first}")
    } else {
        format!("lines {first}-{last}")
    }
}

pub(super) fn range_phrase(r: &Report) -> String {
    lines_phrase(r.first, r.last)
}

pub(super) fn plural(n: u64, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

/// For an old_string whose first [`MAX_OLD_LINES`] lines match the file
/// from line `from` and whose difference lies past them: the sentence naming
/// the first line that differs (old_string's and the file's), and that file
/// line. `None` when no line differs (the file ends first, or `text` does
/// not start those lines where said).
pub fn first_difference(text: &str, from: u64, old: &str) -> Option<(String, u64)> {
    let text = fold_crlf(text);
    let file = text.split('\n').skip(from.checked_sub(1)? as usize);
    first_difference_in(file, from, old)
}

/// [`first_difference`] over the file's lines from line `from` on (without
/// their line breaks; a CR before one is ignored), for a file read as a
/// stream.
pub fn first_difference_in<'a>(
    file: impl Iterator<Item = &'a str>,
    from: u64,
    old: &str,
) -> Option<(String, u64)> {
    let old = fold_crlf(old);
    let file = file.map(|l| l.strip_suffix('\r').unwrap_or(l));
    let wanted = old.split('\n').enumerate();
    for (line, ((k, want), have)) in (from..).zip(wanted.zip(file)) {
        if want != have {
            let only_spacing = want.split_whitespace().eq(have.split_whitespace());
            let (has, hasnt) = if only_spacing {
                (spaced(have), spaced(want))
            } else {
                (snippet(have), snippet(want))
            };
            let legend = if only_spacing {
                " (`·` a space, `\\t` a tab)"
            } else {
                ""
            };
            return Some((
                format!(
                    "its first {k} lines match {}; its line {} is the first that differs: line \
{line} has {has} where old_string has {hasnt}{legend}. Copy old_string from these lines exactly \
(without the `N: ` prefixes):",
                    lines_phrase(from, line - 1),
                    k + 1
                ),
                line,
            ));
        }
    }
    None
}

/// For an old_string that is one word the file does not hold: the word of
/// the file spelt nearest to it (at most two edits, and fewer than a quarter
/// of its letters), how often the file has it, and the line of the first;
/// fed the file line by line, so a streamed file is judged as one at hand.
/// The nearest first, then the most frequent; `None` when nothing is that near.
///
/// For an old_string of one line, the same for each of its words of four
/// letters or more ([`Spelling::words`]): those the file does not hold and
/// spells nearly are [`Spelling::misspelt`].
pub struct Spelling {
    words: Vec<Word>,
}

/// One word looked for, and what the file holds near it.
struct Word {
    old: String,
    len: usize,
    most: usize,
    /// The file holds the word itself.
    present: bool,
    /// word -> (distance, count, first line)
    near: std::collections::HashMap<String, (usize, u64, u64)>,
    /// How often each byte occurs in the word, when it is ASCII.
    letters: Option<[u8; 128]>,
}

/// Words of a one-line old_string looked for at most: each costs a
/// comparison with every word of the file that is nearly as long.
const MOST_WORDS: usize = 8;

impl Word {
    fn new(old: &str) -> Word {
        let len = old.chars().count();
        Word {
            old: old.to_owned(),
            len,
            most: (len / 4).clamp(1, 2),
            present: false,
            near: Default::default(),
            letters: letters(old),
        }
    }

    /// A word of the file (`chars` long), on line `no`. Most are told
    /// apart by their length or their letters before any edit distance is
    /// computed: a file of 100 MiB is a million lines of them.
    fn token(&mut self, no: u64, token: &str, chars: usize) {
        if chars.abs_diff(self.len) > self.most {
            return;
        }
        if let Some(seen) = self.near.get_mut(token) {
            seen.1 += 1;
            return;
        }
        if token == self.old {
            self.present = true;
            return;
        }
        if let (Some(old), Some(new)) = (&self.letters, letters(token)) {
            // An edit changes at most two letter counts by one each, so
            // counts that differ by more than twice the edits allowed rule
            // the word out.
            let apart: usize = old
                .iter()
                .zip(&new)
                .map(|(a, b)| a.abs_diff(*b) as usize)
                .sum();
            if apart > 2 * self.most {
                return;
            }
        }
        let d = strsim::damerau_levenshtein(token, &self.old);
        if (1..=self.most).contains(&d) {
            self.near.insert(token.to_owned(), (d, 1, no));
        }
    }

    /// The nearest word, how often the file has it, and its first line.
    fn nearest(self) -> Option<(String, u64, u64)> {
        self.near
            .into_iter()
            .min_by(|a, b| {
                (a.1.0, std::cmp::Reverse(a.1.1), a.1.2).cmp(&(
                    b.1.0,
                    std::cmp::Reverse(b.1.1),
                    b.1.2,
                ))
            })
            .map(|(w, (_, count, line))| (w, count, line))
    }
}

impl Spelling {
    /// `None` when `old` is not one word of at least four letters.
    pub fn new(old: &str) -> Option<Self> {
        let old = old.trim();
        if old.chars().count() < 4 || !old.chars().all(is_word) {
            return None;
        }
        Some(Spelling {
            words: vec![Word::new(old)],
        })
    }

    /// The words of four letters or more of a one-line `old` (the first
    /// [`MOST_WORDS`] different ones); `None` when it has more than one
    /// line or no such word.
    pub fn words(old: &str) -> Option<Self> {
        let old = old.trim();
        if old.contains('\n') {
            return None;
        }
        let mut words: Vec<Word> = Vec::new();
        for token in old.split(|c: char| !is_word(c)) {
            if token.chars().count() >= 4 && !words.iter().any(|w| w.old == token) {
                words.push(Word::new(token));
            }
        }
        words.truncate(MOST_WORDS);
        (!words.is_empty()).then_some(Spelling { words })
    }

    /// Line `no` of the file.
    pub fn line(&mut self, no: u64, line: &str) {
        for token in line.split(|c: char| !is_word(c)).filter(|t| !t.is_empty()) {
            let chars = token.chars().count();
            for word in &mut self.words {
                word.token(no, token, chars);
            }
        }
    }

    /// The nearest word to the one looked for, how often the file has it,
    /// and its first line.
    pub fn nearest(self) -> Option<(String, u64, u64)> {
        let word = self.words.into_iter().next()?;
        if word.present {
            return None;
        }
        word.nearest()
    }

    /// The words looked for that the file does not hold but spells nearly:
    /// each with the file's word, how often the file has it and its first line.
    pub fn misspelt(self) -> Vec<(String, String, u64, u64)> {
        self.words
            .into_iter()
            .filter(|w| !w.present)
            .filter_map(|w| {
                let old = w.old.clone();
                w.nearest()
                    .map(|(word, count, line)| (old, word, count, line))
            })
            .collect()
    }
}

/// `old` with each of `swaps`' words (whole words only) replaced by the
/// file's spelling of it.
pub fn respelt(old: &str, swaps: &[(String, String, u64, u64)]) -> String {
    let mut out = String::with_capacity(old.len() + 8);
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        let swap = swaps.iter().find(|(from, ..)| from == word);
        out.push_str(swap.map_or(word.as_str(), |(_, to, ..)| to));
        word.clear();
    };
    for c in old.chars() {
        if is_word(c) {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

/// How often each byte occurs in an ASCII `word` (saturating); `None`
/// for any other word.
fn letters(word: &str) -> Option<[u8; 128]> {
    let mut counts = [0u8; 128];
    for b in word.bytes() {
        let slot = counts.get_mut(usize::from(b))?;
        *slot = slot.saturating_add(1);
    }
    Some(counts)
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

//! Naming the difference between an aligned line of `old_string` and the
//! file's line: a token diff sorted into indentation, trailing whitespace,
//! spacing, typography and content.

use super::candidates::OldLine;
use super::scan::{is_word, loosen};
use super::{CONTEXT_BYTES, EXCERPT_LINES, MAX_DIFF_CELLS};
use std::ops::Range;

/// How a region differs from `old_string`.
#[derive(Debug, Default)]
pub(super) struct Report {
    pub(super) first: u64,
    pub(super) last: u64,
    /// 0..=1: how much of `old_string` the region holds.
    pub(super) score: f32,
    /// The first line with a difference.
    pub(super) focus: Option<u64>,
    /// Leading whitespace of aligned lines that start at a line start:
    /// `(line, old_string's, the file's)`.
    pub(super) indents: Vec<(u64, String, String)>,
    /// Lines whose indentation differs.
    pub(super) indent_lines: Vec<u64>,
    /// Trailing whitespace: `(line, whether the file has more)`.
    pub(super) trailing: Vec<(u64, bool)>,
    /// Typographic differences, distinct: `(old_string's, the file's)`.
    pub(super) typo: Vec<(String, String)>,
    pub(super) typo_lines: Vec<u64>,
    /// Spacing inside a line: `(line, old_string's, the file's)`.
    pub(super) spacing: Vec<(u64, String, String)>,
    /// Other differences: `(line, old_string's, the file's)`.
    pub(super) content: Vec<(u64, String, String)>,
    /// Old lines not in the file: `(file line after them, text)`.
    pub(super) missing: Vec<(u64, String)>,
    /// File lines not in `old_string`.
    pub(super) extra: Vec<(u64, String)>,
}

/// Token spans of a line: words, whitespace runs, single other characters.
pub(super) fn spans(s: &str) -> Vec<Range<usize>> {
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
pub(super) fn lcs(a: &[&str], b: &[&str]) -> Vec<(usize, usize)> {
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
pub(super) struct Tokens<'a> {
    pub(super) text: &'a str,
    pub(super) spans: Vec<Range<usize>>,
}

impl<'a> Tokens<'a> {
    pub(super) fn new(text: &'a str) -> Self {
        Tokens {
            text,
            spans: spans(text),
        }
    }

    pub(super) fn get(&self, i: usize) -> &'a str {
        &self.text[self.spans[i].clone()]
    }

    /// The bytes of tokens `r` (an empty range sits before token `r.start`).
    pub(super) fn bytes(&self, r: &Range<usize>) -> Range<usize> {
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
pub(super) fn in_context(
    o: &Tokens<'_>,
    or: &Range<usize>,
    c: &Tokens<'_>,
    cr: &Range<usize>,
) -> (String, String) {
    quoted(o, or, c, cr, true)
}

/// [`in_context`], its quotes trimmed of surrounding whitespace or not.
fn quoted(
    o: &Tokens<'_>,
    or: &Range<usize>,
    c: &Tokens<'_>,
    cr: &Range<usize>,
    trim: bool,
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
        let text = &t.text[t.bytes(&(r.start - before..r.end + after))];
        if trim { text.trim() } else { text }.to_owned()
    };
    (quote(o, or), quote(c, cr))
}

/// The differing stretches of `o` and `c` as token ranges, where `o` may
/// start (`start_free`) or end (`end_free`) inside `c`.
pub(super) fn diff_runs(
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
    pub(super) fn note(&mut self, line: u64) {
        if self.focus.is_none_or(|f| line < f) {
            self.focus = Some(line);
        }
    }

    /// Compares old line `o` with file line `c` (number `no`).
    pub(super) fn compare(&mut self, o: &OldLine, c: &str, no: u64) {
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
                    // The whitespace is the difference: quoted whole.
                    let (oq, cq) = quoted(&ot, &otr, &ct, &ctr, false);
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

    pub(super) fn typo(&mut self, no: u64, os: &str, cs: &str) {
        if !self.typo_lines.contains(&no) {
            self.typo_lines.push(no);
        }
        let pair = (os.to_owned(), cs.to_owned());
        if !self.typo.contains(&pair) {
            self.typo.push(pair);
        }
    }

    /// Only whitespace or typography differs.
    pub(super) fn clean(&self) -> bool {
        self.content.is_empty() && self.missing.is_empty() && self.extra.is_empty()
    }

    pub(super) fn differences(&self) -> usize {
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
    pub(super) fn excerpt(&self) -> (u64, u64) {
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
}

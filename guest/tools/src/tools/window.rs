//! What `read` shows: a [`Window`] of numbered lines taken from text that
//! arrives in chunks, with the footer that says what was shown and how to
//! continue, and the [`LineIndex`] that lets the next read of a large file
//! start near its window.

use crate::error::ToolError;
use dsh_fs_core::Skipped;
use dsh_fs_core::text::nth_newline;

/// Longest line shown in full, in characters.
pub const MAX_LINE_CHARS: usize = 2000;
/// Most rendered text per call, in bytes.
pub const MAX_OUTPUT_BYTES: usize = 50 * 1024;

/// Where each streamed chunk of one version of a large file began: lets the
/// next read of that version start near its window instead of rescanning.
#[derive(Clone, Debug)]
pub struct LineIndex {
    /// The provider's metadata version the index belongs to.
    pub(super) meta: String,
    /// The full version (with content hash) observed when it was built.
    pub(super) version: String,
    /// Lines in the file.
    pub(super) total: u64,
    /// `(text offset, line containing it)` at each chunk start, ascending.
    marks: Vec<(u64, u64)>,
}

impl LineIndex {
    /// The last mark from which the scan can reach line `offset`: one on an
    /// earlier line (the partial line there is skipped), or the very start.
    pub(super) fn resume_point(&self, offset: u64) -> (u64, u64) {
        self.marks
            .iter()
            .rev()
            .find(|&&(at, line)| line < offset || at == 0)
            .copied()
            .unwrap_or((0, 1))
    }
}

/// Scans text chunk by chunk, keeping only the lines inside the window.
#[derive(Debug)]
pub struct Window {
    first: u64,
    last: u64,
    /// Number of the line being scanned (1-based).
    line: u64,
    /// The current line has at least one byte.
    open: bool,
    /// The current line's text, up to [`MAX_LINE_CHARS`] characters.
    buf: String,
    /// Characters of the current line beyond `buf`.
    overflow: u64,
    /// The last character taken into the current line was a CR.
    cr: bool,
    out: String,
    shown: Option<(u64, u64)>,
    capped: bool,
    /// Text bytes seen so far.
    consumed: u64,
    /// Chunk-start marks, when building a [`LineIndex`].
    marks: Option<Vec<(u64, u64)>>,
}

impl Window {
    /// A window from line `first` spanning at most `limit` lines.
    pub fn new(first: u64, limit: u64) -> Self {
        Window {
            first,
            last: first.saturating_add(limit - 1),
            line: 1,
            open: false,
            buf: String::new(),
            overflow: 0,
            cr: false,
            out: String::new(),
            shown: None,
            capped: false,
            consumed: 0,
            marks: None,
        }
    }

    /// A window whose text starts in the middle of the file, inside line
    /// `line` (whose first part is missing, so `line` must be before `first`,
    /// or 1 at the start of the file).
    pub fn resume(first: u64, limit: u64, line: u64) -> Self {
        let mut w = Self::new(first, limit);
        w.line = line;
        w.open = line > 1;
        w
    }

    /// A window whose text starts at the start of line `first`.
    pub fn from_line(first: u64, limit: u64) -> Self {
        let mut w = Self::new(first, limit);
        w.line = first;
        w
    }

    /// Also records where each pushed chunk starts, for [`Window::take_index`].
    pub fn indexing(mut self) -> Self {
        self.marks = Some(Vec::new());
        self
    }

    /// Whether every line of the window has been seen (or the output is full).
    pub fn complete(&self) -> bool {
        self.capped || self.line > self.last
    }

    /// The index built while scanning a whole file (call after the last push).
    pub fn take_index(&mut self, meta: String, version: String) -> LineIndex {
        let total = self.line - 1 + u64::from(self.open);
        LineIndex {
            meta,
            version,
            total,
            marks: self.marks.take().unwrap_or_default(),
        }
    }

    fn collecting(&self) -> bool {
        !self.capped && self.line >= self.first && self.line <= self.last
    }

    /// Line feeds to pass over before the next text matters: up to the
    /// window's first line, or every one once the window is complete.
    fn lines_to_skip(&self) -> u64 {
        if self.line < self.first && !self.capped {
            self.first - self.line
        } else {
            u64::MAX
        }
    }

    /// How many line feeds of the text to come the window need not see,
    /// `None` while it collects lines: the scan of a large file passes over
    /// these with [`TextStream::skip`](dsh_fs_core::provider::TextStream::skip)
    /// and feeds only the rest.
    pub fn skippable(&self) -> Option<u64> {
        (!self.collecting()).then(|| self.lines_to_skip())
    }

    /// Takes in text the stream passed over (after [`Self::skippable`]
    /// said how many line feeds it may hold), as [`Self::push`] would have
    /// taken it.
    pub fn skipped(&mut self, s: Skipped) {
        if let Some(marks) = &mut self.marks {
            marks.push((self.consumed, self.line));
        }
        self.consumed = self.consumed.saturating_add(s.bytes);
        self.line = self.line.saturating_add(s.lines);
        if s.bytes > 0 {
            self.open = s.mid_line;
        }
    }

    /// Feeds the next chunk of the file's text.
    pub fn push(&mut self, chunk: &str) {
        if let Some(marks) = &mut self.marks {
            marks.push((self.consumed, self.line));
        }
        self.consumed += chunk.len() as u64;
        let mut rest = chunk;
        while !rest.is_empty() {
            if !self.collecting() {
                // Outside the window only line breaks matter.
                let skip = self.lines_to_skip();
                match nth_newline(rest.as_bytes(), skip) {
                    Ok(at) => {
                        self.line += skip;
                        self.open = false;
                        rest = &rest[at + 1..];
                    }
                    Err(seen) => {
                        self.line += seen;
                        self.open = seen == 0 || !rest.ends_with('\n');
                        return;
                    }
                }
                continue;
            }
            if self.out.capacity() == 0 {
                // Room for the window's lines as this chunk has them, so the
                // output is not regrown line by line.
                let lines = (self.last - self.line).saturating_add(1);
                let bytes = rest.len() + rest.len() / 8 + 64;
                self.out.reserve(
                    bytes
                        .min(MAX_OUTPUT_BYTES + 64)
                        .min(lines.saturating_mul(128).try_into().unwrap_or(usize::MAX)),
                );
            }
            self.open = true;
            match memchr::memchr(b'\n', rest.as_bytes()) {
                Some(at) if self.buf.is_empty() && self.overflow == 0 && at <= MAX_LINE_CHARS => {
                    // A whole line in this chunk that needs no cut: rendered
                    // straight from the chunk, as `take` + `end_line` would.
                    let line = &rest[..at];
                    self.render(line.strip_suffix('\r').unwrap_or(line), 0);
                    rest = &rest[at + 1..];
                }
                newline => match self.feed_line(rest, newline) {
                    Some(after) => rest = after,
                    None => return,
                },
            }
        }
    }

    /// Renders the current line as `N: text` (with the cut marker when
    /// `overflow` characters were left out) and moves to the next line.
    fn render(&mut self, text: &str, overflow: u64) {
        // Rendered in place; taken back if it does not fit under the cap.
        let before = self.out.len();
        push_number(&mut self.out, self.line);
        self.out.push_str(": ");
        self.out.push_str(text);
        if overflow > 0 {
            self.out.push_str("… [line cut: ");
            push_number(&mut self.out, overflow);
            self.out.push_str(" more characters]");
        }
        self.out.push('\n');
        if self.out.len() > MAX_OUTPUT_BYTES {
            self.out.truncate(before);
            self.capped = true;
        } else {
            let from = self.shown.map_or(self.line, |(a, _)| a);
            self.shown = Some((from, self.line));
        }
        self.line += 1;
        self.open = false;
    }

    /// Completes the scan and returns only the numbered lines of the window,
    /// as [`Window::finish`] shows them (no header, no footer): the excerpt
    /// an error message quotes.
    pub fn excerpt(mut self) -> String {
        if self.open && self.collecting() {
            self.end_line();
        }
        let mut out = self.out;
        if out.ends_with('\n') {
            out.pop();
        }
        out
    }

    /// Completes the scan and renders header, lines and footer. `total` is
    /// the file's line count when the scan stopped early (from an index).
    pub fn finish(mut self, path: &str, total: Option<u64>) -> Result<String, ToolError> {
        if self.open && self.collecting() && total.is_none() {
            self.end_line();
        } else if self.open && total.is_none() {
            self.line += 1;
        } else if self.open && self.collecting() {
            // A window line cut off by an early stop is complete only at the end.
            self.end_line();
        }
        let total = total.unwrap_or(self.line - 1);
        if total == 0 {
            if self.first > 1 {
                return Err(past_end(path, self.first, total));
            }
            return Ok(format!("File: {path}\n(The file is empty.)"));
        }
        if self.first > total {
            return Err(past_end(path, self.first, total));
        }
        use std::fmt::Write;
        let (from, to) = self.shown.unwrap_or((self.first, self.first - 1));
        // Header, lines and footer in one allocation.
        let mut out = String::with_capacity(path.len() + self.out.len() + 128);
        out.push_str("File: ");
        out.push_str(path);
        out.push('\n');
        out.push_str(&self.out);
        let _ = if to >= total && from == 1 {
            // The footer of every whole file, without the formatting machinery.
            out.push_str("(End of file: ");
            push_number(&mut out, total);
            out.push_str(if total == 1 { " line.)" } else { " lines.)" });
            Ok(())
        } else if to >= total {
            write!(out, "(Lines {from}-{to} of {total}; end of file.)")
        } else {
            let cap = if self.capped {
                " Output stopped at the 50 KiB limit."
            } else {
                ""
            };
            if to < from {
                write!(
                    out,
                    "(Line {from} of {total} is not shown.{cap} Continue with offset={}.)",
                    to + 1
                )
            } else {
                write!(
                    out,
                    "(Lines {from}-{to} of {total} shown.{cap} Continue with offset={}.)",
                    to + 1
                )
            }
        };
        Ok(out)
    }
}

/// A consumer of text cut at newlines: [`LineSink::take`] gets the pieces of
/// the open line, [`LineSink::end_line`] closes it.
pub(super) trait LineSink {
    /// Appends `piece` (no newline in it) to the open line.
    fn take(&mut self, piece: &str);

    /// Closes the open line.
    fn end_line(&mut self);

    /// Feeds `rest` up to its first newline, at `newline` if it has one, into
    /// the open line: what follows that newline, or `None` when the line is
    /// still open at the end of `rest`.
    fn feed_line<'a>(&mut self, rest: &'a str, newline: Option<usize>) -> Option<&'a str> {
        match newline {
            Some(at) => {
                self.take(&rest[..at]);
                self.end_line();
                Some(&rest[at + 1..])
            }
            None => {
                self.take(rest);
                None
            }
        }
    }
}

impl LineSink for Window {
    fn take(&mut self, piece: &str) {
        if !piece.is_empty() {
            self.cr = piece.ends_with('\r');
        }
        let room = MAX_LINE_CHARS.saturating_sub(self.buf.len());
        if self.overflow == 0 && piece.len() <= room {
            self.buf.push_str(piece); // ASCII-fast path: bytes ≤ room implies chars ≤ room
            return;
        }
        let have = self.buf.chars().count();
        let mut chars = piece.char_indices();
        let keep = MAX_LINE_CHARS.saturating_sub(have);
        let cut = chars.nth(keep).map_or(piece.len(), |(i, _)| i);
        if self.overflow == 0 {
            self.buf.push_str(&piece[..cut]);
        }
        self.overflow += piece[cut..].chars().count() as u64;
    }

    fn end_line(&mut self) {
        let mut overflow = std::mem::replace(&mut self.overflow, 0);
        // A CR before the LF is not part of the line.
        if std::mem::take(&mut self.cr) {
            if overflow > 0 {
                overflow -= 1;
            } else {
                self.buf.pop();
            }
        }
        let buf = std::mem::take(&mut self.buf);
        self.render(&buf, overflow);
        self.buf = buf;
        self.buf.clear();
    }
}

/// Appends `n` in decimal: the line numbers of a window, without the
/// formatting machinery. Up to eight digits (a line number in any file of
/// fewer than 100 million lines) are gathered in one word, the first digit
/// in its lowest byte, and the word is appended whole and cut back to the
/// digits: in the component a copy of a length known when compiling is one
/// store, where a copy of a few bytes of any length is a call out to the
/// host's `memory.copy` (204 instructions a number before, in `callgrind`).
/// The arithmetic is 32-bit (wasm has no 64-bit multiply-high, so a 64-bit
/// `/ 10` is a division).
#[inline]
fn push_number(out: &mut String, n: u64) {
    let Some(mut low) = u32::try_from(n).ok().filter(|&n| n < 100_000_000) else {
        return push_long_number(out, n);
    };
    let mut word = 0u64;
    let mut len = 0;
    loop {
        word = word << 8 | u64::from(b'0' + (low % 10) as u8);
        len += 1;
        low /= 10;
        if low == 0 {
            break;
        }
    }
    // SAFETY: each of the eight bytes is an ASCII digit or a zero byte, so
    // `out` stays UTF-8, and the zeros are cut off before it is used.
    unsafe { out.as_mut_vec() }.extend_from_slice(&word.to_le_bytes());
    out.truncate(out.len() - (8 - len));
}

/// [`push_number`] of a number of more than eight digits.
#[cold]
fn push_long_number(out: &mut String, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend(digits[at..].iter().map(|&d| char::from(d)));
}

/// An offset past the last line: an argument to fix, with the valid range.
#[cold]
fn past_end(path: &str, offset: u64, total: u64) -> ToolError {
    let range = match total {
        0 => format!("{path} is empty, so the only valid offset is 1"),
        1 => format!("{path} has 1 line, so the only valid offset is 1"),
        n => format!("{path} has {n} lines: valid offsets are 1–{n}"),
    };
    ToolError::invalid_args(
        "read",
        format_args!("offset {offset} is past the end; {range}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(text: &str, first: u64, limit: u64) -> Result<String, ToolError> {
        let mut w = Window::new(first, limit);
        w.push(text);
        w.finish("f.txt", None)
    }

    /// Fed one character at a time, a window never sees a whole line in a
    /// chunk and `take`/`end_line` render everything; whole, lines are
    /// rendered straight from the chunk. Both must agree, at every edge: CR,
    /// the line cut, multi-byte characters, the window and the output cap.
    #[test]
    fn whole_lines_render_as_line_by_line() {
        let long = "x".repeat(MAX_LINE_CHARS);
        let wide = "é".repeat(MAX_LINE_CHARS / 2 + 1);
        let filler = format!("{}\n", "y".repeat(99)).repeat(600);
        let texts = [
            "a\nb\r\nc\n".to_owned(),
            "\n\n\r\n\r\r\n".to_owned(),
            format!("{long}\n{long}\r\n{long}x\n{long}\rz\n"),
            format!("{wide}\n{wide}\r\nend"),
            filler.clone(),
            format!("{filler}tail without newline"),
        ];
        for text in &texts {
            for (first, limit) in [(1, 2000), (2, 1), (3, 2), (1, 1), (500, 2000), (7, 100_000)] {
                let whole = render(text, first, limit);
                let mut w = Window::new(first, limit);
                let mut buf = [0u8; 4];
                for c in text.chars() {
                    w.push(c.encode_utf8(&mut buf));
                }
                let by_char = w.finish("f.txt", None);
                assert_eq!(whole, by_char, "offset {first} limit {limit}");
            }
        }
    }

    fn render_chunked(
        text: &str,
        first: u64,
        limit: u64,
        size: usize,
    ) -> Result<String, ToolError> {
        let mut w = Window::new(first, limit);
        let mut rest = text;
        while !rest.is_empty() {
            let mut cut = size.min(rest.len());
            while !rest.is_char_boundary(cut) {
                cut += 1;
            }
            w.push(&rest[..cut]);
            rest = &rest[cut..];
        }
        w.finish("f.txt", None)
    }

    /// Pages through `text` as the index allows, chunk size `size`.
    fn render_paged(text: &str, first: u64, limit: u64, size: usize) -> Result<String, ToolError> {
        let chunks = split(text, size);
        let mut full = Window::new(1, 1).indexing();
        for c in &chunks {
            full.push(c);
        }
        let index = full.take_index("m".into(), "v".into());
        let (start, line) = index.resume_point(first);
        let mut w = Window::resume(first, limit, line);
        let mut at = 0u64;
        for c in &chunks {
            if at >= start && !w.complete() {
                w.push(c);
            }
            at += c.len() as u64;
        }
        w.finish("f.txt", Some(index.total))
    }

    fn split(text: &str, size: usize) -> Vec<&str> {
        let mut out = Vec::new();
        let mut rest = text;
        while !rest.is_empty() {
            let mut cut = size.min(rest.len());
            while !rest.is_char_boundary(cut) {
                cut += 1;
            }
            out.push(&rest[..cut]);
            rest = &rest[cut..];
        }
        out
    }

    #[test]
    fn paging_from_an_index_matches_a_full_scan() {
        let text: String = (1..=500)
            .map(|i| format!("line {i} {}\r\n", "é".repeat(i % 5)))
            .collect();
        for (first, limit) in [(1, 10), (2, 3), (37, 40), (250, 2000), (499, 5), (500, 1)] {
            let whole = render(&text, first, limit).unwrap();
            for size in [7, 64, 1000] {
                assert_eq!(
                    render_paged(&text, first, limit, size).unwrap(),
                    whole,
                    "{first} {limit} {size}"
                );
            }
        }
        let unterminated = "a\nb\nlast line without newline";
        assert_eq!(
            render_paged(unterminated, 3, 5, 4).unwrap(),
            render(unterminated, 3, 5).unwrap()
        );
    }

    /// `text` from `*at` as a provider streams it: a skip of at most
    /// `max_bytes` (whole characters) that stops after the `lines`-th line
    /// feed, or a chunk of about `size` bytes, whichever `w` asks for next.
    fn feed_from(w: &mut Window, text: &str, at: &mut usize, size: usize, max_bytes: usize) {
        match w.skippable() {
            Some(lines) => {
                let rest = &text[*at..];
                let room = rest.floor_char_boundary(max_bytes);
                let (bytes, lines) = match nth_newline(&rest.as_bytes()[..room], lines) {
                    Ok(feed) => (feed + 1, lines),
                    Err(seen) => (room, seen),
                };
                let mid_line = !rest[..bytes].ends_with('\n');
                w.skipped(Skipped {
                    bytes: bytes as u64,
                    lines,
                    mid_line,
                });
                *at += bytes;
            }
            None => {
                let chunk = split(&text[*at..], size)[0];
                w.push(chunk);
                *at += chunk.len();
            }
        }
    }

    #[test]
    fn skipping_the_lines_a_window_does_not_show_renders_the_same() {
        let filler: String = (1..=3000).map(|i| format!("{i} ü\n")).collect();
        let texts = [
            "a\nb\r\nc\n".to_owned(),
            "\n\n\r\n\r\r\n".to_owned(),
            format!("{}\n{}x\r\nend", "y".repeat(3000), "é".repeat(2500)),
            filler.clone(),
            format!("{filler}tail without newline"),
        ];
        for text in &texts {
            for (first, limit) in [
                (1, 2000),
                (2, 1),
                (3, 2),
                (500, 10),
                (2999, 5),
                (7, 100_000),
            ] {
                let whole = render(text, first, limit);
                for (size, max_bytes) in [(7, 5), (64, 1000), (1000, 64), (1 << 20, 1 << 20)] {
                    // A whole scan, indexed, as `scan` makes it.
                    let mut w = Window::new(first, limit).indexing();
                    let mut at = 0;
                    while at < text.len() {
                        feed_from(&mut w, text, &mut at, size, max_bytes);
                    }
                    let index = w.take_index("m".into(), "v".into());
                    let what = format!("{first} {limit} {size} {max_bytes}");
                    assert_eq!(w.finish("f.txt", None), whole, "{what}");
                    // A page from that index, as `page` reads it.
                    let (start, line) = index.resume_point(first);
                    let mut w = Window::resume(first, limit, line);
                    let mut at = start as usize;
                    while !w.complete() && at < text.len() {
                        feed_from(&mut w, text, &mut at, size, max_bytes);
                    }
                    assert_eq!(w.finish("f.txt", Some(index.total)), whole, "paged {what}");
                }
            }
        }
    }

    #[test]
    fn line_numbers_are_decimal() {
        for n in [
            0,
            1,
            9,
            10,
            99,
            100,
            12_345_678,
            99_999_999,
            100_000_000,
            4_294_967_295,
            4_294_967_296,
            10_000_000_000,
            u64::MAX,
        ] {
            let mut out = String::from("x");
            push_number(&mut out, n);
            assert_eq!(out, format!("x{n}"));
        }
    }

    #[test]
    fn whole_file_and_footers() {
        assert_eq!(
            render("a\nb\n", 1, 2000).unwrap(),
            "File: f.txt\n1: a\n2: b\n(End of file: 2 lines.)"
        );
        assert_eq!(
            render("a\nb", 1, 2000).unwrap(),
            "File: f.txt\n1: a\n2: b\n(End of file: 2 lines.)"
        );
        assert_eq!(
            render("only", 1, 2000).unwrap(),
            "File: f.txt\n1: only\n(End of file: 1 line.)"
        );
        assert_eq!(
            render("", 1, 2000).unwrap(),
            "File: f.txt\n(The file is empty.)"
        );
        assert_eq!(
            render("\n", 1, 2000).unwrap(),
            "File: f.txt\n1: \n(End of file: 1 line.)"
        );
    }

    #[test]
    fn windows_say_how_to_continue() {
        let text: String = (1..=10).map(|i| format!("l{i}\r\n")).collect();
        assert_eq!(
            render(&text, 3, 2).unwrap(),
            "File: f.txt\n3: l3\n4: l4\n(Lines 3-4 of 10 shown. Continue with offset=5.)"
        );
        assert_eq!(
            render(&text, 9, 5).unwrap(),
            "File: f.txt\n9: l9\n10: l10\n(Lines 9-10 of 10; end of file.)"
        );
        let err = render(&text, 11, 5).unwrap_err();
        assert_eq!(
            err.text(),
            "INVALID_ARGS: read: offset 11 is past the end; f.txt has 10 lines: valid offsets \
are 1–10. Fix the arguments and call read again."
        );
        assert_eq!(
            render("", 2, 5).unwrap_err().message,
            "read: offset 2 is past the end; f.txt is empty, so the only valid offset is 1. \
Fix the arguments and call read again."
        );
    }

    #[test]
    fn chunking_never_changes_the_output() {
        let text: String = (1..=300)
            .map(|i| format!("line {i} ✓ {}\r\n", "x".repeat(i % 7)))
            .collect();
        for (first, limit) in [(1, 2000), (5, 3), (120, 100), (300, 1), (299, 2000)] {
            let whole = render(&text, first, limit).unwrap();
            for size in [1, 2, 3, 7, 64, 4096] {
                assert_eq!(
                    render_chunked(&text, first, limit, size).unwrap(),
                    whole,
                    "{first} {limit} {size}"
                );
            }
        }
    }

    #[test]
    fn long_lines_are_cut_with_a_marker() {
        let line = "é".repeat(MAX_LINE_CHARS + 5);
        let out = render(&format!("{line}\r\nnext\n"), 1, 10).unwrap();
        let expected = format!(
            "1: {}… [line cut: 5 more characters]\n2: next\n",
            "é".repeat(MAX_LINE_CHARS)
        );
        assert!(out.contains(&expected), "{out}");
        for size in [1, 3, 100] {
            assert_eq!(
                render_chunked(&format!("{line}\r\nnext\n"), 1, 10, size).unwrap(),
                out
            );
        }
    }

    #[test]
    fn output_stops_at_the_byte_cap() {
        let text: String = (1..=2000).map(|i| format!("{i:0>100}\n")).collect();
        let out = render(&text, 1, 2000).unwrap();
        assert!(out.len() <= MAX_OUTPUT_BYTES + 200);
        let shown = out.lines().filter(|l| l.contains(": 0")).count() as u64;
        assert!(shown > 400 && shown < 2000);
        assert!(out.ends_with(&format!(
            "(Lines 1-{shown} of 2000 shown. Output stopped at the 50 KiB limit. Continue with offset={}.)",
            shown + 1
        )));
    }
}

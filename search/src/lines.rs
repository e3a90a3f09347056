//! Searching one file's bytes for matching lines with `grep-searcher`, the way
//! ripgrep does by default (line by line, a UTF-8 BOM skipped), over text
//! files only: what `read` would refuse as not text — a NUL byte or invalid
//! UTF-8 anywhere, which includes UTF-16 — skips the whole file, matches
//! already seen in it included. The provider seam only streams text, so this
//! is the one rule every search path can keep; a native fast path over raw
//! bytes keeps it through [`TextOnly`].

use crate::budget::{Budget, Charged};
use crate::render::Hit;
use grep_matcher::LineTerminator;
use grep_regex::RegexMatcher;
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkMatch};
use std::io::Read;

/// Longest line buffered while searching; a file with a longer line is skipped.
pub const HEAP_LIMIT: usize = 16 << 20;

/// A line searcher configured like ripgrep's defaults with `--crlf` (the
/// matcher of [`crate::pattern::regex`] needs it).
pub fn searcher() -> Searcher {
    SearcherBuilder::new()
        .line_number(true)
        .line_terminator(LineTerminator::crlf())
        .binary_detection(BinaryDetection::quit(b'\x00'))
        .heap_limit(Some(HEAP_LIMIT))
        .build()
}

/// One file's matching lines: how many, and the first `room` as hits.
#[derive(Debug, Default)]
pub struct FileMatches {
    /// The first matching lines, at most the room asked for.
    pub hits: Vec<crate::render::Hit>,
    /// Every matching line.
    pub matches: u64,
}

/// Searches `reader` for lines matching `matcher`, keeping at most `room`
/// hits. A read error, a line over [`HEAP_LIMIT`] or a spent budget skips the
/// file (its matches are dropped).
pub fn search(
    searcher: &mut Searcher,
    matcher: &RegexMatcher,
    reader: impl Read,
    room: usize,
    budget: &Budget,
) -> FileMatches {
    let mut sink = Collect {
        found: FileMatches::default(),
        room,
    };
    let reader = Charged {
        inner: TextOnly::new(reader),
        budget,
    };
    match searcher.search_reader(matcher, reader, &mut sink) {
        Ok(()) => sink.found,
        Err(_) => FileMatches::default(),
    }
}

struct Collect {
    found: FileMatches,
    room: usize,
}

impl Sink for Collect {
    type Error = std::io::Error;

    fn matched(&mut self, _: &Searcher, m: &SinkMatch<'_>) -> Result<bool, std::io::Error> {
        self.found.matches += 1;
        if self.found.hits.len() < self.room {
            let line = m.line_number().unwrap_or(0);
            self.found.hits.push(Hit::new(line, m.bytes()));
        }
        Ok(true)
    }
}

/// A reader that fails at the first NUL byte or invalid UTF-8 sequence, a
/// sequence cut short by the end of the file included.
pub struct TextOnly<R> {
    inner: R,
    /// Bytes of an incomplete UTF-8 sequence at the end of the last read.
    pending: [u8; 3],
    held: usize,
}

impl<R> TextOnly<R> {
    /// Checks what `inner` yields.
    pub fn new(inner: R) -> TextOnly<R> {
        TextOnly {
            inner,
            pending: [0; 3],
            held: 0,
        }
    }
}

fn not_text() -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, "not UTF-8 text")
}

impl<R: Read> Read for TextOnly<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        if n == 0 {
            return if self.held == 0 {
                Ok(0)
            } else {
                Err(not_text())
            };
        }
        let got = &buf[..n];
        if memchr::memchr(0, got).is_some() {
            return Err(not_text());
        }
        // Finish a sequence the last read cut: at most 3 more bytes decide it.
        let mut from = 0;
        if self.held > 0 {
            let mut joined = [0u8; 7];
            joined[..self.held].copy_from_slice(&self.pending[..self.held]);
            let take = n.min(4);
            joined[self.held..self.held + take].copy_from_slice(&got[..take]);
            let len = self.held + take;
            match std::str::from_utf8(&joined[..len]) {
                Ok(_) => from = take,
                Err(e) if e.valid_up_to() >= self.held => from = e.valid_up_to() - self.held,
                Err(e) if e.error_len().is_none() => {
                    // Still incomplete: the read was shorter than the sequence.
                    self.pending[..len].copy_from_slice(&joined[..len]);
                    self.held = len;
                    return Ok(n);
                }
                Err(_) => return Err(not_text()),
            }
            self.held = 0;
        }
        match std::str::from_utf8(&got[from..]) {
            Ok(_) => {}
            Err(e) if e.error_len().is_none() => {
                let tail = &got[from + e.valid_up_to()..];
                self.pending[..tail.len()].copy_from_slice(tail);
                self.held = tail.len();
            }
            Err(_) => return Err(not_text()),
        }
        Ok(n)
    }
}

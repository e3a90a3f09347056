//! Searching one file's bytes for matching lines with `grep-searcher`, the way
//! ripgrep does by default (line by line, a UTF-8 BOM skipped), over text
//! files only: what `read` would refuse as not text — a NUL byte or invalid
//! UTF-8 anywhere, which includes UTF-16 — skips the whole file, matches
//! already seen in it included. The provider seam only streams text, so this
//! is the one rule every search path can keep; a native fast path over raw
//! bytes keeps it through [`TextOnly`].
//!
//! No call of the regex engine may outlast the budget: [`Bounded`] hands it
//! at most [`STEPS_PER_CALL`] automaton steps of haystack at a time, in pieces
//! of whole lines, and steps a longer line through the pattern's lazy DFA by
//! hand, checking the budget as it goes.

use crate::budget::{Budget, Charged};
use crate::pattern::LineRegex;
use crate::render::Hit;
use dsh_fs_core::text::StreamDecoder;
use dsh_fs_core::{ErrorCode, FsError};
use grep_matcher::{ByteSet, LineMatchKind, LineTerminator, Match, Matcher, NoCaptures};
pub use grep_searcher::Searcher;
use grep_searcher::{BinaryDetection, SearcherBuilder, Sink, SinkMatch};
use regex_automata::Input;
use regex_automata::hybrid::dfa::Cache;
use std::cell::RefCell;
use std::io::Read;

/// Automaton steps (NFA states × haystack bytes) one uninterrupted call of
/// the regex engine may take in the worst case: well under a second even
/// when its lazy DFA gives way to the NFA simulation.
pub const STEPS_PER_CALL: usize = 1 << 24;

/// Fewest bytes in a piece, however large the automaton.
const MIN_PIECE: usize = 256;

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

/// Searches `reader` for lines matching `regex`, keeping at most `room`
/// hits. A read error, a line over [`HEAP_LIMIT`] or a spent budget skips the
/// file (its matches are dropped); a read error is told to the budget.
pub fn search(
    searcher: &mut Searcher,
    regex: &LineRegex,
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
    match searcher.search_reader(Bounded::new(regex, budget), reader, &mut sink) {
        Ok(()) => sink.found,
        Err(e) => {
            // The store's own failures are told to the budget; the rules
            // that skip a file (not text, a line too long, the budget) not.
            let store = e
                .get_ref()
                .and_then(|inner| inner.downcast_ref::<FsError>());
            if let Some(fs) = store {
                budget.failed(fs.code);
            } else if e.raw_os_error().is_some() {
                budget.failed(ErrorCode::IoError);
            }
            FileMatches::default()
        }
    }
}

/// Why [`Bounded`] stopped a search.
#[derive(Debug)]
pub enum Halt {
    /// The budget ran out.
    Spent,
    /// The lazy DFA cannot search this line (a Unicode word boundary next to
    /// a non-ASCII byte); the file is skipped.
    Unsearchable,
}

impl std::fmt::Display for Halt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Halt::Spent => "search budget spent",
            Halt::Unsearchable => "a line too long to search with this pattern",
        })
    }
}

/// A line matcher that never runs the regex engine past the budget: a
/// haystack whose worst case exceeds [`STEPS_PER_CALL`] is searched in pieces
/// of whole lines (a match never spans lines, so the answer is the same),
/// and a single line longer than a piece through the lazy DFA, a byte at a
/// time. Only the calls line search makes are bounded: `find_at` (used for
/// multi-line search and match counting, neither of which this crate does)
/// goes straight to the engine.
pub struct Bounded<'a> {
    regex: &'a LineRegex,
    budget: &'a Budget,
    /// Bytes one call may search.
    piece: usize,
    /// Bytes stepped between two budget checks.
    check_every: usize,
    cache: RefCell<Option<Cache>>,
}

impl<'a> Bounded<'a> {
    /// `regex` bounded by `budget`.
    pub fn new(regex: &'a LineRegex, budget: &'a Budget) -> Bounded<'a> {
        let piece = (STEPS_PER_CALL / regex.states).max(MIN_PIECE);
        Bounded {
            regex,
            budget,
            piece,
            check_every: piece.min(1 << 16),
            cache: RefCell::new(None),
        }
    }

    fn check(&self) -> Result<(), Halt> {
        if self.budget.charge(0) {
            Ok(())
        } else {
            Err(Halt::Spent)
        }
    }

    /// The first match in `h[at..]`, piece by piece: `whole(start, end)`
    /// searches lines `h[start..end]`, no longer than a piece; a longer line
    /// is stepped and its match end handed to `long(start, end)`.
    fn pieces<T>(
        &self,
        h: &[u8],
        at: usize,
        mut whole: impl FnMut(usize, usize) -> Option<T>,
        long: impl Fn(usize, usize) -> T,
    ) -> Result<Option<T>, Halt> {
        let mut start = at;
        while start < h.len() {
            self.check()?;
            let limit = start.saturating_add(self.piece).min(h.len());
            let end = if limit == h.len() {
                limit
            } else {
                match memchr::memrchr(b'\n', &h[start..limit]) {
                    Some(i) => start + i + 1,
                    None => memchr::memchr(b'\n', &h[limit..]).map_or(h.len(), |i| limit + i + 1),
                }
            };
            if end - start <= self.piece {
                if let Some(found) = whole(start, end) {
                    return Ok(Some(found));
                }
            } else {
                let line = h[..end].strip_suffix(b"\n").unwrap_or(&h[..end]);
                let line = line.strip_suffix(b"\r").unwrap_or(line);
                if let Some(found) = self.step(line, start)? {
                    return Ok(Some(long(start, found)));
                }
            }
            start = end;
        }
        Ok(None)
    }

    /// The end of the first match in `hay[at..]` (one line, its terminator
    /// stripped), stepped through the lazy DFA with the budget checked every
    /// `check_every` bytes.
    fn step(&self, hay: &[u8], at: usize) -> Result<Option<usize>, Halt> {
        let dfa = &self.regex.dfa;
        let mut slot = self.cache.borrow_mut();
        let cache = slot.get_or_insert_with(|| dfa.create_cache());
        let input = Input::new(hay).range(at..);
        let unsearchable = |_| Halt::Unsearchable;
        let mut sid = dfa
            .start_state_forward(cache, &input)
            .map_err(|_| Halt::Unsearchable)?;
        for (i, &byte) in hay.iter().enumerate().skip(at) {
            if (i - at).is_multiple_of(self.check_every) {
                self.check()?;
            }
            sid = dfa.next_state(cache, sid, byte).map_err(unsearchable)?;
            if sid.is_tagged() {
                // Matches are reported a byte late: this one ended at `i`.
                if sid.is_match() {
                    return Ok(Some(i));
                }
                if sid.is_dead() {
                    return Ok(None);
                }
                if sid.is_quit() {
                    return Err(Halt::Unsearchable);
                }
            }
        }
        sid = dfa.next_eoi_state(cache, sid).map_err(unsearchable)?;
        Ok(sid.is_match().then_some(hay.len()))
    }
}

impl Matcher for Bounded<'_> {
    type Captures = NoCaptures;
    type Error = Halt;

    fn find_at(&self, haystack: &[u8], at: usize) -> Result<Option<Match>, Halt> {
        self.check()?;
        Ok(self.regex.matcher.find_at(haystack, at).unwrap_or(None))
    }

    fn new_captures(&self) -> Result<NoCaptures, Halt> {
        Ok(NoCaptures::new())
    }

    fn line_terminator(&self) -> Option<LineTerminator> {
        self.regex.matcher.line_terminator()
    }

    fn non_matching_bytes(&self) -> Option<&ByteSet> {
        self.regex.matcher.non_matching_bytes()
    }

    fn shortest_match_at(&self, haystack: &[u8], at: usize) -> Result<Option<usize>, Halt> {
        let inner = &self.regex.matcher;
        if haystack.len() - at.min(haystack.len()) <= self.piece {
            self.check()?;
            return Ok(inner.shortest_match_at(haystack, at).unwrap_or(None));
        }
        self.pieces(
            haystack,
            at,
            |start, end| {
                inner
                    .shortest_match_at(&haystack[..end], start)
                    .unwrap_or(None)
            },
            |_, end| end,
        )
    }

    fn find_candidate_line(&self, haystack: &[u8]) -> Result<Option<LineMatchKind>, Halt> {
        let inner = &self.regex.matcher;
        if haystack.len() <= self.piece {
            self.check()?;
            return Ok(inner.find_candidate_line(haystack).unwrap_or(None));
        }
        let shifted = |kind, by| match kind {
            LineMatchKind::Confirmed(i) => LineMatchKind::Confirmed(i + by),
            LineMatchKind::Candidate(i) => LineMatchKind::Candidate(i + by),
        };
        self.pieces(
            haystack,
            0,
            |start, end| {
                let found = inner.find_candidate_line(&haystack[start..end]);
                found.unwrap_or(None).map(|kind| shifted(kind, start))
            },
            |start, _| LineMatchKind::Confirmed(start),
        )
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
/// sequence cut short by the end of the file included: the check of
/// `read`, [`dsh_fs_core::text::StreamDecoder`], on what passes through.
pub struct TextOnly<R> {
    inner: R,
    text: StreamDecoder,
}

impl<R> TextOnly<R> {
    /// Checks what `inner` yields.
    pub fn new(inner: R) -> TextOnly<R> {
        TextOnly {
            inner,
            text: StreamDecoder::new(),
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
            self.text.finish().map_err(|_| not_text())?;
            return Ok(0);
        }
        let got = &buf[..n];
        if memchr::memchr(0, got).is_some() {
            return Err(not_text());
        }
        self.text.check_nul_free(got).map_err(|_| not_text())?;
        Ok(n)
    }
}

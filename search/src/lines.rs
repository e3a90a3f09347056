//! Searching one file's bytes for matching lines with `grep-searcher`, the way
//! ripgrep does by default: line by line, a UTF-16 BOM transcoded, and a file
//! searched only up to its first NUL byte (binary files are cut there, so a
//! file that starts binary shows nothing).

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
        inner: reader,
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

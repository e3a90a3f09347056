//! The edit splice for files too large to hold: a first pass over the file
//! in chunks plans the edit (how many matches, the first lines, the content
//! hash, UTF-8 checks) and a second pass, over the same bytes, writes the
//! result. Memory is bounded by the chunk size whatever the file or the
//! number of matches: matches are found again in the second pass, never kept.
//!
//! Only files without CR bytes are planned here: CRLF folding needs the
//! in-memory splice of [`crate::splice`], which callers fall back to when
//! [`Planner::push`] reports [`PlanError::InMemory`].

use crate::EditRequest;
use crate::splice::{SHOWN_MATCHES, SpliceError};
use crate::text::{ContentHasher, NotText, StreamDecoder};
use memchr::memmem;
use std::io::{self, Write};

/// What the first pass found, for a file of LF line endings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// How many occurrences will be replaced.
    pub replacements: u64,
    /// 1-based line of the first occurrence.
    pub first_line: u64,
    /// Size of the result in bytes.
    pub size: u64,
    /// Content hash of the whole file as scanned.
    pub hash: u128,
}

/// Why planning stopped.
#[derive(Debug, PartialEq, Eq)]
pub enum PlanError {
    /// The file has a CR byte, or the strings a CR or a BOM character: use
    /// the in-memory splice, which folds CRLF and skips the BOM.
    InMemory,
    /// The file is not text, or the edit cannot apply.
    Splice(SpliceError),
}

/// A run of the input: bytes outside any match, or one whole match.
enum Piece<'a> {
    Plain(&'a [u8]),
    Match(&'a [u8]),
}

/// Finds the non-overlapping occurrences of a literal in bytes that arrive
/// in chunks, handing every byte on exactly once, in order, as [`Piece`]s.
/// Keeps at most the literal's length of bytes between chunks.
struct Scanner<'e> {
    finder: memmem::Finder<'e>,
    /// Stop matching after the first occurrence.
    first_only: bool,
    matched: bool,
    /// Bytes a match may still start in.
    carry: Vec<u8>,
}

impl<'e> Scanner<'e> {
    fn new(old: &'e str, first_only: bool) -> Self {
        Scanner {
            finder: memmem::Finder::new(old.as_bytes()),
            first_only,
            matched: false,
            carry: Vec::new(),
        }
    }

    fn push<E>(
        &mut self,
        chunk: &[u8],
        mut each: impl FnMut(Piece<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        if self.first_only && self.matched {
            return each(Piece::Plain(chunk));
        }
        let old_len = self.finder.needle().len();
        let mut window = std::mem::take(&mut self.carry);
        window.extend_from_slice(chunk);
        let mut done = 0;
        for at in self.finder.find_iter(&window) {
            each(Piece::Plain(&window[done..at]))?;
            each(Piece::Match(&window[at..at + old_len]))?;
            done = at + old_len;
            self.matched = true;
            if self.first_only {
                return each(Piece::Plain(&window[done..]));
            }
        }
        // A match can start in the last `old_len - 1` bytes: keep them.
        let cut = window.len().saturating_sub(old_len - 1).max(done);
        each(Piece::Plain(&window[done..cut]))?;
        window.drain(..cut);
        self.carry = window;
        Ok(())
    }

    fn finish<E>(self, mut each: impl FnMut(Piece<'_>) -> Result<(), E>) -> Result<(), E> {
        each(Piece::Plain(&self.carry))
    }
}

/// The first pass: scans a file chunk by chunk for the literal old string.
pub struct Planner<'e> {
    edit: &'e EditRequest,
    scanner: Scanner<'e>,
    decoder: StreamDecoder,
    hasher: ContentHasher,
    /// Newlines seen so far.
    newlines: u64,
    /// Matches found so far.
    count: u64,
    /// Line numbers of the first few matches.
    lines: Vec<u64>,
    size: u64,
}

impl<'e> Planner<'e> {
    /// A planner for `edit` (whose old string has no CR and is not empty).
    pub fn new(edit: &'e EditRequest) -> Result<Self, PlanError> {
        if edit.old_string.is_empty() {
            return Err(PlanError::Splice(SpliceError::EmptyOldString));
        }
        let special = |s: &str| s.contains('\r') || s.contains('\u{feff}');
        if special(&edit.old_string) || special(&edit.new_string) {
            return Err(PlanError::InMemory);
        }
        Ok(Planner {
            edit,
            // An ambiguous edit still counts every occurrence, for the message.
            scanner: Scanner::new(&edit.old_string, false),
            decoder: StreamDecoder::new(),
            hasher: ContentHasher::new(),
            newlines: 0,
            count: 0,
            lines: Vec::new(),
            size: 0,
        })
    }

    /// Feeds the next chunk of the file's raw bytes.
    pub fn push(&mut self, chunk: &[u8]) -> Result<(), PlanError> {
        if memchr::memchr(b'\r', chunk).is_some() {
            return Err(PlanError::InMemory);
        }
        self.hasher.update(chunk);
        self.size += chunk.len() as u64;
        let mut buf = self.decoder.begin(chunk.len());
        buf.extend_from_slice(chunk);
        self.decoder
            .decode(buf)
            .map_err(|e: NotText| PlanError::Splice(SpliceError::NotText(e)))?;
        let (newlines, count, lines) = (&mut self.newlines, &mut self.count, &mut self.lines);
        self.scanner
            .push(chunk, |piece| {
                count_piece(piece, newlines, count, lines);
                Ok::<(), std::convert::Infallible>(())
            })
            .unwrap_or_else(|never| match never {});
        Ok(())
    }

    /// Ends the scan: the plan, or why the edit cannot apply. The content
    /// hash is returned either way, for a freshness check that must come first.
    pub fn finish(mut self) -> (u128, Result<Plan, PlanError>) {
        let hash = self.hasher.finish();
        if let Err(e) = self.decoder.finish() {
            return (hash, Err(PlanError::Splice(SpliceError::NotText(e))));
        }
        let (newlines, count, lines) = (&mut self.newlines, &mut self.count, &mut self.lines);
        self.scanner
            .finish(|piece| {
                count_piece(piece, newlines, count, lines);
                Ok::<(), std::convert::Infallible>(())
            })
            .unwrap_or_else(|never| match never {});
        let result = match self.count {
            0 => Err(PlanError::Splice(SpliceError::NotFound)),
            count if count > 1 && !self.edit.replace_all => {
                Err(PlanError::Splice(SpliceError::Ambiguous {
                    count,
                    lines: self.lines,
                }))
            }
            count => Ok(Plan {
                replacements: count,
                first_line: self.lines[0],
                size: crate::splice::result_size(
                    self.size,
                    count,
                    self.edit.old_string.len() as u64,
                    self.edit.new_string.len() as u64,
                ),
                hash,
            }),
        };
        (hash, result)
    }
}

fn count_piece(piece: Piece<'_>, newlines: &mut u64, count: &mut u64, lines: &mut Vec<u64>) {
    let bytes = match piece {
        Piece::Plain(bytes) => bytes,
        Piece::Match(bytes) => {
            *count += 1;
            if lines.len() < SHOWN_MATCHES {
                lines.push(*newlines + 1);
            }
            bytes
        }
    };
    *newlines += memchr::memchr_iter(b'\n', bytes).count() as u64;
}

/// The second pass: writes the edited file while the original's bytes are
/// fed again in chunks (any chunking). Buffer `out`: a replacement is one
/// write of its own.
pub struct Splicer<'e, W> {
    scanner: Scanner<'e>,
    new: &'e [u8],
    out: W,
}

impl<'e, W: Write> Splicer<'e, W> {
    /// A splicer applying `edit` (planned by a [`Planner`]) into `out`.
    pub fn new(edit: &'e EditRequest, out: W) -> Self {
        Splicer {
            scanner: Scanner::new(&edit.old_string, !edit.replace_all),
            new: edit.new_string.as_bytes(),
            out,
        }
    }

    /// Feeds the next chunk of the original bytes.
    pub fn push(&mut self, chunk: &[u8]) -> io::Result<()> {
        let (new, out) = (self.new, &mut self.out);
        self.scanner
            .push(chunk, |piece| write_piece(piece, new, out))
    }

    /// Writes what is left and hands back the writer.
    pub fn finish(self) -> io::Result<W> {
        let (new, mut out) = (self.new, self.out);
        self.scanner
            .finish(|piece| write_piece(piece, new, &mut out))?;
        Ok(out)
    }
}

fn write_piece(piece: Piece<'_>, new: &[u8], out: &mut impl Write) -> io::Result<()> {
    match piece {
        Piece::Plain(bytes) => out.write_all(bytes),
        Piece::Match(_) => out.write_all(new),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::splice;

    fn plan(file: &[u8], edit: &EditRequest, chunk: usize) -> Result<Plan, PlanError> {
        let mut p = Planner::new(edit)?;
        for c in file.chunks(chunk) {
            p.push(c)?;
        }
        p.finish().1
    }

    fn splice(file: &[u8], edit: &EditRequest, chunk: usize) -> Vec<u8> {
        let mut s = Splicer::new(edit, Vec::new());
        for c in file.chunks(chunk) {
            s.push(c).unwrap();
        }
        s.finish().unwrap()
    }

    #[test]
    fn passes_agree_with_the_in_memory_splice_at_every_chunk_size() {
        let file: Vec<u8> = (0..300)
            .flat_map(|i| format!("line {i} ab✓ab\n").into_bytes())
            .collect();
        for (old, new, all) in [
            ("line 150 ", "L150 ", false),
            ("ab", "AB", true),
            ("✓ab\nline 2", "x", true),
            ("b\nl", "", true),
            ("aa", "a", true),
        ] {
            let edit = EditRequest::new(old, new, all);
            let whole = splice::apply(&file, &edit);
            for chunk in [1, 2, 3, 5, 64, 1000, 1 << 20] {
                let Ok(whole) = &whole else {
                    assert!(plan(&file, &edit, chunk).is_err());
                    continue;
                };
                let p = plan(&file, &edit, chunk).unwrap();
                let out = splice(&file, &edit, chunk);
                assert_eq!(out, whole.bytes, "{old:?} chunk {chunk}");
                assert_eq!(p.size, out.len() as u64);
                assert_eq!(p.first_line, whole.first_line, "{old:?} chunk {chunk}");
                assert_eq!(p.replacements, u64::from(whole.replacements));
            }
        }
    }

    #[test]
    fn overlapping_candidates_match_like_the_in_memory_splice() {
        let file = b"aaaaaaa\nxaaax\n";
        let edit = EditRequest::new("aa", "b", true);
        let whole = splice::apply(file, &edit).unwrap();
        for chunk in 1..=file.len() {
            assert_eq!(splice(file, &edit, chunk), whole.bytes, "chunk {chunk}");
        }
    }

    #[test]
    fn errors_match_the_in_memory_splice() {
        let file = b"x = 1\ny = 2\nx = 1\n";
        for chunk in [1, 4, 100] {
            let e = plan(file, &EditRequest::new("x = 1", "z", false), chunk).unwrap_err();
            let lines = vec![1, 3];
            assert_eq!(
                e,
                PlanError::Splice(SpliceError::Ambiguous { count: 2, lines })
            );
            let e = plan(file, &EditRequest::new("q", "z", false), chunk).unwrap_err();
            assert_eq!(e, PlanError::Splice(SpliceError::NotFound));
        }
        assert_eq!(
            plan(b"a\r\nb", &EditRequest::new("a", "b", false), 2).unwrap_err(),
            PlanError::InMemory
        );
        assert!(matches!(
            plan(b"a\0b", &EditRequest::new("a", "b", false), 2),
            Err(PlanError::Splice(SpliceError::NotText(_)))
        ));
    }

    #[test]
    fn many_matches_keep_only_the_shown_lines() {
        let file = "x\n".repeat(100_000);
        let e = plan(file.as_bytes(), &EditRequest::new("x", "y", false), 4096).unwrap_err();
        let PlanError::Splice(SpliceError::Ambiguous { count, lines }) = e else {
            panic!("{e:?}")
        };
        assert_eq!((count, lines.len()), (100_000, SHOWN_MATCHES));
    }
}

//! The edit splice for files too large to hold: a first pass over the file
//! in chunks plans the edit (how many matches, the first lines, the content
//! hashes of the file and of the result, UTF-8 checks) and records where the
//! matches are, up to [`MAX_RECORDED_MATCHES`]. The result is then the
//! unchanged ranges between them, which a store can copy natively, and the
//! new string; past that many matches, a second pass over the same bytes
//! ([`Splicer`]) writes it. Memory is bounded by the chunk size (plus the
//! recorded offsets) whatever the file or the number of matches.
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
    /// Size of the file as scanned.
    pub source_size: u64,
    /// Content hash of the result.
    pub result_hash: u128,
    /// Byte offsets in the file of the occurrences to replace, in order;
    /// `None` when there are more than [`MAX_RECORDED_MATCHES`].
    pub matches: Option<Vec<u64>>,
}

/// How many match offsets a plan records at most (8 bytes each).
pub const MAX_RECORDED_MATCHES: usize = 4096;

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
        let keep = self.finder.needle().len() - 1;
        if self.carry.is_empty() {
            return self.scan(chunk, 0, &mut each);
        }
        if chunk.len() < keep {
            // A chunk shorter than the needle: one window of both.
            let mut window = std::mem::take(&mut self.carry);
            window.extend_from_slice(chunk);
            return self.scan(&window, 0, &mut each);
        }
        // Only a match starting in the carried bytes needs them joined to
        // the chunk, and it ends within the chunk's first `keep` bytes.
        let carry = std::mem::take(&mut self.carry);
        let mut window = carry.clone();
        window.extend_from_slice(&chunk[..keep]);
        let old_len = keep + 1;
        let mut done = 0;
        for at in self.finder.find_iter(&window) {
            if at >= carry.len() {
                break;
            }
            each(Piece::Plain(&window[done..at]))?;
            each(Piece::Match(&window[at..at + old_len]))?;
            done = at + old_len;
            self.matched = true;
            if self.first_only {
                break;
            }
        }
        let from = if done > carry.len() {
            done - carry.len()
        } else {
            each(Piece::Plain(&carry[done..]))?;
            0
        };
        if self.first_only && self.matched {
            return each(Piece::Plain(&chunk[from..]));
        }
        self.scan(chunk, from, &mut each)
    }

    /// Scans `window` from `from` (nothing carried before it), keeping the
    /// bytes a match may still start in.
    fn scan<E>(
        &mut self,
        window: &[u8],
        from: usize,
        each: &mut impl FnMut(Piece<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        let old_len = self.finder.needle().len();
        let mut done = from;
        for at in self.finder.find_iter(&window[from..]) {
            let at = from + at;
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
        self.carry = window[cut..].to_vec();
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
    tally: Tally<'e>,
}

/// What the first pass learns from the pieces of the file, in order.
struct Tally<'e> {
    new: &'e [u8],
    replace_all: bool,
    /// Hashes the file.
    hasher: ContentHasher,
    /// Hashes the result, from the first match on (before it, the result
    /// is the file).
    result: Option<ContentHasher>,
    /// Bytes of the file handed on so far.
    offset: u64,
    /// Newlines seen so far, while a line number may still be needed.
    newlines: u64,
    /// Matches found so far.
    count: u64,
    /// Line numbers of the first few matches.
    lines: Vec<u64>,
    /// Offsets of the matches, until there are too many to keep.
    matches: Option<Vec<u64>>,
    /// Offset of the first match.
    first: Option<u64>,
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
            tally: Tally {
                new: edit.new_string.as_bytes(),
                replace_all: edit.replace_all,
                hasher: ContentHasher::new(),
                result: None,
                offset: 0,
                newlines: 0,
                count: 0,
                lines: Vec::new(),
                matches: Some(Vec::new()),
                first: None,
            },
        })
    }

    /// Feeds the next chunk of the file's raw bytes.
    pub fn push(&mut self, chunk: &[u8]) -> Result<(), PlanError> {
        let not_text = |e: NotText| PlanError::Splice(SpliceError::NotText(e));
        match memchr::memchr2(b'\r', 0, chunk) {
            None => self.decoder.check_nul_free(chunk).map_err(not_text)?,
            Some(at) if chunk[at] == b'\r' || memchr::memchr(b'\r', &chunk[at..]).is_some() => {
                return Err(PlanError::InMemory);
            }
            // A NUL: decoding says where the text ends.
            Some(_) => drop(self.decoder.push(chunk).map_err(not_text)?),
        }
        let tally = &mut self.tally;
        self.scanner
            .push(chunk, |piece| {
                tally.piece(piece);
                Ok::<(), std::convert::Infallible>(())
            })
            .unwrap_or_else(|never| match never {});
        Ok(())
    }

    /// Where the first occurrence starts in the file, once it was found.
    pub fn first_match(&self) -> Option<u64> {
        self.tally.first
    }

    /// Ends the scan: the plan, or why the edit cannot apply. The content
    /// hash is returned either way, for a freshness check that must come first.
    pub fn finish(mut self) -> (u128, Result<Plan, PlanError>) {
        let tally = &mut self.tally;
        self.scanner
            .finish(|piece| {
                tally.piece(piece);
                Ok::<(), std::convert::Infallible>(())
            })
            .unwrap_or_else(|never| match never {});
        let t = self.tally;
        let hash = t.hasher.finish();
        if let Err(e) = self.decoder.finish() {
            return (hash, Err(PlanError::Splice(SpliceError::NotText(e))));
        }
        let result = match t.count {
            0 => Err(PlanError::Splice(SpliceError::NotFound)),
            count if count > 1 && !self.edit.replace_all => {
                Err(PlanError::Splice(SpliceError::Ambiguous {
                    count,
                    lines: t.lines,
                }))
            }
            count => Ok(Plan {
                replacements: count,
                first_line: t.lines[0],
                size: crate::splice::result_size(
                    t.offset,
                    count,
                    self.edit.old_string.len() as u64,
                    self.edit.new_string.len() as u64,
                ),
                hash,
                source_size: t.offset,
                result_hash: t.result.as_ref().map_or(hash, ContentHasher::finish),
                matches: t.matches,
            }),
        };
        (hash, result)
    }
}

impl Tally<'_> {
    fn piece(&mut self, piece: Piece<'_>) {
        // Line numbers matter for the first match, and for the first few
        // when one occurrence was asked for (the ambiguity message).
        let counting =
            self.lines.is_empty() || (!self.replace_all && self.lines.len() < SHOWN_MATCHES);
        match piece {
            Piece::Plain(bytes) => {
                if counting {
                    self.newlines += count_newlines(bytes);
                }
                self.hasher.update(bytes);
                if let Some(result) = &mut self.result {
                    result.update(bytes);
                }
                self.offset += bytes.len() as u64;
            }
            Piece::Match(bytes) => {
                self.count += 1;
                self.first.get_or_insert(self.offset);
                if self.lines.len() < SHOWN_MATCHES {
                    self.lines.push(self.newlines + 1);
                }
                if counting {
                    self.newlines += count_newlines(bytes);
                }
                if let Some(matches) = &mut self.matches {
                    if matches.len() < MAX_RECORDED_MATCHES {
                        matches.push(self.offset);
                    } else {
                        self.matches = None;
                    }
                }
                // Only the first match is replaced when one was asked for;
                // a second makes the edit fail, and the result moot.
                if self.replace_all || self.count == 1 {
                    let result = self.result.get_or_insert_with(|| self.hasher.clone());
                    result.update(self.new);
                }
                self.hasher.update(bytes);
                self.offset += bytes.len() as u64;
            }
        }
    }
}

fn count_newlines(bytes: &[u8]) -> u64 {
    crate::text::count_newlines(bytes) as u64
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
    use crate::text::content_hash;

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
                assert_eq!(p.result_hash, content_hash(&whole.bytes));
                assert_eq!(
                    (p.source_size, p.hash),
                    (file.len() as u64, content_hash(&file))
                );
                assert_eq!(
                    from_offsets(&file, &edit, &p),
                    whole.bytes,
                    "{old:?} chunk {chunk}"
                );
            }
        }
    }

    /// The result made from the recorded offsets, as a store's copies make it.
    fn from_offsets(file: &[u8], edit: &EditRequest, plan: &Plan) -> Vec<u8> {
        let mut out = Vec::new();
        let mut at = 0;
        for &m in plan.matches.as_ref().unwrap() {
            out.extend_from_slice(&file[at..m as usize]);
            out.extend_from_slice(edit.new_string.as_bytes());
            at = m as usize + edit.old_string.len();
        }
        out.extend_from_slice(&file[at..plan.source_size as usize]);
        out
    }

    #[test]
    fn offsets_are_recorded_up_to_the_cap() {
        let file = "x\n".repeat(MAX_RECORDED_MATCHES);
        let edit = EditRequest::new("x", "y", true);
        let p = plan(file.as_bytes(), &edit, 1000).unwrap();
        assert_eq!(p.matches.as_ref().map(Vec::len), Some(MAX_RECORDED_MATCHES));
        let more = format!("{file}x\n");
        let p = plan(more.as_bytes(), &edit, 1000).unwrap();
        assert_eq!(p.matches, None);
        assert_eq!(
            p.result_hash,
            content_hash("y\n".repeat(MAX_RECORDED_MATCHES + 1).as_bytes())
        );
    }

    #[test]
    fn newlines_are_counted_in_every_block_shape() {
        for len in [
            0,
            1,
            31,
            32,
            33,
            255 * 32 - 1,
            255 * 32,
            255 * 32 + 7,
            100_000,
        ] {
            let bytes: Vec<u8> = (0..len)
                .map(|i| if i % 3 == 0 { b'\n' } else { b'a' })
                .collect();
            let want = bytes.iter().filter(|&&b| b == b'\n').count() as u64;
            assert_eq!(count_newlines(&bytes), want, "{len}");
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

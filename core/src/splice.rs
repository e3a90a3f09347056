//! Byte-faithful literal edits.
//!
//! The old string is matched against the file's text with every CRLF seen as
//! LF, so a model that writes `\n` finds lines of a Windows file. The result
//! is then spliced into the original bytes: only the matched byte ranges
//! change. The BOM, every other line's ending and a missing final newline stay
//! byte for byte, and the replacement takes the line ending of the text it
//! replaces.
//!
//! The work is bounded whatever the arguments: matches are counted, never
//! collected; the size of the result is known before a byte of it is made,
//! and [`Plan::write_to`] streams it to any writer.

use crate::text::fold_crlf;
use crate::text::{self, NotText};
use crate::{EditRequest, ErrorCode};
use memchr::memmem;
use std::borrow::Cow;
use std::io::{self, Write};

/// How many match lines an ambiguous-edit error lists.
pub const SHOWN_MATCHES: usize = 10;

/// A successful edit: the new file bytes and what changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spliced {
    /// The whole new file.
    pub bytes: Vec<u8>,
    /// Number of replaced occurrences.
    pub replacements: u32,
    /// 1-based line where the first replacement starts.
    pub first_line: u64,
}

/// Why an edit cannot be applied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SpliceError {
    /// The file is not text.
    NotText(NotText),
    /// The old string is empty.
    EmptyOldString,
    /// The old string does not occur.
    NotFound,
    /// The old string occurs `count` times and `replace_all` is off; `lines`
    /// holds the (1-based) lines of the first [`SHOWN_MATCHES`].
    Ambiguous {
        /// How many times it occurs.
        count: u64,
        /// Lines of the first few occurrences, ascending.
        lines: Vec<u64>,
    },
    /// The edited file would have `size` bytes, more than `limit`.
    TooLarge {
        /// Size of the result in bytes.
        size: u64,
        /// The limit it exceeds.
        limit: u64,
    },
}

impl SpliceError {
    /// The seam's error code for this failure.
    pub fn code(&self) -> ErrorCode {
        match self {
            SpliceError::NotText(_) => ErrorCode::NotText,
            SpliceError::EmptyOldString => ErrorCode::InvalidInput,
            SpliceError::NotFound => ErrorCode::EditNotFound,
            SpliceError::Ambiguous { .. } => ErrorCode::AmbiguousEdit,
            SpliceError::TooLarge { .. } => ErrorCode::TooLarge,
        }
    }

    /// A message naming `path`.
    pub fn message(&self, path: &str) -> String {
        match self {
            SpliceError::NotText(e) => format!("{path} is not UTF-8 text ({e})"),
            SpliceError::EmptyOldString => "old_string must not be empty".to_owned(),
            SpliceError::NotFound => format!("old_string was not found in {path}"),
            SpliceError::Ambiguous { count, lines } => {
                let shown: Vec<String> = lines.iter().map(u64::to_string).collect();
                let more = if *count > lines.len() as u64 {
                    ", …"
                } else {
                    ""
                };
                format!(
                    "old_string matches {count} places in {path} (lines {}{more})",
                    shown.join(", ")
                )
            }
            SpliceError::TooLarge { size, limit } => too_large_message(path, *size, *limit),
        }
    }

    /// The error as an [`crate::FsError`] naming `path`.
    pub fn into_fs_error(self, path: &str) -> crate::FsError {
        crate::FsError::new(self.code(), self.message(path))
    }
}

/// The message of an edit or write whose result would exceed a size limit.
pub fn too_large_message(path: &str, size: u64, limit: u64) -> String {
    format!(
        "the change would make {path} {size} bytes, more than the {limit}-byte limit \
(nothing was changed; replace fewer places or use a shorter new_string)"
    )
}

/// Upper bound of the result of replacing `count` occurrences of `old_len`
/// bytes in a file of `len` bytes by `new_len` bytes; saturates, never wraps.
pub fn result_size(len: u64, count: u64, old_len: u64, new_len: u64) -> u64 {
    len.saturating_sub(count.saturating_mul(old_len))
        .saturating_add(count.saturating_mul(new_len))
}

/// Applies `edit` to the file `original` in memory; the result may have at
/// most [`crate::MAX_IN_MEMORY_BYTES`] bytes.
pub fn apply(original: &[u8], edit: &EditRequest) -> Result<Spliced, SpliceError> {
    let plan = plan(original, edit, crate::MAX_IN_MEMORY_BYTES)?;
    let mut bytes = Vec::new();
    bytes
        .try_reserve_exact(plan.size as usize)
        .map_err(|_| SpliceError::TooLarge {
            size: plan.size,
            limit: crate::MAX_IN_MEMORY_BYTES,
        })?;
    plan.write_to(&mut bytes)
        .expect("writing to a Vec cannot fail");
    Ok(Spliced {
        bytes,
        replacements: plan.replacements,
        first_line: plan.first_line,
    })
}

/// An edit checked against one file's bytes, ready to be written out.
#[derive(Debug)]
pub struct Plan<'a> {
    original: &'a [u8],
    /// Length of the BOM the file starts with.
    base: usize,
    /// The text with CRLF folded to LF (borrowed when it has no CR).
    folded: Cow<'a, str>,
    old: Cow<'a, str>,
    new: Cow<'a, str>,
    replace_all: bool,
    /// The replacement in CRLF form, when some match needs it.
    new_crlf: Option<String>,
    /// Number of occurrences replaced.
    pub replacements: u32,
    /// 1-based line where the first replacement starts.
    pub first_line: u64,
    /// Exact size of the result in bytes.
    pub size: u64,
}

/// Matches `edit` in `original`: counts the occurrences (keeping only the
/// lines an error shows) and sizes the result, which may have at most
/// `max_len` bytes, without building it.
pub fn plan<'a>(
    original: &'a [u8],
    edit: &'a EditRequest,
    max_len: u64,
) -> Result<Plan<'a>, SpliceError> {
    let text = text::decode(original).map_err(SpliceError::NotText)?;
    let old = fold_crlf(&edit.old_string);
    if old.is_empty() {
        return Err(SpliceError::EmptyOldString);
    }
    let folded = fold_crlf(text);
    let hay = folded.as_bytes();
    let finder = memmem::Finder::new(old.as_bytes());
    let mut matches = finder.find_iter(hay);
    let Some(first) = matches.next() else {
        return Err(SpliceError::NotFound);
    };
    let first_line = memchr::memchr_iter(b'\n', &hay[..first]).count() as u64 + 1;
    if !edit.replace_all
        && let Some(second) = matches.next()
    {
        let (mut lines, mut count) = (vec![first_line], 1u64);
        let (mut line, mut from) = (first_line, first);
        for at in std::iter::once(second).chain(matches) {
            count += 1;
            if lines.len() < SHOWN_MATCHES {
                line += memchr::memchr_iter(b'\n', &hay[from..at]).count() as u64;
                from = at;
                lines.push(line);
            }
        }
        return Err(SpliceError::Ambiguous { count, lines });
    }
    let new = fold_crlf(&edit.new_string);
    let new_crlf =
        (matches!(folded, Cow::Owned(_)) && new.contains('\n')).then(|| new.replace('\n', "\r\n"));
    let mut plan = Plan {
        original,
        base: text::bom_len(original),
        folded,
        old,
        new,
        replace_all: edit.replace_all,
        new_crlf,
        replacements: 0,
        first_line,
        size: 0,
    };
    let (mut size, mut count) = (0u64, 0u64);
    plan.pieces(|piece, replaced| {
        size += piece.len() as u64;
        count += u64::from(replaced);
        Ok(())
    })
    .expect("counting cannot fail");
    if size > max_len {
        return Err(SpliceError::TooLarge {
            size,
            limit: max_len,
        });
    }
    plan.size = size;
    plan.replacements = u32::try_from(count).unwrap_or(u32::MAX);
    Ok(plan)
}

impl Plan<'_> {
    /// Writes the edited file to `out`, piece by piece (buffer `out` when
    /// each write is costly: there are two per replacement).
    pub fn write_to(&self, out: &mut impl Write) -> io::Result<()> {
        self.pieces(|piece, _| out.write_all(piece))
    }

    /// Hands the result to `emit` in order: unchanged byte ranges, and each
    /// replacement (flagged `true`).
    fn pieces(&self, mut emit: impl FnMut(&[u8], bool) -> io::Result<()>) -> io::Result<()> {
        emit(&self.original[..self.base], false)?;
        let raw = &self.original[self.base..];
        let hay = self.folded.as_bytes();
        let mut unfold = Unfold::new(raw, matches!(self.folded, Cow::Owned(_)));
        let mut endings = Endings::new(raw);
        let mut copied = 0; // offset in `raw` up to which bytes are emitted
        for at in memmem::find_iter(hay, self.old.as_bytes()) {
            let start = unfold.raw(at);
            let end = unfold.raw(at + self.old.len());
            emit(&raw[copied..start], false)?;
            let replacement = match &self.new_crlf {
                Some(crlf) if endings.crlf(start, end) => crlf.as_bytes(),
                _ => self.new.as_bytes(),
            };
            emit(replacement, true)?;
            copied = end;
            if !self.replace_all {
                break;
            }
        }
        emit(&raw[copied..], false)
    }
}

/// Maps offsets in the folded text to the raw text, for ascending offsets:
/// a `\n` that was a CRLF maps to its `\r`, so a range never splits a CRLF.
struct Unfold<'a> {
    crlfs: Option<memmem::FindIter<'a, 'static>>,
    /// Raw offset of the next CRLF not yet counted.
    next: Option<usize>,
    /// CRLFs folded before the last offset mapped.
    removed: usize,
}

impl<'a> Unfold<'a> {
    fn new(raw: &'a [u8], has_crlf: bool) -> Self {
        let mut crlfs = has_crlf.then(|| memmem::find_iter(raw, b"\r\n"));
        let next = crlfs.as_mut().and_then(Iterator::next);
        Unfold {
            crlfs,
            next,
            removed: 0,
        }
    }

    fn raw(&mut self, at: usize) -> usize {
        while self.next.is_some_and(|r| r - self.removed < at) {
            self.removed += 1;
            self.next = self.crlfs.as_mut().and_then(Iterator::next);
        }
        at + self.removed
    }
}

/// Which line ending a replacement takes, for ascending ranges of the raw
/// text: the ending of the first line break inside the range, else of the
/// line the range sits on, else of the line before it; LF when the text has
/// none. Each byte is looked at a bounded number of times in all.
struct Endings<'a> {
    raw: &'a [u8],
    /// The first `\n` at or after the last range's end (`raw.len()`: none).
    after: Option<usize>,
    /// The last `\n` of the text, once needed.
    last: Option<Option<usize>>,
}

impl<'a> Endings<'a> {
    fn new(raw: &'a [u8]) -> Self {
        Endings {
            raw,
            after: None,
            last: None,
        }
    }

    fn crlf(&mut self, start: usize, end: usize) -> bool {
        let raw = self.raw;
        let is_crlf = |nl: usize| nl > 0 && raw[nl - 1] == b'\r';
        if let Some(nl) = memchr::memchr(b'\n', &raw[start..end]) {
            return is_crlf(start + nl);
        }
        let after = match self.after {
            Some(nl) if nl >= end => nl,
            _ => memchr::memchr(b'\n', &raw[end..]).map_or(raw.len(), |nl| end + nl),
        };
        self.after = Some(after);
        if after < raw.len() {
            return is_crlf(after);
        }
        // No break inside or after this range: the text's last break, found
        // once, is the one before it (and before every later range).
        let last = *self.last.get_or_insert_with(|| memchr::memrchr(b'\n', raw));
        last.is_some_and(is_crlf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edit(file: &[u8], old: &str, new: &str, all: bool) -> Result<Spliced, SpliceError> {
        apply(file, &EditRequest::new(old, new, all))
    }

    #[test]
    fn lf_file_single_replacement() {
        let out = edit(b"a\nb\nc\n", "b", "B", false).unwrap();
        assert_eq!(out.bytes, b"a\nB\nc\n");
        assert_eq!((out.replacements, out.first_line), (1, 2));
    }

    #[test]
    fn crlf_file_keeps_crlf_and_other_lines() {
        let out = edit(b"a\r\nb\r\nc\r\n", "a\nb", "x\ny\nz", false).unwrap();
        assert_eq!(out.bytes, b"x\r\ny\r\nz\r\nc\r\n");
    }

    #[test]
    fn mixed_endings_only_matched_range_changes() {
        let file = b"one\r\ntwo\nthree\r\nfour";
        let out = edit(file, "two\nthree", "2\n3", false).unwrap();
        // The range's first break is LF, so the replacement uses LF; the CRLF
        // that ended "three" is outside the range ("three" ends before it).
        assert_eq!(out.bytes, b"one\r\n2\n3\r\nfour");
        let out = edit(file, "four", "4\n4", false).unwrap();
        // Single-line match on the last line: takes the previous line's ending.
        assert_eq!(out.bytes, b"one\r\ntwo\nthree\r\n4\r\n4");
    }

    #[test]
    fn bom_and_missing_final_newline_survive() {
        let out = edit(b"\xEF\xBB\xBFx = 1\r\ny = 2", "y = 2", "y = 3", false).unwrap();
        assert_eq!(out.bytes, b"\xEF\xBB\xBFx = 1\r\ny = 3");
    }

    #[test]
    fn model_crlf_in_old_string_matches_lf_file() {
        let out = edit(b"a\nb\n", "a\r\nb", "c", false).unwrap();
        assert_eq!(out.bytes, b"c\n");
    }

    #[test]
    fn ambiguous_lists_lines_and_replace_all_replaces_all() {
        let file = b"x\ny\nx\r\nx";
        assert_eq!(
            edit(file, "x", "z", false).unwrap_err(),
            SpliceError::Ambiguous {
                count: 3,
                lines: vec![1, 3, 4]
            }
        );
        let out = edit(file, "x", "z", true).unwrap();
        assert_eq!(out.bytes, b"z\ny\nz\r\nz");
        assert_eq!(out.replacements, 3);
    }

    #[test]
    fn errors() {
        assert_eq!(
            edit(b"abc", "", "x", false).unwrap_err(),
            SpliceError::EmptyOldString
        );
        assert_eq!(
            edit(b"abc", "d", "x", false).unwrap_err(),
            SpliceError::NotFound
        );
        assert!(matches!(
            edit(b"a\0c", "a", "x", false).unwrap_err(),
            SpliceError::NotText(_)
        ));
    }

    #[test]
    fn match_ending_before_crlf_keeps_the_cr() {
        let out = edit(b"ab\r\ncd\r\n", "b", "", false).unwrap();
        assert_eq!(out.bytes, b"a\r\ncd\r\n");
        let out = edit(b"ab\r\ncd\r\n", "b\n", "", false).unwrap();
        assert_eq!(out.bytes, b"acd\r\n");
    }

    #[test]
    fn many_matches_are_counted_not_kept() {
        let file = "x\n".repeat(100_000);
        match edit(file.as_bytes(), "x", "y", false).unwrap_err() {
            SpliceError::Ambiguous { count, lines } => {
                assert_eq!(count, 100_000);
                assert_eq!(lines, (1..=10).collect::<Vec<u64>>());
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn result_size_is_checked_before_anything_is_built() {
        let new = "n".repeat(1 << 20);
        let e = edit(&b"x".repeat(1000), "x", &new, true).unwrap_err();
        assert_eq!(
            e,
            SpliceError::TooLarge {
                size: 1000 << 20,
                limit: crate::MAX_IN_MEMORY_BYTES
            }
        );
        assert_eq!(e.code(), ErrorCode::TooLarge);
        let request = EditRequest::new("b", "1\n2", true);
        let p = plan(b"ab\r\nab", &request, 100).unwrap();
        assert_eq!((p.size, p.replacements), (12, 2));
        let e = plan(b"ab\r\nab", &request, 11).unwrap_err();
        assert_eq!(
            e,
            SpliceError::TooLarge {
                size: 12,
                limit: 11
            }
        );
    }

    #[test]
    fn a_long_line_with_many_matches_stays_linear() {
        // One line, CRLF at the end only: every match looks for the line's ending.
        let mut file = "a".repeat(2 << 20).into_bytes();
        file.extend_from_slice(b"\r\n");
        let out = edit(&file, "a", "b\nc", true).unwrap();
        assert_eq!(out.replacements, 2 << 20);
        assert!(out.bytes.starts_with(b"b\r\ncb\r\nc"));
    }
}

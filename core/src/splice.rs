//! Byte-faithful literal edits.
//!
//! The old string is matched against the file's text with every CRLF seen as
//! LF, so a model that writes `\n` finds lines of a Windows file. The result
//! is then spliced into the original bytes: only the matched byte ranges
//! change. The BOM, every other line's ending and a missing final newline stay
//! byte for byte, and the replacement takes the line ending of the text it
//! replaces.

use crate::text::{self, NotText};
use crate::{EditRequest, ErrorCode};
use memchr::memmem;

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
    /// The old string occurs on these (1-based) lines and `replace_all` is off.
    Ambiguous(Vec<u64>),
}

impl SpliceError {
    /// The seam's error code for this failure.
    pub fn code(&self) -> ErrorCode {
        match self {
            SpliceError::NotText(_) => ErrorCode::NotText,
            SpliceError::EmptyOldString => ErrorCode::InvalidInput,
            SpliceError::NotFound => ErrorCode::EditNotFound,
            SpliceError::Ambiguous(_) => ErrorCode::AmbiguousEdit,
        }
    }

    /// A message naming `path`.
    pub fn message(&self, path: &str) -> String {
        match self {
            SpliceError::NotText(e) => format!("{path} is not UTF-8 text ({e})"),
            SpliceError::EmptyOldString => "old_string must not be empty".to_owned(),
            SpliceError::NotFound => format!("old_string was not found in {path}"),
            SpliceError::Ambiguous(lines) => {
                let shown: Vec<String> = lines.iter().take(10).map(u64::to_string).collect();
                let more = if lines.len() > 10 { ", …" } else { "" };
                format!(
                    "old_string matches {} places in {path} (lines {}{more})",
                    lines.len(),
                    shown.join(", ")
                )
            }
        }
    }

    /// The error as an [`crate::FsError`] naming `path`.
    pub fn into_fs_error(self, path: &str) -> crate::FsError {
        crate::FsError::new(self.code(), self.message(path))
    }
}

/// Text with CRLF folded to LF, and where the folded CRs were.
struct Folded<'a> {
    text: std::borrow::Cow<'a, str>,
    /// Folded offsets of each `\n` that had a `\r` before it, ascending.
    crlf_at: Vec<usize>,
}

impl<'a> Folded<'a> {
    fn new(text: &'a str) -> Self {
        if memchr::memchr(b'\r', text.as_bytes()).is_none() {
            return Folded {
                text: text.into(),
                crlf_at: Vec::new(),
            };
        }
        let mut out = String::with_capacity(text.len());
        let mut crlf_at = Vec::new();
        let mut rest = text;
        while let Some(at) = memmem::find(rest.as_bytes(), b"\r\n") {
            out.push_str(&rest[..at]);
            crlf_at.push(out.len());
            out.push('\n');
            rest = &rest[at + 2..];
        }
        out.push_str(rest);
        Folded {
            text: out.into(),
            crlf_at,
        }
    }

    /// Offset in the unfolded text of folded offset `at`. A `\n` that was a
    /// CRLF maps to its `\r`, so a range never splits a CRLF.
    fn unfold(&self, at: usize) -> usize {
        at + self.crlf_at.partition_point(|&n| n < at)
    }
}

/// Folds every CRLF in `s` to LF.
pub fn fold_crlf(s: &str) -> std::borrow::Cow<'_, str> {
    if s.contains("\r\n") {
        s.replace("\r\n", "\n").into()
    } else {
        s.into()
    }
}

/// Applies `edit` to the file `original`.
pub fn apply(original: &[u8], edit: &EditRequest) -> Result<Spliced, SpliceError> {
    let text = text::decode(original).map_err(SpliceError::NotText)?;
    let base = text::bom_len(original);
    let old = fold_crlf(&edit.old_string);
    if old.is_empty() {
        return Err(SpliceError::EmptyOldString);
    }
    let new = fold_crlf(&edit.new_string);
    let folded = Folded::new(text);
    let hay = folded.text.as_bytes();

    let matches: Vec<usize> = memmem::find_iter(hay, old.as_bytes()).collect();
    let Some(&first) = matches.first() else {
        return Err(SpliceError::NotFound);
    };
    let line_of = |at: usize| memchr::memchr_iter(b'\n', &hay[..at]).count() as u64 + 1;
    if matches.len() > 1 && !edit.replace_all {
        let mut lines = Vec::with_capacity(matches.len());
        let (mut line, mut from) = (1u64, 0usize);
        for &at in &matches {
            line += memchr::memchr_iter(b'\n', &hay[from..at]).count() as u64;
            from = at;
            lines.push(line);
        }
        return Err(SpliceError::Ambiguous(lines));
    }

    let raw = text.as_bytes();
    let mut out = Vec::with_capacity(original.len() + matches.len() * new.len());
    out.extend_from_slice(&original[..base]);
    let mut copied = 0; // offset in `raw` up to which bytes are in `out`
    for &at in &matches {
        let start = folded.unfold(at);
        let end = folded.unfold(at + old.len());
        out.extend_from_slice(&raw[copied..start]);
        let crlf = uses_crlf(raw, start, end);
        if crlf && new.contains('\n') {
            out.extend_from_slice(new.replace('\n', "\r\n").as_bytes());
        } else {
            out.extend_from_slice(new.as_bytes());
        }
        copied = end;
    }
    out.extend_from_slice(&raw[copied..]);
    Ok(Spliced {
        bytes: out,
        replacements: matches.len() as u32,
        first_line: line_of(first),
    })
}

/// Whether the replacement for `raw[start..end]` should end its lines with
/// CRLF: the ending of the first line break inside the range, else of the line
/// the range sits on, else of the line before it; LF when the text has none.
fn uses_crlf(raw: &[u8], start: usize, end: usize) -> bool {
    let is_crlf = |nl: usize| nl > 0 && raw[nl - 1] == b'\r';
    if let Some(nl) = memchr::memchr(b'\n', &raw[start..end]) {
        return is_crlf(start + nl);
    }
    if let Some(nl) = memchr::memchr(b'\n', &raw[end..]) {
        return is_crlf(end + nl);
    }
    memchr::memrchr(b'\n', &raw[..start]).is_some_and(is_crlf)
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
            SpliceError::Ambiguous(vec![1, 3, 4])
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
}

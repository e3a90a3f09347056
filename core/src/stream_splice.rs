//! The edit splice for files too large to hold: a first pass over the file
//! in chunks plans the edit (matches, line numbers, content hash, UTF-8
//! checks) with memory bounded by the chunk size; the caller then copies the
//! unmatched byte ranges and writes the replacements.
//!
//! Only files without CR bytes are planned here: CRLF folding needs the
//! in-memory splice of [`crate::splice`], which callers fall back to when
//! [`Planner::push`] reports [`PlanError::InMemory`].

use crate::EditRequest;
use crate::splice::SpliceError;
use crate::text::{ContentHasher, NotText, StreamDecoder};
use memchr::memmem;

/// Where the matches are, for a file of LF line endings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// Byte offsets (in the file) where each replaced occurrence starts.
    pub starts: Vec<u64>,
    /// Length of the old string in bytes.
    pub old_len: u64,
    /// 1-based line of the first occurrence.
    pub first_line: u64,
    /// Content hash of the whole file as scanned.
    pub hash: u128,
}

/// Scans a file chunk by chunk for the literal `old` string.
pub struct Planner<'e> {
    edit: &'e EditRequest,
    finder: memmem::Finder<'e>,
    decoder: StreamDecoder,
    hasher: ContentHasher,
    /// Bytes of the previous chunks that a match may still start in.
    carry: Vec<u8>,
    /// File offset of `carry[0]`.
    carry_at: u64,
    /// Matches found so far (file offsets), non-overlapping.
    starts: Vec<u64>,
    /// Line numbers of the first few matches.
    lines: Vec<u64>,
    /// Newlines before file offset `counted_to`.
    newlines: u64,
    counted_to: u64,
    scanned: u64,
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
            finder: memmem::Finder::new(edit.old_string.as_bytes()),
            decoder: StreamDecoder::new(),
            hasher: ContentHasher::new(),
            carry: Vec::new(),
            carry_at: 0,
            starts: Vec::new(),
            lines: Vec::new(),
            newlines: 0,
            counted_to: 0,
            scanned: 0,
        })
    }

    /// Feeds the next chunk of the file's raw bytes.
    pub fn push(&mut self, chunk: &[u8]) -> Result<(), PlanError> {
        if memchr::memchr(b'\r', chunk).is_some() {
            return Err(PlanError::InMemory);
        }
        self.hasher.update(chunk);
        let mut buf = self.decoder.begin(chunk.len());
        buf.extend_from_slice(chunk);
        self.decoder
            .decode(buf)
            .map_err(|e: NotText| PlanError::Splice(SpliceError::NotText(e)))?;

        let old_len = self.edit.old_string.len() as u64;
        let mut window = std::mem::take(&mut self.carry);
        window.extend_from_slice(chunk);
        let window_at = self.carry_at;
        let searched_to = self.scanned; // everything before was fully searched
        for p in self.finder.find_iter(&window) {
            let at = window_at + p as u64;
            let allowed = self.starts.last().map_or(0, |&s| s + old_len);
            if at < allowed || at + old_len <= searched_to {
                continue;
            }
            let from = (self.counted_to - window_at) as usize;
            self.newlines += memchr::memchr_iter(b'\n', &window[from..p]).count() as u64;
            self.counted_to = at;
            if self.lines.len() < 11 {
                self.lines.push(self.newlines + 1);
            }
            self.starts.push(at);
        }
        self.scanned += chunk.len() as u64;
        // Count the rest of the window's newlines, except what stays carried.
        let keep = (old_len as usize - 1).min(window.len());
        let cut = window.len() - keep;
        let from = (self.counted_to - window_at) as usize;
        if from < cut {
            self.newlines += memchr::memchr_iter(b'\n', &window[from..cut]).count() as u64;
            self.counted_to = window_at + cut as u64;
        }
        self.carry = window.split_off(cut);
        self.carry_at = window_at + cut as u64;
        Ok(())
    }

    /// Ends the scan: the plan, or why the edit cannot apply. The content
    /// hash is returned either way, for a freshness check that must come first.
    pub fn finish(mut self) -> (u128, Result<Plan, PlanError>) {
        let hash = self.hasher.finish();
        if let Err(e) = self.decoder.finish() {
            return (hash, Err(PlanError::Splice(SpliceError::NotText(e))));
        }
        let result = match self.starts.len() {
            0 => Err(PlanError::Splice(SpliceError::NotFound)),
            n if n > 1 && !self.edit.replace_all => {
                let mut lines = std::mem::take(&mut self.lines);
                lines.resize(n.min(11), 0);
                // Beyond the first few, only the count matters to the message.
                lines.extend(std::iter::repeat_n(0, n.saturating_sub(11)));
                Err(PlanError::Splice(SpliceError::Ambiguous(lines)))
            }
            _ => Ok(Plan {
                first_line: self.lines[0],
                starts: self.starts,
                old_len: self.edit.old_string.len() as u64,
                hash,
            }),
        };
        (hash, result)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::splice;

    /// Applies a plan to `file` the way a provider copies ranges.
    fn apply(file: &[u8], plan: &Plan, new: &str) -> Vec<u8> {
        let mut out = Vec::new();
        let mut at = 0;
        for &s in &plan.starts {
            out.extend_from_slice(&file[at..s as usize]);
            out.extend_from_slice(new.as_bytes());
            at = (s + plan.old_len) as usize;
        }
        out.extend_from_slice(&file[at..]);
        out
    }

    fn plan(file: &[u8], edit: &EditRequest, chunk: usize) -> Result<Plan, PlanError> {
        let mut p = Planner::new(edit)?;
        for c in file.chunks(chunk) {
            p.push(c)?;
        }
        p.finish().1
    }

    #[test]
    fn plans_agree_with_the_in_memory_splice_at_every_chunk_size() {
        let file: Vec<u8> = (0..300)
            .flat_map(|i| format!("line {i} ab✓ab\n").into_bytes())
            .collect();
        for (old, new, all) in [
            ("line 150 ", "L150 ", false),
            ("ab", "AB", true),
            ("✓ab\nline 2", "x", true),
            ("b\nl", "", true),
        ] {
            let edit = EditRequest::new(old, new, all);
            let whole = splice::apply(&file, &edit).unwrap();
            for chunk in [1, 2, 3, 5, 64, 1000, 1 << 20] {
                let p = plan(&file, &edit, chunk).unwrap();
                assert_eq!(apply(&file, &p, new), whole.bytes, "{old:?} chunk {chunk}");
                assert_eq!(p.first_line, whole.first_line, "{old:?} chunk {chunk}");
                assert_eq!(p.starts.len() as u32, whole.replacements);
            }
        }
    }

    #[test]
    fn errors_match_the_in_memory_splice() {
        let file = b"x = 1\ny = 2\nx = 1\n";
        for chunk in [1, 4, 100] {
            let e = plan(file, &EditRequest::new("x = 1", "z", false), chunk).unwrap_err();
            assert_eq!(e, PlanError::Splice(SpliceError::Ambiguous(vec![1, 3])));
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
}

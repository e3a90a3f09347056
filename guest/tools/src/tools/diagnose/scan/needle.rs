//! Verbatim search for texts across the chunks of a file.

use memchr::memmem;

/// One text searched verbatim across chunks: the line of its first occurrence.
#[derive(Debug)]
pub(in crate::tools::diagnose) struct Needle {
    pub(in crate::tools::diagnose) bytes: Vec<u8>,
    /// Its rarest byte, by a guess of byte frequencies in text, and where.
    pub(in crate::tools::diagnose) rare: u8,
    rare_at: usize,
    /// The last `len - 1` bytes seen, for occurrences across chunks.
    pub(in crate::tools::diagnose) carry: Vec<u8>,
    /// Line number of `carry[0]`.
    pub(in crate::tools::diagnose) carry_line: u64,
    pub(in crate::tools::diagnose) found: Option<u64>,
}

impl Needle {
    pub(in crate::tools::diagnose) fn new(bytes: &[u8]) -> Self {
        let (rare_at, rare) = bytes
            .iter()
            .copied()
            .enumerate()
            .min_by_key(|&(_, b)| commonness(b))
            .unwrap_or((0, 0));
        Needle {
            bytes: bytes.to_vec(),
            rare,
            rare_at,
            carry: Vec::new(),
            carry_line: 1,
            found: None,
        }
    }

    /// Searches the next chunk, whose first byte is on line `line` and
    /// whose end on line `end`. With `rare` as `(from, places)`, every
    /// place from `from` on of [`Needle::rare`] in the chunk is among
    /// `places` (in order): only those are tried there.
    pub(in crate::tools::diagnose) fn feed(
        &mut self,
        chunk: &[u8],
        line: u64,
        end: u64,
        rare: Option<(usize, &[usize])>,
    ) {
        let n = self.bytes.len();
        if self.found.is_some() || n == 0 {
            return;
        }
        let lines_in = |b: &[u8]| memchr::memchr_iter(b'\n', b).count() as u64;
        if !self.carry.is_empty() {
            let take = (n - 1).min(chunk.len());
            let mut joined = Vec::with_capacity(self.carry.len() + take);
            joined.extend_from_slice(&self.carry);
            joined.extend_from_slice(&chunk[..take]);
            if let Some(at) = memmem::find(&joined, &self.bytes)
                && at < self.carry.len()
            {
                self.found = Some(self.carry_line + lines_in(&joined[..at]));
                return;
            }
        }
        let first = match rare {
            None => memmem::find(chunk, &self.bytes),
            Some((from, places)) => {
                let head = &chunk[..(from + n - 1).min(chunk.len())];
                memmem::find(head, &self.bytes)
                    .filter(|&at| at < from)
                    .or_else(|| {
                        places
                            .iter()
                            .filter_map(|&p| p.checked_sub(self.rare_at))
                            .filter(|&at| at >= from)
                            .find(|&at| chunk[at..].starts_with(&self.bytes))
                    })
            }
        };
        if let Some(at) = first {
            self.found = Some(line + lines_in(&chunk[..at]));
            return;
        }
        let keep = n - 1;
        if chunk.len() >= keep {
            let from = chunk.len() - keep;
            self.carry.clear();
            self.carry.extend_from_slice(&chunk[from..]);
            self.carry_line = end - lines_in(&chunk[from..]);
        } else {
            self.carry.extend_from_slice(chunk);
            let drop = self.carry.len().saturating_sub(keep);
            self.carry_line += lines_in(&self.carry[..drop]);
            self.carry.drain(..drop);
        }
    }
}

/// How common byte `b` is in text and code, roughly (lower is rarer).
fn commonness(b: u8) -> u8 {
    match b {
        b' ' => 255,
        b'\n' => 250,
        b'e' | b't' | b'a' | b'o' | b'i' | b'n' | b's' | b'r' => 240,
        b'a'..=b'z' => 220,
        b'\t' => 200,
        b'(' | b')' | b',' | b';' | b'.' | b'_' | b'=' | b'"' | b'\'' | b'-' => 180,
        b'0'..=b'9' => 150,
        b'A'..=b'Z' => 120,
        0x21..=0x7e => 100,
        _ => 50,
    }
}

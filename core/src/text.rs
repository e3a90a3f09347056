//! Decoding file bytes into model-facing text, whole or in chunks, and the
//! content hash providers put into their versions.
//!
//! Text is UTF-8 without NUL bytes; a leading byte order mark is not part of
//! the text (it stays in the file, see [`crate::splice`]).

use std::fmt;

/// The UTF-8 byte order mark.
pub const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Why bytes are not text, and where (byte offset in the file).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotText {
    /// Byte offset of the first offending byte.
    pub offset: u64,
    /// True for a NUL byte, false for invalid UTF-8.
    pub nul: bool,
}

impl fmt::Display for NotText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.nul {
            write!(f, "binary: NUL byte at offset {}", self.offset)
        } else {
            write!(f, "invalid UTF-8 at offset {}", self.offset)
        }
    }
}

/// Length of a leading BOM in `bytes` (0 or 3).
pub fn bom_len(bytes: &[u8]) -> usize {
    if bytes.starts_with(BOM) { BOM.len() } else { 0 }
}

/// Decodes a whole file: strips a leading BOM, rejects NUL bytes and invalid UTF-8.
pub fn decode(bytes: &[u8]) -> Result<&str, NotText> {
    let skip = bom_len(bytes);
    check(&bytes[skip..], skip as u64)
}

fn check(bytes: &[u8], base: u64) -> Result<&str, NotText> {
    if let Some(at) = memchr::memchr(0, bytes) {
        return Err(NotText {
            offset: base + at as u64,
            nul: true,
        });
    }
    std::str::from_utf8(bytes).map_err(|e| NotText {
        offset: base + e.valid_up_to() as u64,
        nul: false,
    })
}

/// Incremental version of [`decode`] for chunked reads: carries a character
/// split across chunk boundaries to the next chunk.
#[derive(Debug, Default)]
pub struct StreamDecoder {
    pending: Vec<u8>,
    offset: u64,
    started: bool,
}

impl StreamDecoder {
    /// A decoder at the start of a file.
    pub fn new() -> Self {
        Self::default()
    }

    /// Bytes held back from earlier chunks (at most 3).
    pub fn pending(&self) -> usize {
        self.pending.len()
    }

    /// Decodes `chunk` (the next bytes of the file), returning the text of
    /// every complete character so far.
    pub fn push(&mut self, chunk: &[u8]) -> Result<String, NotText> {
        let mut buf = std::mem::take(&mut self.pending);
        buf.extend_from_slice(chunk);
        let mut start = 0;
        if !self.started {
            if buf.len() < BOM.len() && BOM.starts_with(&buf) {
                self.pending = buf; // too short to tell a BOM from text yet
                return Ok(String::new());
            }
            self.started = true;
            start = bom_len(&buf);
            self.offset += start as u64;
        }
        let body = &buf[start..];
        let complete = match std::str::from_utf8(body) {
            Ok(_) => body.len(),
            // An incomplete character at the very end waits for the next chunk.
            Err(e) if e.error_len().is_none() => e.valid_up_to(),
            Err(e) => {
                return Err(NotText {
                    offset: self.offset + e.valid_up_to() as u64,
                    nul: false,
                });
            }
        };
        check(&body[..complete], self.offset)?;
        self.pending = body[complete..].to_vec();
        self.offset += complete as u64;
        // Validated just above.
        Ok(String::from_utf8(body[..complete].to_vec()).expect("validated UTF-8"))
    }

    /// Ends the stream: a character cut off by the end of the file is invalid.
    pub fn finish(&mut self) -> Result<(), NotText> {
        if !self.started {
            self.started = true;
            // A file shorter than a BOM that looked like its prefix.
            let rest = std::mem::take(&mut self.pending);
            check(&rest, 0)?;
            return Ok(());
        }
        if self.pending.is_empty() {
            Ok(())
        } else {
            Err(NotText {
                offset: self.offset,
                nul: false,
            })
        }
    }
}

/// The content hash providers put into versions: xxh3-128 of the raw bytes.
pub fn content_hash(bytes: &[u8]) -> u128 {
    xxhash_rust::xxh3::xxh3_128(bytes)
}

/// Streaming form of [`content_hash`].
#[derive(Clone, Default)]
pub struct ContentHasher(xxhash_rust::xxh3::Xxh3Default);

impl ContentHasher {
    /// A hasher over no bytes yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds the next bytes.
    pub fn update(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    /// The hash of everything fed so far.
    pub fn finish(&self) -> u128 {
        self.0.digest128()
    }
}

impl fmt::Debug for ContentHasher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ContentHasher")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decode_strips_bom_and_rejects_binary() {
        assert_eq!(decode(b"\xEF\xBB\xBFhi").unwrap(), "hi");
        assert_eq!(
            decode(b"a\0b").unwrap_err(),
            NotText {
                offset: 1,
                nul: true
            }
        );
        assert_eq!(
            decode(b"ab\xFF").unwrap_err(),
            NotText {
                offset: 2,
                nul: false
            }
        );
    }

    #[test]
    fn stream_decoder_matches_whole_decode_at_every_split() {
        let file = "\u{feff}héllo wörld ✓ 𝄞\r\nend".as_bytes();
        for chunk in 1..file.len() {
            let mut d = StreamDecoder::new();
            let mut out = String::new();
            for piece in file.chunks(chunk) {
                out.push_str(&d.push(piece).unwrap());
            }
            d.finish().unwrap();
            assert_eq!(out, decode(file).unwrap(), "chunk size {chunk}");
        }
    }

    #[test]
    fn stream_decoder_reports_truncated_character_and_nul() {
        let mut d = StreamDecoder::new();
        assert_eq!(d.push(b"ab\xE2\x9C").unwrap(), "ab");
        assert_eq!(d.finish().unwrap_err().offset, 2);
        let mut d = StreamDecoder::new();
        d.push(b"abc").unwrap();
        assert_eq!(
            d.push(b"d\0").unwrap_err(),
            NotText {
                offset: 4,
                nul: true
            }
        );
    }

    #[test]
    fn short_files_that_look_like_a_bom_prefix() {
        let mut d = StreamDecoder::new();
        assert_eq!(d.push(b"\xEF").unwrap(), "");
        assert!(d.finish().is_err());
        let mut d = StreamDecoder::new();
        assert_eq!(d.push(b"\xEF\xBB").unwrap(), "");
        assert_eq!(d.push(b"\xBFx").unwrap(), "x");
        d.finish().unwrap();
    }
}

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

/// The text with every CRLF folded to LF, the way an edit compares text;
/// borrowed when it has no CR. Every comparison that sees CRLF as LF (the
/// splice, the diff of an answer, the diagnosis of a miss) folds with this.
pub fn fold_crlf(s: &str) -> std::borrow::Cow<'_, str> {
    if memchr::memchr(b'\r', s.as_bytes()).is_none() {
        return s.into();
    }
    s.replace("\r\n", "\n").into()
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
    match simdutf8::basic::from_utf8(bytes) {
        Ok(text) => Ok(text),
        Err(_) => Err(not_utf8(bytes, base)),
    }
}

/// Where `bytes`, known not to be UTF-8, stop being it: the validator that
/// knows where is slower, and only the error needs it.
#[cold]
fn not_utf8(bytes: &[u8], base: u64) -> NotText {
    NotText {
        offset: base + std::str::from_utf8(bytes).map_or_else(|e| e.valid_up_to(), str::len) as u64,
        nul: false,
    }
}

/// Like [`decode`], but takes the bytes by value and returns them as the
/// text without copying (one validation pass; a BOM costs one move).
pub fn decode_owned(mut bytes: Vec<u8>) -> Result<String, NotText> {
    let skip = bom_len(&bytes);
    bytes.drain(..skip);
    into_text(bytes, skip as u64)
}

/// `bytes` as text, validated once: no NUL byte (reported first, as by
/// [`decode`]: a binary file is called binary), and UTF-8. `base` is the
/// file offset of `bytes[0]`, for the error.
fn into_text(bytes: Vec<u8>, base: u64) -> Result<String, NotText> {
    if let Some(at) = memchr::memchr(0, &bytes) {
        return Err(NotText {
            offset: base + at as u64,
            nul: true,
        });
    }
    if simdutf8::basic::from_utf8(&bytes).is_err() {
        return Err(not_utf8(&bytes, base));
    }
    // SAFETY: simdutf8 just found `bytes` to be UTF-8; `String::from_utf8`
    // would validate them again, with std's slower validator.
    Ok(unsafe { String::from_utf8_unchecked(bytes) })
}

/// Length of an incomplete UTF-8 sequence at the end of `bytes` (0 to 3):
/// the bytes to carry over to the next chunk.
fn incomplete_tail(bytes: &[u8]) -> usize {
    for back in 1..=bytes.len().min(4) {
        let b = bytes[bytes.len() - back];
        if b & 0xC0 != 0x80 {
            let needed = match b {
                0xC0..=0xDF => 2,
                0xE0..=0xEF => 3,
                0xF0..=0xF7 => 4,
                _ => 1,
            };
            return if needed > back { back } else { 0 };
        }
    }
    0
}

/// Incremental version of [`decode`] for chunked reads: carries a character
/// split across chunk boundaries to the next chunk. Each byte is validated
/// once and decoded text is handed out without copying.
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

    /// A decoder starting `offset` bytes into a file's text (past any BOM),
    /// at a character boundary.
    pub fn resume(offset: u64) -> Self {
        StreamDecoder {
            pending: Vec::new(),
            offset,
            started: true,
        }
    }

    /// Bytes held back from earlier chunks (at most 3).
    pub fn pending(&self) -> usize {
        self.pending.len()
    }

    /// A buffer for the next read, holding the bytes carried over from the
    /// previous chunk; append the newly read bytes and pass it to [`Self::decode`].
    pub fn begin(&mut self, capacity: usize) -> Vec<u8> {
        self.begin_in(Vec::with_capacity(capacity + self.pending.len()))
    }

    /// [`Self::begin`] into `buf` (emptied), reusing its allocation.
    pub fn begin_in(&mut self, mut buf: Vec<u8>) -> Vec<u8> {
        buf.clear();
        buf.append(&mut self.pending);
        buf
    }

    /// Decodes a buffer made by [`Self::begin`] plus new bytes, returning the
    /// text of every complete character (without copying it).
    pub fn decode(&mut self, mut buf: Vec<u8>) -> Result<String, NotText> {
        if !self.started {
            if buf.len() < BOM.len() && BOM.starts_with(&buf) {
                self.pending = buf; // too short to tell a BOM from text yet
                return Ok(String::new());
            }
            self.started = true;
            let skip = bom_len(&buf);
            buf.drain(..skip);
            self.offset += skip as u64;
        }
        let keep = buf.len() - incomplete_tail(&buf);
        self.pending = buf.split_off(keep);
        let text = into_text(buf, self.offset)?;
        self.offset += text.len() as u64;
        Ok(text)
    }

    /// Decodes the next chunk of the file (copying it once).
    pub fn push(&mut self, chunk: &[u8]) -> Result<String, NotText> {
        let mut buf = self.begin(chunk.len());
        buf.extend_from_slice(chunk);
        self.decode(buf)
    }

    /// Like [`Self::push`] for a chunk the caller found free of NUL bytes,
    /// validating only: nothing is copied and no text is made.
    pub fn check_nul_free(&mut self, chunk: &[u8]) -> Result<(), NotText> {
        if !self.started || chunk.len() < 4 {
            return self.push(chunk).map(drop);
        }
        // The bytes that may finish a character cut off by the last chunk.
        let lead = chunk
            .iter()
            .take(3)
            .take_while(|&&b| b & 0xC0 == 0x80)
            .count();
        if !self.pending.is_empty() || lead > 0 {
            let mut head = std::mem::take(&mut self.pending);
            head.extend_from_slice(&chunk[..lead]);
            let valid = std::str::from_utf8(&head).map_err(|e| NotText {
                offset: self.offset + e.valid_up_to() as u64,
                nul: false,
            })?;
            self.offset += valid.len() as u64;
        }
        let rest = &chunk[lead..];
        let keep = rest.len() - incomplete_tail(rest);
        let valid = std::str::from_utf8(&rest[..keep]).map_err(|e| NotText {
            offset: self.offset + e.valid_up_to() as u64,
            nul: false,
        })?;
        self.offset += valid.len() as u64;
        self.pending = rest[keep..].to_vec();
        Ok(())
    }

    /// Ends the stream: a character cut off by the end of the file is invalid.
    pub fn finish(&mut self) -> Result<(), NotText> {
        let rest = std::mem::take(&mut self.pending);
        if !self.started {
            // A file shorter than a BOM that looked like its prefix.
            self.started = true;
            return into_text(rest, 0).map(drop);
        }
        if rest.is_empty() {
            Ok(())
        } else {
            Err(NotText {
                offset: self.offset,
                nul: false,
            })
        }
    }
}

/// Line feeds in `bytes`. In the component, WebAssembly SIMD keeps a count
/// per byte lane for up to 248 vectors before adding the lanes up, where
/// memchr's count adds up a bit mask for every vector (a 100 MiB first read
/// went from 26.8 to 24.4–25.5 ms with it).
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
pub fn count_newlines(bytes: &[u8]) -> usize {
    use core::arch::wasm32::{u8x16_add, u8x16_eq, u8x16_splat, u8x16_sub, v128, v128_load};
    let newline = u8x16_splat(b'\n');
    // 128 bytes a step, their matches summed as a tree before they reach the
    // lanes: Cranelift keeps the lanes on the stack, so one update per step.
    let steps = bytes.chunks_exact(128);
    let rest = steps.remainder();
    let mut count = 0;
    let mut lanes = u8x16_splat(0);
    for (k, step) in steps.enumerate() {
        let eq = |i: usize| {
            // SAFETY: `step` is 128 readable bytes, so 16 from `16 * i`
            // (i < 8); a WebAssembly load needs no alignment.
            let v = unsafe { v128_load(step.as_ptr().add(16 * i).cast::<v128>()) };
            // A match is all ones, -1.
            u8x16_eq(v, newline)
        };
        let sum = |a: v128, b: v128| u8x16_add(a, b);
        let matches = sum(
            sum(sum(eq(0), eq(1)), sum(eq(2), eq(3))),
            sum(sum(eq(4), eq(5)), sum(eq(6), eq(7))),
        );
        lanes = u8x16_sub(lanes, matches);
        // At most 8 a step per lane: add the lanes up before 255.
        if k % 31 == 30 {
            count += lane_sum(lanes);
            lanes = u8x16_splat(0);
        }
    }
    count + lane_sum(lanes) + memchr::memchr_iter(b'\n', rest).count()
}

/// The sum of the 16 byte lanes of `lanes`.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
fn lane_sum(lanes: core::arch::wasm32::v128) -> usize {
    use core::arch::wasm32::{
        u16x8_extadd_pairwise_u8x16, u32x4_extadd_pairwise_u16x8, u32x4_extract_lane,
    };
    let sums = u32x4_extadd_pairwise_u16x8(u16x8_extadd_pairwise_u8x16(lanes));
    (u32x4_extract_lane::<0>(sums)
        + u32x4_extract_lane::<1>(sums)
        + u32x4_extract_lane::<2>(sums)
        + u32x4_extract_lane::<3>(sums)) as usize
}

/// Line feeds in `bytes` (memchr's count, with AVX2 where the CPU has it).
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
pub fn count_newlines(bytes: &[u8]) -> usize {
    memchr::memchr_iter(b'\n', bytes).count()
}

/// Bytes counted at a time on the way to a line: a count runs several
/// times faster than finding each line feed, and this many stay in cache
/// for the find in the block that holds the one sought.
const COUNT_BLOCK: usize = 16 * 1024;

/// Where the `n`th line feed of `bytes` is (`n` ≥ 1), or how many there are
/// when fewer.
pub fn nth_newline(bytes: &[u8], n: u64) -> Result<usize, u64> {
    let mut seen = 0;
    for (k, block) in bytes.chunks(COUNT_BLOCK).enumerate() {
        let here = count_newlines(block) as u64;
        if seen + here >= n {
            let nth = (n - seen - 1) as usize; // < here, a count of bytes
            let at = memchr::memchr_iter(b'\n', block).nth(nth);
            return Ok(k * COUNT_BLOCK + at.expect("the block has that many line feeds"));
        }
        seen += here;
    }
    Err(seen)
}

/// `s` as one line of model-facing output: control characters (newline,
/// CR, ESC, BEL, NEL, …) and the Unicode line and paragraph separators are
/// written as Rust escapes (`\n`, `\u{1b}`), so a crafted file name cannot
/// fake lines of a tool's answer. Every name a tool prints goes through here.
pub fn one_line(s: &str) -> std::borrow::Cow<'_, str> {
    let breaks = |c: char| c.is_control() || matches!(c, '\u{2028}' | '\u{2029}');
    // Printable ASCII, what nearly every message and path is, has none: a
    // byte test without an early exit, which the compiler runs many bytes
    // at a time, where decoding each character made this a twelfth of a
    // refused call in the component.
    let printable = s
        .bytes()
        .fold(true, |all, b| all & (b.wrapping_sub(0x20) < 0x5f));
    if printable || !s.chars().any(breaks) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if breaks(c) {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// The content hash providers put into versions: xxh3-128 of the raw bytes.
pub fn content_hash(bytes: &[u8]) -> u128 {
    #[cfg(target_family = "wasm")]
    return xxhash_rust::xxh3::xxh3_128(bytes);
    #[cfg(not(target_family = "wasm"))]
    return twox_hash::XxHash3_128::oneshot(bytes);
}

/// Streaming form of [`content_hash`].
#[derive(Clone)]
pub struct ContentHasher(
    #[cfg(target_family = "wasm")] xxhash_rust::xxh3::Xxh3Default,
    #[cfg(not(target_family = "wasm"))] twox_hash::XxHash3_128,
);

impl Default for ContentHasher {
    fn default() -> Self {
        Self::new()
    }
}

impl ContentHasher {
    /// A hasher over no bytes yet.
    pub fn new() -> Self {
        #[cfg(target_family = "wasm")]
        return ContentHasher(xxhash_rust::xxh3::Xxh3Default::new());
        #[cfg(not(target_family = "wasm"))]
        return ContentHasher(twox_hash::XxHash3_128::new());
    }

    /// Feeds the next bytes.
    pub fn update(&mut self, bytes: &[u8]) {
        #[cfg(target_family = "wasm")]
        self.0.update(bytes);
        #[cfg(not(target_family = "wasm"))]
        self.0.write(bytes);
    }

    /// The hash of everything fed so far.
    pub fn finish(&self) -> u128 {
        #[cfg(target_family = "wasm")]
        return self.0.digest128();
        #[cfg(not(target_family = "wasm"))]
        return self.0.finish_128();
    }
}

impl fmt::Debug for ContentHasher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ContentHasher")
    }
}

/// A writer that hashes what passes through it, for versions of content
/// that is streamed out and never held whole.
#[derive(Debug)]
pub struct HashingWriter<W> {
    inner: W,
    hasher: ContentHasher,
}

impl<W: std::io::Write> HashingWriter<W> {
    /// Wraps `inner`.
    pub fn new(inner: W) -> Self {
        HashingWriter {
            inner,
            hasher: ContentHasher::new(),
        }
    }

    /// The wrapped writer.
    pub fn get_mut(&mut self) -> &mut W {
        &mut self.inner
    }

    /// The content hash of everything written, and the writer.
    pub fn finish(self) -> (u128, W) {
        (self.hasher.finish(), self.inner)
    }
}

impl<W: std::io::Write> std::io::Write for HashingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nth_line_feed_is_found_across_count_blocks() {
        let text: String = (0..9000).map(|i| format!("{i}\n")).collect();
        let bytes = text.as_bytes();
        let feeds: Vec<usize> = memchr::memchr_iter(b'\n', bytes).collect();
        for n in [1, 2, 3000, 3001, 4095, 8999, 9000] {
            assert_eq!(
                nth_newline(bytes, n),
                Ok(feeds[n as usize - 1]),
                "line feed {n}"
            );
        }
        assert_eq!(nth_newline(bytes, 9001), Err(9000));
        assert_eq!(nth_newline(bytes, u64::MAX), Err(9000));
        assert_eq!(nth_newline(b"", 1), Err(0));
    }

    /// Every character, alone and inside printable text, is kept or escaped
    /// as the character test says, whichever path the text takes.
    #[test]
    fn one_line_escapes_exactly_the_breaks() {
        let breaks = |c: char| c.is_control() || matches!(c, '\u{2028}' | '\u{2029}');
        for c in (0..0x3000u32).filter_map(char::from_u32) {
            for s in [c.to_string(), format!("a/b {c} c.txt")] {
                let expected: String = s
                    .chars()
                    .flat_map(|d| {
                        let escaped: Vec<char> = if breaks(d) {
                            d.escape_default().collect()
                        } else {
                            vec![d]
                        };
                        escaped
                    })
                    .collect();
                let got = one_line(&s);
                assert_eq!(got, expected, "{:?}", c);
                assert_eq!(matches!(got, std::borrow::Cow::Borrowed(_)), !breaks(c));
            }
        }
    }

    /// The component hashes with xxhash-rust, hosts with twox-hash: the two
    /// must agree on every length and every way of feeding the bytes.
    #[test]
    fn both_hash_crates_give_the_same_content_hash() {
        let bytes: Vec<u8> = (0..300_000u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        for len in [
            0, 1, 3, 16, 17, 128, 129, 240, 241, 1024, 1025, 65_536, 300_000,
        ] {
            let expected = xxhash_rust::xxh3::xxh3_128(&bytes[..len]);
            assert_eq!(content_hash(&bytes[..len]), expected, "length {len}");
            for piece in [1, 7, 64, 4096] {
                let mut h = ContentHasher::new();
                bytes[..len].chunks(piece).for_each(|c| h.update(c));
                assert_eq!(h.finish(), expected, "length {len} in pieces of {piece}");
            }
        }
    }

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
    fn checking_agrees_with_decoding_at_every_split() {
        let files: [&[u8]; 4] = [
            "\u{feff}héllo wörld ✓ 𝄞\nend of the line ✓✓".as_bytes(),
            b"abcdef\xE2\x9C\x93\x80ghij",
            b"abcdefgh\xF0\x9D\x84klmnop",
            b"ab\xC3\xA9cdefg\xE2\x9C",
        ];
        for file in files {
            for chunk in 1..file.len() {
                let (mut decoded, mut checked) = (StreamDecoder::new(), StreamDecoder::new());
                let mut want = Ok(());
                let mut got = Ok(());
                for piece in file.chunks(chunk) {
                    want = want.and_then(|()| decoded.push(piece).map(drop));
                    got = got.and_then(|()| checked.check_nul_free(piece));
                }
                want = want.and_then(|()| decoded.finish());
                got = got.and_then(|()| checked.finish());
                assert_eq!(got, want, "{file:?} chunk size {chunk}");
            }
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
    fn incomplete_tails() {
        assert_eq!(incomplete_tail(b"ab"), 0);
        assert_eq!(incomplete_tail("é".as_bytes()), 0);
        assert_eq!(incomplete_tail(&"é".as_bytes()[..1]), 1);
        assert_eq!(incomplete_tail(&"𝄞".as_bytes()[..3]), 3);
        assert_eq!(incomplete_tail(&"a✓".as_bytes()[..3]), 2);
        assert_eq!(incomplete_tail(b"\x80\x80"), 0); // invalid, left for validation
    }

    #[test]
    fn decode_owned_matches_decode() {
        // The last: a PNG header, invalid UTF-8 before its NUL byte.
        let png = b"\x89PNG\r\n\0\x01";
        for bytes in [
            &b"\xEF\xBB\xBFhi"[..],
            b"plain",
            b"a\0b",
            b"ab\xFF",
            b"",
            png,
        ] {
            assert_eq!(
                decode_owned(bytes.to_vec()),
                decode(bytes).map(str::to_owned)
            );
        }
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

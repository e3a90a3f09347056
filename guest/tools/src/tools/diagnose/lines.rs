//! The scan's pass over a chunk: its lines, and the words of each ASCII line
//! with their hashes, found 64 bytes at a time from bit masks (WebAssembly
//! SIMD in the component), without a loop per line or per byte.

use super::LINE_CAP;
use super::scan::{Features, LooseEnds, TokenIndex, word_hash};

/// One bit per byte of a 64-byte block.
#[derive(Clone, Copy, Debug, Default)]
struct Masks {
    /// Part of a word: an ASCII letter, digit or `_`.
    word: u64,
    /// A line feed.
    newline: u64,
    /// Not ASCII.
    high: u64,
    /// The byte looked for ([`Lines::new`]).
    rare: u64,
}

/// The masks of `block`.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
fn masks(block: &[u8; 64], rare: u8) -> Masks {
    use core::arch::wasm32::{
        u8x16_bitmask, u8x16_eq, u8x16_le, u8x16_splat, u8x16_sub, u64x2, v128_or,
    };
    let mut m = Masks::default();
    for (k, half) in block.chunks_exact(16).enumerate() {
        let (lo, hi) = half.split_at(8);
        let v = u64x2(
            lo.try_into().map_or(0, u64::from_le_bytes),
            hi.try_into().map_or(0, u64::from_le_bytes),
        );
        let lower = v128_or(v, u8x16_splat(0x20));
        let alpha = u8x16_le(u8x16_sub(lower, u8x16_splat(b'a')), u8x16_splat(25));
        let digit = u8x16_le(u8x16_sub(v, u8x16_splat(b'0')), u8x16_splat(9));
        let under = u8x16_eq(v, u8x16_splat(b'_'));
        let word = v128_or(v128_or(alpha, digit), under);
        let shift = 16 * k;
        m.word |= u64::from(u8x16_bitmask(word)) << shift;
        m.newline |= u64::from(u8x16_bitmask(u8x16_eq(v, u8x16_splat(b'\n')))) << shift;
        m.high |= u64::from(u8x16_bitmask(v)) << shift;
        m.rare |= u64::from(u8x16_bitmask(u8x16_eq(v, u8x16_splat(rare)))) << shift;
    }
    m
}

/// The masks of `block`, eight bytes at a time.
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
fn masks(block: &[u8; 64], rare: u8) -> Masks {
    use super::scan::{HIGH, ONES, word_at, word_bytes};
    // `0x80` in byte `i` becomes bit `i`.
    let gather = |x: u64| (x >> 7).wrapping_mul(0x0102_0408_1020_4080) >> 56;
    let mut m = Masks::default();
    for k in 0..8 {
        let x = word_at(block, 8 * k);
        let high = x & HIGH;
        // Bytes without their high bit: no carry crosses a byte below.
        let low = x & !HIGH;
        let nl = low ^ (ONES * u64::from(b'\n'));
        let newline = !(((nl & !HIGH) + !HIGH) | nl) & HIGH & !high;
        // Bytes equal to `rare`: zero bytes of the difference.
        let d = x ^ (ONES * u64::from(rare));
        let equal = !(((d & !HIGH) + !HIGH) | d) & HIGH;
        let shift = 8 * k;
        m.word |= gather(word_bytes(low) & !high) << shift;
        m.newline |= gather(newline) << shift;
        m.high |= gather(high) << shift;
        m.rare |= gather(equal) << shift;
    }
    m
}

/// The lines of a chunk, each with the features of an ASCII line of at
/// most [`LINE_CAP`] bytes.
pub(super) struct Lines<'a> {
    text: &'a str,
    /// Start of the next block.
    next: usize,
    /// Start of the current block.
    at: usize,
    /// Bytes of the current block not yet looked at where a word starts,
    /// where one ended (the byte after it), that are line feeds, that are
    /// not ASCII.
    starts: u64,
    ends: u64,
    newlines: u64,
    high: u64,
    /// The last byte of the previous block is part of a word.
    in_word: bool,
    /// Start of the word being read.
    word: usize,
    /// Start of the line being read.
    line: usize,
    /// The line being read is ASCII so far.
    ascii: bool,
    /// The byte whose places are kept (see [`Lines::next`]).
    rare: u8,
}

/// Places of the rare byte kept per chunk; past them a needle searches the
/// chunk itself.
pub(super) const RARE_PLACES: usize = 1 << 12;

impl<'a> Lines<'a> {
    /// The lines of `text`, keeping the places of the byte `rare` (none if
    /// 0), so a needle need not search the text again.
    pub(super) fn new(text: &'a str, rare: u8) -> Self {
        Lines {
            text,
            next: 0,
            at: 0,
            starts: 0,
            ends: 0,
            newlines: 0,
            high: 0,
            in_word: false,
            word: 0,
            line: 0,
            ascii: true,
            rare,
        }
    }

    /// The next line (without its line feed), and whether `f` holds its
    /// features (made with `ends` as [`Features::of`] makes them, and with
    /// [`Features::known`] counted in `index` if given); `None` once only
    /// text without a line feed is left. Appends to `places` the places of
    /// the rare byte in the blocks it reads, up to [`RARE_PLACES`] and one
    /// more.
    #[inline]
    pub(super) fn next(
        &mut self,
        f: &mut Features,
        ends: &LooseEnds,
        index: Option<&TokenIndex>,
        places: &mut Vec<usize>,
    ) -> Option<(&'a str, bool)> {
        f.clear();
        let bytes = self.text.as_bytes();
        let mut known = 0;
        loop {
            // The block's next line feed, and its bytes up to that one.
            let nl = self.newlines & self.newlines.wrapping_neg();
            let upto = if nl == 0 {
                u64::MAX
            } else {
                (nl << 1).wrapping_sub(1)
            };
            let mut words = self.ends & upto;
            self.ends &= !upto;
            while words != 0 {
                let end = words & words.wrapping_neg();
                words ^= end;
                // Starts and ends alternate: a start before this end is its
                // word's, else the word began in an earlier block.
                let start = self.starts & self.starts.wrapping_neg();
                if start != 0 && start < end {
                    self.starts ^= start;
                    self.word = self.at + start.trailing_zeros() as usize;
                }
                let e = self.at + end.trailing_zeros() as usize;
                if e - self.line <= LINE_CAP {
                    let h = word_hash(bytes, self.word, e);
                    if f.token(h) && index.is_some_and(|ix| ix.has(h)) {
                        known += 1;
                    }
                }
            }
            if self.high & upto != 0 {
                self.ascii = false;
            }
            self.high &= !upto;
            if nl != 0 {
                self.newlines ^= nl;
                let p = self.at + nl.trailing_zeros() as usize;
                let start = std::mem::replace(&mut self.line, p + 1);
                let scanned = std::mem::replace(&mut self.ascii, true) && p - start <= LINE_CAP;
                if scanned {
                    // Twins may have been counted: `known` is left unset.
                    if index.is_some() && !f.twins() {
                        f.known = Some(known);
                    }
                    // Most lines have no twins and no loose form to make.
                    if f.twins() || ends.admits(&bytes[start..p]) {
                        f.end_ascii(&bytes[start..p], Some(ends));
                    }
                }
                return Some((&self.text[start..p], scanned));
            }
            if self.starts != 0 {
                // A word runs into the next block.
                self.word = self.at + self.starts.trailing_zeros() as usize;
            }
            if self.next >= bytes.len() {
                return None;
            }
            self.at = self.next;
            self.next += 64;
            let mut padded = [0u8; 64];
            let block: &[u8; 64] = match bytes.get(self.at..self.next) {
                Some(b) => b.try_into().unwrap_or(&padded),
                None => {
                    padded[..bytes.len() - self.at].copy_from_slice(&bytes[self.at..]);
                    &padded
                }
            };
            let m = masks(block, self.rare);
            if m.rare != 0 && self.rare != 0 {
                let mut rare = m.rare;
                while rare != 0 && places.len() <= RARE_PLACES {
                    places.push(self.at + rare.trailing_zeros() as usize);
                    rare &= rare - 1;
                }
            }
            let before = (m.word << 1) | u64::from(self.in_word);
            self.starts = m.word & !before;
            self.ends = !m.word & before;
            self.in_word = m.word >> 63 != 0;
            self.newlines = m.newline;
            self.high = m.high;
        }
    }

    /// The text after the last line feed.
    pub(super) fn rest(&self) -> &'a str {
        &self.text[self.line..]
    }
}

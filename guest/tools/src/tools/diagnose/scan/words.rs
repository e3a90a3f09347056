//! Hashes of lines and words, and the word scan over ASCII bytes.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A hasher for keys that are already hashes.
#[derive(Default)]
pub(in crate::tools::diagnose) struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8) | u64::from(b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

pub(in crate::tools::diagnose) type IdMap<V> = HashMap<u64, V, BuildHasherDefault<IdHasher>>;

/// The hash of a word or a loose form: eight bytes at a time, each step
/// bijective, so distinct texts of up to eight bytes never collide.
pub(in crate::tools::diagnose) fn hash(bytes: &[u8]) -> u64 {
    hash_in(bytes, 0, bytes.len())
}

/// [`hash`] of `bytes[s..e]`, reading the last partial eight bytes as one
/// word from around them (a copy of a variable length would call memcpy, a
/// loop per byte costs the component an interruption check per byte).
#[inline]
pub(in crate::tools::diagnose) fn hash_in(bytes: &[u8], s: usize, e: usize) -> u64 {
    let mut h = (e - s) as u64;
    let mut at = s;
    while at + 8 <= e {
        h = mix(h ^ word_at(bytes, at));
        at += 8;
    }
    if at < e || s == e {
        h = mix(h ^ tail(bytes, at, e));
    }
    h
}

/// [`hash_in`] of a word; one of at most 16 bytes that ends at byte 8 or
/// later is read with a load or two around it.
#[inline]
pub(in crate::tools::diagnose) fn word_hash(bytes: &[u8], s: usize, e: usize) -> u64 {
    let len = e - s;
    if len > 16 || e < 8 || len == 0 {
        return hash_in(bytes, s, e);
    }
    if len <= 8 {
        return mix(len as u64 ^ (word_at(bytes, e - 8) >> (8 * (8 - len))));
    }
    let tail = word_at(bytes, e - 8) >> (8 * (16 - len));
    mix(mix(len as u64 ^ word_at(bytes, s)) ^ tail)
}

/// Eight bytes of `bytes` from `at`, little-endian.
#[inline]
pub(in crate::tools::diagnose) fn word_at(bytes: &[u8], at: usize) -> u64 {
    bytes
        .get(at..at + 8)
        .and_then(|b| b.try_into().ok())
        .map_or(0, u64::from_le_bytes)
}

/// `bytes[at..e]` (fewer than eight bytes) as a little-endian word, zeros above.
#[inline]
fn tail(bytes: &[u8], at: usize, e: usize) -> u64 {
    let n = e - at;
    if n == 0 {
        0
    } else if e >= 8 {
        word_at(bytes, e - 8) >> (8 * (8 - n))
    } else if at + 8 <= bytes.len() {
        word_at(bytes, at) & ((1u64 << (8 * n)) - 1)
    } else {
        bytes[at..e]
            .iter()
            .rev()
            .fold(0u64, |w, &b| (w << 8) | u64::from(b))
    }
}

#[inline]
fn mix(x: u64) -> u64 {
    let x = x.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    x ^ (x >> 29)
}

pub(in crate::tools::diagnose) fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

pub(in crate::tools::diagnose) const ONES: u64 = 0x0101_0101_0101_0101;
pub(in crate::tools::diagnose) const HIGH: u64 = 0x8080_8080_8080_8080;

/// `0x80` in each byte of `x` (eight ASCII bytes) that lies in `lo..=hi`.
fn in_range(x: u64, lo: u8, hi: u8) -> u64 {
    let at_least = x.wrapping_add(ONES * u64::from(0x80 - lo));
    let above = x.wrapping_add(ONES * u64::from(0x7f - hi));
    at_least & !above & HIGH
}

/// `0x80` in each byte of `x` (eight ASCII bytes) that is part of a word.
pub(in crate::tools::diagnose) fn word_bytes(x: u64) -> u64 {
    let under = x ^ (ONES * u64::from(b'_'));
    let is_under = !(((under & !HIGH) + !HIGH) | under) & HIGH;
    in_range(x, b'0', b'9') | in_range(x | (ONES * 0x20), b'a', b'z') | is_under
}

/// Calls `each(start, end)` for every word of an ASCII text, eight bytes at
/// a time (a loop per byte costs the component an interruption check per byte).
pub(in crate::tools::diagnose) fn ascii_words(bytes: &[u8], mut each: impl FnMut(usize, usize)) {
    let mut start = None;
    let mut prev = 0u64;
    let mut block = |at: usize, x: u64, start: &mut Option<usize>| {
        let m = word_bytes(x);
        // Bytes where a word starts or ends: they differ from the byte before.
        let mut flips = m ^ ((m << 8) | (prev >> 56));
        prev = m;
        while flips != 0 {
            let i = at + (flips.trailing_zeros() / 8) as usize;
            flips &= flips - 1;
            match start.take() {
                None => *start = Some(i),
                Some(s) => each(s, i),
            }
        }
    };
    let mut at = 0;
    while at + 8 <= bytes.len() {
        block(at, word_at(bytes, at), &mut start);
        at += 8;
    }
    if at < bytes.len() {
        block(at, tail(bytes, at, bytes.len()), &mut start);
    }
    if let Some(s) = start {
        each(s, bytes.len());
    }
}

/// ASCII whitespace as [`char::is_whitespace`] sees it.
pub(super) fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t'..=b'\r')
}

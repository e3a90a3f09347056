//! What the scan keeps of each line: its words and loose form ([`Features`]),
//! the words of `old_string` they are looked up in ([`TokenIndex`]), a ring
//! of recent lines, and verbatim search across chunks ([`Needle`]).

use memchr::memmem;
use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};

/// One text searched verbatim across chunks: the line of its first occurrence.
#[derive(Debug)]
pub(super) struct Needle {
    pub(super) bytes: Vec<u8>,
    /// Its rarest byte, by a guess of byte frequencies in text, and where.
    pub(super) rare: u8,
    rare_at: usize,
    /// The last `len - 1` bytes seen, for occurrences across chunks.
    pub(super) carry: Vec<u8>,
    /// Line number of `carry[0]`.
    pub(super) carry_line: u64,
    pub(super) found: Option<u64>,
}

impl Needle {
    pub(super) fn new(bytes: &[u8]) -> Self {
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
    pub(super) fn feed(
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

/// A hasher for keys that are already hashes.
#[derive(Default)]
pub(super) struct IdHasher(u64);

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

pub(super) type IdMap<V> = HashMap<u64, V, BuildHasherDefault<IdHasher>>;

/// The hash of a word or a loose form: eight bytes at a time, each step
/// bijective, so distinct texts of up to eight bytes never collide.
pub(super) fn hash(bytes: &[u8]) -> u64 {
    hash_in(bytes, 0, bytes.len())
}

/// [`hash`] of `bytes[s..e]`, reading the last partial eight bytes as one
/// word from around them (a copy of a variable length would call memcpy, a
/// loop per byte costs the component an interruption check per byte).
#[inline]
pub(super) fn hash_in(bytes: &[u8], s: usize, e: usize) -> u64 {
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
pub(super) fn word_hash(bytes: &[u8], s: usize, e: usize) -> u64 {
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
pub(super) fn word_at(bytes: &[u8], at: usize) -> u64 {
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

pub(super) fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

pub(super) const ONES: u64 = 0x0101_0101_0101_0101;
pub(super) const HIGH: u64 = 0x8080_8080_8080_8080;

/// `0x80` in each byte of `x` (eight ASCII bytes) that lies in `lo..=hi`.
fn in_range(x: u64, lo: u8, hi: u8) -> u64 {
    let at_least = x.wrapping_add(ONES * u64::from(0x80 - lo));
    let above = x.wrapping_add(ONES * u64::from(0x7f - hi));
    at_least & !above & HIGH
}

/// `0x80` in each byte of `x` (eight ASCII bytes) that is part of a word.
pub(super) fn word_bytes(x: u64) -> u64 {
    let under = x ^ (ONES * u64::from(b'_'));
    let is_under = !(((under & !HIGH) + !HIGH) | under) & HIGH;
    in_range(x, b'0', b'9') | in_range(x | (ONES * 0x20), b'a', b'z') | is_under
}

/// Calls `each(start, end)` for every word of an ASCII text, eight bytes at
/// a time (a loop per byte costs the component an interruption check per byte).
pub(super) fn ascii_words(bytes: &[u8], mut each: impl FnMut(usize, usize)) {
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
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t'..=b'\r')
}

/// What the loose forms of some lines start and end with: a file line whose
/// ends are not among them cannot have the same loose form, so the scan
/// skips it (ASCII lines only; others are always loosened).
#[derive(Debug)]
pub(super) struct LooseEnds {
    first: [bool; 256],
    last: [bool; 256],
}

impl Default for LooseEnds {
    fn default() -> Self {
        LooseEnds {
            first: [false; 256],
            last: [false; 256],
        }
    }
}

impl LooseEnds {
    /// Admits the loose form `loose`.
    pub(super) fn add(&mut self, loose: &str) {
        if let (Some(&a), Some(&z)) = (loose.as_bytes().first(), loose.as_bytes().last()) {
            self.first[usize::from(a)] = true;
            self.last[usize::from(z)] = true;
        }
    }

    /// Whether the ASCII line `line` may loosen to an admitted form (a blank
    /// line always may: its loose form is empty and cheap).
    #[inline]
    pub(super) fn admits(&self, line: &[u8]) -> bool {
        let Some(a) = line.iter().position(|&b| !is_space(b)) else {
            return true;
        };
        if !self.first[usize::from(line[a])] {
            return false;
        }
        let z = line.iter().rposition(|&b| !is_space(b)).unwrap_or(a);
        self.last[usize::from(line[z])]
    }
}

/// What a line is compared by: its words, and its loose form.
#[derive(Clone, Debug, Default)]
pub(super) struct Features {
    /// Hashes of its words (runs of letters, digits and `_`), distinct: in
    /// the order of the line as the scan makes them, sorted by [`Features::full`].
    pub(super) tokens: Vec<u64>,
    /// The line with whitespace collapsed and trimmed, typographic quotes,
    /// dashes and ellipses folded to ASCII, invisible characters dropped.
    pub(super) loose: String,
    /// The hash of `loose`; `None` when the scan saw that it cannot match.
    pub(super) loose_hash: Option<u64>,
    /// Bits of the token hashes added, so most words need no search for a twin.
    seen: u64,
    /// `tokens` may hold twins (too many to search): sort and dedup them.
    twins: bool,
    /// How many of `tokens` the index of the only reading of `old_string`
    /// has, when the scan counted them (see [`super::lines::Lines::next`]).
    pub(super) known: Option<usize>,
}

/// Tokens searched for a twin; a longer line is deduplicated by sorting.
const SEARCHED: usize = 32;

impl Features {
    /// Forgets the last line.
    pub(super) fn clear(&mut self) {
        self.tokens.clear();
        self.loose.clear();
        self.loose_hash = None;
        self.seen = 0;
        self.twins = false;
        self.known = None;
    }

    /// Adds the hash of a word, unless the line already has it (then
    /// false; a long line may keep twins until [`Features::end_ascii`]).
    #[inline]
    pub(super) fn token(&mut self, h: u64) -> bool {
        let bit = 1u64 << (h >> 58);
        if self.seen & bit != 0 {
            if self.tokens.len() > SEARCHED {
                self.twins = true;
            } else if self.tokens.contains(&h) {
                return false;
            }
        }
        self.seen |= bit;
        self.tokens.push(h);
        true
    }

    /// Whether the tokens may hold twins (dropped by [`Features::end_ascii`]).
    pub(super) fn twins(&self) -> bool {
        self.twins
    }

    /// Ends an ASCII line `bytes` whose words were added: drops the twins
    /// left, and makes the loose form unless `ends` rules out a match.
    pub(super) fn end_ascii(&mut self, bytes: &[u8], ends: Option<&LooseEnds>) {
        if std::mem::take(&mut self.twins) {
            self.tokens.sort_unstable();
            self.tokens.dedup();
        }
        if ends.is_some_and(|e| !e.admits(bytes)) {
            self.loose_hash = None;
            return;
        }
        // ASCII folds nothing but whitespace runs and dash runs.
        let (mut space, mut dash) = (false, false);
        for &b in bytes {
            if is_space(b) {
                space = true;
                continue;
            }
            if b == b'-' && dash && !space {
                continue;
            }
            if std::mem::take(&mut space) && !self.loose.is_empty() {
                self.loose.push(' ');
            }
            self.loose.push(char::from(b));
            dash = b == b'-';
        }
        self.loose_hash = Some(hash(self.loose.as_bytes()));
    }

    /// Words and, unless `ends` rules out a match, the loose form's hash:
    /// what the scan needs of every line.
    pub(super) fn of(&mut self, line: &str, ends: Option<&LooseEnds>) {
        self.clear();
        let bytes = line.as_bytes();
        if line.is_ascii() {
            ascii_words(bytes, |s, e| {
                self.token(hash_in(bytes, s, e));
            });
            self.end_ascii(bytes, ends);
        } else {
            let mut start = None;
            for (i, c) in line.char_indices() {
                match (is_word(c), start) {
                    (true, None) => start = Some(i),
                    (false, Some(s)) => {
                        self.token(hash_in(bytes, s, i));
                        start = None;
                    }
                    _ => {}
                }
            }
            if let Some(s) = start {
                self.token(hash_in(bytes, s, bytes.len()));
            }
            if std::mem::take(&mut self.twins) {
                self.tokens.sort_unstable();
                self.tokens.dedup();
            }
            let loose = &mut self.loose;
            loosen(line, |piece| loose.push_str(piece));
            self.loose_hash = Some(hash(self.loose.as_bytes()));
        }
    }

    /// [`Features::of`] with the loose form always made and the tokens sorted.
    pub(super) fn full(line: &str) -> Self {
        let mut f = Features::default();
        f.of(line, None);
        f.tokens.sort_unstable();
        f
    }
}

/// Old lines by the hashes of their words: an open-addressed table on the
/// hashes' top bits, behind one bit per key, so a word of no old line costs
/// a bit test, rarely a probe or two.
#[derive(Debug)]
pub(super) struct TokenIndex {
    /// `(hash, start, end)` of each key's range in `lines`; `end == 0` marks
    /// an empty slot.
    slots: Vec<(u64, u32, u32)>,
    /// `64 - log2(slots.len())`.
    shift: u32,
    lines: Vec<u16>,
    /// Bit `h >> 58` of each key `h`: most other hashes need no probe.
    bits: u64,
}

impl TokenIndex {
    /// The index of `by_token`: the old lines (at least one) of each hash.
    pub(super) fn new(by_token: &IdMap<Vec<u16>>) -> Self {
        let size = (2 * by_token.len()).next_power_of_two().max(16);
        let mut index = TokenIndex {
            slots: vec![(0, 0, 0); size],
            shift: 64 - size.trailing_zeros(),
            lines: Vec::new(),
            bits: 0,
        };
        for (&h, ms) in by_token {
            let start = index.lines.len() as u32;
            index.lines.extend_from_slice(ms);
            let mut i = index.slot(h);
            while index.slots[i].2 != 0 {
                i = (i + 1) & (size - 1);
            }
            index.slots[i] = (h, start, index.lines.len() as u32);
            index.bits |= 1 << (h >> 58);
        }
        index
    }

    fn slot(&self, h: u64) -> usize {
        (h >> self.shift) as usize
    }

    /// Whether some old line has the word whose hash is `h`.
    #[inline]
    pub(super) fn has(&self, h: u64) -> bool {
        !self.get(h).is_empty()
    }

    /// The old lines with the word whose hash is `h`, in order.
    #[inline]
    pub(super) fn get(&self, h: u64) -> &[u16] {
        if self.bits & (1 << (h >> 58)) == 0 {
            return &[];
        }
        let mask = self.slots.len() - 1;
        let mut i = self.slot(h);
        loop {
            let (key, start, end) = self.slots[i];
            if end == 0 {
                return &[];
            }
            if key == h {
                return &self.lines[start as usize..end as usize];
            }
            i = (i + 1) & mask;
        }
    }
}

/// Whether `c` is invisible (zero-width characters and a stray BOM).
pub(super) fn invisible(c: char) -> bool {
    matches!(
        c,
        '\u{200B}' | '\u{200C}' | '\u{200D}' | '\u{2060}' | '\u{FEFF}'
    )
}

/// The loose form of `s` (see [`Features::loose`]), piece by piece.
pub(super) fn loosen(s: &str, mut out: impl FnMut(&str)) {
    let (mut space, mut dash, mut any) = (false, false, false);
    let mut emit = |piece: &str, is_dash: bool, space: &mut bool| {
        if is_dash && dash && !*space {
            return;
        }
        if std::mem::take(space) && any {
            out(" ");
        }
        out(piece);
        any = true;
        dash = is_dash;
    };
    let mut buf = [0u8; 4];
    for c in s.chars() {
        if c.is_whitespace() {
            space = true;
            continue;
        }
        match c {
            c if invisible(c) => {}
            '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' | '\u{2032}' => {
                emit("'", false, &mut space)
            }
            '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' | '\u{2033}' => {
                emit("\"", false, &mut space)
            }
            '-' | '\u{2010}' | '\u{2011}' | '\u{2012}' | '\u{2013}' | '\u{2014}' | '\u{2015}'
            | '\u{2212}' => emit("-", true, &mut space),
            '\u{2026}' => emit("...", false, &mut space),
            c => emit(c.encode_utf8(&mut buf), false, &mut space),
        }
    }
}

/// Number of values two sorted, distinct lists share.
pub(super) fn common(a: &[u64], b: &[u64]) -> usize {
    let (mut i, mut j, mut n) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                n += 1;
                i += 1;
                j += 1;
            }
        }
    }
    n
}

/// The last lines seen, by number.
#[derive(Debug)]
pub(super) struct Ring {
    pub(super) lines: VecDeque<String>,
    pub(super) cap: usize,
    /// Number of `lines[0]`.
    pub(super) first: u64,
}

impl Ring {
    pub(super) fn new(cap: usize) -> Self {
        Ring {
            lines: VecDeque::with_capacity(cap),
            cap,
            first: 1,
        }
    }

    pub(super) fn push(&mut self, no: u64, text: &str) {
        let mut slot = if self.lines.len() == self.cap {
            self.first += 1;
            self.lines.pop_front().unwrap_or_default()
        } else {
            String::new()
        };
        slot.clear();
        slot.push_str(text);
        self.lines.push_back(slot);
        debug_assert_eq!(self.first + self.lines.len() as u64 - 1, no);
    }

    pub(super) fn get(&self, no: u64) -> Option<&str> {
        let i = no.checked_sub(self.first)? as usize;
        self.lines.get(i).map(String::as_str)
    }
}

//! What the scan keeps of each line: its words and loose form ([`Features`]),
//! the words of `old_string` they are looked up in ([`TokenIndex`]), a ring
//! of recent lines, and verbatim search across chunks ([`Needle`]).

mod needle;
mod words;

pub(super) use needle::Needle;
use std::collections::VecDeque;
use words::is_space;
/// The eight-bytes-at-a-time masks, where no SIMD does them (`lines.rs`).
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
pub(super) use words::{HIGH, ONES, word_at, word_bytes};
pub(super) use words::{IdMap, ascii_words, hash, hash_in, is_word, word_hash};

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

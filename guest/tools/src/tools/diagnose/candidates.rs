//! Candidate regions: every window of the file is scored against a reading
//! of `old_string` through a token index; the best few are kept and aligned
//! line by line with it.

use super::difference::Report;
use super::pasted::split_lines;
use super::scan::{Features, IdMap, LooseEnds, Ring, TokenIndex, common};
use super::{CANDIDATES, LINE_CAP, MAX_OLD_LINES, SLACK};
use std::collections::VecDeque;

/// One line of `old_string`, with where it may sit in a file line.
#[derive(Debug)]
pub(super) struct OldLine {
    pub(super) text: String,
    pub(super) features: Features,
    /// The match may start inside the file line (the first line).
    pub(super) start_free: bool,
    /// The match may end inside the file line (the last line, when
    /// `old_string` does not end with a line break).
    pub(super) end_free: bool,
}

impl OldLine {
    /// Whether `c` holds this line where a match would need it.
    pub(super) fn fits(&self, c: &str) -> bool {
        fits(&self.text, c, self.start_free, self.end_free)
    }

    pub(super) fn fits_loosely(&self, loose: &str) -> bool {
        self.features.loose.len() >= 3
            && fits(&self.features.loose, loose, self.start_free, self.end_free)
    }

    /// Similarity with a file line from shared words: Dice, averaged with
    /// coverage for a line that may be part of a file line.
    pub(super) fn word_similarity(&self, shared: usize, words: usize) -> f32 {
        let own = self.features.tokens.len();
        if own + words == 0 {
            return 0.0;
        }
        let dice = 2.0 * shared as f32 / (own + words) as f32;
        if (self.start_free || self.end_free) && own > 0 {
            0.5 * dice + 0.5 * shared as f32 / own as f32
        } else {
            dice
        }
    }
}

pub(super) fn fits(o: &str, c: &str, start_free: bool, end_free: bool) -> bool {
    match (start_free, end_free) {
        (false, false) => c == o,
        (true, false) => c.ends_with(o),
        (false, true) => c.starts_with(o),
        (true, true) => c.contains(o),
    }
}

/// A window of the file kept for the precise comparison.
#[derive(Debug)]
pub(super) struct Candidate {
    /// Line the window starts on.
    pub(super) start: u64,
    pub(super) score: f32,
    /// Number of `lines[0]` (a few lines before `start`).
    pub(super) first: u64,
    pub(super) lines: Vec<String>,
}

/// Scores every window of the file against one reading of `old_string`
/// and keeps the best few.
#[derive(Debug)]
pub(super) struct Matcher {
    pub(super) old: Vec<OldLine>,
    /// Lines in this reading of `old_string` (`old` holds at most [`MAX_OLD_LINES`]).
    pub(super) total: usize,
    pub(super) ends_nl: bool,
    pub(super) by_token: TokenIndex,
    pub(super) by_loose: IdMap<Vec<u16>>,
    /// Words shared with the current file line, per old line.
    pub(super) shared: Vec<u32>,
    /// The file line `shared` counts for, per old line.
    pub(super) stamp: Vec<u64>,
    pub(super) touched: Vec<u16>,
    /// Summed similarity of each live window, by start line modulo its length.
    pub(super) acc: Vec<f32>,
    /// Complete windows waiting for the lines after them.
    pub(super) pending: VecDeque<(u64, f32)>,
    pub(super) candidates: Vec<Candidate>,
    /// The lowest candidate score once [`CANDIDATES`] are kept, else 0.
    pub(super) floor: f32,
}

impl Matcher {
    pub(super) fn new(text: &str) -> Self {
        let (lines, ends_nl) = split_lines(text);
        let total = lines.len();
        let kept = total.min(MAX_OLD_LINES);
        let mut old = Vec::with_capacity(kept);
        let mut by_token: IdMap<Vec<u16>> = IdMap::default();
        let mut by_loose: IdMap<Vec<u16>> = IdMap::default();
        for (m, line) in lines.iter().take(kept).enumerate() {
            let mut cut = line.len().min(LINE_CAP);
            while !line.is_char_boundary(cut) {
                cut -= 1;
            }
            let features = Features::full(&line[..cut]);
            for &t in &features.tokens {
                by_token.entry(t).or_default().push(m as u16);
            }
            if let Some(h) = features.loose_hash {
                by_loose.entry(h).or_default().push(m as u16);
            }
            old.push(OldLine {
                text: line[..cut].to_owned(),
                features,
                start_free: m == 0,
                end_free: m + 1 == total && !ends_nl,
            });
        }
        Matcher {
            shared: vec![0; kept],
            stamp: vec![0; kept],
            acc: vec![0.0; kept.max(1)],
            old,
            total,
            ends_nl,
            by_token: TokenIndex::new(&by_token),
            by_loose,
            touched: Vec::new(),
            pending: VecDeque::new(),
            candidates: Vec::new(),
            floor: 0.0,
        }
    }

    /// Admits the loose forms of its lines into `ends`.
    pub(super) fn loose_ends(&self, ends: &mut LooseEnds) {
        for o in &self.old {
            ends.add(&o.features.loose);
        }
    }

    /// Scores file line `j` against every old line it shares something with
    /// and adds the scores to the windows that would align them.
    pub(super) fn on_line(&mut self, j: u64, f: &Features, ring: &Ring) {
        let k = self.old.len();
        if k == 0 {
            return;
        }
        if k == 1 {
            self.on_line_one(j, f, ring);
        } else {
            self.on_line_windows(j, f, ring);
        }
    }

    /// [`Matcher::on_line`] for any number of old lines.
    pub(super) fn on_line_windows(&mut self, j: u64, f: &Features, ring: &Ring) {
        let k = self.old.len();
        for &t in &f.tokens {
            for &m in self.by_token.get(t) {
                let m = m as usize;
                if self.stamp[m] != j {
                    self.stamp[m] = j;
                    self.shared[m] = 0;
                    self.touched.push(m as u16);
                }
                self.shared[m] += 1;
            }
        }
        if let Some(ms) = f.loose_hash.and_then(|h| self.by_loose.get(&h)) {
            for &m in ms {
                let m = m as usize;
                if self.stamp[m] != j {
                    self.stamp[m] = j;
                    self.shared[m] = 0;
                    self.touched.push(m as u16);
                }
            }
        }
        for &m in &self.touched {
            let m = m as usize;
            if j > m as u64 {
                let o = &self.old[m];
                let sim = if o.features.loose_hash == f.loose_hash {
                    1.0
                } else {
                    o.word_similarity(self.shared[m] as usize, f.tokens.len())
                };
                self.acc[((j - m as u64) % k as u64) as usize] += sim;
            }
        }
        self.touched.clear();

        if j >= k as u64 {
            let start = j + 1 - k as u64;
            let slot = (start % k as u64) as usize;
            let score = std::mem::take(&mut self.acc[slot]) / k as f32;
            // Once the candidates are full their lowest score only rises, and
            // a window at or below it is never kept: no need to wait for it.
            if score > self.floor {
                self.pending.push_back((start, score));
            }
        }
        while let Some(&(start, score)) = self.pending.front() {
            if start + (k + SLACK) as u64 - 1 > j {
                break;
            }
            self.pending.pop_front();
            self.offer(start, score, j, ring);
        }
    }

    /// [`Matcher::on_line`] for a single old line: each window is one file
    /// line, scored directly, with the same result to the bit.
    pub(super) fn on_line_one(&mut self, j: u64, f: &Features, ring: &Ring) {
        // Counted by the scan when this is the only reading.
        let shared = f
            .known
            .unwrap_or_else(|| f.tokens.iter().filter(|&&t| self.by_token.has(t)).count());
        let loose = f.loose_hash.is_some_and(|h| self.by_loose.contains_key(&h));
        if shared > 0 || loose {
            let o = &self.old[0];
            let sim = if o.features.loose_hash == f.loose_hash {
                1.0
            } else {
                o.word_similarity(shared, f.tokens.len())
            };
            if sim > self.floor {
                self.pending.push_back((j, sim));
            }
        }
        while let Some(&(start, score)) = self.pending.front() {
            if start + SLACK as u64 > j {
                break;
            }
            self.pending.pop_front();
            self.offer(start, score, j, ring);
        }
    }

    /// Keeps the window starting at `start` if it is among the best,
    /// with the lines around it (up to line `upto`).
    pub(super) fn offer(&mut self, start: u64, score: f32, upto: u64, ring: &Ring) {
        let k = self.old.len() as u64;
        let overlaps = |c: &Candidate| c.start.abs_diff(start) < k;
        if self
            .candidates
            .iter()
            .any(|c| overlaps(c) && c.score >= score)
        {
            return;
        }
        let worst = self
            .candidates
            .iter()
            .map(|c| c.score)
            .fold(f32::INFINITY, f32::min);
        let replaces = self.candidates.iter().any(overlaps);
        if !replaces && self.candidates.len() == CANDIDATES && score <= worst {
            return;
        }
        self.candidates.retain(|c| !overlaps(c));
        if self.candidates.len() == CANDIDATES
            && let Some(i) = (0..self.candidates.len()).min_by(|&a, &b| {
                self.candidates[a]
                    .score
                    .total_cmp(&self.candidates[b].score)
            })
        {
            self.candidates.remove(i);
        }
        let first = start.saturating_sub(SLACK as u64).max(1).max(ring.first);
        let last = (start + k - 1 + SLACK as u64).min(upto);
        let lines = (first..=last)
            .filter_map(|n| ring.get(n).map(str::to_owned))
            .collect();
        self.candidates.push(Candidate {
            start,
            score,
            first,
            lines,
        });
        if self.candidates.len() == CANDIDATES {
            self.floor = self
                .candidates
                .iter()
                .map(|c| c.score)
                .fold(f32::INFINITY, f32::min);
        }
    }

    /// Ends the scan: windows still waiting or cut off by the end of the file.
    pub(super) fn finish(&mut self, total: u64, ring: &Ring) {
        let k = self.old.len() as u64;
        if k == 0 || total == 0 {
            return;
        }
        while let Some((start, score)) = self.pending.pop_front() {
            self.offer(start, score, total, ring);
        }
        for start in (total + 2).saturating_sub(k).max(1)..=total {
            let score = std::mem::take(&mut self.acc[(start % k) as usize]) / k as f32;
            if score > 0.0 {
                self.offer(start, score, total, ring);
            }
        }
    }

    /// The best candidate, aligned with `old_string` and compared line by line.
    pub(super) fn report(&self) -> Option<Report> {
        let mut best: Option<Report> = None;
        for c in &self.candidates {
            if let Some(r) = self.align(c)
                && best.as_ref().is_none_or(|b| r.score > b.score)
            {
                best = Some(r);
            }
        }
        best
    }

    /// Aligns the old lines with a candidate's lines (old lines may be
    /// missing from the file and the file may have extra lines), then
    /// compares each aligned pair.
    pub(super) fn align(&self, cand: &Candidate) -> Option<Report> {
        const COST: f32 = 0.25;
        let (a, b) = (self.old.len(), cand.lines.len());
        if a == 0 || b == 0 {
            return None;
        }
        let feats: Vec<Features> = cand.lines.iter().map(|l| Features::full(l)).collect();
        let sim = |x: usize, y: usize| -> f32 {
            let o = &self.old[x];
            let (c, f) = (&cand.lines[y], &feats[y]);
            if o.fits(c) {
                1.0
            } else if o.features.loose_hash == f.loose_hash && o.features.loose == f.loose {
                0.97
            } else if (o.start_free || o.end_free) && o.fits_loosely(&f.loose) {
                0.95
            } else {
                0.9 * o.word_similarity(common(&o.features.tokens, &f.tokens), f.tokens.len())
            }
        };
        let w = b + 1;
        let mut sims = vec![0f32; a * b];
        for x in 0..a {
            for y in 0..b {
                sims[x * b + y] = sim(x, y);
            }
        }
        // dp[x][y]: best score of old[..x] against lines[..y]; lines before
        // the first pair are free.
        let mut dp = vec![0f32; (a + 1) * w];
        let mut step = vec![0u8; (a + 1) * w]; // 1 pair, 2 old line missing, 3 file line extra
        for x in 1..=a {
            dp[x * w] = dp[(x - 1) * w] - COST;
            step[x * w] = 2;
            for y in 1..=b {
                let pair = dp[(x - 1) * w + y - 1] + sims[(x - 1) * b + y - 1] - COST;
                let missing = dp[(x - 1) * w + y] - COST;
                let extra = dp[x * w + y - 1] - COST;
                let (best, s) = if pair >= missing && pair >= extra {
                    (pair, 1)
                } else if missing >= extra {
                    (missing, 2)
                } else {
                    (extra, 3)
                };
                dp[x * w + y] = best;
                step[x * w + y] = s;
            }
        }
        let mut y = (0..=b)
            .max_by(|&p, &q| dp[a * w + p].total_cmp(&dp[a * w + q]).then(q.cmp(&p)))
            .unwrap_or(b);
        let mut x = a;
        let mut pairs = Vec::new();
        let mut missing = Vec::new(); // (old line, file line before it)
        while x > 0 {
            match step[x * w + y] {
                1 => {
                    pairs.push((x - 1, y - 1));
                    x -= 1;
                    y -= 1;
                }
                3 => y -= 1,
                _ => {
                    missing.push((x - 1, y));
                    x -= 1;
                }
            }
        }
        pairs.reverse();
        missing.reverse();
        let (&(_, lo), &(_, hi)) = (pairs.first()?, pairs.last()?);
        let total: f32 = pairs.iter().map(|&(x, y)| sims[x * b + y]).sum();
        let span = hi - lo + 1;
        let mut r = Report {
            first: cand.first + lo as u64,
            last: cand.first + hi as u64,
            score: total / a.max(span) as f32,
            focus: None,
            ..Report::default()
        };
        for &(x, y) in &pairs {
            r.compare(&self.old[x], &cand.lines[y], cand.first + y as u64);
        }
        let paired: Vec<usize> = pairs.iter().map(|&(_, y)| y).collect();
        for y in lo..=hi {
            if !paired.contains(&y) {
                let no = cand.first + y as u64;
                r.note(no);
                r.extra.push((no, cand.lines[y].clone()));
            }
        }
        for (x, y) in missing {
            // Between file lines `y - 1` and `y` of the candidate.
            let at = cand.first + y as u64;
            r.note(at.saturating_sub(1).max(r.first));
            r.missing.push((at, self.old[x].text.clone()));
        }
        Some(r)
    }
}

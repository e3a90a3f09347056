//! What the model sees, and the collectors that keep only what will be shown:
//! the 100 newest glob paths and the first 250 grep lines in path order, with
//! totals for the footers. Every search path, portable or native, renders here,
//! and every path is printed through [`one_line`], so a name cannot fake lines.

use crate::budget::{Budget, Stopped};
use dsh_fs_core::text::one_line;
use std::cmp::Ordering;
use std::collections::{BTreeMap, BinaryHeap};
use std::fmt::Write;

/// Paths shown inline by glob.
pub const GLOB_LIMIT: usize = 100;
/// Matching lines shown inline by grep.
pub const GREP_LIMIT: usize = 250;
/// Bytes of one matching line shown before it is cut.
pub const LINE_BYTES: usize = 2000;

/// Orders root-relative paths the way the walk visits them: component by
/// component, bytewise (so `a/b` comes before `a.txt`).
pub fn path_order(a: &str, b: &str) -> Ordering {
    a.split('/').cmp(b.split('/'))
}

/// A path ordered by [`path_order`].
#[derive(Clone, Debug, PartialEq, Eq)]
struct PathKey(String);

impl Ord for PathKey {
    fn cmp(&self, other: &Self) -> Ordering {
        path_order(&self.0, &other.0)
    }
}

impl PartialOrd for PathKey {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// A matching line as shown: its 1-based number and its text, cut.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hit {
    /// 1-based line number.
    pub line: u64,
    /// The line without its ending, at most [`LINE_BYTES`] plus the cut marker.
    pub text: String,
}

impl Hit {
    /// A hit from the raw bytes of matching line `line` (its terminator included).
    pub fn new(line: u64, raw: &[u8]) -> Hit {
        let raw = raw.strip_suffix(b"\n").unwrap_or(raw);
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        let head = &raw[..raw.len().min(LINE_BYTES + 4)];
        let mut text = String::from_utf8_lossy(head).into_owned();
        if raw.len() > LINE_BYTES || lossy_len(head) > LINE_BYTES {
            let mut cut = LINE_BYTES.min(text.len());
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            let shown = text[..cut].len();
            let left = lossy_len(raw) - shown;
            text.truncate(cut);
            let _ = write!(text, "… [line cut: {left} more bytes]");
        }
        Hit { line, text }
    }
}

/// Length of `raw` once invalid bytes are replaced by U+FFFD.
fn lossy_len(raw: &[u8]) -> usize {
    raw.utf8_chunks()
        .map(|c| c.valid().len() + if c.invalid().is_empty() { 0 } else { 3 })
        .sum()
}

/// Grep results as they arrive, in any file order.
#[derive(Debug, Default)]
pub struct GrepCollector {
    kept: BTreeMap<PathKey, Vec<Hit>>,
    kept_lines: usize,
    matches: u64,
    files: u64,
}

impl GrepCollector {
    /// Adds one file's `matches` matching lines, the first of them in `hits`.
    pub fn add(&mut self, path: &str, hits: Vec<Hit>, matches: u64) {
        if matches == 0 {
            return;
        }
        self.matches += matches;
        self.files += 1;
        if hits.is_empty() {
            return;
        }
        self.kept_lines += hits.len();
        self.kept.insert(PathKey(path.to_owned()), hits);
        if self.kept_lines > GREP_LIMIT {
            self.prune();
        }
    }

    /// How many more lines a file found next in path order may show.
    pub fn room(&self) -> usize {
        GREP_LIMIT.saturating_sub(self.kept_lines)
    }

    fn prune(&mut self) {
        let mut seen = 0;
        self.kept.retain(|_, hits| {
            hits.truncate(GREP_LIMIT - seen);
            seen += hits.len();
            !hits.is_empty()
        });
        self.kept_lines = seen;
    }

    /// The model-facing text, with `budget`'s footers.
    pub fn render(&self, budget: &Budget) -> String {
        let mut out = String::new();
        if self.matches == 0 {
            out.push_str("No matches found");
        } else {
            let _ = write!(
                out,
                "Found {} in {}",
                count(self.matches, "match", "matches"),
                count(self.files, "file", "files")
            );
            for (path, hits) in &self.kept {
                let _ = write!(out, "\n\n{}:", one_line(&path.0));
                for hit in hits {
                    let _ = write!(out, "\n  Line {}: {}", hit.line, hit.text);
                }
            }
            let shown = self.kept_lines as u64;
            if self.matches > shown {
                let _ = write!(
                    out,
                    "\n\n(Showing the first {shown} of {} matching lines; {} left out. \
                     Narrow the pattern, path or include to see the rest.)",
                    self.matches,
                    self.matches - shown
                );
            }
        }
        footers(&mut out, budget);
        out
    }
}

/// One glob match: where it is and when it last changed.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Found {
    path: PathKey,
    modified: Option<u64>,
}

impl Ord for Found {
    /// Output order: newest first, unknown times last, then path order.
    fn cmp(&self, other: &Self) -> Ordering {
        output_order(
            (self.modified, &self.path.0),
            (other.modified, &other.path.0),
        )
    }
}

/// Newest first, unknown times last, then [`path_order`].
fn output_order(a: (Option<u64>, &str), b: (Option<u64>, &str)) -> Ordering {
    let newer = match (a.0, b.0) {
        (Some(a), Some(b)) => b.cmp(&a),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => Ordering::Equal,
    };
    newer.then_with(|| path_order(a.1, b.1))
}

impl PartialOrd for Found {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Glob results as they arrive: the [`GLOB_LIMIT`] first in output order.
#[derive(Debug, Default)]
pub struct GlobCollector {
    best: BinaryHeap<Found>,
    total: u64,
}

impl GlobCollector {
    /// Adds one matching file (its path is copied only when it is kept).
    pub fn add(&mut self, path: &str, modified: Option<u64>) {
        self.total += 1;
        if self.best.len() >= GLOB_LIMIT {
            let worst = self.best.peek().expect("the heap is full");
            if output_order((modified, path), (worst.modified, &worst.path.0)) != Ordering::Less {
                return;
            }
            self.best.pop();
        }
        self.best.push(Found {
            path: PathKey(path.to_owned()),
            modified,
        });
    }

    /// Merges another collector (parallel workers each keep their own).
    pub fn merge(&mut self, other: GlobCollector) {
        self.total += other.total;
        for found in other.best {
            self.total -= 1;
            self.add(&found.path.0, found.modified);
        }
    }

    /// The model-facing text, with `budget`'s footers.
    pub fn render(self, budget: &Budget) -> String {
        let total = self.total;
        let shown = self.best.into_sorted_vec();
        let mut out = String::new();
        if shown.is_empty() {
            out.push_str("No files found");
        }
        for (i, found) in shown.iter().enumerate() {
            if i > 0 {
                out.push('\n');
            }
            out.push_str(&one_line(&found.path.0));
        }
        if total > shown.len() as u64 {
            let _ = write!(
                out,
                "\n\n(Showing the {} newest of {total} files; {} left out. \
                 Narrow the pattern or path to see the rest.)",
                shown.len(),
                total - shown.len() as u64
            );
        }
        footers(&mut out, budget);
        out
    }
}

/// What the answer leaves out beyond the caps: entries that could not be
/// read, and a search that stopped early.
fn footers(out: &mut String, budget: &Budget) {
    match budget.skipped() {
        0 => {}
        1 => out.push_str("\n\n(1 directory or file could not be read and was left out.)"),
        n => {
            let _ = write!(
                out,
                "\n\n({n} directories or files could not be read and were left out.)"
            );
        }
    }
    match budget.stopped() {
        None => {}
        Some(Stopped::Budget(limit)) => {
            let _ = write!(
                out,
                "\n\n(Stopped early: the search used up its budget ({} s), so these results are \
                 partial. Narrow the path or pattern and retry.)",
                limit.as_secs()
            );
        }
        Some(Stopped::IgnoreRules(bytes)) => {
            let _ = write!(
                out,
                "\n\n(Stopped early: the .gitignore and .ignore files on one path hold more than \
                 the {} KiB of rules a search compiles at once, so these results are partial. \
                 Search below those directories, or shorten the ignore files.)",
                bytes >> 10
            );
        }
    }
}

fn count(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

//! How much one search may do: a wall-clock deadline and a cap on entries
//! visited plus bytes read. Shared by parallel workers; once spent it stays
//! spent, and the result says the search stopped early.

use dsh_fs_core::ErrorCode;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Default wall-clock limit of one search: well inside a host's default
/// 30-second call deadline, so a search stops early and says so instead of
/// being cut off. The tools and every native fast path use it.
pub const DEFAULT_TIME: Duration = Duration::from_secs(20);

/// Default work limit: entries visited plus bytes read (64 GiB).
pub const DEFAULT_WORK: u64 = 64 << 30;

/// Bytes of ignore files whose compiled rules may be held at once (those of
/// the directories being walked): a hostile rule can cost thousands of times
/// its bytes once compiled, so this bounds the walk's memory.
pub const MAX_LIVE_IGNORE_BYTES: u64 = 48 << 10;

/// A search's remaining allowance.
#[derive(Debug)]
pub struct Budget {
    start: Instant,
    time: Duration,
    work: u64,
    used: AtomicU64,
    spent: AtomicBool,
    ignore_held: AtomicU64,
    /// Whether the ignore rules, not time or work, spent it.
    by_rules: AtomicBool,
    /// Directories and files left out because they could not be read.
    skipped: AtomicU64,
}

/// Why a search stopped early.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stopped {
    /// It ran out of time (the limit) or of work.
    Budget(Duration),
    /// The ignore rules on one path were more than it may hold (bytes).
    IgnoreRules(u64),
}

impl Default for Budget {
    fn default() -> Self {
        Budget::new(DEFAULT_TIME, DEFAULT_WORK)
    }
}

impl Budget {
    /// A budget of `time` from now and `work` units (an entry or a byte each).
    pub fn new(time: Duration, work: u64) -> Budget {
        Budget {
            start: Instant::now(),
            time,
            work,
            used: AtomicU64::new(0),
            spent: AtomicBool::new(false),
            ignore_held: AtomicU64::new(0),
            by_rules: AtomicBool::new(false),
            skipped: AtomicU64::new(0),
        }
    }

    /// The budget of a search run inside a tool call on this thread: the
    /// default, or three quarters of the time the call has left when that is
    /// less, so the search stops and says so before the call is cut off.
    pub fn for_call() -> Budget {
        let time = dsh_fs_core::deadline::remaining()
            .map_or(DEFAULT_TIME, |left| (left * 3 / 4).min(DEFAULT_TIME));
        Budget::new(time, DEFAULT_WORK)
    }

    /// Counts one visited entry; false once the budget is spent.
    pub fn tick(&self) -> bool {
        self.charge(1)
    }

    /// Counts `units` of work; false once the budget is spent.
    pub fn charge(&self, units: u64) -> bool {
        if self.spent.load(Ordering::Relaxed) {
            return false;
        }
        let used = self.used.fetch_add(units, Ordering::Relaxed) + units;
        if used > self.work || self.start.elapsed() > self.time {
            self.spent.store(true, Ordering::Relaxed);
            return false;
        }
        true
    }

    /// Holds `bytes` of ignore rules; false, and the budget spent, when that
    /// would exceed [`MAX_LIVE_IGNORE_BYTES`].
    pub fn hold_ignore(&self, bytes: u64) -> bool {
        let held = self.ignore_held.fetch_add(bytes, Ordering::Relaxed) + bytes;
        if held > MAX_LIVE_IGNORE_BYTES {
            self.ignore_held.fetch_sub(bytes, Ordering::Relaxed);
            self.by_rules.store(true, Ordering::Relaxed);
            self.spent.store(true, Ordering::Relaxed);
            return false;
        }
        true
    }

    /// Releases what [`Budget::hold_ignore`] held.
    pub fn release_ignore(&self, bytes: u64) {
        self.ignore_held.fetch_sub(bytes, Ordering::Relaxed);
    }

    /// Whether the search ran out of time or work.
    pub fn spent(&self) -> bool {
        self.spent.load(Ordering::Relaxed)
    }

    /// Notes that an entry could not be listed or read for `why`: a
    /// deadline (`aborted`) ends the search as a spent budget does; an I/O
    /// or permission failure is counted for the footer; what the tools
    /// refuse or skip by rule (gone since it was listed, not text, not a
    /// regular file, outside the root) is not a failure.
    pub fn failed(&self, why: ErrorCode) {
        match why {
            ErrorCode::Aborted => self.spent.store(true, Ordering::Relaxed),
            ErrorCode::IoError | ErrorCode::PermissionDenied | ErrorCode::Busy => {
                self.skipped.fetch_add(1, Ordering::Relaxed);
            }
            _ => {}
        }
    }

    /// How many entries could not be read and were left out.
    pub fn skipped(&self) -> u64 {
        self.skipped.load(Ordering::Relaxed)
    }

    /// Why the search stopped early, if it did.
    pub fn stopped(&self) -> Option<Stopped> {
        if !self.spent() {
            None
        } else if self.by_rules.load(Ordering::Relaxed) {
            Some(Stopped::IgnoreRules(MAX_LIVE_IGNORE_BYTES))
        } else {
            Some(Stopped::Budget(self.time))
        }
    }
}

/// A reader that charges every byte it reads to a budget and fails once the
/// budget is spent, so one huge file cannot outlast the deadline.
pub struct Charged<'b, R> {
    /// The wrapped reader.
    pub inner: R,
    /// The budget charged.
    pub budget: &'b Budget,
}

impl<R: std::io::Read> std::io::Read for Charged<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        if !self.budget.charge(n as u64) {
            return Err(std::io::Error::other("search budget spent"));
        }
        Ok(n)
    }
}

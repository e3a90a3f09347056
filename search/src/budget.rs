//! How much one search may do: a wall-clock deadline and a cap on entries
//! visited plus bytes read. Shared by parallel workers; once spent it stays
//! spent, and the result says the search stopped early.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Default wall-clock limit of one search: well inside a host's default
/// 30-second call deadline, so a search stops early and says so instead of
/// being cut off. The tools and every native fast path use it.
pub const DEFAULT_TIME: Duration = Duration::from_secs(20);

/// Default work limit: entries visited plus bytes read (64 GiB).
pub const DEFAULT_WORK: u64 = 64 << 30;

/// A search's remaining allowance.
#[derive(Debug)]
pub struct Budget {
    start: Instant,
    time: Duration,
    work: u64,
    used: AtomicU64,
    spent: AtomicBool,
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
        }
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

    /// Whether the search ran out of time or work.
    pub fn spent(&self) -> bool {
        self.spent.load(Ordering::Relaxed)
    }

    /// The wall-clock limit, for the footer.
    pub fn time(&self) -> Duration {
        self.time
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

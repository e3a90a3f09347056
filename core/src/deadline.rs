//! The deadline of the tool call running on this thread, for providers.
//!
//! The runtime stops guest code at a call's deadline, but it cannot stop a
//! provider in the middle of host I/O, and it must not: a change that was
//! committed has to be reported as done. So the deadline is handed to the
//! provider instead. A provider bounds its waits with [`remaining`] and calls
//! [`check`] just before its commit point (the rename, the conditional PUT):
//! past the deadline it gives up with `aborted` and changes nothing; once it
//! has committed it finishes and reports success, and the runtime gives the
//! component a grace period to say so.

use crate::{ErrorCode, FsError};
use std::cell::Cell;
use std::time::{Duration, Instant};

thread_local! {
    static DEADLINE: Cell<Option<Instant>> = const { Cell::new(None) };
}

/// Runs `f` with `deadline` as this thread's call deadline.
pub fn scope<R>(deadline: Instant, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<Instant>);
    impl Drop for Restore {
        fn drop(&mut self) {
            DEADLINE.with(|d| d.set(self.0));
        }
    }
    let _restore = Restore(DEADLINE.with(|d| d.replace(Some(deadline))));
    f()
}

/// The deadline of the call running on this thread, if any.
pub fn current() -> Option<Instant> {
    DEADLINE.with(Cell::get)
}

/// Time left before the deadline (zero once it passed); `None` outside a call.
pub fn remaining() -> Option<Duration> {
    current().map(|d| d.saturating_duration_since(Instant::now()))
}

/// The `aborted` of a wait for `shown` that the deadline cut short.
#[cold]
pub fn expired(shown: &str) -> FsError {
    FsError::new(
        ErrorCode::Aborted,
        format!(
            "the call reached its time limit while waiting for the store on {shown}; nothing was \
             changed"
        ),
    )
}

/// `aborted` once the deadline passed: to be called right before a commit.
pub fn check(shown: &str) -> Result<(), FsError> {
    match remaining() {
        Some(left) if left.is_zero() => Err(FsError::new(
            ErrorCode::Aborted,
            format!(
                "the call reached its time limit before {shown} was changed; nothing was changed"
            ),
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scope_sets_and_restores() {
        assert!(current().is_none());
        let past = Instant::now();
        scope(past, || {
            assert_eq!(remaining(), Some(Duration::ZERO));
            assert_eq!(check("a.txt").unwrap_err().code, ErrorCode::Aborted);
        });
        assert!(current().is_none());
        assert!(check("a.txt").is_ok());
    }
}

//! Commit locks between instances: WASI 0.2 has no `flock`, so a store
//! given a lock directory ([`crate::WasiStore::with_lock_dir`]) makes one
//! file per target there with `create_new` (an exclusive create, atomic on
//! every filesystem a runtime maps) and holds it from the guard's check to
//! the rename. Instances of dsh-fs sharing the directory never interleave
//! two commits of one file; other programs do not take it (as with the
//! local disk's lock). The plugin takes one the same way around a call
//! that changes its session's change journal.

use dsh_fs_core::{ErrorCode, FsError};
use std::fs::{self, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

/// Longest a commit waits for another instance's.
const WAIT: Duration = Duration::from_secs(10);

/// A lock older than this was left by an instance that died holding it.
const ABANDONED: Duration = Duration::from_secs(30);

/// A held lock; dropping it releases it.
#[derive(Debug)]
pub struct Held(PathBuf);

impl Drop for Held {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.0);
    }
}

/// The lock file of `key` under `root`, in `dir`.
pub fn path(dir: &Path, root: &Path, key: &str) -> PathBuf {
    let hash = xxhash_rust::xxh3::xxh3_128(format!("{}\n{key}", root.display()).as_bytes());
    dir.join(format!("lock-{hash:032x}"))
}

/// Takes the lock at `path`, waiting for another holder up to [`WAIT`];
/// `shown` names what it guards in the error.
pub fn take(path: PathBuf, shown: &str) -> Result<Held, FsError> {
    let start = Instant::now();
    let mut pause = Duration::from_micros(200);
    loop {
        match OpenOptions::new().write(true).create_new(true).open(&path) {
            Ok(_) => return Ok(Held(path)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => {
                return Err(FsError::new(
                    ErrorCode::IoError,
                    format!(
                        "{shown}: the commit lock {} cannot be made ({e})",
                        path.display()
                    ),
                ));
            }
        }
        let age = fs::metadata(&path)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|m| SystemTime::now().duration_since(m).ok());
        if age.is_some_and(|age| age > ABANDONED) {
            let _ = fs::remove_file(&path);
            continue;
        }
        if start.elapsed() > WAIT {
            return Err(FsError::new(
                ErrorCode::Busy,
                format!("{shown} is being changed by another instance; retry"),
            ));
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(20));
    }
}

// Native only: they need threads and a temp dir, which WASI lacks; the
// locks under a WASI runtime are exercised by the plugin component's
// concurrent test (tests/all/plugin/concurrent.rs).
#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};

    #[test]
    fn a_held_lock_makes_the_next_taker_wait_until_it_is_released() {
        let dir = tempfile::tempdir().unwrap();
        let lock = path(dir.path(), Path::new("/w"), "a.txt");
        let held = take(lock.clone(), "a.txt").unwrap();
        let released = AtomicBool::new(false);
        std::thread::scope(|s| {
            let waiter = s.spawn(|| {
                let _second = take(lock.clone(), "a.txt").unwrap();
                assert!(released.load(Ordering::SeqCst), "taken while held");
            });
            std::thread::sleep(Duration::from_millis(50));
            released.store(true, Ordering::SeqCst);
            drop(held);
            waiter.join().unwrap();
        });
        assert!(!lock.exists(), "released on drop");
        // Other files, and the same key under another root, do not contend.
        let _a = take(lock.clone(), "a.txt").unwrap();
        let _b = take(path(dir.path(), Path::new("/w"), "b.txt"), "b.txt").unwrap();
        let _c = take(path(dir.path(), Path::new("/v"), "a.txt"), "a.txt").unwrap();
    }

    #[test]
    fn an_abandoned_lock_is_broken() {
        let dir = tempfile::tempdir().unwrap();
        let lock = path(dir.path(), Path::new("/w"), "a.txt");
        let file = fs::File::create(&lock).unwrap();
        file.set_modified(SystemTime::now() - 2 * ABANDONED)
            .unwrap();
        let start = Instant::now();
        let _held = take(lock, "a.txt").unwrap();
        assert!(start.elapsed() < WAIT);
    }
}

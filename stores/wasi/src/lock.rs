//! Commit locks between instances: WASI 0.2 has no `flock`, so a store
//! given a lock directory ([`crate::WasiStore::with_lock_dir`]) makes one
//! lock per target there and holds it from the guard's check to the
//! rename. Instances of dsh-fs sharing the directory never interleave two
//! commits of one file; other programs do not take it (as with the local
//! disk's lock). The plugin takes one the same way around a call that
//! changes its session's change journal.
//!
//! A lock is removed only by its holder, or once abandoned by whoever
//! judged exactly that lock abandoned; never a lock another has taken
//! since. WASI offers no inode numbers to compare, so a lock's identity is
//! a name:
//!
//! - a held lock is a directory `lock-<hash>` holding one file,
//!   `held-<token>`, the token unique to that taking;
//! - taking it makes `.lock-<hash>.<token>.tmp/held-<token>` and renames
//!   that directory to `lock-<hash>`: a rename onto a directory that is not
//!   empty fails, so it succeeds only while the lock is free (absent, or an
//!   empty directory a holder is removing), and the lock appears whole,
//!   token and all;
//! - releasing removes `held-<token>` by its own name, then the directory
//!   only if it is empty: a lock taken meanwhile holds another token and is
//!   left alone;
//! - breaking one judged abandoned (its file older than [`ABANDONED`])
//!   removes the token file judged, by name, then the directory only if
//!   empty: when another instance broke it first and took the lock, the
//!   name judged is gone and the new lock is untouched.
//!
//! A plain file at `lock-<hash>` is a lock of an older dsh-fs: it is waited
//! for, and removed once abandoned (a file, never a directory: never a lock
//! of this format).

use dsh_fs_core::{ErrorCode, FsError};
use std::collections::hash_map::RandomState;
use std::fs::{self, File};
use std::hash::BuildHasher;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

/// Longest a commit waits for another instance's.
const WAIT: Duration = Duration::from_secs(10);

/// A lock older than this was left by an instance that died holding it.
const ABANDONED: Duration = Duration::from_secs(30);

/// What a token file's name starts with.
const HELD: &str = "held-";

/// A held lock; dropping it releases it, removing only what this taking
/// made.
#[derive(Debug)]
pub struct Held {
    path: PathBuf,
    token: String,
}

impl Drop for Held {
    fn drop(&mut self) {
        let _ = fs::remove_file(self.path.join(format!("{HELD}{}", self.token)));
        // Fails, leaving it, unless empty: a lock taken meanwhile is another's.
        let _ = fs::remove_dir(&self.path);
    }
}

/// The lock of `key` under `root`, in `dir`.
pub fn path(dir: &Path, root: &Path, key: &str) -> PathBuf {
    let hash = xxhash_rust::xxh3::xxh3_128(format!("{}\n{key}", root.display()).as_bytes());
    dir.join(format!("lock-{hash:032x}"))
}

/// A name no other taking uses: 128 bits from the randomly keyed hasher.
fn token() -> String {
    let hasher = RandomState::new();
    let now = SystemTime::now();
    format!(
        "{:016x}{:016x}",
        hasher.hash_one((now, 0u8)),
        hasher.hash_one((now, 1u8))
    )
}

/// The lock, whole, under a name of its own beside `path`, before it is
/// renamed to `path`.
struct Fresh {
    dir: PathBuf,
    file: PathBuf,
    /// Open to bring its time up to date before a late rename.
    handle: File,
    made: Instant,
}

impl Fresh {
    fn make(path: &Path, token: &str) -> io::Result<Fresh> {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("lock");
        let dir = path.with_file_name(format!(".{name}.{token}.tmp"));
        fs::create_dir(&dir)?;
        let file = dir.join(format!("{HELD}{token}"));
        match File::create_new(&file) {
            Ok(handle) => Ok(Fresh {
                dir,
                file,
                handle,
                made: Instant::now(),
            }),
            Err(e) => {
                let _ = fs::remove_dir(&dir);
                Err(e)
            }
        }
    }

    /// Removes it, when it never became the lock.
    fn discard(self) {
        let _ = fs::remove_file(&self.file);
        let _ = fs::remove_dir(&self.dir);
    }
}

/// Takes the lock at `path`, waiting for another holder up to [`WAIT`];
/// `shown` names what it guards in the error.
pub fn take(path: PathBuf, shown: &str) -> Result<Held, FsError> {
    let cannot = |e: io::Error, path: &Path| {
        FsError::new(
            ErrorCode::IoError,
            format!(
                "{shown}: the commit lock {} cannot be made ({e})",
                path.display()
            ),
        )
    };
    let token = token();
    let fresh = Fresh::make(&path, &token).map_err(|e| cannot(e, &path))?;
    let start = Instant::now();
    let mut pause = Duration::from_micros(200);
    loop {
        // Abandonment counts from the taking, not from the first try.
        if fresh.made.elapsed() > Duration::from_secs(1) {
            let _ = fresh.handle.set_modified(SystemTime::now());
        }
        match fs::rename(&fresh.dir, &path) {
            Ok(()) => return Ok(Held { path, token }),
            Err(e) if held(&e) => {}
            Err(e) => {
                fresh.discard();
                return Err(cannot(e, &path));
            }
        }
        if let Some(judged) = abandoned(&path) {
            #[cfg(test)]
            tests::before_break();
            judged.break_it(&path);
            continue;
        }
        if start.elapsed() > WAIT {
            fresh.discard();
            return Err(FsError::new(
                ErrorCode::Busy,
                format!("{shown} is being changed by another instance; retry"),
            ));
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(20));
    }
}

/// Whether a rename onto the lock failed because something holds it: a
/// directory that is not empty, or an older dsh-fs's file. By number: std
/// on WASI gives these no kind of their own.
fn held(e: &io::Error) -> bool {
    e.raw_os_error()
        .is_some_and(|n| [libc::EEXIST, libc::ENOTEMPTY, libc::ENOTDIR, libc::EISDIR].contains(&n))
}

/// A lock judged abandoned, named as it was seen.
enum Judged {
    /// Token files (or anything else) in the lock directory, all old.
    Tokens(Vec<String>),
    /// Nothing in it: a holder was removing it.
    Empty,
    /// An older dsh-fs's lock file, old.
    File,
}

impl Judged {
    /// Removes what was judged, by name, and the directory only if that
    /// left it empty: a lock another took since is not touched.
    fn break_it(self, path: &Path) {
        match self {
            Judged::Tokens(names) => {
                for name in names {
                    let _ = fs::remove_file(path.join(name));
                }
                let _ = fs::remove_dir(path);
            }
            Judged::Empty => {
                let _ = fs::remove_dir(path);
            }
            // Removing a file never removes a directory: never a lock of this format.
            Judged::File => {
                let _ = fs::remove_file(path);
            }
        }
    }
}

/// What at `path` was left by an instance that died holding it, if anything.
fn abandoned(path: &Path) -> Option<Judged> {
    let old = |meta: io::Result<fs::Metadata>| {
        meta.and_then(|m| m.modified())
            .ok()
            .and_then(|m| SystemTime::now().duration_since(m).ok())
            .is_some_and(|age| age > ABANDONED)
    };
    let meta = fs::symlink_metadata(path).ok()?;
    if !meta.is_dir() {
        return (meta.is_file() && old(Ok(meta))).then_some(Judged::File);
    }
    let mut names = Vec::new();
    for item in fs::read_dir(path).ok()? {
        let item = item.ok()?;
        if !old(item.metadata()) {
            return None;
        }
        names.push(item.file_name().into_string().ok()?);
    }
    Some(match names.is_empty() {
        true => Judged::Empty,
        false => Judged::Tokens(names),
    })
}

// The waits and races need threads, native only; the rest runs under
// `wasmtime run` too (scripts/wasi-test-runner). The locks of instances
// under a WASI runtime are exercised by the plugin component's concurrent
// test too (tests/all/plugin/concurrent.rs).
#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    thread_local! {
        /// Run once by this thread's next `take`, between judging a lock
        /// abandoned and breaking it.
        static BEFORE_BREAK: RefCell<Option<Box<dyn FnOnce()>>> = RefCell::new(None);
    }

    pub(super) fn before_break() {
        if let Some(hook) = BEFORE_BREAK.with(|h| h.borrow_mut().take()) {
            hook();
        }
    }

    /// Makes the lock at `lock` look abandoned: its files 60 s old.
    fn age(lock: &Path) {
        let old = SystemTime::now() - 2 * ABANDONED;
        let files: Vec<PathBuf> = match lock.is_dir() {
            true => fs::read_dir(lock)
                .unwrap()
                .map(|e| e.unwrap().path())
                .collect(),
            false => vec![lock.to_owned()],
        };
        for file in files {
            File::options()
                .write(true)
                .open(file)
                .unwrap()
                .set_modified(old)
                .unwrap();
        }
    }

    /// The names in `dir`.
    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn an_abandoned_lock_is_broken() {
        let dir = crate::tests::scratch();
        let lock = path(dir.path(), Path::new("/w"), "a.txt");
        std::mem::forget(take(lock.clone(), "a.txt").unwrap());
        age(&lock);
        let start = Instant::now();
        let held = take(lock.clone(), "a.txt").unwrap();
        assert!(start.elapsed() < WAIT);
        assert_eq!(names(&lock), [format!("{HELD}{}", held.token)]);
        drop(held);
        assert!(names(dir.path()).is_empty(), "{:?}", names(dir.path()));
    }

    #[test]
    fn an_older_lock_file_is_waited_for_then_broken_once_abandoned() {
        let dir = crate::tests::scratch();
        let lock = path(dir.path(), Path::new("/w"), "a.txt");
        fs::write(&lock, "").unwrap();
        age(&lock);
        drop(take(lock.clone(), "a.txt").unwrap());
        // An empty directory is a lock being released: free.
        fs::create_dir(&lock).unwrap();
        drop(take(lock.clone(), "a.txt").unwrap());
        assert!(names(dir.path()).is_empty(), "{:?}", names(dir.path()));
    }

    #[test]
    fn a_holder_whose_lock_was_broken_leaves_the_next_holders_alone() {
        let dir = crate::tests::scratch();
        let lock = path(dir.path(), Path::new("/w"), "a.txt");
        let slow = take(lock.clone(), "a.txt").unwrap();
        age(&lock);
        let next = take(lock.clone(), "a.txt").unwrap();
        drop(slow);
        assert_eq!(names(&lock), [format!("{HELD}{}", next.token)]);
        drop(next);
        assert!(names(dir.path()).is_empty(), "{:?}", names(dir.path()));
    }

    #[test]
    fn a_lock_that_cannot_be_made_says_so_and_leaves_nothing() {
        let dir = crate::tests::scratch();
        let lock = path(&dir.path().join("missing"), Path::new("/w"), "a.txt");
        let e = take(lock, "a.txt").unwrap_err();
        assert_eq!(e.code, ErrorCode::IoError);
        assert!(e.message.contains("the commit lock"), "{}", e.message);
        assert!(names(dir.path()).is_empty());
    }

    #[cfg(not(target_os = "wasi"))]
    mod threads {
        use super::super::*;
        use super::{BEFORE_BREAK, age, names};
        use std::sync::atomic::{AtomicBool, Ordering};
        use std::sync::mpsc;

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

        /// b judges a planted lock abandoned and is held up before breaking
        /// it; meanwhile a breaks it and takes the lock. b, going on, must
        /// not break a's lock: it waits for a to release it.
        #[test]
        fn a_lock_judged_abandoned_is_not_broken_once_another_took_it() {
            let dir = tempfile::tempdir().unwrap();
            let lock = path(dir.path(), Path::new("/w"), "a.txt");
            std::mem::forget(take(lock.clone(), "a.txt").unwrap());
            age(&lock);
            let (judged, judged_rx) = mpsc::channel();
            let (go, go_rx) = mpsc::channel::<()>();
            let a_holds = AtomicBool::new(false);
            std::thread::scope(|s| {
                let b = s.spawn(|| {
                    BEFORE_BREAK.with(|h| {
                        *h.borrow_mut() = Some(Box::new(move || {
                            judged.send(()).unwrap();
                            go_rx.recv().unwrap();
                        }))
                    });
                    let _held = take(lock.clone(), "a.txt").unwrap();
                    assert!(!a_holds.load(Ordering::SeqCst), "b took the lock a holds");
                });
                judged_rx.recv().unwrap();
                let a = take(lock.clone(), "a.txt").unwrap();
                a_holds.store(true, Ordering::SeqCst);
                go.send(()).unwrap();
                std::thread::sleep(Duration::from_millis(100));
                assert_eq!(
                    names(&lock),
                    [format!("{HELD}{}", a.token)],
                    "a's lock was broken"
                );
                a_holds.store(false, Ordering::SeqCst);
                drop(a);
                b.join().unwrap();
            });
            assert!(names(dir.path()).is_empty(), "{:?}", names(dir.path()));
        }
    }
}

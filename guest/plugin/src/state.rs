//! The session's memory on disk: one small file per observation in a state
//! directory the runtime grants, so read-before-edit holds although every
//! call runs in a fresh instance.
//!
//! - An entry is `seen-<scope>-<hash>.json` (the version observed of one
//!   target) or `twin-<scope>-<hash>.json` (a twin the model confirmed):
//!   `<scope>` the hash of the session name and workspace root, `<hash>` that
//!   of the scope and the target's key. The file holds all three, so a
//!   collision or another workspace's entry reads as nothing.
//! - It is replaced atomically: written beside under a name of its own, then
//!   renamed over. Two instances recording at once leave one whole entry,
//!   never a mix; instances recording different targets never touch each
//!   other's files. A write that fails removes what it wrote: a full
//!   directory is left as full as it was, and works again once freed.
//! - Anything that does not parse, or names another scope or key, answers
//!   "not observed": the worst a damaged directory does is ask for a read.
//! - At most [`MAX_ENTRIES`] entries per scope: adding one beyond it forgets
//!   that scope's oldest, never another's. The directory as a whole keeps
//!   at most [`MAX_DIR_ENTRIES`], which takes more scopes than sixteen at
//!   their bound to reach. Each is at most [`MAX_ENTRY_BYTES`].

use dsh_fs_core::Version;
use dsh_fs_tools::Memory;
use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use std::collections::hash_map::RandomState;
use std::fs;
use std::hash::BuildHasher;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::{Duration, SystemTime};

/// Entries kept per scope (session and workspace root); its oldest are
/// forgotten beyond it.
pub const MAX_ENTRIES: usize = 1024;

/// Entries kept in one state directory, every scope's together; the oldest
/// are forgotten beyond it, whoever's they are.
pub const MAX_DIR_ENTRIES: usize = 16 * MAX_ENTRIES;

/// The largest entry file read (a key is a path of at most 4 KiB).
pub const MAX_ENTRY_BYTES: u64 = 16 * 1024;

/// The format written, and the only one read.
const FORMAT: u32 = 1;

/// A writer's file left older than this was abandoned, and is removed.
const ABANDONED: Duration = Duration::from_secs(600);

/// One entry as stored.
#[derive(Serialize, Deserialize)]
struct Entry {
    format: u32,
    scope: String,
    key: String,
    /// The version observed; absent in a twin's entry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    version: Option<String>,
}

/// What an entry records.
#[derive(Clone, Copy)]
enum Kind {
    Seen,
    Twin,
}

impl Kind {
    fn prefix(self) -> &'static str {
        match self {
            Kind::Seen => "seen",
            Kind::Twin => "twin",
        }
    }
}

/// A [`Memory`] in a state directory.
#[derive(Debug)]
pub struct DiskMemory {
    dir: PathBuf,
    scope: String,
    /// The scope's hash, in each of its entries' names.
    tag: String,
    /// Why recording failed, for the answer to say (the call itself
    /// stood); shared with whoever holds [`DiskMemory::failures`].
    failed: Rc<RefCell<Option<String>>>,
}

impl DiskMemory {
    /// The memory of the session `session` over the workspace `root`, kept in `dir`.
    pub fn new(dir: impl Into<PathBuf>, session: &str, root: &Path) -> Self {
        let scope = format!("{session}\n{}", root.display());
        DiskMemory {
            dir: dir.into(),
            tag: format!("{:032x}", xxhash_rust::xxh3::xxh3_128(scope.as_bytes())),
            scope,
            failed: Rc::default(),
        }
    }

    /// Where this memory leaves why its last recording failed: it stays
    /// reachable once the memory is handed to a session.
    pub fn failures(&self) -> Rc<RefCell<Option<String>>> {
        Rc::clone(&self.failed)
    }

    fn path(&self, kind: Kind, key: &str) -> PathBuf {
        let hash = xxhash_rust::xxh3::xxh3_128(format!("{}\n{key}", self.scope).as_bytes());
        self.dir
            .join(format!("{}-{}-{hash:032x}.json", kind.prefix(), self.tag))
    }

    /// The entry of `key`, when there is a whole one for this scope.
    fn load(&self, kind: Kind, key: &str) -> Option<Entry> {
        let mut bytes = Vec::new();
        fs::File::open(self.path(kind, key))
            .ok()?
            .take(MAX_ENTRY_BYTES + 1)
            .read_to_end(&mut bytes)
            .ok()?;
        let entry: Entry = serde_json::from_slice(&bytes).ok()?;
        (entry.format == FORMAT && entry.scope == self.scope && entry.key == key).then_some(entry)
    }

    fn store(&mut self, kind: Kind, key: String, version: Option<Version>) {
        let entry = Entry {
            format: FORMAT,
            scope: self.scope.clone(),
            key,
            version,
        };
        if let Err(e) = self.replace(kind, &entry) {
            *self.failed.borrow_mut() = Some(format!(
                "could not record it in the state directory {} ({e})",
                self.dir.display()
            ));
            // What killed instances left there may be what fills it.
            self.prune();
        }
    }

    /// Writes `entry` beside its file and renames it over; forgets the
    /// oldest entries when this one is new and the directory is full.
    fn replace(&self, kind: Kind, entry: &Entry) -> io::Result<()> {
        let path = self.path(kind, &entry.key);
        let bytes = serde_json::to_vec(entry).map_err(io::Error::other)?;
        if bytes.len() as u64 > MAX_ENTRY_BYTES {
            return Err(io::Error::other("the entry is too large"));
        }
        let new = !path.exists();
        replace_file(&path, &bytes)?;
        if new {
            self.prune();
        }
        Ok(())
    }

    /// Forgets this scope's oldest entries beyond [`MAX_ENTRIES`], then the
    /// directory's beyond [`MAX_DIR_ENTRIES`], and removes abandoned
    /// writers' files. Best effort: an instance pruning at the same time may
    /// have removed a file first. Only this scope's entries are timed unless
    /// the directory is over its bound.
    fn prune(&self) {
        let Ok(listing) = fs::read_dir(&self.dir) else {
            return;
        };
        let now = SystemTime::now();
        let mine = [Kind::Seen, Kind::Twin].map(|k| format!("{}-{}-", k.prefix(), self.tag));
        let (mut own, mut others) = (Vec::new(), Vec::new());
        for item in listing.flatten() {
            let name = item.file_name();
            let Some(name) = name.to_str() else { continue };
            if name.ends_with(".tmp") {
                if now
                    .duration_since(modified(&item.path()))
                    .unwrap_or_default()
                    > ABANDONED
                {
                    remove_abandoned(&item.path());
                }
            } else if name.ends_with(".json") {
                match mine.iter().any(|p| name.starts_with(p.as_str())) {
                    true => own.push((modified(&item.path()), item.path())),
                    false => others.push(item.path()),
                }
            }
        }
        forget_oldest(&mut own, MAX_ENTRIES);
        if own.len() + others.len() > MAX_DIR_ENTRIES {
            let mut all = own;
            all.extend(others.into_iter().map(|p| (modified(&p), p)));
            forget_oldest(&mut all, MAX_DIR_ENTRIES);
        }
    }
}

/// When `path` was last written; the epoch when that cannot be told.
fn modified(path: &Path) -> SystemTime {
    fs::symlink_metadata(path)
        .and_then(|m| m.modified())
        .unwrap_or(SystemTime::UNIX_EPOCH)
}

/// Removes the oldest of `entries` beyond `keep`, leaving the rest.
fn forget_oldest(entries: &mut Vec<(SystemTime, PathBuf)>, keep: usize) {
    if entries.len() <= keep {
        return;
    }
    entries.sort();
    let beyond = entries.len() - keep;
    for (_, path) in entries.drain(..beyond) {
        let _ = fs::remove_file(path);
    }
}

/// Removes a writer's file left behind, or a commit lock's directory made
/// and never taken (`.lock-….tmp`, holding its one token file).
fn remove_abandoned(path: &Path) {
    if fs::remove_file(path).is_ok() {
        return;
    }
    if let Ok(inside) = fs::read_dir(path) {
        for item in inside.flatten() {
            let _ = fs::remove_file(item.path());
        }
        let _ = fs::remove_dir(path);
    }
}

/// Puts `bytes` at `path` atomically: written beside it under a name of
/// its own (`.NAME.NONCE.tmp`), then renamed over it. When either step
/// fails the file written is removed: a failure leaves the directory as it
/// was. A writer's file left behind by an instance that was killed is
/// removed by [`DiskMemory`]'s pruning once abandoned.
pub(crate) fn replace_file(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("entry");
    let tmp = path.with_file_name(format!(".{name}.{:016x}.tmp", nonce()));
    let mut file = fs::File::create_new(&tmp)?;
    let written = file.write_all(bytes);
    drop(file);
    let done = written.and_then(|()| fs::rename(&tmp, path));
    if done.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    done
}

/// A number no other writer uses at the same time.
fn nonce() -> u64 {
    RandomState::new().hash_one(SystemTime::now())
}

/// Whether anything can be written in the state directory `dir` now: a
/// file the size of a large entry is written and removed. The error when
/// it cannot.
pub fn probe(dir: &Path) -> io::Result<()> {
    let tmp = dir.join(format!(".probe.{:016x}.tmp", nonce()));
    let mut file = fs::File::create_new(&tmp)?;
    let written = file.write_all(&[b' '; 4096]);
    drop(file);
    let _ = fs::remove_file(&tmp);
    written
}

impl Memory for DiskMemory {
    fn observed(&self, key: &str) -> Option<Version> {
        self.load(Kind::Seen, key)?.version
    }

    fn observe(&mut self, key: String, version: Version) {
        self.store(Kind::Seen, key, Some(version));
    }

    fn twin_allowed(&self, key: &str) -> bool {
        self.load(Kind::Twin, key).is_some()
    }

    fn allow_twin(&mut self, key: String) {
        self.store(Kind::Twin, key, None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn memory(dir: &Path) -> DiskMemory {
        DiskMemory::new(dir, "s", Path::new("/work"))
    }

    #[test]
    fn an_observation_outlives_its_memory() {
        let dir = tempfile::tempdir().unwrap();
        memory(dir.path()).observe("a.txt".into(), "v1".into());
        let m = memory(dir.path());
        assert_eq!(m.observed("a.txt").as_deref(), Some("v1"));
        assert_eq!(m.observed("b.txt"), None);
        assert!(!m.twin_allowed("a.txt"));
    }

    #[test]
    fn other_sessions_and_roots_see_nothing() {
        let dir = tempfile::tempdir().unwrap();
        memory(dir.path()).observe("a.txt".into(), "v1".into());
        let other_session = DiskMemory::new(dir.path(), "t", Path::new("/work"));
        let other_root = DiskMemory::new(dir.path(), "s", Path::new("/src"));
        assert_eq!(other_session.observed("a.txt"), None);
        assert_eq!(other_root.observed("a.txt"), None);
    }

    #[test]
    fn a_damaged_entry_reads_as_not_observed() {
        let dir = tempfile::tempdir().unwrap();
        let mut m = memory(dir.path());
        m.observe("a.txt".into(), "v1".into());
        m.allow_twin("b.txt".into());
        let seen = m.path(Kind::Seen, "a.txt");
        let whole = fs::read(&seen).unwrap();
        for cut in [0, 1, whole.len() / 2, whole.len() - 1] {
            fs::write(&seen, &whole[..cut]).unwrap();
            assert_eq!(m.observed("a.txt"), None, "cut at {cut}");
        }
        // An entry copied under another key's name is not that key's.
        fs::copy(m.path(Kind::Twin, "b.txt"), m.path(Kind::Twin, "c.txt")).unwrap();
        assert!(m.twin_allowed("b.txt") && !m.twin_allowed("c.txt"));
        let mut older = serde_json::from_slice::<serde_json::Value>(&whole).unwrap();
        older["format"] = 0.into();
        fs::write(&seen, older.to_string()).unwrap();
        assert_eq!(m.observed("a.txt"), None);
    }

    #[test]
    fn the_oldest_entries_are_forgotten_beyond_the_bound() {
        let dir = tempfile::tempdir().unwrap();
        let mut m = memory(dir.path());
        for i in 0..MAX_ENTRIES + 3 {
            m.observe(format!("f{i}"), "v".into());
            if i < 3 {
                // Coarse clocks: the first three are plainly the oldest.
                let old = SystemTime::now() - Duration::from_secs(60);
                fs::File::options()
                    .write(true)
                    .open(m.path(Kind::Seen, &format!("f{i}")))
                    .unwrap()
                    .set_modified(old)
                    .unwrap();
            }
        }
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), MAX_ENTRIES);
        assert_eq!(m.observed("f0"), None);
        assert_eq!(m.observed("f2"), None);
        assert_eq!(m.observed("f3").as_deref(), Some("v"));
        assert!(m.failures().take().is_none());
    }

    /// Sets the time `path` was written to `secs` seconds ago.
    fn age(path: &Path, secs: u64) {
        fs::File::options()
            .write(true)
            .open(path)
            .unwrap()
            .set_modified(SystemTime::now() - Duration::from_secs(secs))
            .unwrap();
    }

    #[test]
    fn one_sessions_reads_never_forget_another_sessions_entries() {
        let dir = tempfile::tempdir().unwrap();
        let mut quiet = memory(dir.path());
        quiet.observe("a.txt".into(), "v1".into());
        quiet.allow_twin("b.txt".into());
        // The oldest in the directory, by far.
        age(&quiet.path(Kind::Seen, "a.txt"), 3600);
        age(&quiet.path(Kind::Twin, "b.txt"), 3600);
        let mut busy = DiskMemory::new(dir.path(), "busy", Path::new("/work"));
        for i in 0..MAX_ENTRIES + 10 {
            busy.observe(format!("f{i}"), "v".into());
            if i < 10 {
                age(&busy.path(Kind::Seen, &format!("f{i}")), 60);
            }
        }
        assert_eq!(quiet.observed("a.txt").as_deref(), Some("v1"));
        assert!(quiet.twin_allowed("b.txt"));
        // The busy session keeps its own most recent entries.
        assert_eq!(busy.observed("f9"), None);
        assert_eq!(busy.observed("f10").as_deref(), Some("v"));
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), MAX_ENTRIES + 2);
    }

    #[test]
    fn the_directory_as_a_whole_is_bounded_too() {
        let dir = tempfile::tempdir().unwrap();
        // Other sessions' entries, as their names say, filling the directory.
        for i in 0..MAX_DIR_ENTRIES {
            let name = format!("seen-{:032x}-{i:032x}.json", i / MAX_ENTRIES);
            fs::write(dir.path().join(name), "{}").unwrap();
        }
        let old = dir.path().join(format!("seen-{:032x}-{:032x}.json", 0, 0));
        age(&old, 3600);
        let mut m = memory(dir.path());
        m.observe("a.txt".into(), "v1".into());
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), MAX_DIR_ENTRIES);
        assert!(!old.exists(), "the oldest in the directory is forgotten");
        assert_eq!(m.observed("a.txt").as_deref(), Some("v1"));
    }

    #[test]
    fn a_failed_write_leaves_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        let mut m = memory(dir.path());
        // A directory where the entry goes: the rename over it fails.
        let seen = m.path(Kind::Seen, "a.txt");
        fs::create_dir(&seen).unwrap();
        fs::write(seen.join("x"), "").unwrap();
        m.observe("a.txt".into(), "v1".into());
        let why = m.failures().take().unwrap();
        assert!(why.contains("could not record it"), "{why}");
        let names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, [seen.file_name().unwrap()]);
        // Writers' files abandoned by killed instances are removed at a failure too.
        let left = dir.path().join(".seen-x.json.0123456789abcdef.tmp");
        fs::write(&left, "{").unwrap();
        age(&left, 3600);
        m.observe("a.txt".into(), "v1".into());
        assert!(!left.exists());
        assert!(probe(dir.path()).is_ok());
        assert!(probe(&dir.path().join("missing")).is_err());
    }

    #[test]
    fn a_failed_recording_is_reported_once() {
        let dir = tempfile::tempdir().unwrap();
        let mut m = DiskMemory::new(dir.path().join("missing"), "s", Path::new("/work"));
        m.observe("a.txt".into(), "v1".into());
        let failures = m.failures();
        let why = failures.take().unwrap();
        assert!(why.contains("state directory"), "{why}");
        assert!(failures.take().is_none());
        assert_eq!(m.observed("a.txt"), None);
    }
}

//! [`MemoryStore`]: a byte store held in memory, for tests, dry runs and
//! agents working on scratch files; with [`crate::layer::TextLayer`] it keeps
//! every rule of the local disk. Each file is an immutable snapshot, so an
//! open object never changes under its reader.

use super::{ByteStore, Guard, Object, ObjectMeta, Replace, Target};
use crate::listing::{Collector, Entries, not_a_directory};
use crate::{DirEntryKind, EntryKind, ErrorCode, FsError};
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

/// A virtual workspace: files and directories held in memory.
#[derive(Debug)]
pub struct MemoryStore {
    roots: Vec<PathBuf>,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    files: BTreeMap<String, File>,
    dirs: BTreeSet<String>,
    generation: u64,
}

#[derive(Debug, Clone)]
struct File {
    bytes: Arc<[u8]>,
    generation: u64,
}

impl File {
    fn meta(&self) -> ObjectMeta {
        ObjectMeta {
            kind: EntryKind::File,
            size: Some(self.bytes.len() as u64),
            token: format!("m{:x}", self.generation),
        }
    }
}

impl Default for MemoryStore {
    fn default() -> Self {
        Self::with_root("/workspace")
    }
}

impl MemoryStore {
    /// An empty workspace whose absolute paths live under `root`.
    pub fn with_root(root: impl Into<PathBuf>) -> Self {
        MemoryStore {
            roots: vec![root.into()],
            state: Mutex::new(State::default()),
        }
    }

    /// Puts `bytes` at `path` (creating parent directories), bypassing every
    /// check: how a test or a host seeds the workspace.
    pub fn insert(&self, path: &str, bytes: impl Into<Vec<u8>>) {
        let key = crate::seam::normalize(path, &self.roots).expect("a path inside the workspace");
        self.lock().put(&key, bytes.into());
    }

    /// The bytes at `path`, if it is a file.
    pub fn get(&self, path: &str) -> Option<Vec<u8>> {
        let key = crate::seam::normalize(path, &self.roots).ok()?;
        self.lock().files.get(&key).map(|f| f.bytes.to_vec())
    }

    /// Creates a directory (and its parents).
    pub fn create_dir(&self, path: &str) {
        let key = crate::seam::normalize(path, &self.roots).expect("a path inside the workspace");
        self.lock().add_dirs(&key);
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock cannot leave a half-made change:
        // every mutation is a single map insert.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl State {
    fn put(&mut self, key: &str, bytes: Vec<u8>) -> u64 {
        if let Some((parent, _)) = key.rsplit_once('/') {
            self.add_dirs(parent);
        }
        self.generation += 1;
        let generation = self.generation;
        let bytes = bytes.into();
        self.files
            .insert(key.to_owned(), File { bytes, generation });
        generation
    }

    fn add_dirs(&mut self, key: &str) {
        let mut at = key;
        while !at.is_empty() {
            self.dirs.insert(at.to_owned());
            at = at.rsplit_once('/').map_or("", |(p, _)| p);
        }
    }

    fn is_dir(&self, key: &str) -> bool {
        key.is_empty() || self.dirs.contains(key)
    }

    /// The file at `key`, or the error a disk would give for it.
    fn file(&self, key: &str, shown: &str) -> Result<&File, FsError> {
        if let Some(f) = self.files.get(key) {
            return Ok(f);
        }
        if self.is_dir(key) {
            return Err(FsError::new(
                ErrorCode::NotRegularFile,
                format!("{shown} is a directory"),
            ));
        }
        self.check_parents(key, shown)?;
        Err(FsError::not_found(shown))
    }

    /// `not-directory` when a parent of `key` is a file.
    fn check_parents(&self, key: &str, shown: &str) -> Result<(), FsError> {
        let mut at = key;
        while let Some((parent, _)) = at.rsplit_once('/') {
            if self.files.contains_key(parent) {
                return Err(FsError::new(
                    ErrorCode::NotDirectory,
                    format!("a parent of {shown} is not a directory"),
                ));
            }
            at = parent;
        }
        Ok(())
    }
}

impl ByteStore for MemoryStore {
    type Object = Snapshot;
    type Replace<'s> = MemoryReplace<'s>;
    type Listing = Entries;

    fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    /// Every file and every replacement is held in memory.
    fn max_object_bytes(&self) -> u64 {
        crate::MAX_IN_MEMORY_BYTES
    }

    fn stat(&self, target: &Target) -> Result<Option<ObjectMeta>, FsError> {
        let state = self.lock();
        if let Some(f) = state.files.get(target.key()) {
            return Ok(Some(f.meta()));
        }
        if state.is_dir(target.key()) {
            return Ok(Some(crate::layer::directory_meta()));
        }
        state.check_parents(target.key(), target.display_path())?;
        Ok(None)
    }

    fn open(&self, target: &Target) -> Result<Snapshot, FsError> {
        let file = self
            .lock()
            .file(target.key(), target.display_path())?
            .clone();
        Ok(Snapshot {
            meta: file.meta(),
            bytes: file.bytes,
        })
    }

    fn list_dir(&self, target: &Target) -> Result<Entries, FsError> {
        let (shown, key) = (target.display_path(), target.key());
        let state = self.lock();
        if state.files.contains_key(key) {
            return Err(not_a_directory(shown));
        }
        if !state.is_dir(key) {
            state.check_parents(key, shown)?;
            return Err(FsError::not_found(shown));
        }
        let prefix = if key.is_empty() {
            String::new()
        } else {
            format!("{key}/")
        };
        let child = |k: &str| {
            k.strip_prefix(prefix.as_str())
                .filter(|rest| !rest.contains('/'))
                .map(str::to_owned)
        };
        let mut found = Collector::new(shown);
        for dir in state.dirs.range(prefix.clone()..) {
            if !dir.starts_with(&prefix) {
                break;
            }
            if let Some(name) = child(dir) {
                found.push(Some(name), DirEntryKind::Directory, 0, None)?;
            }
        }
        for (path, file) in state.files.range(prefix.clone()..) {
            if !path.starts_with(&prefix) {
                break;
            }
            if let Some(name) = child(path) {
                let size = file.bytes.len() as u64;
                found.push(Some(name), DirEntryKind::File, size, None)?;
            }
        }
        Ok(found.finish())
    }

    fn replace(
        &self,
        target: &Target,
        create_parents: bool,
    ) -> Result<(MemoryReplace<'_>, Option<Snapshot>), FsError> {
        let (shown, key) = (target.display_path(), target.key());
        let state = self.lock();
        let current = match state.file(key, shown) {
            Ok(f) => Some(Snapshot {
                meta: f.meta(),
                bytes: f.bytes.clone(),
            }),
            Err(e) if e.code == ErrorCode::NotFound => {
                let parent = key.rsplit_once('/').map_or("", |(p, _)| p);
                if !create_parents && !state.is_dir(parent) {
                    return Err(FsError::not_found(shown));
                }
                None
            }
            Err(e) => return Err(e),
        };
        let replace = MemoryReplace {
            state,
            key: key.to_owned(),
            shown: shown.to_owned(),
            bytes: Vec::new(),
        };
        Ok((replace, current))
    }
}

/// One file's bytes as they were when opened.
#[derive(Debug)]
pub struct Snapshot {
    meta: ObjectMeta,
    bytes: Arc<[u8]>,
}

impl Object for Snapshot {
    fn meta(&self) -> &ObjectMeta {
        &self.meta
    }

    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> Result<usize, FsError> {
        let bytes = self.range(offset, buf.len());
        buf[..bytes.len()].copy_from_slice(bytes);
        Ok(bytes.len())
    }

    fn read_append(&mut self, offset: u64, buf: &mut Vec<u8>) -> Result<usize, FsError> {
        let bytes = self.range(offset, buf.capacity() - buf.len());
        buf.extend_from_slice(bytes);
        Ok(bytes.len())
    }
}

impl Snapshot {
    /// At most `len` of its bytes from `offset` (none past the end).
    fn range(&self, offset: u64, len: usize) -> &[u8] {
        let from = (offset.min(self.bytes.len() as u64)) as usize;
        &self.bytes[from..from + len.min(self.bytes.len() - from)]
    }
}

/// A replacement of one name, holding the workspace's lock until it ends.
#[derive(Debug)]
pub struct MemoryReplace<'s> {
    state: MutexGuard<'s, State>,
    key: String,
    shown: String,
    bytes: Vec<u8>,
}

impl Replace for MemoryReplace<'_> {
    type Object = Snapshot;

    fn write(&mut self, bytes: &[u8]) -> Result<(), FsError> {
        self.bytes.extend_from_slice(bytes);
        Ok(())
    }

    fn copy(&mut self, from: &mut Snapshot, offset: u64, len: u64) -> Result<(), FsError> {
        let start = offset.min(from.bytes.len() as u64) as usize;
        let end = (offset + len).min(from.bytes.len() as u64) as usize;
        self.bytes.extend_from_slice(&from.bytes[start..end]);
        Ok(())
    }

    fn commit(mut self, guard: Guard<'_>) -> Result<String, FsError> {
        let current = self.state.files.get(&self.key).map(File::meta);
        match (guard, current) {
            (Guard::Absent, Some(_)) => {
                return Err(FsError::new(
                    ErrorCode::NotObserved,
                    format!(
                        "{} was created by another process during this write; nothing was changed",
                        self.shown
                    ),
                ));
            }
            (Guard::Unchanged(_), None) => return Err(crate::seam::vanished(&self.shown)),
            (Guard::Unchanged(token), Some(meta)) if meta.token != token => {
                return Err(FsError::stale(&self.shown));
            }
            _ => {}
        }
        let bytes = std::mem::take(&mut self.bytes);
        let generation = self.state.put(&self.key, bytes);
        Ok(format!("m{generation:x}"))
    }

    fn remove(mut self, guard: Guard<'_>, shown: &str) -> Result<(), FsError> {
        let current = self.state.files.get(&self.key).map(File::meta);
        match (guard, current) {
            (_, None) => Err(crate::seam::vanished(shown)),
            (Guard::Unchanged(token), Some(meta)) if meta.token == token => {
                self.state.files.remove(&self.key);
                Ok(())
            }
            _ => Err(FsError::stale(shown)),
        }
    }
}

//! [`MemoryProvider`]: the provider contract over an in-memory workspace, for
//! tests, dry runs and agents working on scratch files. Same codes, same
//! versions semantics, same byte-faithful edits as the local disk.

use super::{
    Listing, MAX_CHUNK, Provider, Target, TextStream, check_write_intent, display, normalize,
    splice_checked, vanished, version,
};
use dsh_fs_core::listing::{Collector, not_a_directory};
use dsh_fs_core::text::{StreamDecoder, content_hash};
use dsh_fs_core::{
    DirEntryKind, EditOutcome, EditRequest, EntryKind, ErrorCode, FsError, FsInfo, TextContent,
    Version, WriteIntent, WriteOperation, WriteOutcome, text,
};
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

/// A virtual workspace: files and directories held in memory.
#[derive(Debug)]
pub struct MemoryProvider {
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

impl Default for MemoryProvider {
    fn default() -> Self {
        Self::new()
    }
}

impl MemoryProvider {
    /// An empty workspace; absolute paths are accepted under `/workspace`.
    pub fn new() -> Self {
        Self::with_root("/workspace")
    }

    /// An empty workspace whose absolute paths live under `root`.
    pub fn with_root(root: impl Into<PathBuf>) -> Self {
        MemoryProvider {
            roots: vec![root.into()],
            state: Mutex::new(State::default()),
        }
    }

    /// Puts `bytes` at `path` (creating parent directories), bypassing every
    /// check: the backdoor a test or a host uses to seed the workspace.
    pub fn insert(&self, path: &str, bytes: impl Into<Vec<u8>>) {
        let key = normalize(path, &self.roots).expect("a path inside the workspace");
        let mut state = self.lock();
        state.put(&key, bytes.into());
    }

    /// The bytes at `path`, if it is a file.
    pub fn get(&self, path: &str) -> Option<Vec<u8>> {
        let key = normalize(path, &self.roots).ok()?;
        self.lock().files.get(&key).map(|f| f.bytes.to_vec())
    }

    /// Creates a directory (and its parents).
    pub fn create_dir(&self, path: &str) {
        let key = normalize(path, &self.roots).expect("a path inside the workspace");
        let mut state = self.lock();
        state.add_dirs(&key);
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
        self.files.insert(
            key.to_owned(),
            File {
                bytes: bytes.into(),
                generation,
            },
        );
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

fn meta_token(f: &File) -> String {
    format!("m{:x}", f.generation)
}

impl Provider for MemoryProvider {
    fn resolve(&self, path: &str) -> Result<Target, FsError> {
        let key = normalize(path, &self.roots)?;
        Ok(Target::new(display(&key), key))
    }

    fn stat(&self, target: &Target) -> Result<Option<FsInfo>, FsError> {
        let state = self.lock();
        if let Some(f) = state.files.get(target.key()) {
            return Ok(Some(FsInfo {
                version: meta_token(f),
                kind: EntryKind::File,
                size: Some(f.bytes.len() as u64),
            }));
        }
        if state.is_dir(target.key()) {
            return Ok(Some(FsInfo {
                version: "dir".into(),
                kind: EntryKind::Directory,
                size: None,
            }));
        }
        Ok(None)
    }

    fn read_text(&self, target: &Target, max_bytes: u64) -> Result<TextContent, FsError> {
        let shown = target.display_path();
        let file = self.lock().file(target.key(), shown)?.clone();
        if file.bytes.len() as u64 > max_bytes {
            return Err(FsError::new(
                ErrorCode::TooLarge,
                format!(
                    "{shown} has {} bytes, more than the {max_bytes} this call reads",
                    file.bytes.len()
                ),
            ));
        }
        let text =
            text::decode(&file.bytes).map_err(|e| FsError::not_text(shown, &e.to_string()))?;
        Ok(TextContent {
            text: text.to_owned(),
            version: version(&meta_token(&file), content_hash(&file.bytes)),
        })
    }

    fn stream_text(&self, target: &Target, start: u64) -> Result<Box<dyn TextStream>, FsError> {
        let shown = target.display_path();
        let file = self.lock().file(target.key(), shown)?.clone();
        let at = (text::bom_len(&file.bytes) as u64 + start).min(file.bytes.len() as u64) as usize;
        Ok(Box::new(MemoryStream {
            version: (start == 0).then(|| version(&meta_token(&file), content_hash(&file.bytes))),
            file,
            at: if start == 0 { 0 } else { at },
            decoder: if start == 0 {
                StreamDecoder::new()
            } else {
                StreamDecoder::resume(start)
            },
            shown: shown.to_owned(),
            done: false,
        }))
    }

    fn write_text(
        &self,
        target: &Target,
        content: &str,
        intent: Option<WriteIntent>,
    ) -> Result<WriteOutcome, FsError> {
        let shown = target.display_path();
        let key = target.key();
        let mut state = self.lock();
        let current = match state.file(key, shown) {
            Ok(f) => Some((meta_token(f), content_hash(&f.bytes))),
            Err(e) if e.code == ErrorCode::NotFound => None,
            Err(e) => return Err(e),
        };
        check_write_intent(
            shown,
            intent.as_ref(),
            current.as_ref().map(|(m, h)| (m.as_str(), *h)),
        )?;
        let generation = state.put(key, content.as_bytes().to_vec());
        Ok(WriteOutcome {
            operation: if current.is_some() {
                WriteOperation::Updated
            } else {
                WriteOperation::Created
            },
            version: version(
                &format!("m{generation:x}"),
                content_hash(content.as_bytes()),
            ),
        })
    }

    fn edit_text(
        &self,
        target: &Target,
        edit: &EditRequest,
        expected: Option<&str>,
    ) -> Result<EditOutcome, FsError> {
        let shown = target.display_path();
        let mut state = self.lock();
        let file = match state.file(target.key(), shown) {
            Ok(f) => f.clone(),
            Err(e) if e.code == ErrorCode::NotFound => return Err(vanished(shown)),
            Err(e) => return Err(e),
        };
        let spliced = splice_checked(shown, &file.bytes, &meta_token(&file), edit, expected)?;
        let hash = content_hash(&spliced.bytes);
        let generation = state.put(target.key(), spliced.bytes);
        Ok(EditOutcome {
            replacements: spliced.replacements,
            version: version(&format!("m{generation:x}"), hash),
            first_line: spliced.first_line,
        })
    }

    fn list_dir(&self, target: &Target) -> Result<Box<dyn Listing>, FsError> {
        let shown = target.display_path();
        let key = target.key();
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
        fn child<'k>(k: &'k str, prefix: &str) -> Option<&'k str> {
            k.strip_prefix(prefix).filter(|rest| !rest.contains('/'))
        }
        let mut found = Collector::new(shown);
        for dir in state
            .dirs
            .range(prefix.clone()..)
            .take_while(|d| d.starts_with(&prefix))
        {
            if let Some(name) = child(dir, &prefix) {
                found.push(Some(name.to_owned()), DirEntryKind::Directory, 0, None)?;
            }
        }
        for (path, file) in state.files.range(prefix.clone()..) {
            if !path.starts_with(&prefix) {
                break;
            }
            if let Some(name) = child(path, &prefix) {
                let size = file.bytes.len() as u64;
                found.push(Some(name.to_owned()), DirEntryKind::File, size, None)?;
            }
        }
        Ok(Box::new(found.finish()))
    }
}

/// Streams a snapshot of one file.
struct MemoryStream {
    file: File,
    /// Known when the stream started at the beginning.
    version: Option<Version>,
    at: usize,
    decoder: StreamDecoder,
    shown: String,
    done: bool,
}

impl TextStream for MemoryStream {
    fn next_chunk(&mut self, max_bytes: u32) -> Result<Option<String>, FsError> {
        let not_text = |e: text::NotText, shown: &str| FsError::not_text(shown, &e.to_string());
        loop {
            if self.at == self.file.bytes.len() {
                if !self.done {
                    self.decoder
                        .finish()
                        .map_err(|e| not_text(e, &self.shown))?;
                    self.done = true;
                }
                return Ok(None);
            }
            let want =
                (max_bytes.clamp(4, MAX_CHUNK) as usize).saturating_sub(self.decoder.pending());
            let end = (self.at + want.max(1)).min(self.file.bytes.len());
            let text = self
                .decoder
                .push(&self.file.bytes[self.at..end])
                .map_err(|e| not_text(e, &self.shown))?;
            self.at = end;
            if !text.is_empty() {
                return Ok(Some(text));
            }
        }
    }

    fn version(&self) -> Option<Version> {
        self.version.clone().filter(|_| self.done)
    }
}

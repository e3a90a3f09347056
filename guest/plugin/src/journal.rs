//! The session's change journal on disk, beside its observations in the
//! state directory, so `checkpoint`, `changes` and `revert` work although
//! every call runs in a fresh instance.
//!
//! - The index is `journal-<scope>.idx`: a first line naming the scope
//!   (session name and workspace root, as JSON), then the journal's index
//!   as the tools write it. Another scope's or a damaged index reads as no
//!   journal: the worst it does is ask for a checkpoint.
//! - Each old text is `jtext-<scope>-<hash>.txt`, named by the XXH3-128 of
//!   its bytes, written once and never changed; a text whose bytes no longer
//!   hash to its name reads as missing, and its change answers "not
//!   undoable" rather than restore something else.
//! - Both are replaced atomically (written beside, renamed over), and a
//!   call that changes the journal holds the session's journal lock from
//!   loading it to saving it, so two instances of one session never lose
//!   each other's changes. Texts no longer named are removed after each save.

use crate::state::replace_file;
use dsh_fs_store_wasi::lock;
use dsh_fs_tools::JournalKeeper;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The largest index read: a journal of some hundred thousand changes.
const MAX_INDEX_BYTES: u64 = 64 << 20;

/// A [`JournalKeeper`] in a state directory.
#[derive(Debug)]
pub struct DiskJournal {
    dir: PathBuf,
    root: PathBuf,
    session: String,
    /// The scope as the index's first line.
    scope: String,
    /// The scope's hash, in every file name.
    tag: String,
}

impl DiskJournal {
    /// The journal of session `session` over the workspace `root`, kept in `dir`.
    pub fn new(dir: impl Into<PathBuf>, session: &str, root: &Path) -> Self {
        let scope = format!("{session}\n{}", root.display());
        let tag = format!("{:032x}", xxhash_rust::xxh3::xxh3_128(scope.as_bytes()));
        DiskJournal {
            dir: dir.into(),
            root: root.to_owned(),
            session: session.to_owned(),
            scope: serde_json::to_string(&scope).expect("a string serializes"),
            tag,
        }
    }

    /// Whether the session has a journal (an index) here.
    pub fn exists(&self) -> bool {
        self.index().is_file()
    }

    /// Takes the session's journal lock, waiting up to ten seconds for
    /// another instance of the session to save.
    pub fn lock(&self) -> Result<lock::Held, dsh_fs_core::FsError> {
        // A NUL is in no path, so no file's commit lock is this one.
        let key = format!("\0journal\0{}", self.session);
        lock::take(
            lock::path(&self.dir, &self.root, &key),
            &format!("the change journal of session {:?}", self.session),
        )
    }

    fn index(&self) -> PathBuf {
        self.dir.join(format!("journal-{}.idx", self.tag))
    }

    fn text_prefix(&self) -> String {
        format!("jtext-{}-", self.tag)
    }

    fn text_path(&self, name: &str) -> PathBuf {
        self.dir.join(format!("{}{name}.txt", self.text_prefix()))
    }
}

/// The name of `bytes`: their XXH3-128.
fn name_of(bytes: &[u8]) -> String {
    format!("{:032x}", xxhash_rust::xxh3::xxh3_128(bytes))
}

impl JournalKeeper for DiskJournal {
    fn load(&self) -> Option<Vec<u8>> {
        let mut bytes = Vec::new();
        fs::File::open(self.index())
            .ok()?
            .take(MAX_INDEX_BYTES + 1)
            .read_to_end(&mut bytes)
            .ok()?;
        let (scope, index) = bytes.split_at(bytes.iter().position(|&b| b == b'\n')?);
        (scope == self.scope.as_bytes()).then(|| index[1..].to_vec())
    }

    fn save(&mut self, index: &[u8]) -> Result<(), String> {
        if index.len() as u64 > MAX_INDEX_BYTES {
            return Err(format!(
                "its index would pass {} MiB",
                MAX_INDEX_BYTES >> 20
            ));
        }
        let mut bytes = Vec::with_capacity(self.scope.len() + 1 + index.len());
        bytes.extend_from_slice(self.scope.as_bytes());
        bytes.push(b'\n');
        bytes.extend_from_slice(index);
        replace_file(&self.index(), &bytes).map_err(|e| {
            format!(
                "writing its index in the state directory {}: {e}",
                self.dir.display()
            )
        })
    }

    fn keep(&mut self, text: &str) -> Result<String, String> {
        let name = name_of(text.as_bytes());
        let path = self.text_path(&name);
        if fs::metadata(&path).is_ok_and(|m| m.len() == text.len() as u64) {
            return Ok(name);
        }
        replace_file(&path, text.as_bytes()).map_err(|e| {
            format!(
                "keeping an old text in the state directory {}: {e}",
                self.dir.display()
            )
        })?;
        Ok(name)
    }

    fn text(&self, name: &str) -> Option<String> {
        let bytes = fs::read(self.text_path(name)).ok()?;
        (name_of(&bytes) == name)
            .then(|| String::from_utf8(bytes).ok())
            .flatten()
    }

    fn forget_others(&mut self, live: &[&str]) {
        let Ok(listing) = fs::read_dir(&self.dir) else {
            return;
        };
        let prefix = self.text_prefix();
        for item in listing.flatten() {
            let file = item.file_name();
            let Some(name) = file
                .to_str()
                .and_then(|f| f.strip_prefix(&prefix))
                .and_then(|f| f.strip_suffix(".txt"))
            else {
                continue;
            };
            if !live.contains(&name) {
                let _ = fs::remove_file(item.path());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn journal(dir: &Path) -> DiskJournal {
        DiskJournal::new(dir, "s", Path::new("/work"))
    }

    #[test]
    fn an_index_is_its_scopes_alone() {
        let dir = tempfile::tempdir().unwrap();
        let mut j = journal(dir.path());
        assert!(!j.exists() && j.load().is_none());
        j.save(b"{\"format\":1}").unwrap();
        assert!(j.exists());
        assert_eq!(j.load().unwrap(), b"{\"format\":1}");
        let other = DiskJournal::new(dir.path(), "t", Path::new("/work"));
        assert!(other.load().is_none());
        // The same file under another scope's name is not that scope's.
        fs::copy(j.index(), other.index()).unwrap();
        assert!(other.load().is_none());
    }

    #[test]
    fn a_damaged_text_reads_as_missing_and_unnamed_texts_are_forgotten() {
        let dir = tempfile::tempdir().unwrap();
        let mut j = journal(dir.path());
        let a = j.keep("alpha\r\n").unwrap();
        let b = j.keep("beta").unwrap();
        assert_eq!(j.keep("alpha\r\n").unwrap(), a, "named by its bytes");
        assert_eq!(j.text(&a).as_deref(), Some("alpha\r\n"));
        fs::write(j.text_path(&b), "betb").unwrap();
        assert_eq!(j.text(&b), None, "bytes that no longer hash to the name");
        j.forget_others(&[&a]);
        assert!(j.text_path(&a).exists() && !j.text_path(&b).exists());
        // Another session's texts are never forgotten by this one.
        let mut other = DiskJournal::new(dir.path(), "t", Path::new("/work"));
        let c = other.keep("gamma").unwrap();
        j.forget_others(&[]);
        assert_eq!(other.text(&c).as_deref(), Some("gamma"));
    }
}

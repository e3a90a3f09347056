//! The session's change journal: what each committed `write`, `edit`,
//! `multi_edit` and `revert` changed — the path, the version before (or
//! "absent") and after, and the text before, within a memory budget — and
//! the checkpoints that name points in it. Kept from the first checkpoint
//! on (a host that offers undo sets one when the session opens), so a
//! session that never asks pays nothing.
//!
//! Past the budget the oldest texts are dropped and their changes say so:
//! a revert that would need one reports the file "not undoable", it never
//! guesses. Every text is taken under the version the change was then
//! guarded by, so a journaled "before" is exactly what the change replaced.

use dsh_fs_core::provider::Provider;
use dsh_fs_core::{EntryKind, ErrorCode, Version};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::fmt::Debug;

/// Bytes of old text a journal holds by default.
pub const DEFAULT_BUDGET: usize = 32 << 20;

/// Largest file whose text is kept: what the tools read whole (a larger
/// one is streamed, never held).
const MAX_KEPT: u64 = dsh_fs_core::STREAM_THRESHOLD;

/// What a file was before a change. A keeper stores it as JSON, a text by
/// its name only (a held text is handed to the keeper first).
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(super) enum Before {
    /// Nothing was at the path: the change created the file.
    Absent,
    /// The file's text, whether it began with a BOM, and its version.
    #[serde(skip)]
    Text {
        version: Version,
        text: String,
        bom: bool,
    },
    /// The file's text, held by the session's [`JournalKeeper`] as `name`
    /// and not loaded: `len` bytes.
    #[serde(rename = "text")]
    Kept {
        version: Version,
        name: String,
        len: usize,
        bom: bool,
    },
    /// The file, whose text is not kept: why.
    Unknown {
        version: Option<Version>,
        why: Cow<'static, str>,
    },
}

impl Before {
    /// The version the change replaced; `None` for a created file.
    pub(super) fn version(&self) -> Option<&str> {
        match self {
            Before::Absent => None,
            Before::Text { version, .. } | Before::Kept { version, .. } => Some(version),
            Before::Unknown { version, .. } => version.as_deref(),
        }
    }

    fn held(&self) -> usize {
        match self {
            Before::Text { text, .. } => text.len(),
            Before::Kept { len, .. } => *len,
            _ => 0,
        }
    }
}

/// One committed change.
#[derive(Debug, Serialize, Deserialize)]
pub(super) struct Change {
    /// The provider's identity of the file.
    pub key: String,
    /// The path as shown to the model.
    pub path: String,
    pub before: Before,
    /// The version the session wrote; `None` when it removed the file.
    pub after: Option<Version>,
}

/// A named point in the journal.
#[derive(Debug, Serialize, Deserialize)]
pub(super) struct Checkpoint {
    pub id: u32,
    pub label: String,
    /// How many changes came before it.
    pub at: usize,
}

/// The journal of one session.
#[derive(Debug)]
pub(super) struct Journal {
    budget: usize,
    held: usize,
    pub changes: Vec<Change>,
    pub checkpoints: Vec<Checkpoint>,
    /// Counts the journal's changes, so a keeper saves only a changed one.
    pub generation: u64,
}

impl Journal {
    pub(super) fn new(budget: usize) -> Self {
        Journal {
            budget,
            held: 0,
            changes: Vec::new(),
            checkpoints: Vec::new(),
            generation: 0,
        }
    }

    /// Names the present point; its number.
    pub(super) fn checkpoint(&mut self, label: String) -> u32 {
        self.generation += 1;
        let id = self.checkpoints.last().map_or(1, |c| c.id + 1);
        self.checkpoints.push(Checkpoint {
            id,
            label,
            at: self.changes.len(),
        });
        id
    }

    pub(super) fn find(&self, id: u32) -> Option<&Checkpoint> {
        self.checkpoints.iter().find(|c| c.id == id)
    }

    /// What the file at `target` is now, for the change about to be made:
    /// its text when the budget allows. `read`: a text already read, with
    /// its version.
    pub(super) fn capture<P: Provider>(
        &self,
        provider: &P,
        target: &P::Target,
        read: Option<(&str, &str)>,
    ) -> Before {
        let info = match provider.stat(target) {
            Ok(Some(info)) => info,
            Ok(None) => return Before::Absent,
            Err(_) => {
                return Before::Unknown {
                    version: None,
                    why: "it could not be examined before the change".into(),
                };
            }
        };
        let unknown = |why: &'static str| Before::Unknown {
            version: Some(info.version.clone()),
            why: why.into(),
        };
        let size = info.size.unwrap_or(0);
        if info.kind != EntryKind::File {
            return unknown("it was not a regular file");
        }
        if size > MAX_KEPT {
            return unknown("it was larger than the journal keeps (10 MiB)");
        }
        if size > self.budget as u64 {
            return unknown("it was larger than the journal's whole budget, which its host sets");
        }
        let (text, version) = match read {
            Some((text, version)) => (text.to_owned(), version.to_owned()),
            None => match provider.read_text(target, size) {
                Ok(content) => (content.text, content.version),
                Err(e) if e.code == ErrorCode::NotText => return unknown("it was not UTF-8 text"),
                Err(_) => return unknown("it could not be read before the change"),
            },
        };
        // The text of a file with a BOM is three bytes shorter than the
        // file; any other difference means it changed between the two looks
        // (what the change replaces is still exactly `text`: it is guarded
        // by `version`).
        let bom = match size.checked_sub(text.len() as u64) {
            Some(0) => false,
            Some(3) => true,
            _ => return unknown("it changed while it was read"),
        };
        Before::Text { version, text, bom }
    }

    /// Records a committed change, dropping the oldest texts past the budget.
    pub(super) fn record(&mut self, change: Change) {
        self.record_keeping(change, usize::MAX);
    }

    /// Records a change, dropping past the budget the oldest texts before
    /// change `keep` (a revert still reading the ones from there on), then,
    /// if still over, the new change's own.
    pub(super) fn record_keeping(&mut self, change: Change, keep: usize) {
        self.generation += 1;
        self.held += change.before.held();
        self.changes.push(change);
        let last = self.changes.len() - 1;
        let candidates = (0..keep.min(last)).chain(std::iter::once(last));
        for at in candidates {
            if self.held <= self.budget {
                break;
            }
            let c = &mut self.changes[at];
            if let Some(version) = c.before.version().filter(|_| c.before.held() > 0) {
                self.held -= c.before.held();
                c.before = Before::Unknown {
                    version: Some(version.to_owned()),
                    why: "its old text was dropped to keep the journal within its budget".into(),
                };
            }
        }
    }

    /// The indexes of the changes after `from`, grouped by file in the
    /// order each was first changed.
    pub(super) fn since_indices(&self, from: usize) -> Vec<Vec<usize>> {
        let mut files: Vec<Vec<usize>> = Vec::new();
        for at in from.min(self.changes.len())..self.changes.len() {
            let key = &self.changes[at].key;
            match files.iter_mut().find(|f| self.changes[f[0]].key == *key) {
                Some(file) => file.push(at),
                None => files.push(vec![at]),
            }
        }
        files
    }

    /// The changes after `from`, grouped by file in the order each was
    /// first changed.
    pub(super) fn since(&self, from: usize) -> Vec<Vec<&Change>> {
        self.since_indices(from)
            .into_iter()
            .map(|file| file.into_iter().map(|at| &self.changes[at]).collect())
            .collect()
    }
}

/// Of one file's changes in order, the index where the newest run of the
/// session's own changes starts: each change in it replaced the version the
/// one before wrote. Before it, someone else changed the file in between.
pub(super) fn own_run(chain: &[&Change]) -> usize {
    let mut start = chain.len() - 1;
    while start > 0 && chain[start].before.version() == chain[start - 1].after.as_deref() {
        start -= 1;
    }
    start
}

/// Where a session's change journal is kept between instances, for a host
/// that runs every call in a fresh one (the plugin world). The session
/// loads the index when it is given the keeper, a kept text only when
/// `changes` or `revert` needs it, and saves both after every call that
/// changed the journal: first the new texts, then the index naming them,
/// then it forgets the texts no longer named.
pub trait JournalKeeper: Debug {
    /// The index as last saved, if there is one.
    fn load(&self) -> Option<Vec<u8>>;
    /// Replaces the index, atomically: a reader finds the old or the new.
    fn save(&mut self, index: &[u8]) -> Result<(), String>;
    /// Keeps `text` (a kept text never changes): the name it is found by.
    fn keep(&mut self, text: &str) -> Result<String, String>;
    /// The text kept as `name`, when it is there whole.
    fn text(&self, name: &str) -> Option<String>;
    /// Forgets every kept text not named in `live`.
    fn forget_others(&mut self, live: &[&str]);
}

/// The index format written, and the only one read.
const IMAGE_FORMAT: u32 = 1;

/// The journal as a keeper stores it, written.
#[derive(Serialize)]
struct Image<'a> {
    format: u32,
    changes: &'a [Change],
    checkpoints: &'a [Checkpoint],
}

/// The journal as a keeper stores it, read back.
#[derive(Deserialize)]
struct Loaded {
    format: u32,
    changes: Vec<Change>,
    checkpoints: Vec<Checkpoint>,
}

/// Why a text the keeper should hold could not be read.
const LOST: &str = "its old text is missing or damaged where the journal is kept";

impl Journal {
    /// The journal an index describes, within `budget` (the oldest texts
    /// dropped past it); `None` when the index is not one this version
    /// wrote whole.
    pub(super) fn from_image(index: &[u8], budget: usize) -> Option<Journal> {
        let image: Loaded = serde_json::from_slice(index).ok()?;
        let changes = image.changes.len();
        let ordered = image
            .checkpoints
            .windows(2)
            .all(|w| w[0].id < w[1].id && w[0].at <= w[1].at);
        if image.format != IMAGE_FORMAT
            || !ordered
            || image.checkpoints.iter().any(|c| c.at > changes)
        {
            return None;
        }
        let mut journal = Journal::new(budget);
        journal.checkpoints = image.checkpoints;
        for change in image.changes {
            journal.record(change);
        }
        journal.generation = 0;
        Some(journal)
    }

    /// Hands every text not yet kept to `keeper` and answers the index
    /// naming them, with the names of every text it needs.
    pub(super) fn image(
        &mut self,
        keeper: &mut dyn JournalKeeper,
    ) -> Result<(Vec<u8>, Vec<String>), String> {
        let mut live = Vec::new();
        for change in &mut self.changes {
            if let Before::Text { version, text, bom } = &change.before {
                change.before = Before::Kept {
                    version: version.clone(),
                    len: text.len(),
                    bom: *bom,
                    name: keeper.keep(text)?,
                };
            }
            if let Before::Kept { name, .. } = &change.before {
                live.push(name.clone());
            }
        }
        let image = Image {
            format: IMAGE_FORMAT,
            changes: &self.changes,
            checkpoints: &self.checkpoints,
        };
        let index = serde_json::to_vec(&image).map_err(|e| e.to_string())?;
        Ok((index, live))
    }

    /// Loads from `keeper` the texts of the changes from `from` on; one
    /// missing, damaged or of another length makes its change not undoable.
    pub(super) fn load_texts(&mut self, from: usize, keeper: &dyn JournalKeeper) {
        for change in self.changes.iter_mut().skip(from) {
            if let Before::Kept {
                version,
                name,
                len,
                bom,
            } = &change.before
            {
                change.before = match keeper.text(name).filter(|t| t.len() == *len) {
                    Some(text) => Before::Text {
                        version: version.clone(),
                        text,
                        bom: *bom,
                    },
                    None => {
                        self.held -= len;
                        Before::Unknown {
                            version: Some(version.clone()),
                            why: LOST.into(),
                        }
                    }
                };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::Session;
    use crate::tools::JournalKeeper;
    use dsh_fs_core::layer::TextLayer;
    use dsh_fs_core::store::memory::MemoryStore;
    use std::cell::RefCell;
    use std::collections::HashMap;
    use std::rc::Rc;

    /// A keeper in memory, shared by the sessions made over it; `fail`
    /// makes its saves fail.
    #[derive(Debug, Default, Clone)]
    struct Shelf {
        index: Rc<RefCell<Option<Vec<u8>>>>,
        texts: Rc<RefCell<HashMap<String, String>>>,
        fail: Rc<RefCell<bool>>,
    }

    impl JournalKeeper for Shelf {
        fn load(&self) -> Option<Vec<u8>> {
            self.index.borrow().clone()
        }
        fn save(&mut self, index: &[u8]) -> Result<(), String> {
            if *self.fail.borrow() {
                return Err("the shelf is full".into());
            }
            *self.index.borrow_mut() = Some(index.to_vec());
            Ok(())
        }
        fn keep(&mut self, text: &str) -> Result<String, String> {
            let name = format!("t{}", text.len());
            self.texts.borrow_mut().insert(name.clone(), text.into());
            Ok(name)
        }
        fn text(&self, name: &str) -> Option<String> {
            self.texts.borrow().get(name).cloned()
        }
        fn forget_others(&mut self, live: &[&str]) {
            self.texts
                .borrow_mut()
                .retain(|n, _| live.contains(&n.as_str()));
        }
    }

    /// The workspace, handed from one session to the next.
    type Layer = RefCell<Option<TextLayer<MemoryStore>>>;

    fn layer() -> Layer {
        RefCell::new(Some(TextLayer::new(MemoryStore::default())))
    }

    fn bytes(layer: &Layer, path: &str) -> Option<Vec<u8>> {
        layer.borrow().as_ref().unwrap().store().get(path)
    }

    /// One call of a fresh session over `layer`, its journal on `shelf`
    /// within `budget`: the answer's text.
    fn call(layer: &Layer, shelf: &Shelf, budget: u64, tool: &str, args: &str) -> String {
        let mut session = Session::new(layer.take().unwrap(), false)
            .with_journal_budget(budget)
            .with_journal_keeper(Box::new(shelf.clone()));
        let text = session.execute(tool, args).text;
        *layer.borrow_mut() = Some(session.into_provider());
        text
    }

    #[test]
    fn a_kept_journal_serves_the_next_session_within_its_budget() {
        let layer = layer();
        let seed = layer.borrow();
        seed.as_ref()
            .unwrap()
            .store()
            .insert("a.txt", "\u{feff}one\r\n");
        drop(seed);
        let shelf = Shelf::default();
        let c = |tool, args| call(&layer, &shelf, 1 << 20, tool, args);
        assert!(c("checkpoint", "{}").starts_with("Checkpoint 1 set"));
        c(
            "edit",
            r#"{"file_path":"a.txt","old_string":"one","new_string":"two"}"#,
        );
        c("write", r#"{"file_path":"b.txt","content":"bee\n"}"#);
        assert_eq!(
            shelf.texts.borrow().len(),
            1,
            "a created file keeps no text"
        );
        let listed = c("changes", "{}");
        assert!(
            listed.starts_with("Changes since checkpoint 1: 2 files."),
            "{listed}"
        );
        let back = c("revert", "{}");
        assert!(back.contains("Restored a.txt"), "{back}");
        assert_eq!(
            bytes(&layer, "a.txt").unwrap(),
            "\u{feff}one\r\n".as_bytes()
        );
        assert_eq!(bytes(&layer, "b.txt"), None);

        // A session with a smaller budget drops the oldest texts it loads.
        let small = |tool, args| call(&layer, &shelf, 4, tool, args);
        let redo = small("revert", r#"{"to":2}"#);
        assert!(
            redo.contains("Left alone a.txt: not undoable: its old text was dropped"),
            "{redo}"
        );
        assert!(redo.contains("Restored b.txt"), "{redo}");
    }

    #[test]
    fn a_journal_that_cannot_be_saved_is_said_and_the_change_stands() {
        let layer = layer();
        let shelf = Shelf::default();
        call(&layer, &shelf, 1 << 20, "checkpoint", "{}");
        *shelf.fail.borrow_mut() = true;
        let out = call(
            &layer,
            &shelf,
            1 << 20,
            "write",
            r#"{"file_path":"a.txt","content":"x\n"}"#,
        );
        assert!(out.starts_with("Created a.txt"), "{out}");
        assert!(
            out.ends_with(
                "(Note: dsh-fs could not save the change journal (the shelf is full); changes \
and revert will not know of this call's changes.)"
            ),
            "{out}"
        );
        assert_eq!(bytes(&layer, "a.txt").unwrap(), b"x\n");
        // Nothing is saved by a call that did not change the journal.
        let read = call(&layer, &shelf, 1 << 20, "read", r#"{"file_path":"a.txt"}"#);
        assert!(!read.contains("Note"), "{read}");
    }
}

//! The session's change journal: what each committed `write`, `edit`,
//! `multi_edit` and `revert` changed — the path, the version before (or
//! "absent") and after, and the text before, within a memory budget — and
//! the checkpoints that name points in it. Kept from the first checkpoint
//! on (a host that offers undo sets one when the session opens), so a
//! session that never asks pays nothing.
//!
//! Everything the journal holds counts against its budget: the old texts,
//! and what names each change (its key, path and versions, and a fixed
//! share for its place in the journal). What names the changes may take
//! half the budget (at least [`MIN_NAMES`]) and there are at most
//! [`MAX_CHANGES`] changes and [`MAX_CHECKPOINTS`] checkpoints; past any of
//! these the oldest changes are forgotten whole, with every checkpoint set
//! before them, and `changes` and `revert` say so when asked for one. Past
//! the budget the oldest texts are dropped and their changes say so: a
//! revert that would need one reports the file "not undoable", it never
//! guesses. Every text is taken under the version the change was then
//! guarded by, so a journaled "before" is exactly what the change replaced.
//!
//! Every operation is linear in the changes and files it touches: changes
//! are grouped by file through a map, texts are dropped from a cursor, and
//! changes are forgotten in batches (down to seven eighths of a limit).

use dsh_fs_core::provider::Provider;
use dsh_fs_core::{EntryKind, ErrorCode, Version};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::fmt::Debug;

/// Bytes a journal holds by default: old texts and what names each change.
pub const DEFAULT_BUDGET: usize = 32 << 20;

/// Most changes a journal holds; past it the oldest are forgotten.
pub(super) const MAX_CHANGES: usize = 50_000;

/// Most checkpoints a journal holds; past it the oldest are forgotten.
pub(super) const MAX_CHECKPOINTS: usize = 1_000;

/// What the names of the changes may take of a small budget: a host that
/// keeps a few bytes of old text still gets checkpoints that work.
pub(super) const MIN_NAMES: usize = 64 << 10;

/// What a change costs beyond its strings: its place in the journal (twice
/// its size: a vector's room is at most twice its length), and a share for
/// its entry in a keeper's index.
const CHANGE_OVERHEAD: usize = 2 * std::mem::size_of::<Change>() + 64;

/// Largest file whose text is kept: what the tools read whole (a larger
/// one is streamed, never held).
pub(super) const MAX_KEPT: u64 = dsh_fs_core::STREAM_THRESHOLD;

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

impl Change {
    /// What naming the change costs the journal: everything but its text.
    fn names(&self) -> usize {
        let why = match &self.before {
            Before::Unknown { why, .. } => why.len(),
            _ => 0,
        };
        CHANGE_OVERHEAD
            + self.key.len()
            + self.path.len()
            + self.before.version().map_or(0, str::len)
            + self.after.as_ref().map_or(0, String::len)
            + why
    }
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
    /// Bytes of old text held.
    held: usize,
    /// Bytes that name the changes ([`Change::names`]) and checkpoints.
    names: usize,
    /// Changes before this one hold no text: where dropping resumes.
    first_held: usize,
    pub changes: Vec<Change>,
    pub checkpoints: Vec<Checkpoint>,
    /// The newest checkpoint forgotten, 0 for none.
    pub forgotten: u32,
    /// Counts the journal's changes, so a keeper saves only a changed one.
    pub generation: u64,
}

impl Journal {
    pub(super) fn new(budget: usize) -> Self {
        Journal {
            budget,
            held: 0,
            names: 0,
            first_held: 0,
            changes: Vec::new(),
            checkpoints: Vec::new(),
            forgotten: 0,
            generation: 0,
        }
    }

    /// Most bytes the names of the changes may take.
    fn names_limit(&self) -> usize {
        (self.budget / 2).max(MIN_NAMES)
    }

    /// Names the present point; its number. It forgets nothing: the caller
    /// calls [`Journal::trim`] when it holds no index into the journal.
    pub(super) fn checkpoint(&mut self, label: String) -> u32 {
        self.generation += 1;
        let id = self
            .checkpoints
            .last()
            .map_or(self.forgotten, |c| c.id)
            .saturating_add(1);
        self.names += CHANGE_OVERHEAD + label.len();
        self.checkpoints.push(Checkpoint {
            id,
            label,
            at: self.changes.len(),
        });
        id
    }

    pub(super) fn find(&self, id: u32) -> Option<&Checkpoint> {
        let at = self.checkpoints.binary_search_by_key(&id, |c| c.id).ok()?;
        Some(&self.checkpoints[at])
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

    /// Records a committed change, dropping the oldest texts past the
    /// budget and forgetting the oldest changes past the journal's limits;
    /// none while every checkpoint is forgotten (no revert could use it).
    pub(super) fn record(&mut self, change: Change) {
        if self.checkpoints.is_empty() {
            return;
        }
        self.record_keeping(change, usize::MAX);
        self.trim();
    }

    /// Records a change, dropping past the budget the oldest texts before
    /// change `keep` (a revert still reading the ones from there on), then,
    /// if still over, the new change's own. It forgets no change: the
    /// caller, holding indexes into the journal, calls [`Journal::trim`]
    /// when done.
    pub(super) fn record_keeping(&mut self, change: Change, keep: usize) {
        self.generation += 1;
        self.held += change.before.held();
        self.names += change.names();
        self.changes.push(change);
        let last = self.changes.len() - 1;
        self.fit(keep.min(last));
        if self.held > self.room() {
            self.drop_text(last);
        }
    }

    /// Bytes the texts may take: what the names leave, and at least half
    /// the budget.
    fn room(&self) -> usize {
        self.budget - self.names.min(self.budget / 2)
    }

    /// Drops the oldest texts before change `keep` while they take more
    /// than their room.
    fn fit(&mut self, keep: usize) {
        while self.held > self.room() && self.first_held < keep.min(self.changes.len()) {
            self.drop_text(self.first_held);
            self.first_held += 1;
        }
    }

    /// Drops the text of change `at`, if it holds one.
    fn drop_text(&mut self, at: usize) {
        let c = &mut self.changes[at];
        if let Some(version) = c.before.version().filter(|_| c.before.held() > 0) {
            self.held -= c.before.held();
            self.names -= c.names();
            c.before = Before::Unknown {
                version: Some(version.to_owned()),
                why: "its old text was dropped to keep the journal within its budget".into(),
            };
            self.names += c.names();
        }
    }

    /// Drops the oldest texts past the budget (a revert may have held more
    /// while it read them). Forgets the oldest changes whole while the
    /// journal is past one of its limits (down to seven eighths of it, so that a full journal
    /// forgets in batches), with every checkpoint set before them; and
    /// the changes before the oldest checkpoint left, which no revert can
    /// reach.
    pub(super) fn trim(&mut self) {
        self.fit(usize::MAX);
        let names_limit = self.names_limit();
        let over = |j: &Journal| {
            j.names > names_limit
                || j.changes.len() > MAX_CHANGES
                || j.checkpoints.len() > MAX_CHECKPOINTS
        };
        if !over(self) {
            return;
        }
        // Each limit passed is brought down to seven eighths of itself.
        let names_goal = match self.names > names_limit {
            true => names_limit / 8 * 7,
            false => usize::MAX,
        };
        let changes_goal = match self.changes.len() > MAX_CHANGES {
            true => MAX_CHANGES / 8 * 7,
            false => usize::MAX,
        };
        // How many of the oldest changes go.
        let (mut names, mut gone) = (self.names, 0);
        while gone < self.changes.len()
            && (names > names_goal || self.changes.len() - gone > changes_goal)
        {
            names -= self.changes[gone].names();
            gone += 1;
        }
        // Checkpoints before the first change kept lost some of theirs.
        let mut lost = self.checkpoints.partition_point(|c| c.at < gone);
        if self.checkpoints.len() > MAX_CHECKPOINTS {
            lost = lost.max(self.checkpoints.len() - MAX_CHECKPOINTS / 8 * 7);
        }
        if let Some(c) = lost.checked_sub(1).map(|i| &self.checkpoints[i]) {
            self.forgotten = c.id;
        }
        for c in self.checkpoints.drain(..lost) {
            self.names -= CHANGE_OVERHEAD + c.label.len();
        }
        // No revert reaches the changes before the oldest checkpoint left.
        gone = match self.checkpoints.first() {
            Some(c) => c.at.clamp(gone, self.changes.len()),
            None => self.changes.len(),
        };
        for c in self.changes.drain(..gone) {
            self.held -= c.before.held();
            self.names -= c.names();
        }
        for c in &mut self.checkpoints {
            c.at -= gone;
        }
        self.first_held = self.first_held.saturating_sub(gone);
        self.generation += 1;
    }

    /// The indexes of the changes after `from`, grouped by file in the
    /// order each was first changed.
    pub(super) fn since_indices(&self, from: usize) -> Vec<Vec<usize>> {
        let mut files: Vec<Vec<usize>> = Vec::new();
        let mut by_key: HashMap<&str, usize> = HashMap::new();
        for at in from.min(self.changes.len())..self.changes.len() {
            let key = self.changes[at].key.as_str();
            match by_key.entry(key) {
                Entry::Occupied(file) => files[*file.get()].push(at),
                Entry::Vacant(slot) => {
                    slot.insert(files.len());
                    files.push(vec![at]);
                }
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
    forgotten: u32,
}

/// The journal as a keeper stores it, read back.
#[derive(Deserialize)]
struct Loaded {
    format: u32,
    changes: Vec<Change>,
    checkpoints: Vec<Checkpoint>,
    /// Absent in an index written before checkpoints were forgotten.
    #[serde(default)]
    forgotten: u32,
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
            || image
                .checkpoints
                .first()
                .is_some_and(|c| c.id <= image.forgotten)
        {
            return None;
        }
        let mut journal = Journal::new(budget);
        journal.names = image
            .checkpoints
            .iter()
            .map(|c| CHANGE_OVERHEAD + c.label.len())
            .sum();
        journal.checkpoints = image.checkpoints;
        journal.forgotten = image.forgotten;
        for change in image.changes {
            journal.record_keeping(change, usize::MAX);
        }
        journal.trim();
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
            forgotten: self.forgotten,
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
    use serde_json::json;
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

    /// A file with a BOM and CRLF, of 7 KiB.
    fn a_txt() -> String {
        format!("\u{feff}one\r\n{}", "a line of text\r\n".repeat(448))
    }

    #[test]
    fn a_kept_journal_serves_the_next_session_within_its_budget() {
        let layer = layer();
        let seed = layer.borrow();
        seed.as_ref().unwrap().store().insert("a.txt", a_txt());
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
        assert_eq!(bytes(&layer, "a.txt").unwrap(), a_txt().as_bytes());
        assert_eq!(bytes(&layer, "b.txt"), None);

        // A session with a smaller budget drops the oldest texts it loads:
        // a.txt's two do not fit beside what names the changes.
        let small = |tool, args| call(&layer, &shelf, 8 << 10, tool, args);
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

    /// A change of `path` from version `from` to `from + 1`, its old text
    /// `text` long.
    fn change(path: &str, from: usize, text: usize) -> super::Change {
        super::Change {
            key: path.to_owned(),
            path: path.to_owned(),
            before: super::Before::Text {
                version: format!("v{from}"),
                text: "x".repeat(text),
                bom: false,
            },
            after: Some(format!("v{}", from + 1)),
        }
    }

    /// What the journal holds, as it counts it, within its limits.
    fn within_limits(j: &super::Journal) {
        assert!(
            j.held <= j.room(),
            "{} + {} > {}",
            j.held,
            j.names,
            j.budget
        );
        assert!(j.names <= j.names_limit());
        assert!(j.changes.len() <= super::MAX_CHANGES);
        assert!(j.checkpoints.len() <= super::MAX_CHECKPOINTS);
        let held: usize = j.changes.iter().map(|c| c.before.held()).sum();
        let names: usize = j.changes.iter().map(super::Change::names).sum::<usize>()
            + j.checkpoints
                .iter()
                .map(|c| super::CHANGE_OVERHEAD + c.label.len())
                .sum::<usize>();
        assert_eq!((j.held, j.names), (held, names), "the counts drifted");
        assert!(j.checkpoints.iter().all(|c| c.at <= j.changes.len()));
    }

    // Issue 43, finding 1: 36,500 writes of a 2-byte file at a 3,519-byte
    // path grew the instance by ~7 KB a change until it trapped.
    #[test]
    fn changes_at_long_paths_are_counted_and_the_oldest_forgotten() {
        let mut j = super::Journal::new(super::DEFAULT_BUDGET);
        j.checkpoint("start".into());
        let path = format!("{}f", "d/".repeat(1759));
        assert_eq!(path.len(), 3519);
        for i in 0..36_500 {
            j.record(change(&path, i, 2));
            within_limits(&j);
        }
        // Half the budget names ~2,300 such changes; the first checkpoint
        // went with the oldest of them.
        assert!(j.changes.len() < 2_500, "{}", j.changes.len());
        assert_eq!((j.forgotten, j.checkpoints.len()), (1, 0));
        assert_eq!(j.checkpoint("again".into()), 2, "ids are never reused");

        // Once every checkpoint is forgotten, nothing is recorded.
        j.checkpoints.clear();
        j.record(change("a", 0, 1));
        assert_eq!(j.changes.len(), 0);

        // Short paths, a checkpoint every thousand changes: the count of
        // changes or their names is the limit.
        let mut j = super::Journal::new(super::DEFAULT_BUDGET);
        for i in 0..super::MAX_CHANGES + 10 {
            if i % 1_000 == 0 {
                j.checkpoint(String::new());
            }
            j.record(change(&format!("f{}", i % 6_000), i, 0));
            assert!(j.changes.len() <= super::MAX_CHANGES);
        }
        within_limits(&j);
        assert!(j.changes.len() > 30_000, "{}", j.changes.len());

        // Checkpoints past their limit: the oldest go, with the changes
        // no revert reaches any more.
        let mut j = super::Journal::new(super::DEFAULT_BUDGET);
        for i in 0..super::MAX_CHECKPOINTS + 1 {
            j.checkpoint(format!("c{i}"));
            j.record(change("a", i, 1));
        }
        within_limits(&j);
        let first = &j.checkpoints[0];
        assert_eq!((first.id as usize, first.at), (j.forgotten as usize + 1, 0));
    }

    // Issue 43, finding 2: grouping by file searched the files found so far
    // for each change.
    #[test]
    fn changes_are_grouped_by_file_in_the_order_each_was_first_changed() {
        let mut j = super::Journal::new(super::DEFAULT_BUDGET);
        j.checkpoint(String::new());
        let mut rng = fastrand::Rng::with_seed(43);
        for i in 0..40_000 {
            j.record(change(&format!("f{}", rng.usize(..6_000)), i, 0));
        }
        let grouped = j.since_indices(0);
        // Each group one file's changes in order, the groups in the order
        // of their first changes, every change in one group, every file in
        // one group.
        let mut seen = vec![false; j.changes.len()];
        let mut keys = std::collections::HashSet::new();
        for file in &grouped {
            assert!(keys.insert(&j.changes[file[0]].key));
            assert!(file.windows(2).all(|w| w[0] < w[1]));
            for &at in file {
                assert_eq!(j.changes[at].key, j.changes[file[0]].key);
                assert!(!std::mem::replace(&mut seen[at], true));
            }
        }
        assert!(seen.iter().all(|&s| s));
        assert!(grouped.windows(2).all(|w| w[0][0] < w[1][0]));
        let from = j.since_indices(39_990);
        assert_eq!(from.iter().map(Vec::len).sum::<usize>(), 10);
    }

    /// Random sessions over the memory store: writes, edits, multi_edits,
    /// checkpoints, reverts, listings and an outside writer. After every
    /// step the journal is within its limits and the answer within 64 KiB;
    /// a file the outside writer changed last is never touched by a revert.
    #[test]
    fn random_sessions_keep_the_journal_and_every_answer_bounded() {
        for seed in 0..4 {
            let mut rng = fastrand::Rng::with_seed(seed);
            let layer: TextLayer<MemoryStore> = TextLayer::new(MemoryStore::default());
            let budget = [64 << 10, 256 << 10, 1 << 20, super::DEFAULT_BUDGET][seed as usize];
            let mut s = Session::new(layer, true).with_journal_budget(budget as u64);
            let long = format!("{}x.txt", "deep/".repeat(60));
            let names: Vec<String> = (0..40)
                .map(|i| match i {
                    0 => long.clone(),
                    _ => format!("d{}/f{i}.txt", i % 4),
                })
                .collect();
            // Paths the outside writer changed after the session last did.
            let mut outside: HashMap<String, Vec<u8>> = HashMap::new();
            let (mut dropped, mut forgot) = (false, false);
            for step in 0..600 {
                let path = &names[rng.usize(..names.len())];
                let size = [1, 40, 4_000, 30_000][rng.usize(..4)];
                let text: String = (0..size).map(|_| rng.alphanumeric()).collect();
                let text = format!("{text}\nend\n");
                let (tool, args) = match rng.u32(..100) {
                    0..=34 => ("write", json!({"file_path": path, "content": text})),
                    35..=49 => ("read", json!({"file_path": path, "limit": 5})),
                    50..=59 => (
                        "edit",
                        json!({"file_path": path, "old_string": "end", "new_string": format!("end{step}")}),
                    ),
                    60..=64 => (
                        "multi_edit",
                        json!({"file_path": path, "edits": [
                            {"old_string": "\n", "new_string": "\n\n", "replace_all": true},
                            {"old_string": "end", "new_string": "END"}]}),
                    ),
                    65..=71 => ("checkpoint", json!({"label": format!("s{step}")})),
                    72..=79 => {
                        let to = rng.u32(
                            1..s.journal
                                .as_ref()
                                .map_or(1, |j| j.forgotten + j.checkpoints.len() as u32 + 1)
                                + 1,
                        );
                        ("revert", json!({"to": to}))
                    }
                    80..=87 => ("changes", json!({})),
                    _ => {
                        let bytes = format!("outside {step}\n").into_bytes();
                        s.provider.store().insert(path, bytes.clone());
                        outside.insert(path.clone(), bytes);
                        continue;
                    }
                };
                let result = s.execute(tool, &args.to_string());
                assert!(
                    result.text.len() <= 64 << 10,
                    "seed {seed} step {step}: {tool} answered {} bytes",
                    result.text.len()
                );
                if let Some(j) = &s.journal {
                    within_limits(j);
                    forgot |= j.forgotten > 0;
                    dropped |= j.changes.iter().any(|c| {
                        matches!(&c.before, super::Before::Unknown { why, .. } if why.contains("dropped"))
                    });
                }
                if !result.is_error() && matches!(tool, "write" | "edit" | "multi_edit") {
                    outside.remove(path);
                }
                for (path, bytes) in &outside {
                    assert_eq!(
                        s.provider.store().get(path).as_ref(),
                        Some(bytes),
                        "seed {seed} step {step}: {tool} changed {path}, which someone else \
changed last:\n{}",
                        result.text
                    );
                }
            }
            // The limits were reached, not only respected.
            assert!(
                dropped || budget > 1 << 20,
                "seed {seed}: no text was dropped"
            );
            assert_eq!(
                forgot,
                budget <= 256 << 10,
                "seed {seed}: checkpoints forgotten"
            );
        }
    }

    // Issue 43: an answer always arrives before the deadline. A revert past
    // its time starts no other file and says how to go on.
    #[test]
    fn a_revert_out_of_time_stops_between_files_and_says_how_to_go_on() {
        let layer: TextLayer<MemoryStore> = TextLayer::new(MemoryStore::default());
        let mut s = Session::new(layer, false);
        s.execute("checkpoint", "{}");
        for i in 0..3 {
            let args = json!({"file_path": format!("f{i}.txt"), "content": "x\n"});
            assert!(!s.execute("write", &args.to_string()).is_error());
        }
        // A call whose deadline has passed: nothing is started.
        let late = std::time::Instant::now();
        let out = dsh_fs_core::deadline::scope(late, || s.execute("revert", "{}")).text;
        assert_eq!(
            out,
            "Reverted to checkpoint 1: 0 files restored, 0 left alone.\nStopped after 0 s: 3 \
files not reverted yet; revert with to=1 again to go on (the files already restored stay as they \
are).\nTo redo: revert with to=2."
        );
        assert_eq!(s.provider.store().get("f0.txt").unwrap(), b"x\n");
        let out = s.execute("revert", r#"{"to":1}"#).text;
        assert!(
            out.starts_with("Reverted to checkpoint 1: 3 files restored, 0 left alone."),
            "{out}"
        );
        assert!((0..3).all(|i| s.provider.store().get(&format!("f{i}.txt")).is_none()));
    }
}

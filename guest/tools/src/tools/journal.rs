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

/// Bytes of old text a journal holds by default.
pub const DEFAULT_BUDGET: usize = 32 << 20;

/// Largest file whose text is kept: what the tools read whole (a larger
/// one is streamed, never held).
const MAX_KEPT: u64 = dsh_fs_core::STREAM_THRESHOLD;

/// What a file was before a change.
#[derive(Debug)]
pub(super) enum Before {
    /// Nothing was at the path: the change created the file.
    Absent,
    /// The file's text, whether it began with a BOM, and its version.
    Text {
        version: Version,
        text: String,
        bom: bool,
    },
    /// The file, whose text is not kept: why.
    Unknown {
        version: Option<Version>,
        why: &'static str,
    },
}

impl Before {
    /// The version the change replaced; `None` for a created file.
    pub(super) fn version(&self) -> Option<&str> {
        match self {
            Before::Absent => None,
            Before::Text { version, .. } => Some(version),
            Before::Unknown { version, .. } => version.as_deref(),
        }
    }

    fn held(&self) -> usize {
        match self {
            Before::Text { text, .. } => text.len(),
            _ => 0,
        }
    }
}

/// One committed change.
#[derive(Debug)]
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
#[derive(Debug)]
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
}

impl Journal {
    pub(super) fn new(budget: usize) -> Self {
        Journal {
            budget,
            held: 0,
            changes: Vec::new(),
            checkpoints: Vec::new(),
        }
    }

    /// Names the present point; its number.
    pub(super) fn checkpoint(&mut self, label: String) -> u32 {
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
                    why: "it could not be examined before the change",
                };
            }
        };
        let unknown = |why| Before::Unknown {
            version: Some(info.version.clone()),
            why,
        };
        let size = info.size.unwrap_or(0);
        if info.kind != EntryKind::File {
            return unknown("it was not a regular file");
        }
        if size > MAX_KEPT.min(self.budget as u64) {
            return unknown("it was larger than the journal keeps (10 MiB)");
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
        self.held += change.before.held();
        self.changes.push(change);
        let last = self.changes.len() - 1;
        let candidates = (0..keep.min(last)).chain(std::iter::once(last));
        for at in candidates {
            if self.held <= self.budget {
                break;
            }
            let c = &mut self.changes[at];
            if let Before::Text { version, text, .. } = &c.before {
                self.held -= text.len();
                c.before = Before::Unknown {
                    version: Some(version.clone()),
                    why: "its old text was dropped to keep the journal within its budget",
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

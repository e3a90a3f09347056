//! The dsh-fs tools for plugin runtimes: built for `wasm32-wasip2` this
//! crate is the component of world `fs-plugin` (`wit/since_v0.1.0/world.wit`),
//! whose world-level functions `read`, `write`, `edit`, `glob` and `grep`
//! runtimes such as wassette turn into tools and `wasmtime run --invoke`
//! calls by name; with the `undo` feature, of world `fs-plugin-undo`, which
//! adds `multi-edit`, `checkpoint`, `changes` and `revert`. The tools, the
//! text layer and the `wasi:filesystem` store are linked in as libraries:
//! the component imports nothing but WASI.
//!
//! Such runtimes make a fresh instance for every call, so a session cannot
//! live in memory. Every call here is one call of a [`Session`] whose
//! observations live in a state directory ([`state::DiskMemory`]), and its
//! change journal beside them ([`journal::DiskJournal`]): the
//! read-before-edit policy and undo hold across instances exactly as they
//! do inside one. Configuration comes from the environment ([`Settings::from_env`]):
//!
//! - `DSH_FS_ROOT`: the workspace, a preopened directory (default `/work`);
//! - `DSH_FS_STATE`: the state directory, preopened too, outside the
//!   workspace (the model could forge observations through `write` inside
//!   it) unless `DSH_FS_STATE_IN_WORKSPACE=1` says that is meant;
//! - `DSH_FS_SESSION`: a name that keeps agents sharing one state directory
//!   apart (default `default`);
//! - `DSH_FS_JOURNAL_BYTES`: the most bytes of old text the change journal
//!   keeps (default 32 MiB; 0 keeps none).
//!
//! Built natively the crate is the same calls over the host's filesystem,
//! for tests.
#![deny(missing_docs)]

pub mod journal;
pub mod state;

#[cfg(target_arch = "wasm32")]
mod component;

use dsh_fs_store_wasi::{WasiProvider, WasiStore};
use dsh_fs_tools::error::{Tool, ToolError};
use dsh_fs_tools::{Memory, Session};
use journal::DiskJournal;
use state::DiskMemory;
use std::path::PathBuf;

/// Where a call works and remembers, read from the environment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    /// The workspace root (`DSH_FS_ROOT`).
    pub root: PathBuf,
    /// The state directory (`DSH_FS_STATE`), when one is named.
    pub state: Option<PathBuf>,
    /// Whether the state directory may lie inside the workspace.
    pub state_in_workspace: bool,
    /// The session's name (`DSH_FS_SESSION`).
    pub session: String,
    /// Whether the session's change journal starts by itself, at its first
    /// change, with checkpoint 1 "session start" (the component that
    /// exports `checkpoint`, `changes` and `revert`); otherwise at the
    /// first `checkpoint`.
    pub journal_from_first_change: bool,
    /// Most bytes of old text the journal keeps (`DSH_FS_JOURNAL_BYTES`,
    /// default 32 MiB, 0 for none), as given.
    pub journal_bytes: Option<String>,
}

impl Settings {
    /// The settings `var` gives (`std::env::var` in the component).
    pub fn from_env(var: impl Fn(&str) -> Option<String>) -> Self {
        let set = |name: &str| var(name).filter(|v| !v.is_empty());
        Settings {
            root: set(dsh_fs_store_wasi::ROOT_ENV)
                .unwrap_or_else(|| dsh_fs_store_wasi::DEFAULT_ROOT.into())
                .into(),
            state: set("DSH_FS_STATE").map(PathBuf::from),
            state_in_workspace: set("DSH_FS_STATE_IN_WORKSPACE").as_deref() == Some("1"),
            session: set("DSH_FS_SESSION").unwrap_or_else(|| "default".into()),
            journal_from_first_change: false,
            journal_bytes: set("DSH_FS_JOURNAL_BYTES"),
        }
    }

    /// The journal's budget, when one is set: refused unless a whole number.
    fn journal_budget(&self) -> Result<Option<u64>, ToolError> {
        let Some(given) = &self.journal_bytes else {
            return Ok(None);
        };
        given.trim().parse().map(Some).map_err(|_| ToolError {
            code: "INVALID_ARGS".into(),
            message: format!(
                "DSH_FS_JOURNAL_BYTES={given:?} is not a whole number of bytes: set the most bytes \
                 of old text the change journal keeps (0 for no journal), or leave it unset for 32 MiB."
            ),
            detail: String::new(),
        })
    }

    /// The memory of this session, or why there is none to use.
    fn memory(&self, tool: &str) -> Result<(DiskMemory, PathBuf), ToolError> {
        let refuse = |why: String| ToolError {
            code: "FS_IO_ERROR".into(),
            message: format!(
                "{tool} needs a state directory, where dsh-fs keeps what was read and changed between calls, and {why}: \
                 grant a directory outside the workspace and name it in DSH_FS_STATE \
                 (wasmtime run: --dir HOST_DIR::/state --env DSH_FS_STATE=/state; wassette: \
                 its policy file, as the one shipped beside the component does)."
            ),
            detail: String::new(),
        };
        let Some(dir) = &self.state else {
            return Err(refuse("DSH_FS_STATE names none".into()));
        };
        if !dir.is_absolute() {
            return Err(refuse(format!(
                "DSH_FS_STATE={} is not absolute",
                dir.display()
            )));
        }
        if dir.starts_with(&self.root) && !self.state_in_workspace {
            return Err(refuse(format!(
                "DSH_FS_STATE={} is inside the workspace {}, where a write could forge it \
                 (set DSH_FS_STATE_IN_WORKSPACE=1 if that is meant)",
                dir.display(),
                self.root.display()
            )));
        }
        if !std::fs::metadata(dir).is_ok_and(|m| m.is_dir()) {
            return Err(refuse(format!(
                "DSH_FS_STATE={} is not a directory granted to the runtime",
                dir.display()
            )));
        }
        Ok((DiskMemory::new(dir, &self.session, &self.root), dir.clone()))
    }
}

/// Runs one call of `tool` with `arguments` (the JSON object the model
/// sent) as a session that remembers in the state directory what it read
/// and, once it keeps one, its change journal; answers the text the model
/// sees, an error starting with its code.
pub fn call(settings: &Settings, tool: &str, arguments: &str) -> String {
    // The five every runtime lists, then those only `fs-plugin-undo` exports.
    let known = dsh_fs_tools::definitions()
        .into_iter()
        .chain(dsh_fs_tools::extra_definitions())
        .any(|d| d.name == tool);
    if !known {
        return ToolError::unknown_tool(tool).text();
    }
    // The remedies of `edit`'s failures fit the tools that change files.
    let kind = [Tool::Read, Tool::Write, Tool::Glob, Tool::Grep]
        .into_iter()
        .find(|t| t.name() == tool)
        .unwrap_or(Tool::Edit);
    let store = match WasiStore::new(&settings.root) {
        Ok(store) => store,
        Err(e) => return ToolError::from_fs(kind, e).text(),
    };
    // Discovery observes nothing: it needs no state directory.
    if matches!(tool, "glob" | "grep") {
        return Session::new(WasiProvider::new(store), true)
            .execute(tool, arguments)
            .text;
    }
    let (memory, dir) = match settings.memory(tool) {
        Ok(found) => found,
        Err(e) => return e.text(),
    };
    // Instances running at once take their commit locks there too.
    let provider = WasiProvider::new(store.with_lock_dir(&dir));
    let failures = memory.failures();
    let boxed: Box<dyn Memory> = Box::new(memory);
    let mut session = Session::with_memory(provider, true, boxed);
    match settings.journal_budget() {
        Ok(Some(bytes)) => session = session.with_journal_budget(bytes),
        Ok(None) => {}
        Err(e) => return e.text(),
    }
    // A call that may change the journal holds its lock from load to save.
    let keeper = DiskJournal::new(&dir, &settings.session, &settings.root);
    let kept = keeper.exists();
    let start = settings.journal_from_first_change && !kept;
    let _held = match tool != "read" && (kept || start || tool == "checkpoint") {
        false => None,
        true => match keeper.lock() {
            Ok(held) => Some(held),
            Err(e) => return ToolError::from_fs(kind, e).text(),
        },
    };
    if tool != "read" {
        session = session.with_journal_keeper(Box::new(keeper));
    }
    // A checkpoint starts the journal itself, at its own number 1.
    if start && !session.journaling() && matches!(tool, "write" | "edit" | "multi_edit") {
        session.execute("checkpoint", r#"{"label":"session start"}"#);
    }
    let mut text = session.execute(tool, arguments).text;
    if let Some(why) = failures.take() {
        text.push_str(&format!(
            "\n(Note: dsh-fs {why}; the next change to this file will ask for a read first.)"
        ));
    } else if text.starts_with("FS_NOT_OBSERVED: ") {
        // A read asked for in vain while nothing can be recorded: say so.
        if let Err(e) = state::probe(&dir) {
            text.push_str(&format!(
                "\n(Note: dsh-fs cannot write in the state directory {} ({e}), so no read is \
                 kept and every change is refused until it can: free space there or grant a \
                 writable one, then read the file again.)",
                dir.display()
            ));
        }
    }
    text
}

#[cfg(test)]
mod tests;

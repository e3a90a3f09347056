//! The dsh-fs tools for plugin runtimes: built for `wasm32-wasip2` this
//! crate is the component of world `fs-plugin` (`wit/since_v0.1.0/world.wit`),
//! whose world-level functions `read`, `write`, `edit`, `glob` and `grep`
//! runtimes such as wassette turn into tools and `wasmtime run --invoke`
//! calls by name. The tools, the text layer and the `wasi:filesystem` store
//! are linked in as libraries: the component imports nothing but WASI.
//!
//! Such runtimes make a fresh instance for every call, so a session cannot
//! live in memory. Every call here is one call of a [`Session`] whose
//! observations live in a state directory ([`state::DiskMemory`]): the
//! read-before-edit policy holds across instances exactly as it does inside
//! one. Configuration comes from the environment ([`Settings::from_env`]):
//!
//! - `DSH_FS_ROOT`: the workspace, a preopened directory (default `/work`);
//! - `DSH_FS_STATE`: the state directory, preopened too, outside the
//!   workspace (the model could forge observations through `write` inside
//!   it) unless `DSH_FS_STATE_IN_WORKSPACE=1` says that is meant;
//! - `DSH_FS_SESSION`: a name that keeps agents sharing one state directory
//!   apart (default `default`).
//!
//! Built natively the crate is the same calls over the host's filesystem,
//! for tests.
#![deny(missing_docs)]

pub mod state;

#[cfg(target_arch = "wasm32")]
mod component;

use dsh_fs_store_wasi::{WasiProvider, WasiStore};
use dsh_fs_tools::error::{Tool, ToolError};
use dsh_fs_tools::{Memory, Session};
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
        }
    }

    /// The memory of this session, or why there is none to use.
    fn memory(&self, tool: Tool) -> Result<(DiskMemory, PathBuf), ToolError> {
        let refuse = |why: String| ToolError {
            code: "FS_IO_ERROR".into(),
            message: format!(
                "{} needs a state directory, where dsh-fs keeps what was read between calls, and {why}: \
                 grant a directory outside the workspace and name it in DSH_FS_STATE \
                 (wasmtime run: --dir HOST_DIR::/state --env DSH_FS_STATE=/state; wassette: \
                 its policy file, as the one shipped beside the component does).",
                tool.name()
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
/// sent) as a session that remembers in the state directory; answers the
/// text the model sees, an error starting with its code.
pub fn call(settings: &Settings, tool: &str, arguments: &str) -> String {
    let Some(which) = [Tool::Read, Tool::Write, Tool::Edit, Tool::Glob, Tool::Grep]
        .into_iter()
        .find(|t| t.name() == tool)
    else {
        return ToolError::unknown_tool(tool).text();
    };
    let store = match WasiStore::new(&settings.root) {
        Ok(store) => store,
        Err(e) => return ToolError::from_fs(which, e).text(),
    };
    // Discovery observes nothing: it needs no state directory.
    if matches!(which, Tool::Glob | Tool::Grep) {
        return Session::new(WasiProvider::new(store), true)
            .execute(tool, arguments)
            .text;
    }
    let (memory, dir) = match settings.memory(which) {
        Ok(found) => found,
        Err(e) => return e.text(),
    };
    // Instances running at once take their commit locks there too.
    let provider = WasiProvider::new(store.with_lock_dir(dir));
    let failures = memory.failures();
    let boxed: Box<dyn Memory> = Box::new(memory);
    let mut text = Session::with_memory(provider, true, boxed)
        .execute(tool, arguments)
        .text;
    if let Some(why) = failures.take() {
        text.push_str(&format!(
            "\n(Note: dsh-fs {why}; the next change to this file will ask for a read first.)"
        ));
    }
    text
}

#[cfg(test)]
mod tests;

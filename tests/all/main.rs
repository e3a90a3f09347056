//! The one integration-test binary: everything here runs the real tools
//! component in wasmtime against real files, except `contract`, which checks
//! each provider backend directly against the seam's contract.

mod adapter;
mod attacks;
mod changes;
mod cli;
mod component;
mod confinement;
mod contract;
mod discovery;
mod faults;
mod fidelity;
mod hardening;
mod hostile;
mod hosts;
mod jco;
mod listing;
mod mcp;
mod mcp_budget;
mod mcp_transport;
mod mistakes;
mod multi_edit;
mod object_store;
mod plugin;
mod readme;
mod reads;
mod reliability;
mod schema;
mod serve;
mod stores;
mod undo;
mod wasi_store;
mod wasmtime_cli;

use dsh_fs::{
    DynProvider, LocalProvider, LocalStore, Runtime, Session, SessionOptions, ToolResult,
};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

/// Where the host's build left the text layer component (`guest/text`).
pub const ADAPTER_PATH: &str = env!("DSH_FS_ADAPTER_PATH");

/// The repository's root: the host crate lives two levels below it.
pub fn workspace() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// Where the tests keep the compiled-component cache (shared by subprocesses).
pub fn cache_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("dsh-fs-cache")
}

/// One runtime for the whole test binary: the component compiles once.
pub fn runtime() -> &'static Runtime {
    static RUNTIME: OnceLock<Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        Runtime::builder()
            .cache_dir(Some(cache_dir()))
            .build()
            .expect("loading the tools component")
    })
}

/// A runtime whose calls may last `timeout` (its component from the shared
/// cache, compiled by [`runtime`] or a test before).
pub fn runtime_with_timeout(timeout: std::time::Duration) -> Runtime {
    Runtime::builder()
        .cache_dir(Some(cache_dir()))
        .limits(dsh_fs::Limits {
            call_timeout: timeout,
            ..dsh_fs::Limits::default()
        })
        .build()
        .unwrap()
}

/// A scratch workspace directory with an `outside/` sibling the workspace
/// must never reach.
pub struct Workspace {
    _tmp: tempfile::TempDir,
    pub root: PathBuf,
    pub outside: PathBuf,
}

#[allow(clippy::new_without_default)] // each call makes a new scratch directory
impl Workspace {
    pub fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("root");
        let outside = tmp.path().join("outside");
        std::fs::create_dir(&root).unwrap();
        std::fs::create_dir(&outside).unwrap();
        std::fs::write(outside.join("secret.txt"), "TOP SECRET\n").unwrap();
        Workspace {
            _tmp: tmp,
            root,
            outside,
        }
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    pub fn write(&self, rel: &str, bytes: impl AsRef<[u8]>) {
        let p = self.path(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(p, bytes).unwrap();
    }

    pub fn bytes(&self, rel: &str) -> Vec<u8> {
        std::fs::read(self.path(rel)).unwrap()
    }

    pub fn provider(&self) -> Arc<DynProvider> {
        Arc::new(LocalProvider::new(LocalStore::new(&self.root).unwrap()))
    }

    pub fn session(&self) -> Session {
        runtime()
            .session(self.provider(), SessionOptions::default())
            .unwrap()
    }

    /// Every file under `dir` with its bytes, for "nothing changed" checks.
    pub fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
        let mut out = Vec::new();
        let mut stack = vec![dir.to_path_buf()];
        while let Some(d) = stack.pop() {
            for entry in std::fs::read_dir(&d).unwrap() {
                let entry = entry.unwrap();
                let ty = entry.file_type().unwrap();
                if ty.is_dir() {
                    stack.push(entry.path());
                } else if ty.is_file() {
                    out.push((entry.path(), std::fs::read(entry.path()).unwrap()));
                } else {
                    out.push((entry.path(), Vec::new()));
                }
            }
        }
        out.sort();
        out
    }
}

/// Runs one call with a JSON value as arguments.
pub fn call(session: &mut Session, tool: &str, args: serde_json::Value) -> ToolResult {
    session.execute(tool, &args.to_string())
}

/// The error code of a result, or "OK".
pub fn code(result: &ToolResult) -> &str {
    result.error.as_ref().map_or("OK", |e| e.code.as_str())
}

/// Asserts success and returns the text.
#[track_caller]
pub fn ok(result: ToolResult) -> String {
    assert!(!result.is_error, "expected success, got: {}", result.text);
    result.text
}

/// Asserts failure with `expected` code and returns the text.
#[track_caller]
pub fn fails(result: ToolResult, expected: &str) -> String {
    assert!(
        result.is_error,
        "expected {expected}, got success: {}",
        result.text
    );
    assert_eq!(code(&result), expected, "{}", result.text);
    assert!(
        result.text.starts_with(&format!("{expected}: ")),
        "{}",
        result.text
    );
    result.text
}

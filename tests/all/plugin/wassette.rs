//! The plugin component in microsoft/wassette 0.8.0, the runtime that turns
//! a component's exported functions into MCP tools, driven over stdio by the
//! official Python MCP client (`wassette.py`, beside this file) against
//! `dsh-fs mcp`: loaded from a file and from an OCI registry, the same texts
//! and codes call by call. `scripts/setup` installs wassette (with the loader
//! it needs on Debian 12) and the `mcp` package into `.venv/`.

use super::component;
use crate::workspace;
use serde_json::json;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A program `scripts/setup` puts into `.venv/`.
fn venv(program: &str) -> PathBuf {
    let path = workspace().join(".venv/bin").join(program);
    assert!(
        path.is_file(),
        "{} is missing: run scripts/setup (it installs wassette and the MCP client into .venv/)",
        path.display()
    );
    path
}

/// The wassette policy granting `ws` and `state`, as `cargo xtask policy` writes it.
fn policy(ws: &Path, state: &Path) -> String {
    cargo_xtask(&["policy".as_ref(), ws.as_os_str(), state.as_os_str()])
}

/// What `cargo xtask ARGS` prints; it must succeed.
fn cargo_xtask(args: &[&OsStr]) -> String {
    let out = Command::new(env!("CARGO"))
        .current_dir(workspace())
        .args(["run", "--quiet", "-p", "xtask", "--"])
        .args(args)
        .output()
        .expect("running cargo xtask");
    assert!(
        out.status.success(),
        "cargo xtask {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Runs `wassette.py` with `config` (what it documents), in `scratch`.
fn drive(config: serde_json::Value) {
    let out = Command::new(venv("python"))
        .arg(workspace().join("tests/all/plugin/wassette.py"))
        .arg(config.to_string())
        .output()
        .expect("running wassette.py");
    assert!(
        out.status.success(),
        "wassette.py failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn wassette_serves_the_plugin_from_a_file_as_dsh_fs_mcp_serves_the_tools() {
    let component = component();
    let scratch = tempfile::tempdir().unwrap();
    let policy = policy(
        &scratch.path().join("plugin/ws"),
        &scratch.path().join("state"),
    );
    drive(json!({
        "wassette": venv("wassette-run"),
        "dsh_fs": env!("CARGO_BIN_EXE_dsh-fs"),
        "source": format!("file://{}", component.display()),
        "component_id": "dsh_fs_plugin",
        "policy": policy,
        "expect_policy": policy,
        "scratch": scratch.path(),
        "env": {},
    }));
}

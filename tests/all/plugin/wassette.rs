//! The plugin component in microsoft/wassette 0.8.0, the runtime that turns
//! a component's exported functions into MCP tools, driven over stdio by the
//! official Python MCP client (`wassette.py`, beside this file) against
//! `dsh-fs mcp`: loaded from a file and from an OCI registry, the same texts
//! and codes call by call. `scripts/setup` installs wassette (with the loader
//! it needs on Debian 12) and the `mcp` package into `.venv/`.

use super::component;
use super::registry::Registry;
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

/// What `cmd`, run in the checkout, prints; it must succeed.
#[track_caller]
fn succeed(cmd: &mut Command) -> String {
    let out = cmd
        .current_dir(workspace())
        .output()
        .unwrap_or_else(|e| panic!("running {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// What `cargo xtask ARGS` prints.
fn cargo_xtask(args: &[&OsStr]) -> String {
    succeed(
        Command::new(env!("CARGO"))
            .args(["run", "--quiet", "-p", "xtask", "--"])
            .args(args),
    )
}

/// Runs `wassette.py` with `config` (what it documents), in `scratch`.
fn drive(config: serde_json::Value) {
    succeed(
        Command::new(venv("python"))
            .arg(workspace().join("tests/all/plugin/wassette.py"))
            .arg(config.to_string()),
    );
}

/// The code blocks of the README's section `heading`, by language.
fn readme_blocks(heading: &str) -> Vec<(String, String)> {
    let readme = std::fs::read_to_string(workspace().join("README.md")).unwrap();
    let section = readme
        .split("\n## ")
        .find(|s| s.starts_with(heading))
        .unwrap_or_else(|| panic!("the README has a section {heading}"));
    section
        .split("```")
        .skip(1)
        .step_by(2)
        .map(|block| {
            let (lang, body) = block.split_once('\n').unwrap();
            (lang.to_owned(), body.to_owned())
        })
        .collect()
}

/// Runs `script` in the checkout with bash, HOME set to `home`.
fn run_sh(script: &str, home: &Path) {
    succeed(
        Command::new("bash")
            .args(["-euo", "pipefail", "-c", script])
            .env("HOME", home),
    );
}

/// The README's wassette setup, run as written but for the workspace
/// (`/tmp/dsh-fs-try` becomes a scratch directory) and the server it starts
/// last (the test's client starts it): the component and its policy, for
/// that workspace and `$HOME/.local/state/dsh-fs`, in HOME's wassette
/// component directory. One at a time: setups share
/// `target/guest/dsh_fs_plugin.policy.yaml`.
struct ReadmeSetup {
    _one: std::sync::MutexGuard<'static, ()>,
    scratch: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
    state: PathBuf,
    /// The README's list of the tools.
    tools: String,
}

impl ReadmeSetup {
    fn run() -> Self {
        static ONE: std::sync::Mutex<()> = std::sync::Mutex::new(());
        let one = ONE.lock().unwrap_or_else(|e| e.into_inner());
        let scratch = tempfile::tempdir().unwrap();
        let (root, home) = (scratch.path().join("ws"), scratch.path().join("home"));
        let blocks = readme_blocks("Load it into wassette");
        let [(sh, setup), (text, tools)] = &blocks[..] else {
            panic!("Load it into wassette: a sh block and a text block, not {blocks:?}");
        };
        assert_eq!((sh.as_str(), text.as_str()), ("sh", "text"));
        let (setup, server) = setup.trim_end().rsplit_once('\n').unwrap();
        assert!(server.starts_with("wassette run"), "{server}");
        run_sh(
            &setup.replace("/tmp/dsh-fs-try", root.to_str().unwrap()),
            &home,
        );
        ReadmeSetup {
            _one: one,
            state: home.join(".local/state/dsh-fs"),
            tools: tools.trim_end().to_owned(),
            scratch,
            root,
            home,
        }
    }

    /// wassette loads `source` (its id `component_id`) and serves the
    /// scenario of `wassette.py` against `dsh-fs mcp`.
    fn serve(&self, source: &str, component_id: &str, env: serde_json::Value) {
        self.serve_with(source, component_id, env, false);
    }

    /// [`ReadmeSetup::serve`], with the undo tools when `undo`.
    fn serve_with(&self, source: &str, component_id: &str, env: serde_json::Value, undo: bool) {
        drive(json!({
            "undo": undo,
            "wassette": venv("wassette-run"),
            "dsh_fs": env!("CARGO_BIN_EXE_dsh-fs"),
            "source": source,
            "component_id": component_id,
            "home": self.home,
            "root": self.root,
            "state": self.state,
            "expect_policy": policy(&self.root, &self.state),
            "tools_text": self.tools,
            "scratch": self.scratch.path(),
            "env": env,
        }));
    }
}

#[test]
fn wassette_serves_the_plugin_from_a_file_as_dsh_fs_mcp_serves_the_tools() {
    let setup = ReadmeSetup::run();
    let source = format!("file://{}", component().display());
    setup.serve(&source, "dsh_fs_plugin", json!({}));
}

/// The `fs-plugin-undo` component, loaded beside the README's setup with
/// the same policy: the scenario goes on with
/// `multi-edit`, `checkpoint`, `changes` and `revert`, call by call as
/// `dsh-fs mcp --extra-tools` answers them, the journal kept in the state
/// directory between wassette's fresh instances.
#[test]
fn wassette_serves_the_undo_plugin_as_dsh_fs_mcp_serves_the_extra_tools() {
    let setup = ReadmeSetup::run();
    let undo = component().with_file_name("dsh_fs_plugin_undo.wasm");
    let components = setup.home.join(".local/share/wassette/components");
    std::fs::write(
        components.join("dsh_fs_plugin_undo.policy.yaml"),
        policy(&setup.root, &setup.state),
    )
    .unwrap();
    let source = format!("file://{}", undo.display());
    setup.serve_with(&source, "dsh_fs_plugin_undo", json!({}), true);
}

#[test]
fn wassette_pulls_the_plugin_and_its_policy_from_a_registry() {
    let setup = ReadmeSetup::run();
    let registry = Registry::start();
    // wassette must find the policy in the artifact, not beside it.
    std::fs::remove_dir_all(setup.home.join(".local/share/wassette/components")).unwrap();

    // The README's registry commands, against this registry and its CA.
    let blocks = readme_blocks("Pull it from a registry");
    let [(sh, push)] = &blocks[..] else {
        panic!("Pull it from a registry: one sh block, not {blocks:?}");
    };
    assert_eq!(sh, "sh");
    let ca = registry.ca();
    let pulled = setup.scratch.path().join("pulled");
    let push: String = push
        .replace("127.0.0.1:5000", &registry.addr)
        .replace("/tmp/dsh-fs-pulled", pulled.to_str().unwrap())
        .lines()
        .map(|line| {
            let command = line.split_once('#').map_or(line, |(c, _)| c).trim_end();
            if command.starts_with("cargo xtask oci") {
                format!("{command} --ca {}\n", ca.display())
            } else {
                format!("{line}\n")
            }
        })
        .collect();
    run_sh(&push, &setup.home);
    let bytes = std::fs::read(pulled.join("dsh_fs_plugin.wasm")).unwrap();
    assert!(
        bytes == std::fs::read(component()).unwrap(),
        "the pulled component differs"
    );
    let source = format!("oci://{}/dsh-fs/plugin:0.1.0", registry.addr);
    // wassette names it after the repository, `/` as `_`.
    setup.serve(&source, "dsh-fs_plugin", json!({"SSL_CERT_FILE": ca}));
}

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
    let out = Command::new("bash")
        .args(["-euo", "pipefail", "-c", script])
        .current_dir(workspace())
        .env("HOME", home)
        .output()
        .expect("running bash");
    assert!(
        out.status.success(),
        "{script}\nfailed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The README's wassette setup, run as written but for the workspace
/// (`/tmp/dsh-fs-try` becomes `root`) and the server it starts last (the
/// test's client starts it): the component and its policy, for `root` and
/// `$HOME/.local/state/dsh-fs`, in HOME's wassette component directory.
/// Answers the state directory and the README's list of the tools.
fn readme_setup(root: &Path, home: &Path) -> (PathBuf, String) {
    let blocks = readme_blocks("Load it into wassette");
    let [(sh, setup), (text, tools)] = &blocks[..] else {
        panic!("Load it into wassette: a sh block and a text block, not {blocks:?}");
    };
    assert_eq!((sh.as_str(), text.as_str()), ("sh", "text"));
    let (setup, server) = setup.trim_end().rsplit_once('\n').unwrap();
    assert!(server.starts_with("wassette run"), "{server}");
    run_sh(
        &setup.replace("/tmp/dsh-fs-try", root.to_str().unwrap()),
        home,
    );
    (
        home.join(".local/state/dsh-fs"),
        tools.trim_end().to_owned(),
    )
}

/// The README's setups share `target/guest/dsh_fs_plugin.policy.yaml`: one at a time.
static README_SETUP: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn wassette_serves_the_plugin_from_a_file_as_dsh_fs_mcp_serves_the_tools() {
    let _one = README_SETUP.lock().unwrap_or_else(|e| e.into_inner());
    let component = component();
    let scratch = tempfile::tempdir().unwrap();
    let (root, home) = (scratch.path().join("ws"), scratch.path().join("home"));
    let (state, tools) = readme_setup(&root, &home);
    drive(json!({
        "wassette": venv("wassette-run"),
        "dsh_fs": env!("CARGO_BIN_EXE_dsh-fs"),
        "source": format!("file://{}", component.display()),
        "component_id": "dsh_fs_plugin",
        "home": home,
        "root": root,
        "state": state,
        "expect_policy": policy(&root, &state),
        "tools_text": tools,
        "scratch": scratch.path(),
        "env": {},
    }));
}

#[test]
fn wassette_pulls_the_plugin_and_its_policy_from_a_registry() {
    let _one = README_SETUP.lock().unwrap_or_else(|e| e.into_inner());
    let registry = Registry::start();
    let component = component();
    let scratch = tempfile::tempdir().unwrap();
    let (root, home) = (scratch.path().join("ws"), scratch.path().join("home"));
    let (state, tools) = readme_setup(&root, &home);
    // wassette must find the policy in the artifact, not beside it.
    std::fs::remove_dir_all(home.join(".local/share/wassette/components")).unwrap();

    // The README's registry commands, against this registry and its CA.
    let blocks = readme_blocks("Pull it from a registry");
    let [(sh, push)] = &blocks[..] else {
        panic!("Pull it from a registry: one sh block, not {blocks:?}");
    };
    assert_eq!(sh, "sh");
    let ca = registry.ca();
    let pulled = scratch.path().join("pulled");
    let push: String = push
        .replace("127.0.0.1:5000", &registry.addr)
        .replace("/tmp/dsh-fs-pulled", pulled.to_str().unwrap())
        .lines()
        .map(|line| match line.split_once('#') {
            Some((command, _)) if command.starts_with("cargo xtask oci") => {
                format!("{} --ca {}\n", command.trim_end(), ca.display())
            }
            _ if line.starts_with("cargo xtask oci") => format!("{line} --ca {}\n", ca.display()),
            _ => format!("{line}\n"),
        })
        .collect();
    run_sh(&push, &home);
    let bytes = std::fs::read(pulled.join("dsh_fs_plugin.wasm")).unwrap();
    assert!(
        bytes == std::fs::read(component).unwrap(),
        "the pulled component differs"
    );

    drive(json!({
        "wassette": venv("wassette-run"),
        "dsh_fs": env!("CARGO_BIN_EXE_dsh-fs"),
        "source": format!("oci://{}/dsh-fs/plugin:0.1.0", registry.addr),
        // wassette names it after the repository, `/` as `_`.
        "component_id": "dsh-fs_plugin",
        "home": home,
        "root": root,
        "state": state,
        "expect_policy": policy(&root, &state),
        "tools_text": tools,
        "scratch": scratch.path(),
        "env": {"SSL_CERT_FILE": ca},
    }));
}

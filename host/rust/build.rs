//! Builds the tools component (`guest/tools`) for `wasm32-wasip2` with a nested
//! cargo, the way wasmtime builds its test programs: its own target directory
//! (so it never waits on the outer cargo's lock), reruns when the guest, the
//! core crate or the WIT change, and hands the `.wasm` to the host through
//! `OUT_DIR` so `include_bytes!` embeds a fresh component. A packaged crate
//! has no workspace beside it and embeds the component it ships instead.
//!
//! The text layer component (`guest/text`) is built beside it, the same way:
//! the JavaScript host composes the two (`host/js/scripts/build.mjs`).

use std::path::{Path, PathBuf};
use std::process::Command;

/// Where a packaged crate carries the component, relative to its manifest.
const SHIPPED: &str = "component/dsh_fs_tools.wasm";

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap());
    let workspace = manifest.join("../..");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").unwrap());
    if !workspace.join("guest/tools/Cargo.toml").exists() {
        // A packaged crate (crates.io, `cargo package`): no workspace beside
        // it, so it embeds the component it ships (scripts/package-crate.sh
        // puts it there).
        let shipped = manifest.join(SHIPPED);
        println!("cargo:rerun-if-changed={}", shipped.display());
        std::fs::copy(&shipped, out.join("dsh_fs_tools.wasm")).unwrap_or_else(|e| {
            panic!(
                "{}: {e}; a packaged dsh-fs carries its component, build it from the repository",
                shipped.display()
            )
        });
        println!(
            "cargo:rustc-env=DSH_FS_COMPONENT_PATH={}",
            shipped.display()
        );
        return;
    }
    for watched in [
        "guest/tools/src",
        "guest/tools/Cargo.toml",
        "guest/text/src",
        "guest/text/Cargo.toml",
        "core/src",
        "core/Cargo.toml",
        "search/src",
        "search/Cargo.toml",
        "wit",
        "Cargo.lock",
    ] {
        println!(
            "cargo:rerun-if-changed={}",
            workspace.join(watched).display()
        );
    }
    println!("cargo:rerun-if-env-changed=DSH_FS_GUEST_TARGET_DIR");

    // One documented place for the component, outside the outer build's lock:
    // target/guest/wasm32-wasip2/release/dsh_fs_tools.wasm
    let target_dir = std::env::var_os("DSH_FS_GUEST_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| outer_target_dir(&workspace).join("guest"));
    // One package per cargo run: each resolves its own features.
    for package in ["dsh-fs-tools", "dsh-fs-text"] {
        build_component(&workspace, &target_dir, package);
    }

    let wasm = target_dir.join("wasm32-wasip2/release/dsh_fs_tools.wasm");
    std::fs::copy(&wasm, out.join("dsh_fs_tools.wasm")).expect("copying the component");
    println!("cargo:rustc-env=DSH_FS_COMPONENT_PATH={}", wasm.display());
    // The text adapter is loaded from where it was built, by tests only.
    let adapter = target_dir.join("wasm32-wasip2/release/dsh_fs_text.wasm");
    println!("cargo:rustc-env=DSH_FS_ADAPTER_PATH={}", adapter.display());
}

/// The outer build's target directory: `CARGO_TARGET_DIR` if set, else
/// `<workspace>/target`.
fn outer_target_dir(workspace: &Path) -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => {
            let dir = PathBuf::from(dir);
            if dir.is_absolute() {
                dir
            } else {
                workspace.join(dir)
            }
        }
        None => workspace.join("target"),
    }
}

/// Builds one workspace package as a release `wasm32-wasip2` component into
/// `target_dir`: no debug info, no symbols, LTO.
fn build_component(workspace: &Path, target_dir: &Path, package: &str) {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(workspace)
        .args([
            "build",
            "--release",
            "--target",
            "wasm32-wasip2",
            "-p",
            package,
        ])
        .env("CARGO_TARGET_DIR", target_dir)
        // A small component: no debug info, no symbols.
        .env("CARGO_PROFILE_RELEASE_DEBUG", "false")
        .env("CARGO_PROFILE_RELEASE_STRIP", "true")
        .env("CARGO_PROFILE_RELEASE_LTO", "true")
        .env("CARGO_PROFILE_RELEASE_CODEGEN_UNITS", "1");
    // Flags and wrappers meant for the host build (clippy, coverage, sanitizers)
    // must not leak into the guest build.
    for var in [
        "CARGO_ENCODED_RUSTFLAGS",
        "RUSTFLAGS",
        "RUSTC_WORKSPACE_WRAPPER",
        "RUSTC_WRAPPER",
        "CARGO_BUILD_TARGET",
        "CARGO_MAKEFLAGS",
        "MAKEFLAGS",
        "MFLAGS",
    ] {
        cmd.env_remove(var);
    }
    let status = cmd.status().expect("running cargo for the guest component");
    assert!(
        status.success(),
        "building the {package} component failed; is the wasm32-wasip2 target installed? \
         (rustup target add wasm32-wasip2)"
    );
}

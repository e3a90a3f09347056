//! Builds the tools component (`guest/tools`) the way every component is
//! built ([`dsh_fs_build::component`]: a nested cargo with its own target
//! directory, so it never waits on the outer cargo's lock), reruns when the
//! guest, the core crate or the WIT change, and hands the `.wasm` to the host
//! through `OUT_DIR` so `include_bytes!` embeds a fresh component. A packaged crate
//! has no workspace beside it and embeds the component it ships instead.
//!
//! The text layer component (`guest/text`) is built beside it, the same way:
//! the JavaScript host composes the two (`host/js/scripts/build.mjs`).

use std::path::PathBuf;

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
    let target_dir = dsh_fs_build::target_dir(&workspace);
    let build = |package, artifact| {
        dsh_fs_build::component(&workspace, &target_dir, package, &[], artifact)
            .unwrap_or_else(|e| panic!("{e}"))
    };
    let wasm = build("dsh-fs-tools", "dsh_fs_tools");
    std::fs::copy(&wasm, out.join("dsh_fs_tools.wasm")).expect("copying the component");
    println!("cargo:rustc-env=DSH_FS_COMPONENT_PATH={}", wasm.display());
    // The text layer component is loaded from where it was built, by tests only.
    let text = build("dsh-fs-text", "dsh_fs_text");
    println!("cargo:rustc-env=DSH_FS_ADAPTER_PATH={}", text.display());
}

//! How every dsh-fs component is built, written once: the host's build
//! script (which embeds the tools component) and `cargo xtask` (which builds
//! and composes the others) both call [`component`].
//!
//! A component is one workspace package built for `wasm32-wasip2` in release
//! with no debug info, no symbols, LTO and one codegen unit, by a nested
//! cargo with a target directory of its own ([`target_dir`]): it never waits
//! on the outer build's lock, and every caller shares its artifacts.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Variables meant for a host build (clippy, coverage, sanitizers, a target
/// override, a jobserver) that must not reach the component build.
const HOST_ONLY: [&str; 8] = [
    "CARGO_ENCODED_RUSTFLAGS",
    "RUSTFLAGS",
    "RUSTC_WORKSPACE_WRAPPER",
    "RUSTC_WRAPPER",
    "CARGO_BUILD_TARGET",
    "CARGO_MAKEFLAGS",
    "MAKEFLAGS",
    "MFLAGS",
];

/// Where components are built: `DSH_FS_GUEST_TARGET_DIR`, else `guest/`
/// in the outer build's target directory (`CARGO_TARGET_DIR`, else
/// `<workspace>/target`).
pub fn target_dir(workspace: &Path) -> PathBuf {
    if let Some(dir) = std::env::var_os("DSH_FS_GUEST_TARGET_DIR") {
        return PathBuf::from(dir);
    }
    let outer = match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) if Path::new(&dir).is_absolute() => PathBuf::from(dir),
        Some(dir) => workspace.join(dir),
        None => workspace.join("target"),
    };
    outer.join("guest")
}

/// Builds the workspace package `package` (with `features`) as a component
/// into `target_dir` and returns the path of its `.wasm` (`artifact` is its
/// file stem: the library name for a library, the binary name for a
/// command). One package per cargo run, so each resolves its own features.
pub fn component(
    workspace: &Path,
    target_dir: &Path,
    package: &str,
    features: &[&str],
    artifact: &str,
) -> Result<PathBuf, String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(workspace)
        .args(["build", "--quiet", "--release", "--target", "wasm32-wasip2"])
        .args(["-p", package])
        .args(features.iter().flat_map(|f| ["--features", f]))
        .env("CARGO_TARGET_DIR", target_dir)
        .env("CARGO_PROFILE_RELEASE_DEBUG", "false")
        .env("CARGO_PROFILE_RELEASE_STRIP", "true")
        .env("CARGO_PROFILE_RELEASE_LTO", "true")
        .env("CARGO_PROFILE_RELEASE_CODEGEN_UNITS", "1");
    for var in HOST_ONLY {
        cmd.env_remove(var);
    }
    let status = cmd
        .status()
        .map_err(|e| format!("running cargo to build {package}: {e}"))?;
    if !status.success() {
        return Err(format!(
            "building the {package} component failed; is the wasm32-wasip2 target installed? \
             (rustup target add wasm32-wasip2)"
        ));
    }
    Ok(target_dir
        .join("wasm32-wasip2/release")
        .join(format!("{artifact}.wasm")))
}

//! Builds the tools component (`guest/tools`) the way every component is
//! built ([`dsh_fs_build::component`]: a nested cargo with its own target
//! directory, so it never waits on the outer cargo's lock), reruns when the
//! guest, the core crate or the WIT change, and hands the `.wasm` to the host
//! through `OUT_DIR` so `include_bytes!` embeds a fresh component. A packaged crate
//! has no workspace beside it and embeds the component it ships instead.
//!
//! The text layer component (`guest/text`) is built beside it, the same way:
//! the JavaScript host composes the two (`host/js/scripts/build.mjs`).
//!
//! The component is also compiled to machine code here, so that the first
//! call on a fresh machine does not compile it ([`precompile`]): by the stock
//! `wasmtime` CLI at the version this crate links, which the project already
//! installs for its tests (`scripts/install-cli-tools.sh`). Without it the
//! host compiles the component on first use and caches the result, as before.

use std::path::PathBuf;

/// Where a packaged crate carries the component, relative to its manifest.
const SHIPPED: &str = "component/dsh_fs_tools.wasm";

fn main() {
    pack_relocations();
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
        embed(&out);
        precompile(&out);
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
    embed(&out);
    precompile(&out);
    println!("cargo:rustc-env=DSH_FS_COMPONENT_PATH={}", wasm.display());
    // The text layer component is loaded from where it was built, by tests only.
    let text = build("dsh-fs-text", "dsh_fs_text");
    println!("cargo:rustc-env=DSH_FS_ADAPTER_PATH={}", text.display());
}

/// The wasmtime this crate links (`=48.0.8` in the workspace manifest): the
/// CLI that precompiles the component must be the same release, or the
/// runtime refuses its artifact.
const WASMTIME_VERSION: &str = "48.0.8";

/// The engine settings of `Runtime` (`src/runtime.rs`) that reach compiled
/// code, as `wasmtime compile` flags: epoch interruption for call deadlines,
/// and no GC heap (the component has no GC types). The proposals the
/// component does not use are turned off so that the artifact asks for no
/// more than the host's engine has; a CLI built without a proposal's cargo
/// feature ignores its flag (scripts/install-cli-tools.sh builds one that
/// enables exceptions anyway, hence the host's `gc` feature). The runtime
/// checks the artifact against its engine (release, target, CPU features,
/// settings) and compiles the component itself on a mismatch.
const COMPILE_FLAGS: &[&str] = &[
    // No map from machine code back to wasm offsets: 0.6 MiB of the
    // artifact, used only to name wasm offsets in a trap's backtrace (the
    // component carries no names to show with them). wasmtime loads code
    // with or without it.
    "-D",
    "address-map=n",
    "-W",
    "epoch-interruption=y,gc-support=n,gc=n,exceptions=n,function-references=n,threads=n,\
     stack-switching=n",
];

/// Links the `dsh-fs` executable with its relative relocations packed
/// (`DT_RELR`): as a position-independent executable it carries one 24-byte
/// relocation for every pointer in its data, 1.7 MB of them; packed, a few
/// KB. The loader must know the format (glibc 2.36) and the linker write it
/// (binutils 2.38): a native build for a GNU/Linux target probes both, and
/// without them links as before. The library (and so the wheel) is left as
/// it is.
fn pack_relocations() {
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    if var("CARGO_CFG_TARGET_OS") != "linux"
        || var("CARGO_CFG_TARGET_ENV") != "gnu"
        || var("TARGET") != var("HOST")
    {
        return;
    }
    let output = |program: &str, args: &[&str]| {
        std::process::Command::new(program)
            .args(args)
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default()
    };
    // "glibc 2.36"
    let glibc = output("getconf", &["GNU_LIBC_VERSION"]);
    let version: Vec<u32> = glibc
        .trim()
        .trim_start_matches("glibc ")
        .split('.')
        .map_while(|n| n.parse().ok())
        .collect();
    let loader = version.as_slice() >= [2, 36].as_slice();
    let linker = output("ld", &["--help"]).contains("pack-relative-relocs");
    if loader && linker {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}

/// Writes `dsh_fs_tools.wasm.deflate` in `out`, the form the crate embeds,
/// and passes the component's content hash (xxh3-128, as
/// `dsh_fs_core::text::content_hash` takes it) to the crate as
/// `DSH_FS_COMPONENT_HASH`.
fn embed(out: &std::path::Path) {
    let wasm = std::fs::read(out.join("dsh_fs_tools.wasm")).expect("reading the component");
    let deflated = miniz_oxide::deflate::compress_to_vec(&wasm, 9);
    std::fs::write(out.join("dsh_fs_tools.wasm.deflate"), deflated)
        .expect("writing the deflated component");
    println!(
        "cargo:rustc-env=DSH_FS_COMPONENT_HASH={:032x}",
        xxhash_rust::xxh3::xxh3_128(&wasm)
    );
}

/// Writes `dsh_fs_tools.cwasm` in `out`: `dsh_fs_tools.wasm` compiled for
/// this machine by the wasmtime CLI (`$DSH_FS_WASMTIME`, else `wasmtime` on
/// `PATH`), or an empty file, with a warning, when there is no CLI of the
/// linked release or the build is for another target.
fn precompile(out: &std::path::Path) {
    println!("cargo:rerun-if-env-changed=DSH_FS_WASMTIME");
    let cwasm = out.join("dsh_fs_tools.cwasm");
    let compiled = (|| -> Result<(), String> {
        let (host, target) = (std::env::var("HOST"), std::env::var("TARGET"));
        if host != target {
            return Err("cross-compiling".into());
        }
        let cli = std::env::var_os("DSH_FS_WASMTIME").unwrap_or_else(|| "wasmtime".into());
        let shown = cli.to_string_lossy().into_owned();
        let run = |command: &mut std::process::Command| {
            let output = command.output().map_err(|e| format!("{shown}: {e}"))?;
            if !output.status.success() {
                let stderr = String::from_utf8_lossy(&output.stderr);
                return Err(format!("{shown} failed: {}", stderr.trim()));
            }
            Ok(String::from_utf8_lossy(&output.stdout).into_owned())
        };
        let version = run(std::process::Command::new(&cli).arg("--version"))?;
        if !version.split_whitespace().any(|w| w == WASMTIME_VERSION) {
            return Err(format!(
                "{shown} is {}, not {WASMTIME_VERSION}",
                version.trim()
            ));
        }
        run(std::process::Command::new(&cli)
            .arg("compile")
            .args(COMPILE_FLAGS)
            .arg("-o")
            .arg(&cwasm)
            .arg(out.join("dsh_fs_tools.wasm")))
        .map(drop)
    })();
    if let Err(why) = compiled {
        println!(
            "cargo:warning=dsh-fs: the component is not precompiled ({why}); it will be \
             compiled on first use. Install the wasmtime {WASMTIME_VERSION} CLI \
             (scripts/install-cli-tools.sh) to precompile it."
        );
        std::fs::write(&cwasm, b"").expect("writing an empty precompiled component");
    }
}

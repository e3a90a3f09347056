//! `cargo xtask`: the one driver of every component build beyond the one the
//! host's build script embeds. Each component is built by
//! [`dsh_fs_build::component`], as the host builds the tools; compositions
//! are made with `wac-graph` (what `wac plug` runs), into the components'
//! target directory:
//!
//! - `cargo xtask tools`: the tools component alone, `dsh_fs_tools.wasm`, as
//!   the host's build script builds it (what the packaged crate carries);
//! - `cargo xtask cli`: the tools, the text layer over the `wasi:filesystem`
//!   store and the JSON-lines command, composed into `dsh_fs_cli.wasm`, a
//!   command whose only imports are WASI, for the stock `wasmtime run`;
//! - `cargo xtask js`: the tools built with the text layer linked in (feature
//!   `text`, world `fs-tools-text`), `dsh_fs_tools_text.wasm`, which imports
//!   only the byte store and WASI: what `host/js` transpiles with jco. One
//!   component rather than the text layer component plugged into the tools':
//!   under jco every call between two components costs a JavaScript task
//!   (tens of microseconds), and a large read made one per chunk;
//! - `cargo xtask edge`: the same with the `memory` feature too (world
//!   `fs-tools-text-with-memory`), `dsh_fs_edge.wasm`, which imports the
//!   byte store, `dsh:fs/memory` and WASI: what `host/js` transpiles for
//!   Workers, whose Durable Object keeps both the files and the session's
//!   observations;
//! - `cargo xtask plugin [WORKSPACE STATE]`: the `fs-plugin` component,
//!   `dsh_fs_plugin.wasm` (tools, text layer and `wasi:filesystem` store in
//!   one; the tools' descriptions in its `package-docs` section), for plugin
//!   runtimes (wassette, `wasmtime run --invoke`), and beside it
//!   `dsh_fs_plugin.policy.yaml`, a wassette policy granting WORKSPACE and
//!   STATE (default `/work` and `/var/lib/dsh-fs`);
//! - `cargo xtask policy WORKSPACE STATE`: that policy, on standard output;
//! - `cargo xtask contract`: the text layer with the byte-store contract
//!   suite beside it (feature `contract`), for the JS stores' contract tests;
//! - `cargo xtask wit <out.wasm>`: the `dsh:fs` WIT package encoded as wasm.
//!
//! Each build prints the path of what it made. `cargo xtask oci` pushes and
//! pulls the component and the WIT package as wasm OCI artifacts ([`oci`]).

mod oci;
mod plugin;

use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use wac_graph::types::Package;
use wac_graph::{CompositionGraph, EncodeOptions};

fn main() -> Result<()> {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .context("xtask lives in the workspace")?
        .to_path_buf();
    let target = dsh_fs_build::target_dir(&workspace);
    let build = |package: &str, artifact: &str| {
        dsh_fs_build::component(&workspace, &target, package, &[], artifact)
            .map_err(anyhow::Error::msg)
    };
    let made = match std::env::args().nth(1).as_deref() {
        Some("policy") => {
            let dirs: Vec<PathBuf> = std::env::args().skip(2).map(PathBuf::from).collect();
            let [workspace, state] = &dirs[..] else {
                bail!("usage: cargo xtask policy WORKSPACE STATE");
            };
            print!("{}", plugin::policy(workspace, state)?);
            return Ok(());
        }
        Some("tools") => build("dsh-fs-tools", "dsh_fs_tools")?,
        Some("cli") => {
            let tools = build("dsh-fs-tools", "dsh_fs_tools")?;
            let provider = build("dsh-fs-store-wasi", "dsh_fs_store_wasi")?;
            let command = build("dsh-fs-command", "dsh-fs-command")?;
            // The tools import dsh:fs/provider, which the wasi store's
            // component exports; the command imports dsh:fs/tools.
            let tools = plug(&tools, &[&provider])?;
            let out = target.join("dsh_fs_cli.wasm");
            write(&out, &plug_bytes(&read(&command)?, &[tools])?)?;
            out
        }
        Some("js") => tools_with_text(
            &workspace,
            &target,
            "guest-js",
            &["text"],
            "dsh_fs_tools_text",
        )?,
        Some("edge") => tools_with_text(
            &workspace,
            &target,
            "guest-edge",
            &["text", "memory"],
            "dsh_fs_edge",
        )?,
        Some("plugin") => {
            // Its own target directory: it builds the tools and the wasi
            // store without their `component` feature, and their cdylibs,
            // named alike either way, would replace the ones `cli` and `js`
            // compose when both run at once.
            let plugin_target = target.with_file_name("guest-plugin");
            let dirs: Vec<PathBuf> = std::env::args().skip(2).map(PathBuf::from).collect();
            let (workspace_dir, state) = match &dirs[..] {
                [] => (Path::new("/work"), Path::new("/var/lib/dsh-fs")),
                [w, s] => (w.as_path(), s.as_path()),
                _ => bail!("usage: cargo xtask plugin [WORKSPACE STATE]"),
            };
            let policy = plugin::policy(workspace_dir, state)?;
            // The undo component first: the lean one, built last, is the
            // artifact left in the target directory.
            let mut undo_definitions = dsh_fs_tools::definitions();
            undo_definitions.extend(dsh_fs_tools::extra_definitions());
            let components = [
                ("dsh_fs_plugin_undo", &["undo"][..], undo_definitions),
                ("dsh_fs_plugin", &[][..], dsh_fs_tools::definitions()),
            ];
            for (name, features, definitions) in components {
                let built = dsh_fs_build::component(
                    &workspace,
                    &plugin_target,
                    "dsh-fs-plugin",
                    features,
                    "dsh_fs_plugin",
                )
                .map_err(anyhow::Error::msg)?;
                let docs = plugin::with_docs(&read(&built)?, &definitions)?;
                write(&target.join(format!("{name}.wasm")), &docs)?;
                let policy_file = target.join(format!("{name}.policy.yaml"));
                write(&policy_file, policy.as_bytes())?;
                println!("{}", policy_file.display());
            }
            target.join("dsh_fs_plugin.wasm")
        }
        Some("contract") => {
            // Its own target directory, so the text layer the JS package
            // ships is never rebuilt with the feature.
            let target = target.with_file_name("guest-contract");
            dsh_fs_build::component(
                &workspace,
                &target,
                "dsh-fs-text",
                &["contract"],
                "dsh_fs_text",
            )
            .map_err(anyhow::Error::msg)?
        }
        Some("wit") => {
            let out = PathBuf::from(
                std::env::args()
                    .nth(2)
                    .context("usage: cargo xtask wit <out.wasm>")?,
            );
            oci::wit(&workspace, &out)?;
            out
        }
        Some("oci") => return oci::main(std::env::args().skip(2)),
        other => bail!(
            "usage: cargo xtask cli | js | edge | plugin | policy | contract | wit <out.wasm> | oci ... (got {})",
            other.unwrap_or("nothing")
        ),
    };
    println!("{}", made.display());
    Ok(())
}

/// `socket` with the exports of `plugs` plugged into its imports, encoded.
fn plug(socket: &Path, plugs: &[&Path]) -> Result<Vec<u8>> {
    let plugs = plugs.iter().map(|p| read(p)).collect::<Result<Vec<_>>>()?;
    plug_bytes(&read(socket)?, &plugs)
}

fn plug_bytes(socket: &[u8], plugs: &[Vec<u8>]) -> Result<Vec<u8>> {
    let mut graph = CompositionGraph::new();
    let package = Package::from_bytes("socket", None, socket.to_vec(), graph.types_mut())?;
    let socket = graph.register_package(package)?;
    let mut ids = Vec::new();
    for (i, bytes) in plugs.iter().enumerate() {
        let name = format!("plug:p{i}");
        let package = Package::from_bytes(&name, None, bytes.clone(), graph.types_mut())?;
        ids.push(graph.register_package(package)?);
    }
    wac_graph::plug(&mut graph, ids, socket)?;
    Ok(graph.encode(EncodeOptions::default())?)
}

/// The tools built with `features` (the text layer linked in) in the target
/// directory `dir` beside the components' own — another feature set under
/// the artifact name `cli` composes — copied to `name.wasm` in the latter.
fn tools_with_text(
    workspace: &Path,
    target: &Path,
    dir: &str,
    features: &[&str],
    name: &str,
) -> Result<PathBuf> {
    let tools = dsh_fs_build::component(
        workspace,
        &target.with_file_name(dir),
        "dsh-fs-tools",
        features,
        "dsh_fs_tools",
    )
    .map_err(anyhow::Error::msg)?;
    let out = target.join(format!("{name}.wasm"));
    write(&out, &read(&tools)?)?;
    Ok(out)
}

fn read(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).with_context(|| format!("reading {}", path.display()))
}

/// Writes `bytes` to `path` through a file beside it, so a reader never
/// sees half a component (a fresh temp file: two builds at once never write
/// into one), readable by all as `std::fs::write` would leave it.
fn write(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut builder = tempfile::Builder::new();
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o644));
    let mut tmp = builder
        .tempfile_in(dir)
        .with_context(|| format!("writing a temp file in {}", dir.display()))?;
    std::io::Write::write_all(&mut tmp, bytes)
        .with_context(|| format!("writing {}", tmp.path().display()))?;
    tmp.persist(path)
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

//! The `fs-plugin` component (`cargo xtask plugin`) as plugin runtimes run
//! it: every call a fresh instance, only the granted state directory
//! carrying what was read. Here the runtime is the stock `wasmtime` CLI
//! (`wasmtime run --invoke`), one process per call.

mod concurrent;
mod invoke;
mod registry;
mod wassette;

use crate::wasmtime_cli::{wasmtime, xtask};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use wasm_wave::value::{Type, Value as Wave};
use wasm_wave::wasm::WasmValue;

/// The plugin component, built once per run by `cargo xtask plugin`.
fn component() -> &'static Path {
    static WASM: OnceLock<PathBuf> = OnceLock::new();
    WASM.get_or_init(|| xtask("plugin", "dsh_fs_plugin.wasm"))
}

/// The plugin component compiled ahead of time by
/// `wasmtime compile`, so a call costs an instantiation, not a compile.
fn precompiled() -> &'static Path {
    static CWASM: OnceLock<PathBuf> = OnceLock::new();
    CWASM.get_or_init(|| {
        let wasm = component();
        let cwasm = Path::new(env!("CARGO_TARGET_TMPDIR")).join("dsh_fs_plugin.cwasm");
        let status = Command::new(wasmtime())
            .arg("compile")
            .arg(wasm)
            .arg("-o")
            .arg(&cwasm)
            .status()
            .expect("running wasmtime compile");
        assert!(status.success(), "wasmtime compile {}", wasm.display());
        cwasm
    })
}

/// The parameters of each exported function, in order, as the tool's JSON
/// argument names.
fn parameters(tool: &str) -> &'static [&'static str] {
    match tool {
        "read" => &["file_path", "offset", "limit"],
        "write" => &["file_path", "content"],
        "edit" => &["file_path", "old_string", "new_string", "replace_all"],
        "glob" => &["pattern", "path"],
        "grep" => &["pattern", "path", "include"],
        other => panic!("no function {other}"),
    }
}

/// The WAVE call of `tool` with the JSON arguments `args`: required
/// parameters first-class, optional ones `some(…)` or `none`.
pub(crate) fn wave_call(tool: &str, args: &Value) -> String {
    let required = [
        "file_path",
        "content",
        "old_string",
        "new_string",
        "pattern",
    ];
    let values: Vec<String> = parameters(tool)
        .iter()
        .map(|name| {
            let value = match &args[*name] {
                Value::Null => return "none".to_owned(),
                Value::String(s) => wasm_wave::to_string(&Wave::make_string(s.into())).unwrap(),
                Value::Bool(b) => b.to_string(),
                Value::Number(n) => n.to_string(),
                other => panic!("no WAVE for {other}"),
            };
            if required.contains(name) {
                value
            } else {
                format!("some({value})")
            }
        })
        .collect();
    format!("{tool}({})", values.join(", "))
}

/// The grants of one plugin call: the workspace, the state directory and
/// the session's name.
pub(crate) struct Grants<'a> {
    pub root: &'a Path,
    pub state: Option<&'a Path>,
    pub session: &'a str,
}

impl Grants<'_> {
    /// One `wasmtime run --invoke` of `tool` with `args`: its answer.
    pub(crate) fn call(&self, tool: &str, args: &Value) -> String {
        let mut cmd = Command::new(wasmtime());
        cmd.arg("run")
            .arg("--allow-precompiled")
            .arg("--dir")
            .arg(format!("{}::/ws", self.root.display()))
            .args(["--env", "DSH_FS_ROOT=/ws"])
            .arg("--env")
            .arg(format!("DSH_FS_SESSION={}", self.session));
        if let Some(state) = self.state {
            cmd.arg("--dir")
                .arg(format!("{}::/state", state.display()))
                .args(["--env", "DSH_FS_STATE=/state"]);
        }
        let out = cmd
            .arg("--invoke")
            .arg(wave_call(tool, args))
            .arg(precompiled())
            .output()
            .expect("running wasmtime");
        let stdout = String::from_utf8(out.stdout).unwrap();
        assert!(
            out.status.success(),
            "wasmtime run --invoke {tool} failed: {stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let answer: Wave = wasm_wave::from_str(&Type::STRING, stdout.trim_end())
            .unwrap_or_else(|e| panic!("not a WAVE string: {stdout:?}: {e}"));
        answer.unwrap_string().into_owned()
    }
}

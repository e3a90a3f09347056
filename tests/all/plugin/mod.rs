//! The `fs-plugin` component (`cargo xtask plugin`) as plugin runtimes run
//! it: every call a fresh instance, only the granted state directory
//! carrying what was read. Here the runtime is the stock `wasmtime` CLI
//! (`wasmtime run --invoke`), one process per call.

mod concurrent;
mod fifo;
mod invoke;
mod registry;
mod state;
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
    CWASM.get_or_init(|| compile(component()))
}

/// The `fs-plugin-undo` component (built beside the other), compiled.
fn precompiled_undo() -> &'static Path {
    static CWASM: OnceLock<PathBuf> = OnceLock::new();
    CWASM.get_or_init(|| compile(&component().with_file_name("dsh_fs_plugin_undo.wasm")))
}

/// `wasm` compiled by `wasmtime compile` into the test's scratch directory.
fn compile(wasm: &Path) -> PathBuf {
    let name = wasm.file_stem().unwrap().to_str().unwrap();
    let cwasm = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}.cwasm"));
    let status = Command::new(wasmtime())
        .arg("compile")
        .arg(wasm)
        .arg("-o")
        .arg(&cwasm)
        .status()
        .expect("running wasmtime compile");
    assert!(status.success(), "wasmtime compile {}", wasm.display());
    cwasm
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
        "multi_edit" => &["file_path", "edits"],
        "checkpoint" => &["label"],
        "changes" => &["since"],
        "revert" => &["to"],
        other => panic!("no function {other}"),
    }
}

/// The WAVE call of `tool` with the JSON arguments `args`: required
/// parameters first-class, optional ones `some(…)` or `none`; `edits` a
/// list of `text-edit` records.
pub(crate) fn wave_call(tool: &str, args: &Value) -> String {
    let required = [
        "file_path",
        "content",
        "old_string",
        "new_string",
        "pattern",
        "edits",
    ];
    let values: Vec<String> = parameters(tool)
        .iter()
        .map(|name| wave_value(name, &args[*name], required.contains(name)))
        .collect();
    format!("{}({})", tool.replace('_', "-"), values.join(", "))
}

/// `value` of the parameter or field `name` in WAVE.
fn wave_value(name: &str, value: &Value, required: bool) -> String {
    let value = match value {
        Value::Null => return "none".to_owned(),
        Value::String(s) => wasm_wave::to_string(&Wave::make_string(s.into())).unwrap(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::Array(edits) if name == "edits" => {
            let records: Vec<String> = edits
                .iter()
                .map(|edit| {
                    let fields: Vec<String> = ["old_string", "new_string", "replace_all"]
                        .iter()
                        .map(|f| {
                            let v = wave_value(f, &edit[*f], *f != "replace_all");
                            format!("{}: {v}", f.replace('_', "-"))
                        })
                        .collect();
                    format!("{{{}}}", fields.join(", "))
                })
                .collect();
            format!("[{}]", records.join(", "))
        }
        other => panic!("no WAVE for {other}"),
    };
    if required {
        value
    } else {
        format!("some({value})")
    }
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
        self.invoke(precompiled(), tool, args)
    }

    /// The same call of the `fs-plugin-undo` component.
    pub(crate) fn call_undo(&self, tool: &str, args: &Value) -> String {
        self.invoke(precompiled_undo(), tool, args)
    }

    /// The `wasmtime run --invoke` of `tool` with `args` on `component`.
    fn command(&self, component: &Path, tool: &str, args: &Value) -> Command {
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
        cmd.arg("--invoke")
            .arg(wave_call(tool, args))
            .arg(component);
        cmd
    }

    fn invoke(&self, component: &Path, tool: &str, args: &Value) -> String {
        let out = self
            .command(component, tool, args)
            .output()
            .expect("running wasmtime");
        answer(tool, out)
    }

    /// The call's answer, or `None` when it has not answered within
    /// `deadline` (the process is then killed).
    pub(crate) fn call_within(
        &self,
        tool: &str,
        args: &Value,
        deadline: std::time::Duration,
    ) -> Option<String> {
        let mut child = self
            .command(precompiled(), tool, args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("running wasmtime");
        let start = std::time::Instant::now();
        while child.try_wait().expect("waiting for wasmtime").is_none() {
            if start.elapsed() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        Some(answer(tool, child.wait_with_output().unwrap()))
    }
}

/// A plugin answer as the session's result: a failure starts with its code.
pub(crate) fn as_result(text: String) -> dsh_fs::ToolResult {
    let code = text
        .split_once(": ")
        .map(|(code, _)| code)
        .filter(|code| code.bytes().all(|b| b.is_ascii_uppercase() || b == b'_'));
    dsh_fs::ToolResult {
        is_error: code.is_some(),
        error: code.map(|code| dsh_fs::ToolError {
            code: code.to_owned(),
            message: text[code.len() + 2..].to_owned(),
        }),
        text,
    }
}

/// The string a `wasmtime run --invoke` of `tool` printed.
fn answer(tool: &str, out: std::process::Output) -> String {
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

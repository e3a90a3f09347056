//! The composed command component (`target/guest/dsh_fs_cli.wasm`: command +
//! tools + `wasi:filesystem` provider, built by `cargo xtask cli`)
//! under the stock `wasmtime` CLI: one session of JSON lines on stdin/stdout
//! against a real directory granted with `--dir`.
//!
//! Needs `wasmtime` at the pinned version: a missing or different one fails
//! these tests, naming `scripts/install-cli-tools.sh`.

use crate::{Workspace, workspace};
use serde_json::{Value, json};
use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::OnceLock;
use std::sync::mpsc;
use std::time::Duration;

const WASMTIME_VERSION: &str = "48.0.8";
/// Longest a whole session may take before wasmtime is killed.
const SESSION_DEADLINE: Duration = Duration::from_secs(120);

/// `name` from `PATH` or cargo's bin directory, checked to report `version`.
fn installed(name: &str, version: &str) -> PathBuf {
    let cargo_bin = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cargo")))
        .map(|home| home.join("bin"));
    let path = std::env::var_os("PATH").unwrap_or_default();
    let found = std::env::split_paths(&path)
        .chain(cargo_bin)
        .map(|dir| dir.join(name))
        .find(|bin| bin.is_file());
    let install =
        "run scripts/install-cli-tools.sh (it installs the pinned versions from crates.io)";
    let Some(bin) = found else {
        panic!("`{name}` is not installed: {install}");
    };
    let reported = Command::new(&bin)
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    assert!(
        reported.split_whitespace().any(|w| w == version),
        "{} reports {:?}, not {version}: {install}",
        bin.display(),
        reported.trim()
    );
    bin
}

/// The `wasmtime` binary.
pub(crate) fn wasmtime() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| installed("wasmtime", WASMTIME_VERSION))
}

/// The composed component, built and composed once per test run by
/// `cargo xtask cli`.
pub(crate) fn composed() -> &'static Path {
    static WASM: OnceLock<PathBuf> = OnceLock::new();
    WASM.get_or_init(|| xtask("cli", "dsh_fs_cli.wasm"))
}

/// What `cargo xtask COMMAND` makes: `made`, in the guest target directory.
pub(crate) fn xtask(command: &str, made: &str) -> PathBuf {
    let guest_dir = std::env::var_os("DSH_FS_GUEST_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_TARGET_TMPDIR"))
                .parent()
                .unwrap()
                .join("guest")
        });
    let out = Command::new(env!("CARGO"))
        .current_dir(workspace())
        .args(["run", "--quiet", "-p", "xtask", "--", command])
        .env("DSH_FS_GUEST_TARGET_DIR", &guest_dir)
        .output()
        .unwrap_or_else(|e| panic!("running cargo xtask {command}: {e}"));
    assert!(
        out.status.success(),
        "cargo xtask {command} failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    guest_dir.join(made)
}

/// One `wasmtime run --dir ROOT::/work dsh_fs_cli.wasm` process: one session.
struct Cli {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    stderr: PathBuf,
    _stderr_dir: tempfile::TempDir,
    done: mpsc::Sender<()>,
}

impl Cli {
    fn start(root: &Path) -> Cli {
        let wasm = composed();
        let stderr_dir = tempfile::tempdir().unwrap();
        let stderr = stderr_dir.path().join("stderr");
        let mut child = Command::new(wasmtime())
            .arg("run")
            .arg("--dir")
            .arg(format!("{}::/work", root.display()))
            .arg(wasm)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(File::create(&stderr).unwrap())
            .spawn()
            .expect("starting wasmtime");
        let (done, finished) = mpsc::channel::<()>();
        let pid = child.id() as libc::pid_t;
        std::thread::spawn(move || {
            if finished.recv_timeout(SESSION_DEADLINE) == Err(mpsc::RecvTimeoutError::Timeout) {
                // SAFETY: plain signal to our own child, which has not been reaped yet.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
        });
        Cli {
            stdin: child.stdin.take(),
            stdout: BufReader::new(child.stdout.take().unwrap()),
            child,
            stderr,
            _stderr_dir: stderr_dir,
            done,
        }
    }

    /// Sends one raw line and returns the result line, parsed.
    #[track_caller]
    fn send(&mut self, line: &str) -> Value {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
        let mut reply = String::new();
        self.stdout.read_line(&mut reply).unwrap();
        assert!(
            reply.ends_with('\n'),
            "no result line for {line:?}; wasmtime said: {}",
            std::fs::read_to_string(&self.stderr).unwrap_or_default()
        );
        serde_json::from_str(&reply).unwrap_or_else(|e| panic!("bad result line {reply:?}: {e}"))
    }

    #[track_caller]
    fn call(&mut self, tool: &str, arguments: Value) -> Value {
        self.send(&json!({"tool": tool, "arguments": arguments}).to_string())
    }

    /// Closes stdin and checks that the session ends cleanly with no more output.
    fn finish(mut self) {
        drop(self.stdin.take());
        let mut rest = String::new();
        std::io::Read::read_to_string(&mut self.stdout, &mut rest).unwrap();
        let status = self.child.wait().unwrap();
        let _ = self.done.send(());
        let stderr = std::fs::read_to_string(&self.stderr).unwrap_or_default();
        assert!(status.success(), "wasmtime exited with {status}: {stderr}");
        assert_eq!(rest, "", "output after the last result");
    }
}

impl Drop for Cli {
    fn drop(&mut self) {
        let _ = self.done.send(());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The text of a successful result.
#[track_caller]
fn ok(result: Value) -> String {
    assert_eq!(result["is_error"], false, "expected success: {result}");
    assert_eq!(result["error"], Value::Null, "{result}");
    result["text"].as_str().unwrap().to_owned()
}

/// The text of a failed result with `code`.
#[track_caller]
fn fails(result: Value, code: &str) -> String {
    assert_eq!(result["is_error"], true, "expected {code}: {result}");
    assert_eq!(result["error"]["code"], code, "{result}");
    let text = result["text"].as_str().unwrap();
    assert!(text.starts_with(&format!("{code}: ")), "{result}");
    text.to_owned()
}

fn temp_leftovers(dir: &Path) -> Vec<PathBuf> {
    Workspace::snapshot(dir)
        .into_iter()
        .map(|(p, _)| p)
        .filter(|p| p.to_string_lossy().ends_with(".dsh-fs-tmp"))
        .collect()
}

/// What a component imports at its top level, by name, but types (a type
/// import is an equality a host need not supply); what the modules and
/// components nested in it import is satisfied inside it.
pub(crate) fn top_level_imports(wasm: &[u8]) -> Vec<String> {
    use wasmparser::{Parser, Payload};
    let (mut depth, mut names) = (0usize, Vec::new());
    for payload in Parser::new(0).parse_all(wasm) {
        match payload.expect("a valid component") {
            Payload::ModuleSection { .. } | Payload::ComponentSection { .. } => depth += 1,
            Payload::End(_) => depth = depth.saturating_sub(1),
            Payload::ComponentImportSection(imports) if depth == 0 => {
                names.extend(imports.into_iter().map(|i| i.unwrap()).filter_map(|i| {
                    let typed = matches!(i.ty, wasmparser::ComponentTypeRef::Type(_));
                    (!typed).then(|| i.name.name.to_owned())
                }));
            }
            _ => {}
        }
    }
    names
}

#[test]
fn the_composed_component_imports_only_wasi() {
    let imports = top_level_imports(&std::fs::read(composed()).unwrap());
    // The command's run needs stdin/stdout, the provider the filesystem.
    for needed in ["wasi:cli/stdin@", "wasi:filesystem/preopens@"] {
        assert!(
            imports.iter().any(|i| i.starts_with(needed)),
            "no {needed}: {imports:?}"
        );
    }
    let foreign: Vec<_> = imports.iter().filter(|i| !i.starts_with("wasi:")).collect();
    assert!(foreign.is_empty(), "imports beyond WASI: {foreign:?}");
}

#[test]
fn definitions_are_the_native_hosts() {
    let out = Command::new(wasmtime())
        .arg("run")
        .arg(composed())
        .arg("--definitions")
        .output()
        .expect("running wasmtime");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let printed: Value = serde_json::from_slice(&out.stdout).unwrap();
    let native = serde_json::to_value(crate::runtime().definitions().unwrap()).unwrap();
    assert_eq!(printed, native);
}

#[test]
fn one_session_reads_edits_refuses_a_stale_edit_and_keeps_crlf_bytes() {
    let ws = Workspace::new();
    ws.write("notes.txt", b"alpha\r\nbeta\r\ngamma");
    ws.write("other.txt", b"untouched\n");
    let mut cli = Cli::start(&ws.root);

    assert_eq!(
        ok(cli.call("read", json!({"file_path": "notes.txt"}))),
        "File: notes.txt\n1: alpha\n2: beta\n3: gamma\n(End of file: 3 lines.)"
    );
    let edited = ok(cli.call(
        "edit",
        json!({"file_path": "/work/notes.txt", "old_string": "beta", "new_string": "BETA\nBETA2"}),
    ));
    assert!(
        edited.starts_with("Edited notes.txt: 1 replacement at line 2."),
        "{edited}"
    );
    assert_eq!(ws.bytes("notes.txt"), b"alpha\r\nBETA\r\nBETA2\r\ngamma");

    // Someone else changes the file: the session's version is stale.
    ws.write("notes.txt", b"alpha\r\nBETA\r\nBETA2\r\ngamma\r\ndelta");
    fails(
        cli.call(
            "edit",
            json!({"file_path": "notes.txt", "old_string": "gamma", "new_string": "GAMMA"}),
        ),
        "FS_STALE_VERSION",
    );
    assert_eq!(
        ws.bytes("notes.txt"),
        b"alpha\r\nBETA\r\nBETA2\r\ngamma\r\ndelta"
    );

    let reread = ok(cli.call("read", json!({"file_path": "notes.txt", "offset": 4})));
    assert_eq!(
        reread,
        "File: notes.txt\n4: gamma\n5: delta\n(Lines 4-5 of 5; end of file.)"
    );
    ok(cli.call(
        "edit",
        json!({"file_path": "notes.txt", "old_string": "gamma\ndelta", "new_string": "gamma\ndelta\nepsilon"}),
    ));
    assert_eq!(
        ws.bytes("notes.txt"),
        b"alpha\r\nBETA\r\nBETA2\r\ngamma\r\ndelta\r\nepsilon"
    );

    // The policy holds across calls: a file this session never read is not edited.
    fails(
        cli.call(
            "edit",
            json!({"file_path": "other.txt", "old_string": "untouched", "new_string": "x"}),
        ),
        "FS_NOT_OBSERVED",
    );
    assert_eq!(ws.bytes("other.txt"), b"untouched\n");

    // New files need no read; parent directories are created.
    let created = ok(cli.call(
        "write",
        json!({"file_path": "new/deep/file.txt", "content": "one\ntwo\n"}),
    ));
    assert!(
        created.starts_with("Created new/deep/file.txt"),
        "{created}"
    );
    assert_eq!(ws.bytes("new/deep/file.txt"), b"one\ntwo\n");

    // A malformed line gets an error result; the session goes on.
    let bad = fails(cli.send("this is not json"), "INVALID_ARGS");
    assert!(bad.contains("line "), "{bad}");
    fails(cli.send(r#"{"tool":"read","args":{}}"#), "INVALID_ARGS");
    fails(
        cli.call("delete", json!({"file_path": "notes.txt"})),
        "UNKNOWN_TOOL",
    );
    ok(cli.call("read", json!({"file_path": "new/deep/file.txt"})));

    cli.finish();
    assert_eq!(temp_leftovers(&ws.root), Vec::<PathBuf>::new());
}

#[test]
fn paths_outside_the_granted_directory_are_denied() {
    let ws = Workspace::new();
    ws.write("inside.txt", "inside\n");
    let secret = ws.outside.join("secret.txt");
    symlink(&secret, ws.path("link-file")).unwrap();
    symlink("../outside", ws.path("link-dir")).unwrap();
    symlink("inside.txt", ws.path("alias.txt")).unwrap();
    let before = Workspace::snapshot(&ws.outside);
    let mut cli = Cli::start(&ws.root);

    let paths = [
        "../outside/secret.txt".to_owned(),
        "/work/../outside/secret.txt".to_owned(),
        "/etc/passwd".to_owned(),
        secret.to_str().unwrap().to_owned(),
        "link-file".to_owned(),
        "link-dir/secret.txt".to_owned(),
        "link-dir/new.txt".to_owned(),
    ];
    for path in &paths {
        for (tool, args) in [
            ("read", json!({"file_path": path})),
            ("write", json!({"file_path": path, "content": "pwned\n"})),
            (
                "edit",
                json!({"file_path": path, "old_string": "TOP", "new_string": "pwned"}),
            ),
        ] {
            let text = fails(cli.call(tool, args), "FS_SANDBOX_DENIED");
            assert!(
                !text.contains("TOP SECRET") && !text.contains("root:"),
                "{tool} {path} leaked: {text}"
            );
        }
    }

    // Links that stay inside work.
    assert_eq!(
        ok(cli.call("read", json!({"file_path": "alias.txt"}))),
        "File: alias.txt\n1: inside\n(End of file: 1 line.)"
    );
    cli.finish();

    assert_eq!(
        Workspace::snapshot(&ws.outside),
        before,
        "something outside the granted directory changed"
    );
    assert!(
        std::fs::symlink_metadata(ws.path("link-file"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(temp_leftovers(&ws.root), Vec::<PathBuf>::new());
}

/// Peak resident memory of the `wasmtime` process so far, in KiB.
fn peak_rss_kib(cli: &Cli) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{}/status", cli.child.id())).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[test]
fn hostile_calls_stay_bounded_under_the_stock_cli() {
    let ws = Workspace::new();
    let many = "x\n".repeat(1000);
    ws.write("f.txt", &many);
    let big: String = (1..=2_000_000)
        .map(|n| format!("line {n:07} of a large file\n"))
        .collect();
    ws.write("big.txt", &big);
    let mut cli = Cli::start(&ws.root);

    // 1000 matches × 2 MiB: refused from the count, before anything is
    // built, with the native host's text.
    ok(cli.call("read", json!({"file_path": "f.txt"})));
    let explode = json!({"file_path": "f.txt", "old_string": "x", "new_string": "n".repeat(2 << 20), "replace_all": true});
    let text = fails(cli.call("edit", explode), "FS_TOO_LARGE");
    assert!(
        text.contains("2097153000 bytes") && text.contains("1073741824-byte limit"),
        "{text}"
    );
    assert_eq!(ws.bytes("f.txt"), many.as_bytes());

    // A 60 MiB file: paged reads stream it, and so does an edit, as on the
    // native host (in chunks, never the whole file in memory).
    let page = ok(cli.call("read", json!({"file_path": "big.txt", "offset": 1_999_999})));
    assert!(
        page.contains("1999999: line 1999999 of a large file"),
        "{page}"
    );
    let edit =
        json!({"file_path": "big.txt", "old_string": "line 0000001 of", "new_string": "first"});
    let edited = ok(cli.call("edit", edit));
    assert!(
        edited.starts_with("Edited big.txt: 1 replacement at line 1."),
        "{edited}"
    );
    let after = ws.bytes("big.txt");
    assert_eq!(&after[..19], b"first a large file\n");
    assert_eq!(&after[19..], &big.as_bytes()[29..]);

    let peak = peak_rss_kib(&cli);
    eprintln!("wasmtime run, hostile calls: peak RSS {} MiB", peak >> 10);
    assert!(
        peak < crate::mcp_transport::RSS_LIMIT_KIB,
        "peak RSS {peak} KiB"
    );
    cli.finish();
    assert_eq!(temp_leftovers(&ws.root), Vec::<PathBuf>::new());
}

/// The listing through `wasi:filesystem`: the same answers as the native
/// host for a directory read and a mistyped path, and links never followed.
#[test]
fn directory_reads_and_path_suggestions_match_the_native_host() {
    let ws = Workspace::new();
    ws.write("src/context.rs", "fn main() {}\n");
    ws.write("src/tools/read.rs", "x\n");
    symlink(ws.outside.join("secret.txt"), ws.path("src/secret.txt")).unwrap();
    symlink("loop", ws.path("src/loop")).unwrap();
    let mut native = ws.session();
    let mut cli = Cli::start(&ws.root);
    for path in [
        "src",
        "src/Context.rs",
        "context.rs",
        "src/context.rs:1",
        "Secret.txt",
    ] {
        let text = cli.call("read", json!({"file_path": path}))["text"]
            .as_str()
            .unwrap()
            .to_owned();
        let want = crate::call(&mut native, "read", json!({"file_path": path})).text;
        assert_eq!(text, want, "{path}");
        assert!(!text.contains("TOP SECRET"), "{text}");
    }
    let listed = fails(
        cli.call("read", json!({"file_path": "src"})),
        "FS_NOT_REGULAR_FILE",
    );
    assert!(
        listed.ends_with("  context.rs\n  loop\n  secret.txt\n  tools/"),
        "{listed}"
    );
    cli.finish();
}

#[test]
fn the_mistakes_subset_answers_with_the_native_texts() {
    replay(crate::hosts::golden());
}

#[test]
fn discovery_answers_with_the_native_texts() {
    replay(crate::discovery::golden());
}

/// Replays a script recorded from the native host in one session.
fn replay(script: crate::hosts::Script) {
    let ws = Workspace::new();
    for (path, text) in &script.files {
        ws.write(path, text);
    }
    let mut cli = Cli::start(&ws.root);
    for step in &script.calls {
        let got = cli.call(&step.tool, step.arguments.clone());
        assert_eq!(
            got["text"],
            step.text.as_str(),
            "{} {}",
            step.tool,
            step.arguments
        );
        assert_eq!(got["is_error"], step.is_error, "{got}");
    }
    cli.finish();
}

#[test]
fn the_journal_reverts_under_the_stock_cli_byte_for_byte() {
    let ws = Workspace::new();
    let win = b"\xef\xbb\xbf[core]\r\nname = one\r\n";
    ws.write("win.ini", win);
    ws.write("notes.md", b"- one\n");
    let mut cli = Cli::start(&ws.root);
    assert!(ok(cli.call("checkpoint", json!({"label": "start"}))).starts_with("Checkpoint 1"));
    ok(cli.call("write", json!({"file_path": "new.txt", "content": "new\n"})));
    ok(cli.call("read", json!({"file_path": "win.ini"})));
    ok(cli.call(
        "multi_edit",
        json!({"file_path": "win.ini", "edits": [
            {"old_string": "[core]", "new_string": "[main]"},
            {"old_string": "one", "new_string": "two"},
        ]}),
    ));
    ok(cli.call("read", json!({"file_path": "notes.md"})));
    ok(cli.call(
        "edit",
        json!({"file_path": "notes.md", "old_string": "one", "new_string": "two"}),
    ));
    ws.write("notes.md", b"- two\n- outside\n");
    let reverted = ok(cli.call("revert", json!({"to": 1})));
    assert!(
        reverted.starts_with("Reverted to checkpoint 1 (start): 2 files restored, 1 left alone."),
        "{reverted}"
    );
    assert!(reverted.contains("Removed new.txt (1 line)"), "{reverted}");
    assert_eq!(ws.bytes("win.ini"), win);
    assert!(!ws.path("new.txt").exists());
    assert_eq!(ws.bytes("notes.md"), b"- two\n- outside\n");
    let redone = ok(cli.call("revert", json!({"to": 2})));
    assert!(redone.contains("Restored new.txt"), "{redone}");
    assert_eq!(ws.bytes("new.txt"), b"new\n");
    assert_eq!(ws.bytes("win.ini"), b"\xef\xbb\xbf[main]\r\nname = two\r\n");
    cli.finish();
}

/// The journal scenario of `tests/all/undo.rs` under the stock CLI.
#[test]
fn the_journal_scenario_runs_under_the_stock_cli() {
    let ws = Workspace::new();
    let mut cli = Cli::start(&ws.root);
    crate::undo::scenario(&ws, &mut |tool, args| {
        let v = cli.call(tool, args);
        dsh_fs::ToolResult {
            text: v["text"].as_str().unwrap().to_owned(),
            is_error: v["is_error"].as_bool().unwrap(),
            error: v["error"].as_object().map(|e| dsh_fs::ToolError {
                code: e["code"].as_str().unwrap().to_owned(),
                message: e["message"].as_str().unwrap().to_owned(),
            }),
        }
    });
    cli.finish();
}

//! The text adapter under jco: the fixtures of the JavaScript host path for
//! the contract and listing suites and the provider script of `host/rust/src/adapter/`.
//! The adapter component this test binary's build
//! left at [`ADAPTER_PATH`] is transpiled with jco once per run
//! (`host/js/scripts/build-adapter.mjs`); each fixture starts one Node
//! process (`host/js/test/provider-bridge.mjs`) that binds it to a JS store
//! and serves its `dsh:fs/provider` export as JSON lines, which
//! [`JcoProvider`] forwards every [`Provider`] call to.
//!
//! Needs Node.js and the JS packages: a missing one fails these tests,
//! naming `scripts/setup`.

use crate::ADAPTER_PATH;
use crate::contract::{Beside, Fixture, Local};
use dsh_fs::{
    BoxListing, BoxStream, DirEntry, DirEntryKind, DynProvider, EditOutcome, EditRequest,
    EntryKind, ErrorCode, FsError, FsInfo, Listing, Provider, Target, TextContent, TextStream,
    WriteIntent, WriteOperation, WriteOutcome,
};
use dsh_fs_core::{SearchQuery, Skipped};
use serde::Deserialize;
use serde_json::{Value, json};
use std::fmt;
use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock, mpsc};
use std::time::Duration;

/// Longest a fixture's bridge may live before it is killed.
const BRIDGE_DEADLINE: Duration = Duration::from_secs(300);

fn js_dir() -> PathBuf {
    crate::workspace().join("host/js")
}

/// `node` from `PATH`.
fn node() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let path = std::env::var_os("PATH").unwrap_or_default();
        std::env::split_paths(&path)
            .map(|dir| dir.join("node"))
            .find(|bin| bin.is_file())
            .unwrap_or_else(|| {
                panic!("`node` is not installed: run scripts/setup (it needs Node.js >= 20)")
            })
    })
}

/// The adapter transpiled by jco, once per test run: its `adapter.js`.
fn transpiled() -> &'static Path {
    static ENTRY: OnceLock<PathBuf> = OnceLock::new();
    ENTRY.get_or_init(|| {
        let wasm = ADAPTER_PATH;
        let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("jco-adapter");
        let run = Command::new(node())
            .arg(js_dir().join("scripts/build-adapter.mjs"))
            .arg(wasm)
            .arg(&out)
            .output()
            .expect("running host/js/scripts/build-adapter.mjs");
        assert!(
            run.status.success(),
            "host/js/scripts/build-adapter.mjs failed (scripts/setup installs what it needs):\n{}{}",
            String::from_utf8_lossy(&run.stdout),
            String::from_utf8_lossy(&run.stderr)
        );
        out.join("adapter.js")
    })
}

/// What the bridge answers to one request.
#[derive(Deserialize)]
#[serde(rename_all = "lowercase")]
enum Reply {
    Ok(Value),
    Err(WireError),
    Trap(String),
}

#[derive(Deserialize)]
struct WireError {
    code: String,
    message: String,
}

/// One Node process serving one instance of the adapter over one JS store.
struct Bridge {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    stderr: PathBuf,
    _stderr_dir: tempfile::TempDir,
    /// Dropped when the bridge is: the watchdog stands down.
    done: Option<mpsc::Sender<()>>,
}

impl Bridge {
    /// `store` is `memory` or `node:ROOT`.
    fn start(store: &str) -> Bridge {
        let stderr_dir = tempfile::tempdir().unwrap();
        let stderr = stderr_dir.path().join("stderr");
        let mut child = Command::new(node())
            .arg(js_dir().join("test/provider-bridge.mjs"))
            .arg(transpiled())
            .arg(store)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(File::create(&stderr).unwrap())
            .spawn()
            .expect("starting node");
        let (done, finished) = mpsc::channel::<()>();
        let pid = child.id() as libc::pid_t;
        std::thread::spawn(move || {
            if finished.recv_timeout(BRIDGE_DEADLINE) == Err(mpsc::RecvTimeoutError::Timeout) {
                // SAFETY: plain signal to our own child, which has not been reaped yet.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
        });
        Bridge {
            stdin: child.stdin.take().unwrap(),
            stdout: BufReader::new(child.stdout.take().unwrap()),
            child,
            stderr,
            _stderr_dir: stderr_dir,
            done: Some(done),
        }
    }

    /// Sends one request; the provider's answer, or the error it returned.
    /// Anything else (a trap, a dead bridge) fails the test.
    #[track_caller]
    fn call(&mut self, request: Value) -> Result<Value, FsError> {
        let mut line = request.to_string();
        line.push('\n');
        let mut reply = String::new();
        let sent = self.stdin.write_all(line.as_bytes()).and_then(|()| {
            self.stdin.flush()?;
            self.stdout.read_line(&mut reply)
        });
        if sent.is_err() || !reply.ends_with('\n') {
            panic!(
                "the bridge gave no reply to {}; node said: {}",
                request["op"],
                std::fs::read_to_string(&self.stderr).unwrap_or_default()
            );
        }
        match serde_json::from_str(&reply) {
            Ok(Reply::Ok(value)) => Ok(value),
            Ok(Reply::Err(e)) => Err(FsError::new(error_code(&e.code), e.message)),
            Ok(Reply::Trap(trap)) => panic!("{} trapped: {trap}", request["op"]),
            Err(e) => panic!("bad reply {reply:?}: {e}"),
        }
    }
}

impl Drop for Bridge {
    fn drop(&mut self) {
        drop(self.done.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The core's code for a `dsh:fs/types.error-code` name (`stale-version`).
fn error_code(name: &str) -> ErrorCode {
    ErrorCode::ALL
        .into_iter()
        .find(|c| {
            c.as_str()["FS_".len()..]
                .replace('_', "-")
                .eq_ignore_ascii_case(name)
        })
        .unwrap_or_else(|| panic!("no error code {name:?}"))
}

fn string(v: &Value) -> String {
    v.as_str()
        .unwrap_or_else(|| panic!("expected a string, got {v}"))
        .to_owned()
}

fn u64_of(v: &Value) -> u64 {
    string(v)
        .parse()
        .unwrap_or_else(|e| panic!("expected a u64, got {v}: {e}"))
}

fn opt_u64(v: &Value) -> Option<u64> {
    (!v.is_null()).then(|| u64_of(v))
}

fn target(t: &Target) -> Value {
    json!([t.display_path(), t.key()])
}

/// The adapter under jco as a [`Provider`]: every call one request to its
/// bridge. Calls are serialised, as one jco instance runs one at a time.
pub(crate) struct JcoProvider(Arc<Mutex<Bridge>>);

impl fmt::Debug for JcoProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JcoProvider").finish_non_exhaustive()
    }
}

impl JcoProvider {
    fn start(store: &str) -> JcoProvider {
        JcoProvider(Arc::new(Mutex::new(Bridge::start(store))))
    }

    #[track_caller]
    fn call(&self, request: Value) -> Result<Value, FsError> {
        self.0.lock().unwrap().call(request)
    }

    /// A stream or listing the bridge handed out, by id.
    fn handle(&self, id: Value) -> Handle {
        Handle {
            bridge: self.0.clone(),
            id,
        }
    }
}

impl Provider for JcoProvider {
    type Target = Target;
    type Stream = BoxStream;
    type Listing = BoxListing;

    fn resolve(&self, path: &str) -> Result<Target, FsError> {
        let t = self.call(json!({"op": "resolve", "path": path}))?;
        Ok(Target::new(string(&t["shown"]), string(&t["key"])))
    }

    fn stat(&self, t: &Target) -> Result<Option<FsInfo>, FsError> {
        let info = self.call(json!({"op": "stat", "target": target(t)}))?;
        if info.is_null() {
            return Ok(None);
        }
        let kind = match info["kind"].as_str() {
            Some("file") => EntryKind::File,
            Some("directory") => EntryKind::Directory,
            Some("other") => EntryKind::Other,
            _ => panic!("bad kind in {info}"),
        };
        Ok(Some(FsInfo {
            version: string(&info["version"]),
            kind,
            size: opt_u64(&info["size"]),
        }))
    }

    fn read_text(&self, t: &Target, max_bytes: u64) -> Result<TextContent, FsError> {
        let c = self.call(json!({
            "op": "readText", "target": target(t), "maxBytes": max_bytes.to_string(),
        }))?;
        Ok(TextContent {
            text: string(&c["text"]),
            version: string(&c["version"]),
        })
    }

    fn stream_text(&self, t: &Target, start: u64) -> Result<BoxStream, FsError> {
        let id = self.call(json!({
            "op": "streamText", "target": target(t), "start": start.to_string(),
        }))?;
        Ok(Box::new(self.handle(id)))
    }

    fn write_text(
        &self,
        t: &Target,
        content: &str,
        intent: Option<WriteIntent>,
    ) -> Result<WriteOutcome, FsError> {
        let intent = intent.map(|i| match i {
            WriteIntent::CreateIfAbsent => json!({"tag": "create-if-absent"}),
            WriteIntent::ReplaceIfVersion(v) => json!({"tag": "replace-if-version", "val": v}),
        });
        let o = self.call(json!({
            "op": "writeText", "target": target(t), "content": content, "intent": intent,
        }))?;
        let operation = match o["operation"].as_str() {
            Some("created") => WriteOperation::Created,
            Some("updated") => WriteOperation::Updated,
            _ => panic!("bad operation in {o}"),
        };
        Ok(WriteOutcome {
            operation,
            version: string(&o["version"]),
        })
    }

    fn edit_text(
        &self,
        t: &Target,
        edit: &EditRequest,
        expected: Option<&str>,
    ) -> Result<EditOutcome, FsError> {
        let o = self.call(json!({
            "op": "editText",
            "target": target(t),
            "edit": {
                "oldString": edit.old_string,
                "newString": edit.new_string,
                "replaceAll": edit.replace_all,
            },
            "expected": expected,
        }))?;
        Ok(EditOutcome {
            replacements: o["replacements"].as_u64().expect("replacements") as u32,
            version: string(&o["version"]),
            first_line: u64_of(&o["firstLine"]),
            excerpt: o["excerpt"].as_object().map(|e| dsh_fs::EditExcerpt {
                first_line: u64_of(&e["firstLine"]),
                before: string(&e["before"]),
                after: string(&e["after"]),
            }),
        })
    }

    fn list_dir(&self, t: &Target) -> Result<BoxListing, FsError> {
        let id = self.call(json!({"op": "listDir", "target": target(t)}))?;
        Ok(Box::new(self.handle(id)))
    }

    fn search(&self, t: &Target, query: &SearchQuery) -> Result<Option<String>, FsError> {
        let query = match query {
            SearchQuery::Glob(pattern) => json!({"tag": "glob", "val": pattern}),
            SearchQuery::Grep { pattern, include } => {
                json!({"tag": "grep", "val": {"pattern": pattern, "include": include}})
            }
        };
        let found = self.call(json!({"op": "search", "target": target(t), "query": query}))?;
        Ok((!found.is_null()).then(|| string(&found)))
    }
}

/// A text stream or listing of the adapter, dropped in it when dropped here.
struct Handle {
    bridge: Arc<Mutex<Bridge>>,
    id: Value,
}

impl Handle {
    #[track_caller]
    fn call(&self, op: &str, extra: Value) -> Result<Value, FsError> {
        let mut request = json!({"op": op, "id": self.id});
        if let Value::Object(more) = extra {
            request.as_object_mut().unwrap().extend(more);
        }
        self.bridge.lock().unwrap().call(request)
    }
}

impl Drop for Handle {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            self.call("drop", Value::Null).unwrap();
        }
    }
}

impl TextStream for Handle {
    fn next_chunk(&mut self, max_bytes: u32) -> Result<Option<String>, FsError> {
        let chunk = self.call("next", json!({"maxBytes": max_bytes}))?;
        Ok((!chunk.is_null()).then(|| string(&chunk)))
    }

    fn skip(&mut self, max_bytes: u32, max_lines: u64) -> Result<Option<Skipped>, FsError> {
        let skipped = self.call(
            "skip",
            json!({"maxBytes": max_bytes, "maxLines": max_lines.to_string()}),
        )?;
        Ok((!skipped.is_null()).then(|| Skipped {
            bytes: u64_of(&skipped["bytes"]),
            lines: u64_of(&skipped["lines"]),
            mid_line: skipped["midLine"].as_bool().expect("midLine is a boolean"),
        }))
    }

    fn version(&self) -> Option<String> {
        let v = self.call("version", Value::Null).unwrap();
        (!v.is_null()).then(|| string(&v))
    }
}

impl Listing for Handle {
    fn next_entries(&mut self, max: u32) -> Result<Vec<DirEntry>, FsError> {
        let page = self.call("entries", json!({"max": max}))?;
        let page = page.as_array().expect("a list of entries");
        Ok(page
            .iter()
            .map(|e| DirEntry {
                name: string(&e["name"]),
                kind: match e["kind"].as_str() {
                    Some("file") => DirEntryKind::File,
                    Some("directory") => DirEntryKind::Directory,
                    Some("symlink") => DirEntryKind::Symlink,
                    Some("other") => DirEntryKind::Other,
                    _ => panic!("bad kind in {e}"),
                },
                size: u64_of(&e["size"]),
                modified: opt_u64(&e["modified"]),
            })
            .collect())
    }

    fn skipped(&self) -> u64 {
        u64_of(&self.call("skipped", Value::Null).unwrap())
    }
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let pairs = bytes
        .iter()
        .flat_map(|b| [DIGITS[usize::from(b >> 4)], DIGITS[usize::from(b & 15)]]);
    String::from_utf8(pairs.collect()).unwrap()
}

fn unhex(text: &str) -> Vec<u8> {
    let digit = |c: u8| (c as char).to_digit(16).expect("a hex digit") as u8;
    text.as_bytes()
        .chunks(2)
        .map(|pair| digit(pair[0]) << 4 | digit(pair[1]))
        .collect()
}

/// The adapter under jco over the JS `MemoryStore`; the side door is the
/// store's own `insert`/`get`/`createDir`, through the bridge.
pub(crate) struct JcoMemory(Arc<JcoProvider>);

impl JcoMemory {
    pub(crate) fn new() -> Self {
        JcoMemory(Arc::new(JcoProvider::start("memory")))
    }
}

impl Fixture for JcoMemory {
    fn provider(&self) -> Arc<DynProvider> {
        self.0.clone()
    }
    fn put(&self, path: &str, bytes: &[u8]) {
        self.0
            .call(json!({"op": "put", "path": path, "hex": hex(bytes)}))
            .unwrap();
    }
    fn get(&self, path: &str) -> Option<Vec<u8>> {
        let found = self.0.call(json!({"op": "get", "path": path})).unwrap();
        found.as_str().map(unhex)
    }
    fn mkdir(&self, path: &str) {
        self.0.call(json!({"op": "mkdir", "path": path})).unwrap();
    }
    fn touch(&self, path: &str) {
        self.0.call(json!({"op": "touch", "path": path})).unwrap();
    }
    fn root(&self) -> String {
        "/workspace".into()
    }
}

/// The adapter under jco over the JS `NodeStore` of a scratch directory;
/// the side door is [`Local`]'s: real files.
pub(crate) type JcoNode = Beside<Local, JcoProvider>;

impl JcoNode {
    pub(crate) fn new() -> Self {
        let local = Local::new();
        let root = std::fs::canonicalize(&local.0.root).unwrap();
        Beside::over(
            local,
            JcoProvider::start(&format!("node:{}", root.display())),
        )
    }
}

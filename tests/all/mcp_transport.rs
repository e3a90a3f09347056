//! `dsh-fs mcp` on raw JSON lines: an over-long line and malformed params
//! are answered by their request's id, and a client that does not read
//! stdout cannot grow the server's memory; once it reads, every answer comes.

use crate::Workspace;
use crate::faults::proxy::{HttpFault, Proxy};
use crate::object_store::Bucket;
use serde_json::{Value, json};
use std::collections::HashSet;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

/// The memory a `dsh-fs mcp` process may reach in these tests.
pub const RSS_LIMIT_KIB: u64 = 128 << 10;

/// A `dsh-fs mcp` process past the `initialize` handshake, killed if a test
/// waits on it for more than a minute.
pub struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    _watchdog: mpsc::Sender<()>,
}

impl Server {
    pub fn start(ws: &Workspace) -> Self {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_dsh-fs"));
        cmd.args(["mcp", "--root"])
            .arg(&ws.root)
            .env("DSH_FS_CACHE_DIR", crate::cache_dir());
        Self::spawn(cmd)
    }

    /// Starts `cmd` (a `dsh-fs mcp` command line) and shakes hands.
    pub fn spawn(mut cmd: Command) -> Self {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let (watchdog, finished) = mpsc::channel::<()>();
        let pid = child.id() as libc::pid_t;
        thread::spawn(move || {
            if finished.recv_timeout(Duration::from_secs(60))
                == Err(mpsc::RecvTimeoutError::Timeout)
            {
                // Still a zombie at worst: the pid cannot have been reused.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
        });
        let mut server = Server {
            stdin: child.stdin.take(),
            stdout: BufReader::new(child.stdout.take().unwrap()),
            child,
            _watchdog: watchdog,
        };
        server.send(
            &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"}}}),
        );
        assert_eq!(server.recv()["result"]["serverInfo"]["name"], "dsh-fs");
        server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        server
    }

    /// Calls `tool` and returns the result's text and error code ("OK" on success).
    pub fn call(&mut self, tool: &str, arguments: Value) -> (String, String) {
        self.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}}));
        let answer = self.recv();
        let result = &answer["result"];
        let code = result["structuredContent"]["error"]["code"]
            .as_str()
            .unwrap_or(if result["isError"] == true { "?" } else { "OK" })
            .to_owned();
        (tool_text(&answer).to_owned(), code)
    }

    fn send(&mut self, message: &Value) {
        self.send_line(message.to_string().as_bytes());
    }

    fn send_line(&mut self, line: &[u8]) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(line).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    /// The next message on stdout.
    fn recv(&mut self) -> Value {
        let mut line = String::new();
        let n = self.stdout.read_line(&mut line).unwrap();
        assert!(n > 0, "the server closed stdout without answering");
        serde_json::from_str(&line).unwrap()
    }

    /// The process's peak resident memory (`VmHWM`), in KiB.
    pub fn peak_rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn tool_text(answer: &Value) -> &str {
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
}

/// The start of `answer`, for failure messages.
fn brief(answer: &Value) -> String {
    answer.to_string().chars().take(300).collect()
}

#[test]
fn over_long_request_is_answered_by_its_id_and_the_server_goes_on() {
    let ws = Workspace::new();
    let mut server = Server::start(&ws);
    let limit = dsh_fs_core::MAX_ARGUMENT_BYTES.to_string();
    let pad = "a".repeat(17 << 20);

    // The id before the content: a failed tool call, as for any arguments over the limit.
    server.send(&json!({"jsonrpc": "2.0", "id": 41, "method": "tools/call",
        "params": {"name": "write", "arguments": {"file_path": "big.txt", "content": pad}}}));
    let answer = server.recv();
    assert_eq!(answer["id"], 41, "{answer}");
    assert_eq!(answer["result"]["isError"], true);
    assert_eq!(
        answer["result"]["structuredContent"]["error"]["code"],
        "INVALID_ARGS"
    );
    let text = tool_text(&answer);
    assert!(text.starts_with("INVALID_ARGS: "), "{text}");
    assert!(text.contains(&limit), "{text}");

    // The id after 34 MiB of content (and a decoy), in a line that is never held whole.
    let line = format!(
        r#"{{"jsonrpc":"2.0","method":"tools/call","params":{{"name":"write","arguments":{{"file_path":"big.txt","content":"{pad}{pad}\"{{\"id\":1}}"}}}},"id":"tail-42"}}"#
    );
    server.send_line(line.as_bytes());
    let answer = server.recv();
    assert_eq!(answer["id"], "tail-42", "{answer}");
    assert!(tool_text(&answer).contains(&limit), "{answer}");

    // No id at either end: an error with `id: null`, for a method that is not a tool call.
    server.send(
        &json!({"jsonrpc": "2.0", "method": "ping", "params": {"a": pad}, "id": 43, "b": pad}),
    );
    let answer = server.recv();
    assert_eq!(answer["id"], Value::Null, "{answer}");
    assert_eq!(answer["error"]["code"], -32600);
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains(&limit)
    );

    server.send(&json!({"jsonrpc": "2.0", "id": 44, "method": "tools/list"}));
    let answer = server.recv();
    assert_eq!(answer["id"], 44);
    assert_eq!(answer["result"]["tools"].as_array().unwrap().len(), 5);
    assert!(!ws.path("big.txt").exists());
    // Lines of 17 to 34 MiB went through; at most one line's worth was ever held.
    let peak = server.peak_rss_kib();
    assert!(peak < 64 << 10, "peak RSS {peak} KiB");
}

#[test]
fn malformed_params_are_answered_by_id_and_the_server_goes_on() {
    let ws = Workspace::new();
    ws.write("a.txt", "alpha\n");
    let mut server = Server::start(&ws);
    let call = |id: i64, params: Value| json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params});
    for (id, params) in [
        (50, json!([])),
        (51, json!("x")),
        (52, json!(5)),
        (53, json!({"name": 5})),
        (54, json!({"arguments": {"file_path": "a.txt"}})),
    ] {
        server.send(&call(id, params.clone()));
        let answer = server.recv();
        assert_eq!(answer["id"], id, "params {params}: {answer}");
        assert_eq!(answer["error"]["code"], -32602, "params {params}: {answer}");
    }
    let mut no_params = call(55, Value::Null);
    no_params.as_object_mut().unwrap().remove("params");
    server.send(&no_params);
    assert_eq!(server.recv()["id"], 55);

    server.send_line(br#"{"jsonrpc":"2.0","id":56,"method":"tools/call","#);
    let answer = server.recv();
    assert_eq!(
        (&answer["id"], &answer["error"]["code"]),
        (&json!(56), &json!(-32700))
    );
    server.send_line(br#"{"jsonrpc":"1.0","id":57,"method":"ping"}"#);
    let answer = server.recv();
    assert_eq!(
        (&answer["id"], &answer["error"]["code"]),
        (&json!(57), &json!(-32600))
    );
    server.send_line(br#"{"jsonrpc":"2.0","id":[58],"method":"ping"}"#);
    let answer = server.recv();
    assert_eq!(
        (&answer["id"], &answer["error"]["code"]),
        (&Value::Null, &json!(-32600))
    );
    // A notification with bad params gets no answer; the next request does.
    server.send_line(br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":[]}"#);

    server.send(&call(
        59,
        json!({"name": "read", "arguments": {"file_path": "a.txt"}}),
    ));
    let answer = server.recv();
    assert_eq!(answer["id"], 59, "{answer}");
    assert!(tool_text(&answer).contains("1: alpha"), "{answer}");
}

/// Sends `lines` on the server's stdin from another thread; the thread
/// finishes only once the server has read them all.
fn send_in_background(
    server: &mut Server,
    lines: impl Iterator<Item = Vec<u8>> + Send + 'static,
) -> thread::JoinHandle<ChildStdin> {
    let mut stdin = server.stdin.take().unwrap();
    thread::spawn(move || {
        for line in lines {
            stdin.write_all(&line).unwrap();
            stdin.write_all(b"\n").unwrap();
        }
        stdin.flush().unwrap();
        stdin
    })
}

/// Lets the server run for a while against a client that does not read its
/// answers, then checks that it stopped reading requests (the sender cannot
/// finish) and stayed within the memory limit.
fn stall_and_check(server: &Server, sender: &thread::JoinHandle<ChildStdin>) {
    // Five seconds of not reading, watching the server's memory as it goes.
    for _ in 0..50 {
        thread::sleep(Duration::from_millis(100));
        let peak = server.peak_rss_kib();
        assert!(
            peak < RSS_LIMIT_KIB,
            "peak RSS {peak} KiB while stdout was not read"
        );
    }
    assert!(
        !sender.is_finished(),
        "the server read every request although its answers were not read"
    );
}

#[test]
fn client_not_reading_stdout_stops_the_server_reading_stdin() {
    let ws = Workspace::new();
    // Lines of 512 bytes: each read answers with its 50 KiB output limit,
    // so the answers to all reads would be 150 MiB if the server took them.
    ws.write("wide.txt", format!("{}\n", "x".repeat(511)).repeat(2000));
    let mut server = Server::start(&ws);
    let (reads, pings) = (3000, 30_000);
    let requests = (0..reads + pings).map(move |i| {
        let request = if i < reads {
            json!({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                "params": {"name": "read", "arguments": {"file_path": "wide.txt"}}})
        } else {
            json!({"jsonrpc": "2.0", "id": i, "method": "ping"})
        };
        request.to_string().into_bytes()
    });
    let sender = send_in_background(&mut server, requests);
    stall_and_check(&server, &sender);

    let mut unanswered: HashSet<i64> = (0..reads + pings).collect();
    for _ in 0..reads + pings {
        let answer = server.recv();
        let id = answer["id"].as_i64().unwrap();
        assert!(unanswered.remove(&id), "answered twice or unknown: {id}");
        if id < reads {
            assert!(
                tool_text(&answer).len() > 40_000,
                "read {id}: {}",
                brief(&answer)
            );
        } else {
            assert_eq!(answer["result"], json!({}), "ping {id}");
        }
    }
    server.stdin = Some(sender.join().unwrap());
    let peak = server.peak_rss_kib();
    assert!(peak < RSS_LIMIT_KIB, "peak RSS {peak} KiB");
}

#[test]
fn pipelined_large_writes_are_taken_in_turn() {
    let ws = Workspace::new();
    ws.write("wide.txt", format!("{}\n", "x".repeat(511)).repeat(2000));
    let mut server = Server::start(&ws);
    // Reads whose answers fill the stdout pipe, then writes of 15 MiB each:
    // unanswered, they must stay on the client's side, not in the server.
    let (reads, writes) = (20, 12);
    let content_len = 15 << 20;
    let requests = (0..reads + writes).map(move |i| {
        let (name, arguments) = if i < reads {
            ("read", json!({"file_path": "wide.txt"}))
        } else {
            let content = "w".repeat(content_len);
            (
                "write",
                json!({"file_path": format!("w{i}.txt"), "content": content}),
            )
        };
        json!({"jsonrpc": "2.0", "id": i, "method": "tools/call",
            "params": {"name": name, "arguments": arguments}})
        .to_string()
        .into_bytes()
    });
    let sender = send_in_background(&mut server, requests);
    stall_and_check(&server, &sender);

    let mut unanswered: HashSet<i64> = (0..reads + writes).collect();
    for _ in 0..reads + writes {
        let answer = server.recv();
        let id = answer["id"].as_i64().unwrap();
        assert!(unanswered.remove(&id), "answered twice or unknown: {id}");
        assert_eq!(answer["result"]["isError"], false, "{}", brief(&answer));
    }
    server.stdin = Some(sender.join().unwrap());
    for i in reads..reads + writes {
        let len = std::fs::metadata(ws.path(&format!("w{i}.txt")))
            .unwrap()
            .len();
        assert_eq!(len, content_len as u64);
    }
    let peak = server.peak_rss_kib();
    assert!(peak < RSS_LIMIT_KIB, "peak RSS {peak} KiB");
}

/// A call waiting on its store does not hold up the protocol: a ping sent
/// after it is answered first, and the call's answer follows once the store
/// answers.
#[test]
fn a_ping_is_answered_while_a_call_waits_on_its_store() {
    let bucket = Bucket::new();
    bucket.put("p/f.txt", b"one\ntwo\n");
    let proxy = Proxy::new();
    let mut server = Server::spawn(bucket.dsh_fs_via("p", &["mcp"], &proxy.endpoint()));
    // The read's first request to the store is answered 3 s late.
    let hold = Instant::now() + Duration::from_secs(3);
    proxy.arm(Some((HttpFault::Delay, 1)), Some(hold));
    server.send(&json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "read", "arguments": {"file_path": "f.txt"}}}));
    server.send(&json!({"jsonrpc": "2.0", "id": 8, "method": "ping"}));
    let first = server.recv();
    assert_eq!(
        (&first["id"], &first["result"]),
        (&json!(8), &json!({})),
        "{first}"
    );
    let second = server.recv();
    assert_eq!(second["id"], 7, "{second}");
    assert!(tool_text(&second).contains("1: one"), "{}", brief(&second));
    assert!(
        proxy.disarm().fired.is_some(),
        "the store's answer was not held"
    );
    assert!(Instant::now() >= hold);
}

//! `dsh-fs serve`: the JSON-lines protocol of the `wasmtime run` command
//! component, in the native binary, driven line by line as a child process.

use crate::Workspace;
use crate::cli::dsh_fs;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Stdio};

/// Sends one request line and waits for its reply line: each reply must be
/// flushed before the next request is sent.
fn ask(stdin: &mut ChildStdin, stdout: &mut BufReader<ChildStdout>, line: &str) -> Value {
    writeln!(stdin, "{line}").unwrap();
    stdin.flush().unwrap();
    let mut reply = String::new();
    stdout.read_line(&mut reply).unwrap();
    serde_json::from_str(&reply).unwrap_or_else(|e| panic!("{e}: {reply:?}"))
}

/// `dsh-fs serve` on `ws`, with its request and reply pipes.
fn serve(ws: &Workspace) -> (Child, ChildStdin, BufReader<ChildStdout>) {
    let mut child = dsh_fs()
        .args(["serve", "--root"])
        .arg(&ws.root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let stdin = child.stdin.take().unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    (child, stdin, stdout)
}

fn request(tool: &str, arguments: Value) -> String {
    json!({"tool": tool, "arguments": arguments}).to_string()
}

#[test]
fn one_process_is_one_session_read_then_edit_then_stale() {
    let ws = Workspace::new();
    ws.write("app.py", "print('hello')\n");
    let (mut child, mut stdin, mut stdout) = serve(&ws);
    let edit = |old: &str, new: &str| {
        request(
            "edit",
            json!({"file_path": "app.py", "old_string": old, "new_string": new}),
        )
    };

    let read = ask(
        &mut stdin,
        &mut stdout,
        &request("read", json!({"file_path": "app.py"})),
    );
    assert_eq!(
        read,
        json!({"text": "File: app.py\n1: print('hello')\n(End of file: 1 line.)", "is_error": false, "error": null})
    );
    // The read above authorizes this edit: the process keeps one session.
    let edited = ask(&mut stdin, &mut stdout, &edit("hello", "hi"));
    assert_eq!(edited["is_error"], false, "{edited}");
    assert_eq!(edited["error"], Value::Null);
    assert_eq!(ws.bytes("app.py"), b"print('hi')\n");

    ws.write("app.py", "print('changed elsewhere')\n");
    let stale = ask(&mut stdin, &mut stdout, &edit("changed", "edited"));
    assert_eq!(stale["is_error"], true);
    assert_eq!(stale["error"]["code"], "FS_STALE_VERSION", "{stale}");
    assert_eq!(ws.bytes("app.py"), b"print('changed elsewhere')\n");

    // A malformed line gets an error reply naming it; the session goes on.
    let bad = ask(&mut stdin, &mut stdout, "{\"tool\":\"read\",\"args\":{}}");
    assert_eq!(bad["error"]["code"], "INVALID_ARGS");
    assert!(bad["text"].as_str().unwrap().contains("line 4"), "{bad}");
    ask(
        &mut stdin,
        &mut stdout,
        &request("read", json!({"file_path": "app.py"})),
    );
    let edited = ask(&mut stdin, &mut stdout, &edit("changed", "edited"));
    assert_eq!(edited["is_error"], false, "{edited}");
    assert_eq!(ws.bytes("app.py"), b"print('edited elsewhere')\n");

    drop(stdin);
    assert!(child.wait().unwrap().success());
}

#[test]
fn a_missing_root_is_named_before_any_request() {
    let out = dsh_fs()
        .args(["serve", "--root", "/definitely/not/here"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("/definitely/not/here"), "{stderr}");
}

#[test]
fn lines_of_millions_of_values_cost_no_memory_and_the_session_goes_on() {
    let ws = Workspace::new();
    ws.write("f.txt", "one\n");
    let (mut child, mut stdin, mut stdout) = serve(&ws);
    let read = request("read", json!({"file_path": "f.txt"}));
    assert_eq!(ask(&mut stdin, &mut stdout, &read)["is_error"], false);
    // 16 MiB lines: a top-level array, an object of a million keys, and an
    // argument of 8 million values (into the component, as the arguments).
    let zeros = |n: usize| format!("[{}0]", "0,".repeat(n - 1));
    let keys: String = (0..1_000_000).map(|i| format!("\"k{i}\":0,")).collect();
    let cases = [
        (zeros(8 << 20), "not a JSON object"),
        (format!("{{{keys}\"tool\":\"read\"}}"), "unknown key `k0`"),
        (
            format!(
                "{{\"tool\":\"read\",\"arguments\":{{\"file_path\":{}}}}}",
                zeros(8_000_000)
            ),
            "`file_path` must be a string, got an array",
        ),
    ];
    for (line, expected) in cases {
        let reply = ask(&mut stdin, &mut stdout, &line);
        assert_eq!(reply["is_error"], true, "{reply}");
        let text = reply["text"].as_str().unwrap();
        assert!(text.contains(expected), "{text}");
    }
    // The observation of the first read survives: the edit needs it.
    let edit = request(
        "edit",
        json!({"file_path": "f.txt", "old_string": "one", "new_string": "two"}),
    );
    let edited = ask(&mut stdin, &mut stdout, &edit);
    assert_eq!(edited["is_error"], false, "{edited}");
    let status = std::fs::read_to_string(format!("/proc/{}/status", child.id())).unwrap();
    let peak: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap();
    eprintln!("serve: peak RSS {} MiB", peak >> 10);
    assert!(
        peak < crate::mcp_transport::RSS_LIMIT_KIB,
        "peak RSS {peak} KiB"
    );
    drop(stdin);
    child.wait().unwrap();
}

/// A client that sends all its requests before reading gets every reply in
/// order; the server widened the reply pipe first, so that it writes and
/// wakes the client a quarter as often, and its writer, which naps between
/// batches while they come, sleeps for good once they stop.
#[test]
fn pipelined_requests_are_answered_in_order_through_a_widened_pipe() {
    use std::os::fd::AsRawFd;
    let ws = Workspace::new();
    for i in 0..40 {
        ws.write(
            &format!("f{i}.txt"),
            format!("line of file {i}\n").repeat(60),
        );
    }
    let (mut child, mut stdin, mut stdout) = serve(&ws);
    let first = request("read", json!({"file_path": "f0.txt"}));
    assert_eq!(ask(&mut stdin, &mut stdout, &first)["is_error"], false);
    let max: usize = std::fs::read_to_string("/proc/sys/fs/pipe-max-size")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // SAFETY: reads the capacity of the pipe this test reads replies from.
    let capacity = unsafe { libc::fcntl(stdout.get_ref().as_raw_fd(), libc::F_GETPIPE_SZ) };
    if max >= 1 << 20 {
        assert_eq!(capacity, 1 << 20, "the reply pipe was not widened");
    }

    let calls = 3000;
    let requests: String = (0..calls)
        .map(|i| request("read", json!({"file_path": format!("f{}.txt", i % 40)})) + "\n")
        .collect();
    let writer = std::thread::spawn(move || {
        stdin.write_all(requests.as_bytes()).unwrap();
        stdin
    });
    let mut line = String::new();
    for i in 0..calls {
        line.clear();
        stdout.read_line(&mut line).unwrap();
        let reply: Value = serde_json::from_str(&line).unwrap();
        let text = reply["text"].as_str().unwrap();
        let file = i % 40;
        assert!(
            text.starts_with(&format!("File: f{file}.txt\n1: line of file {file}\n")),
            "reply {i}: {text}"
        );
    }
    let stdin = writer.join().unwrap();

    // Once the replies stop, the writer thread stops looking for more and
    // sleeps until the next batch: an idle server takes no CPU.
    let switches = || {
        let tasks = std::fs::read_dir(format!("/proc/{}/task", child.id())).unwrap();
        tasks
            .map(|task| std::fs::read_to_string(task.unwrap().path().join("status")).unwrap())
            .find(|status| status.starts_with("Name:\tdsh-fs-writer\n"))
            .and_then(|status| {
                status
                    .lines()
                    .find_map(|l| l.strip_prefix("voluntary_ctxt_switches:"))
                    .and_then(|n| n.trim().parse::<u64>().ok())
            })
            .expect("the writer thread and its switches")
    };
    std::thread::sleep(std::time::Duration::from_millis(50));
    let before = switches();
    std::thread::sleep(std::time::Duration::from_millis(300));
    let idle = switches() - before;
    assert!(idle < 10, "the idle writer woke {idle} times in 300 ms");
    drop(stdin);
    assert!(child.wait().unwrap().success());
}

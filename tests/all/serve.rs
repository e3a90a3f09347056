//! `dsh-fs serve`: the JSON-lines protocol of the `wasmtime run` command
//! component, in the native binary, driven line by line as a child process.

use crate::Workspace;
use crate::cli::dsh_fs;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::{ChildStdin, ChildStdout, Stdio};

/// Sends one request line and waits for its reply line: each reply must be
/// flushed before the next request is sent.
fn ask(stdin: &mut ChildStdin, stdout: &mut BufReader<ChildStdout>, line: &str) -> Value {
    writeln!(stdin, "{line}").unwrap();
    stdin.flush().unwrap();
    let mut reply = String::new();
    stdout.read_line(&mut reply).unwrap();
    serde_json::from_str(&reply).unwrap_or_else(|e| panic!("{e}: {reply:?}"))
}

fn request(tool: &str, arguments: Value) -> String {
    json!({"tool": tool, "arguments": arguments}).to_string()
}

#[test]
fn one_process_is_one_session_read_then_edit_then_stale() {
    let ws = Workspace::new();
    ws.write("app.py", "print('hello')\n");
    let mut child = dsh_fs()
        .args(["serve", "--root"])
        .arg(&ws.root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
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

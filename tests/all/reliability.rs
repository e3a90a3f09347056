//! Reliability under faults and contention: processes killed mid-write,
//! many sessions incrementing one counter, threads and processes alike.

use crate::{Workspace, call, code, ok, runtime};
use dsh_fs::{LocalProvider, LocalStore, SessionOptions};
use serde_json::json;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

const CRASH_DIR: &str = "DSH_FS_TEST_CRASH_DIR";

/// The four contents the crash loop cycles through: A, A edited, B, B edited.
fn crash_states() -> [Vec<u8>; 4] {
    let body = |c: char| format!("{}\n", c.to_string().repeat(79)).repeat((10 << 20) / 80);
    let (a, b) = (
        format!("state: A\n{}", body('a')),
        format!("state: B\n{}", body('b')),
    );
    [
        a.clone().into_bytes(),
        a.replacen("state: A", "state: A, edited", 1).into_bytes(),
        b.clone().into_bytes(),
        b.replacen("state: B", "state: B, edited", 1).into_bytes(),
    ]
}

/// Not a test on its own: the child process of `sigkill_never_tears_a_file`,
/// looping write/edit until killed. Does nothing unless started by it.
#[test]
fn crash_child() {
    let Some(dir) = std::env::var_os(CRASH_DIR) else {
        return;
    };
    let [a, _, b, _] = crash_states();
    let mut s = unguarded(std::path::Path::new(&dir));
    let (a, b) = (String::from_utf8(a).unwrap(), String::from_utf8(b).unwrap());
    println!("ready");
    loop {
        for (content, tag) in [(&a, "A"), (&b, "B")] {
            ok(call(
                &mut s,
                "write",
                json!({"file_path": "big.txt", "content": content}),
            ));
            let old = format!("state: {tag}\n");
            ok(call(
                &mut s,
                "edit",
                json!({"file_path": "big.txt", "old_string": old, "new_string": format!("state: {tag}, edited\n")}),
            ));
        }
    }
}

#[test]
fn sigkill_never_tears_a_file() {
    let ws = Workspace::new();
    let states = crash_states();
    ws.write("big.txt", &states[0]);
    let mut seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        | 1;
    let mut rand = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let (mut seen, mut leftovers) = ([0u32; 4], 0);
    for round in 0..200 {
        kill_while_busy(
            "reliability::crash_child",
            (CRASH_DIR, &ws.root),
            Duration::from_micros(rand() % 150_000),
        );
        let bytes = ws.bytes("big.txt");
        let state = states.iter().position(|s| *s == bytes);
        let head = String::from_utf8_lossy(&bytes[..bytes.len().min(40)]).into_owned();
        assert!(
            state.is_some(),
            "round {round}: torn file of {} bytes starting {head:?}",
            bytes.len()
        );
        seen[state.unwrap()] += 1;
        leftovers = own_temps(&ws.root).len();
    }
    eprintln!(
        "states after 200 kills (A, A', B, B'): {seen:?}; kills that left the temp name: {leftovers}"
    );
    assert!(
        seen.iter().filter(|&&n| n > 0).count() >= 2,
        "the kills did not land during the loop: {seen:?}"
    );
    // Only a kill in the microseconds between link and rename leaves a temp
    // name, and only one of our own pattern; nothing else is ever left.
    let mut s = runtime()
        .session(
            ws.provider(),
            SessionOptions {
                observation_policy: false,
                ..Default::default()
            },
        )
        .unwrap();
    ok(call(
        &mut s,
        "write",
        json!({"file_path": "big.txt", "content": "done\n"}),
    ));
    let mut names: Vec<String> = std::fs::read_dir(&ws.root)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.retain(|n| !own_temps(&ws.root).contains(n));
    assert_eq!(names, ["big.txt"], "files other than ours remain");
}

const REVERT_CRASH_DIR: &str = "DSH_FS_TEST_REVERT_CRASH_DIR";

/// The three files a reverting session cycles, each `base` or `edited`.
fn revert_states(i: usize) -> [Vec<u8>; 2] {
    let body = format!("{}\r\n", i.to_string().repeat(78)).repeat((1 << 20) / 80);
    let base = format!("\u{feff}state: base\r\n{body}");
    [
        base.clone().into_bytes(),
        base.replacen("state: base", "state: edited", 1)
            .into_bytes(),
    ]
}

/// Not a test on its own: the child of `sigkill_during_a_revert_never_tears_a_file`,
/// looping checkpoint, three edits, revert until killed.
#[test]
fn revert_crash_child() {
    let Some(dir) = std::env::var_os(REVERT_CRASH_DIR) else {
        return;
    };
    let mut s = unguarded(std::path::Path::new(&dir));
    println!("ready");
    loop {
        ok(call(&mut s, "checkpoint", json!({})));
        for i in 0..3 {
            ok(call(
                &mut s,
                "edit",
                json!({"file_path": format!("f{i}.txt"), "old_string": "state: base", "new_string": "state: edited"}),
            ));
        }
        let reverted = ok(call(&mut s, "revert", json!({})));
        assert!(reverted.contains("3 files restored"), "{reverted}");
    }
}

#[test]
fn sigkill_during_a_revert_never_tears_a_file() {
    let ws = Workspace::new();
    for i in 0..3 {
        ws.write(&format!("f{i}.txt"), &revert_states(i)[0]);
    }
    let mut seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        | 1;
    let (mut edited, mut mixed) = (0u32, 0u32);
    for round in 0..100 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        kill_while_busy(
            "reliability::revert_crash_child",
            (REVERT_CRASH_DIR, &ws.root),
            Duration::from_micros(seed % 100_000),
        );
        let mut now = Vec::new();
        for i in 0..3 {
            let bytes = ws.bytes(&format!("f{i}.txt"));
            let state = revert_states(i).iter().position(|s| *s == bytes);
            let head = String::from_utf8_lossy(&bytes[..bytes.len().min(40)]).into_owned();
            assert!(
                state.is_some(),
                "round {round}: f{i}.txt torn, {} bytes starting {head:?}",
                bytes.len()
            );
            now.push(state.unwrap());
        }
        edited += now.iter().filter(|&&s| s == 1).count() as u32;
        mixed += u32::from(now.contains(&0) && now.contains(&1));
        // The next child starts from the base: a killed session's edits are
        // its own to undo, and it is gone.
        for (i, state) in now.iter().enumerate() {
            if *state == 1 {
                ws.write(&format!("f{i}.txt"), &revert_states(i)[0]);
            }
        }
    }
    eprintln!(
        "100 kills during checkpoint/edit×3/revert loops: {edited} files left edited, {mixed} \
         rounds with some files edited and some not"
    );
    assert!(
        mixed > 0,
        "no kill landed between the files' changes: {edited} edited"
    );
}

/// A session on the directory `dir` without the observation policy.
fn unguarded(dir: &std::path::Path) -> dsh_fs::Session {
    let provider = Arc::new(LocalProvider::new(LocalStore::new(dir).unwrap()));
    let options = SessionOptions {
        observation_policy: false,
        ..Default::default()
    };
    runtime().session(provider, options).unwrap()
}

/// Runs the child test `name` of this binary with `env` set, waits until it
/// is ready, lets it work for `busy`, then SIGKILLs it.
fn kill_while_busy(name: &str, env: (&str, &std::path::Path), busy: Duration) {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", name, "--nocapture", "--test-threads=1"])
        .env(env.0, env.1)
        .env("DSH_FS_CACHE_DIR", crate::cache_dir())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    while !line.contains("ready") {
        line.clear();
        assert!(
            out.read_line(&mut line).unwrap() > 0,
            "the child died before it was ready"
        );
    }
    std::thread::sleep(busy);
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
}

/// Temp names a killed writer may have left: `.big.txt.dsh-fs-NONCE.tmp`.
fn own_temps(dir: &std::path::Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with(".big.txt.dsh-fs-") && n.ends_with(".tmp"))
        .collect()
}

/// Reads the counter, then tries to increment it; `None` when stale.
fn increment(s: &mut dsh_fs::Session) -> Option<()> {
    let text = ok(call(s, "read", json!({"file_path": "counter.txt"})));
    let n: u64 = text
        .lines()
        .nth(1)
        .unwrap()
        .trim_start_matches("1: count = ")
        .parse()
        .unwrap();
    let r = call(
        s,
        "edit",
        json!({"file_path": "counter.txt", "old_string": format!("count = {n}\n"), "new_string": format!("count = {}\n", n + 1)}),
    );
    match code(&r) {
        "OK" => Some(()),
        "FS_STALE_VERSION" => None,
        other => panic!("unexpected {other}: {}", r.text),
    }
}

#[test]
fn eight_threads_incrementing_lose_no_update() {
    let ws = Workspace::new();
    ws.write("counter.txt", "count = 0\n");
    let per_session = 10;
    let handles: Vec<_> = (0..8)
        .map(|_| {
            let mut s = ws.session();
            std::thread::spawn(move || {
                let (mut done, mut stale) = (0, 0);
                while done < per_session {
                    match increment(&mut s) {
                        Some(()) => done += 1,
                        None => stale += 1,
                    }
                }
                stale
            })
        })
        .collect();
    let stale: u32 = handles.into_iter().map(|h| h.join().unwrap()).sum();
    eprintln!("8 threads × {per_session} increments: {stale} stale retries");
    assert_eq!(
        ws.bytes("counter.txt"),
        format!("count = {}\n", 8 * per_session).as_bytes()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn eight_processes_incrementing_lose_no_update() {
    use rmcp::ServiceExt;
    use rmcp::model::CallToolRequestParams;
    use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
    let ws = Workspace::new();
    ws.write("counter.txt", "count = 0\n");
    let per_session = 5;
    let mut tasks = Vec::new();
    for _ in 0..8 {
        let root = ws.root.clone();
        tasks.push(tokio::spawn(async move {
            let cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_dsh-fs")).configure(|c| {
                c.args(["mcp", "--root"])
                    .arg(&root)
                    .env("DSH_FS_CACHE_DIR", crate::cache_dir());
            });
            let client = ().serve(TokioChildProcess::new(cmd).unwrap()).await.unwrap();
            let args = |v: serde_json::Value| v.as_object().unwrap().clone();
            let (mut done, mut stale) = (0, 0);
            while done < per_session {
                let read = client
                    .call_tool(
                        CallToolRequestParams::new("read")
                            .with_arguments(args(json!({"file_path": "counter.txt"}))),
                    )
                    .await
                    .unwrap();
                let text = read.content[0].as_text().unwrap().text.clone();
                let n: u64 = text
                    .lines()
                    .nth(1)
                    .unwrap()
                    .trim_start_matches("1: count = ")
                    .parse()
                    .unwrap();
                let edit = client
                    .call_tool(
                        CallToolRequestParams::new("edit").with_arguments(args(json!({
                            "file_path": "counter.txt",
                            "old_string": format!("count = {n}\n"),
                            "new_string": format!("count = {}\n", n + 1)
                        }))),
                    )
                    .await
                    .unwrap();
                if edit.is_error == Some(true) {
                    assert_eq!(
                        edit.structured_content.as_ref().unwrap()["error"]["code"],
                        "FS_STALE_VERSION"
                    );
                    stale += 1;
                } else {
                    done += 1;
                }
            }
            client.cancel().await.unwrap();
            stale
        }));
    }
    let mut stale = 0;
    for t in tasks {
        stale += t.await.unwrap();
    }
    eprintln!("8 processes × {per_session} increments: {stale} stale retries");
    assert_eq!(
        ws.bytes("counter.txt"),
        format!("count = {}\n", 8 * per_session).as_bytes()
    );
}

//! The change journal through the real component: `checkpoint`, `changes`
//! and `revert` over the local disk and the memory store, the bytes of
//! every file checked after each step (a CRLF file with a BOM among them),
//! an outside writer's change left alone and reported.

use crate::{Workspace, call, fails, ok, runtime};
use dsh_fs::{DynProvider, MemoryStore, Session, SessionOptions, TextLayer, ToolResult};
use serde_json::json;
use std::sync::Arc;

/// A workspace seen two ways: through a session, and directly (seeding,
/// an outside writer, the bytes).
pub(crate) trait Files {
    fn put(&self, path: &str, bytes: &[u8]);
    fn get(&self, path: &str) -> Option<Vec<u8>>;
}

impl Files for Workspace {
    fn put(&self, path: &str, bytes: &[u8]) {
        self.write(path, bytes);
    }
    fn get(&self, path: &str) -> Option<Vec<u8>> {
        std::fs::read(self.path(path)).ok()
    }
}

struct Memory(Arc<TextLayer<MemoryStore>>);

impl Files for Memory {
    fn put(&self, path: &str, bytes: &[u8]) {
        self.0.store().insert(path, bytes.to_vec());
    }
    fn get(&self, path: &str) -> Option<Vec<u8>> {
        self.0.store().get(path)
    }
}

const WIN: &[u8] = b"\xef\xbb\xbf[core]\r\nname = one\r\nsize = 1\r\n";

fn edit(s: &mut Session, file: &str, old: &str, new: &str) -> String {
    ok(call(
        s,
        "edit",
        json!({"file_path": file, "old_string": old, "new_string": new}),
    ))
}

/// Runs one tool call of a session on some host.
pub(crate) type Call<'a> = &'a mut dyn FnMut(&str, serde_json::Value) -> ToolResult;

/// The scenario of the journal on one workspace, through `call`.
pub(crate) fn scenario(files: &dyn Files, call: Call<'_>) {
    files.put("win.ini", WIN);
    files.put("notes.md", b"# Notes\n- one\n");
    fn edit(call: Call<'_>, file: &str, old: &str, new: &str) -> String {
        ok(call(
            "edit",
            json!({"file_path": file, "old_string": old, "new_string": new}),
        ))
    }
    // Nothing before the first checkpoint is kept.
    let none = fails(call("revert", json!({})), "INVALID_ARGS");
    assert!(none.contains("no checkpoint yet"), "{none}");
    let start = ok(call("checkpoint", json!({"label": "start"})));
    assert!(
        start.starts_with("Checkpoint 1 (start) set after 0 changes."),
        "{start}"
    );

    // create, edit ×3, write
    ok(call(
        "write",
        json!({"file_path": "src/new.rs", "content": "fn a() {}\n"}),
    ));
    ok(call("read", json!({"file_path": "win.ini"})));
    edit(&mut *call, "win.ini", "name = one", "name = two");
    edit(&mut *call, "win.ini", "size = 1", "size = 2");
    edit(
        &mut *call,
        "src/new.rs",
        "fn a() {}",
        "fn a() {}\nfn b() {}",
    );
    ok(call("read", json!({"file_path": "notes.md"})));
    ok(call(
        "write",
        json!({"file_path": "notes.md", "content": "# Notes\n- one\n- two\n"}),
    ));
    let win2 = b"\xef\xbb\xbf[core]\r\nname = two\r\nsize = 2\r\n";
    assert_eq!(files.get("win.ini").unwrap(), win2);
    assert_eq!(files.get("src/new.rs").unwrap(), b"fn a() {}\nfn b() {}\n");
    assert_eq!(files.get("notes.md").unwrap(), b"# Notes\n- one\n- two\n");

    let mid = ok(call("checkpoint", json!({})));
    assert!(
        mid.starts_with("Checkpoint 2 set after 5 changes."),
        "{mid}"
    );
    // edit ×2, then someone else changes notes.md
    edit(&mut *call, "win.ini", "[core]", "[main]");
    edit(&mut *call, "notes.md", "- two", "- three");
    files.put("notes.md", b"# Notes\n- one\n- three\n- outside\n");

    let listed = ok(call("changes", json!({"since": 2})));
    assert!(
        listed.starts_with("Changes since checkpoint 2: 2 files."),
        "{listed}"
    );
    assert!(
        listed.contains("Updated win.ini: 1 line added, 1 removed.\n@@ -1,2 +1,2 @@\n-[core]\n+[main]\n name = two"),
        "{listed}"
    );
    assert!(
        listed
            .contains("Updated notes.md: 2 lines added, 1 removed. Someone else changed it since"),
        "{listed}"
    );

    // Back to checkpoint 2: win.ini restored, notes.md left alone.
    let back = ok(call("revert", json!({"to": 2})));
    assert!(
        back.starts_with("Reverted to checkpoint 2: 1 file restored, 1 left alone."),
        "{back}"
    );
    assert!(
        back.contains("Restored win.ini: 1 line added, 1 removed."),
        "{back}"
    );
    assert!(
        back.contains("Left alone notes.md: someone else changed it since this session last wrote it; reverting it now would change:\n@@"),
        "{back}"
    );
    assert!(back.ends_with("To redo: revert with to=3."), "{back}");
    assert_eq!(files.get("win.ini").unwrap(), win2);
    assert_eq!(
        files.get("notes.md").unwrap(),
        b"# Notes\n- one\n- three\n- outside\n"
    );

    // The revert is journaled: reverting to the point before it redoes it.
    let redo = ok(call("revert", json!({"to": 3})));
    assert!(redo.contains("Restored win.ini"), "{redo}");
    assert_eq!(
        files.get("win.ini").unwrap(),
        b"\xef\xbb\xbf[main]\r\nname = two\r\nsize = 2\r\n"
    );

    // Back to the start: every byte of win.ini as it was, BOM and CRLF
    // included; the file the session created removed.
    let first = ok(call("revert", json!({"to": 1})));
    assert!(first.contains("Restored win.ini"), "{first}");
    assert!(
        first.contains("Removed src/new.rs (2 lines): this session created it."),
        "{first}"
    );
    assert_eq!(files.get("src/new.rs"), None);
    assert!(
        first.contains("Left alone notes.md: someone else changed it"),
        "{first}"
    );
    assert_eq!(files.get("win.ini").unwrap(), WIN);
    assert_eq!(
        files.get("notes.md").unwrap(),
        b"# Notes\n- one\n- three\n- outside\n"
    );
    // Reverting that revert brings the created file back, byte for byte.
    let again = ok(call("revert", json!({"to": 4})));
    assert!(
        again.contains("Restored src/new.rs: 2 lines added, 0 removed."),
        "{again}"
    );
    assert_eq!(files.get("src/new.rs").unwrap(), b"fn a() {}\nfn b() {}\n");
    // The session edits on without reading again: it knows what it wrote.
    edit(&mut *call, "win.ini", "size = 2", "size = 9");
    // Unknown checkpoints are named.
    let bad = fails(call("revert", json!({"to": 99})), "INVALID_ARGS");
    assert!(bad.contains("there is no checkpoint 99"), "{bad}");
}

#[test]
fn a_session_reverts_to_its_checkpoints_on_the_local_disk() {
    let ws = Workspace::new();
    let mut s = runtime()
        .session(ws.provider(), SessionOptions::default())
        .unwrap();
    scenario(&ws, &mut |tool, args| call(&mut s, tool, args));
}

#[test]
fn a_session_reverts_to_its_checkpoints_in_memory() {
    let layer = Arc::new(TextLayer::new(MemoryStore::default()));
    let provider: Arc<DynProvider> = layer.clone();
    let mut s = runtime()
        .session(provider, SessionOptions::default())
        .unwrap();
    scenario(&Memory(layer), &mut |tool, args| call(&mut s, tool, args));
}

/// A bucket prefix on moto, seen through its side door.
struct Bucket(crate::object_store::Bucket);

impl Files for Bucket {
    fn put(&self, path: &str, bytes: &[u8]) {
        self.0.put(&format!("ws/{path}"), bytes);
    }
    fn get(&self, path: &str) -> Option<Vec<u8>> {
        self.0.get(&format!("ws/{path}"))
    }
}

#[test]
fn a_session_reverts_to_its_checkpoints_in_a_bucket() {
    let bucket = Bucket(crate::object_store::Bucket::new());
    let provider: Arc<DynProvider> = bucket.0.provider("ws");
    let mut s = runtime()
        .session(provider, SessionOptions::default())
        .unwrap();
    scenario(&bucket, &mut |tool, args| call(&mut s, tool, args));
}

#[test]
fn a_revert_of_a_file_edited_again_by_someone_between_the_sessions_changes_keeps_theirs() {
    let ws = Workspace::new();
    ws.write("a.txt", "one\ntwo\n");
    let mut s = ws.session();
    ok(call(&mut s, "checkpoint", json!({})));
    ok(call(&mut s, "read", json!({"file_path": "a.txt"})));
    edit(&mut s, "a.txt", "one", "ONE");
    ws.write("a.txt", "ONE\ntwo\nthree\n");
    ok(call(&mut s, "read", json!({"file_path": "a.txt"})));
    edit(&mut s, "a.txt", "two", "TWO");
    let out = ok(call(&mut s, "revert", json!({})));
    assert!(out.contains("Restored a.txt"), "{out}");
    assert!(out.contains("their change kept"), "{out}");
    assert_eq!(ws.bytes("a.txt"), b"ONE\ntwo\nthree\n");
}

#[test]
fn a_host_sets_the_journal_budget_and_past_it_changes_are_not_undoable() {
    let ws = Workspace::new();
    let off = dsh_fs::SessionOptions {
        journal_bytes: 0,
        ..Default::default()
    };
    let mut s = runtime().session(ws.provider(), off).unwrap();
    let refused = fails(call(&mut s, "checkpoint", json!({})), "INVALID_ARGS");
    assert!(refused.contains("keeps no change journal"), "{refused}");

    // 10 KiB of old text: of two 8 KiB files edited, the first is dropped.
    let small = dsh_fs::SessionOptions {
        journal_bytes: 10 << 10,
        ..Default::default()
    };
    let page = "x".repeat(8 << 10);
    ws.write("a.txt", format!("a\n{page}"));
    ws.write("b.txt", format!("b\n{page}"));
    let mut s = runtime().session(ws.provider(), small).unwrap();
    ok(call(&mut s, "checkpoint", json!({})));
    for name in ["a", "b"] {
        let file = format!("{name}.txt");
        ok(call(&mut s, "read", json!({"file_path": file, "limit": 1})));
        edit(&mut s, &file, &format!("{name}\n"), "edited\n");
    }
    let out = ok(call(&mut s, "revert", json!({})));
    assert!(
        out.contains("Left alone a.txt: not undoable: its old text was dropped to keep the journal within its budget."),
        "{out}"
    );
    assert!(out.contains("Restored b.txt"), "{out}");
    assert_eq!(ws.bytes("a.txt"), format!("edited\n{page}").as_bytes());
    assert_eq!(ws.bytes("b.txt"), format!("b\n{page}").as_bytes());
}

/// Runs `lines` (tool calls) through `dsh-fs serve` on `root`, one at a time;
/// the replies, and the process's peak RSS in KiB (VmHWM) before it exits.
fn serve(root: &std::path::Path, lines: &[serde_json::Value]) -> (Vec<serde_json::Value>, u64) {
    use std::io::{BufRead, BufReader, Write};
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_dsh-fs"))
        .args(["serve", "--no-policy", "--root"])
        .arg(root)
        .env("DSH_FS_CACHE_DIR", crate::cache_dir())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut replies = Vec::new();
    for line in lines {
        writeln!(stdin, "{line}").unwrap();
        let mut reply = String::new();
        stdout.read_line(&mut reply).unwrap();
        replies.push(serde_json::from_str(&reply).unwrap());
    }
    let status = std::fs::read_to_string(format!("/proc/{}/status", child.id())).unwrap();
    let peak = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    drop(stdin);
    child.wait().unwrap();
    (
        replies,
        peak.split_whitespace().nth(1).unwrap().parse().unwrap(),
    )
}

/// A large file edited 10 times and five 3.75 MiB files edited once, then
/// reverted through the journal, against the same edits and the revert's
/// writes made by hand without one: the journal adds at most its budget
/// (32 MiB) and 16 MiB to the process's peak. The large file is 24 MiB here
/// (over the 10 MiB a journal keeps, and edited by streaming);
/// `DSH_FS_JOURNAL_MIB=100` runs it at 100.
#[test]
fn the_journal_stays_within_its_budget_beside_large_edits() {
    let mib: usize = std::env::var("DSH_FS_JOURNAL_MIB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(24);
    let ws = Workspace::new();
    let big: String = (0..mib * (1 << 20) / 16)
        .map(|i| format!("line {i:010}\n"))
        .collect();
    let small = |n: usize| {
        format!(
            "small {n}\n{}",
            ("s".repeat(79) + "\n").repeat(6 << 20 >> 7)
        )
    };
    let seed = |ws: &Workspace| {
        ws.write("big.txt", &big);
        for n in 0..5 {
            ws.write(&format!("s{n}.txt"), small(n));
        }
    };
    let mut calls =
        vec![json!({"tool": "read", "arguments": {"file_path": "big.txt", "limit": 1}})];
    for k in 0..10 {
        let old = format!("line {:010}\n", k * 100_000 + 7);
        calls.push(json!({"tool": "edit", "arguments": {"file_path": "big.txt", "old_string": old, "new_string": format!("edited {k}\n")}}));
    }
    for n in 0..5 {
        calls.push(json!({"tool": "edit", "arguments": {"file_path": format!("s{n}.txt"), "old_string": format!("small {n}\n"), "new_string": "edited\n"}}));
    }
    seed(&ws);
    // The baseline does the revert's work by hand: each small file read and
    // written back whole.
    let mut by_hand = calls.clone();
    for n in 0..5 {
        let file = format!("s{n}.txt");
        by_hand.push(json!({"tool": "read", "arguments": {"file_path": file, "limit": 1}}));
        by_hand
            .push(json!({"tool": "write", "arguments": {"file_path": file, "content": small(n)}}));
    }
    let (replies, plain) = serve(&ws.root, &by_hand);
    assert!(
        replies.iter().all(|r| r["is_error"] == false),
        "{replies:?}"
    );
    seed(&ws);
    let mut journaled = vec![json!({"tool": "checkpoint", "arguments": {}})];
    journaled.extend(calls);
    journaled.push(json!({"tool": "revert", "arguments": {}}));
    let (replies, peak) = serve(&ws.root, &journaled);
    let reverted = replies.last().unwrap()["text"].as_str().unwrap().to_owned();
    eprintln!(
        "{mib} MiB edited 10 times and 5 × 3.75 MiB once, then put back: peak RSS {} MiB by hand \
         without a journal, {} MiB reverted with one (budget 32 MiB)",
        plain >> 10,
        peak >> 10
    );
    assert!(
        peak <= plain + (32 << 10) + (16 << 10),
        "{peak} KiB against {plain} KiB"
    );
    assert!(
        reverted.starts_with("Reverted to checkpoint 1: 5 files restored, 1 left alone."),
        "{reverted}"
    );
    assert!(
        reverted.contains("Left alone big.txt: not undoable: it was larger than the journal keeps"),
        "{reverted}"
    );
    for n in 0..5 {
        assert_eq!(ws.bytes(&format!("s{n}.txt")), small(n).as_bytes());
    }
}

#[test]
fn many_files_are_listed_up_to_fifty_and_all_reverted() {
    let layer: Arc<TextLayer<MemoryStore>> = Arc::new(TextLayer::new(MemoryStore::default()));
    let provider: Arc<DynProvider> = layer.clone();
    let mut s = runtime()
        .session(provider, SessionOptions::default())
        .unwrap();
    ok(call(&mut s, "checkpoint", json!({})));
    for i in 0..60 {
        let file = format!("f{i:02}.txt");
        ok(call(
            &mut s,
            "write",
            json!({"file_path": file, "content": "x\n"}),
        ));
    }
    let listed = ok(call(&mut s, "changes", json!({})));
    assert!(
        listed.starts_with("Changes since checkpoint 1: 60 files."),
        "{listed}"
    );
    assert_eq!(listed.matches("\nCreated ").count(), 50, "{listed}");
    assert!(
        listed.ends_with("\n… 10 more files changed (a revert puts every one back)."),
        "{listed}"
    );
    let reverted = ok(call(&mut s, "revert", json!({})));
    assert!(
        reverted.starts_with("Reverted to checkpoint 1: 60 files restored, 0 left alone."),
        "{reverted}"
    );
    assert!((0..60).all(|i| layer.store().get(&format!("f{i:02}.txt")).is_none()));
}

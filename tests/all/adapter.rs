//! The text adapter component under wasmtime, and under jco over the
//! JavaScript stores, against the native text layer over the same kind of
//! store: one script of provider calls on each, every answer (values,
//! versions, error codes and messages) and the bytes left behind compared;
//! then the tools component plugged to the adapter.

use crate::contract::{AdaptedBucket, AdaptedLocal, AdaptedMemory, Fixture, Local, Memory, Store};
use crate::jco::{JcoMemory, JcoNode};
use crate::{call, fails, ok, runtime};
use dsh_fs::{DynProvider, EditRequest, SessionOptions, WriteIntent};
use serde_json::json;

/// Files of every kind the layer treats apart.
fn seed(f: &dyn Fixture) {
    f.put("a.txt", b"one\ntwo\nthree\ntwo\n");
    f.put("bom.txt", b"\xEF\xBB\xBFalpha\r\nbeta\r\n");
    f.put("nul.txt", b"a\0b\n");
    f.put("latin1.txt", b"caf\xE9\n");
    f.put("dir/x.txt", b"x\n");
    f.put("dir/sub/y.txt", b"y\n");
    f.mkdir("empty");
    // Past the size where an edit is spliced while streaming.
    let big: String = (0..900_000).map(|i| format!("line {i}\n")).collect();
    f.put("big.txt", big.as_bytes());
}

/// Runs the script on `f`'s provider and returns what every call answered.
fn script(f: &dyn Fixture) -> Vec<String> {
    run_script(f, true)
}

/// The script without its calls past a deadline. A deadline is the Rust
/// host's (`dsh_fs::deadline`, held by the calling thread); a JS host has
/// none: its calls have no time limit.
fn script_without_deadlines(f: &dyn Fixture) -> Vec<String> {
    run_script(f, false)
}

fn run_script(f: &dyn Fixture, deadlines: bool) -> Vec<String> {
    seed(f);
    let p = f.provider();
    let mut log = Vec::new();
    let mut note = |what: &str, answer: String| log.push(format!("{what}: {answer}"));

    let paths = [
        "a.txt",
        "./dir/../a.txt",
        "bom.txt",
        "nul.txt",
        "latin1.txt",
        "big.txt",
        "dir",
        "dir/sub",
        "empty",
        "missing.txt",
        "missing/z.txt",
        "a.txt/b",
        "../x",
        "/etc/passwd",
        "",
        ".",
    ];
    for path in paths {
        let t = match p.resolve(path) {
            Ok(t) => t,
            Err(e) => {
                note(&format!("resolve {path:?}"), format!("{e:?}"));
                continue;
            }
        };
        note(&format!("resolve {path:?}"), format!("{t:?}"));
        // A stat version is the store's metadata token, which two scratch
        // directories never share: its presence is compared.
        let stat = p
            .stat(&t)
            .map(|i| i.map(|i| (i.kind, i.size, !i.version.is_empty())));
        note(&format!("stat {path:?}"), format!("{stat:?}"));
        let read = p.read_text(&t, 1 << 30).map(|c| (c.text.len(), c.version));
        note(&format!("read {path:?}"), format!("{read:?}"));
        note(
            &format!("read 3 {path:?}"),
            format!("{:?}", p.read_text(&t, 3)),
        );
        let chunk = if path == "big.txt" { 1 << 16 } else { 7 };
        note(&format!("stream {path:?}"), stream(&*p, &t, 0, chunk));
        note(
            &format!("stream from 4 {path:?}"),
            stream(&*p, &t, 4, chunk),
        );
        note(&format!("list {path:?}"), list(&*p, &t));
    }

    let t = |path: &str| p.resolve(path).unwrap();
    let v = |path: &str| p.read_text(&t(path), 1 << 30).unwrap().version;
    let edit = |old: &str, new: &str, all: bool| EditRequest::new(old, new, all);

    let a = v("a.txt");
    let writes: Vec<(&str, &str, Option<WriteIntent>)> = vec![
        ("a.txt", "new\n", Some(WriteIntent::CreateIfAbsent)),
        (
            "a.txt",
            "new\n",
            Some(WriteIntent::ReplaceIfVersion("0".into())),
        ),
        ("fresh.txt", "fresh\n", Some(WriteIntent::CreateIfAbsent)),
        (
            "gone.txt",
            "x\n",
            Some(WriteIntent::ReplaceIfVersion(a.clone())),
        ),
        ("deep/er/n.txt", "n\n", None),
        ("a.txt/b", "x\n", None),
        ("dir", "x\n", None),
        ("bom.txt", "gamma\r\n", None),
    ];
    for (path, content, intent) in writes {
        let r = p.write_text(&t(path), content, intent.clone());
        note(&format!("write {path:?} {intent:?}"), format!("{r:?}"));
    }

    let edits = [
        ("a.txt", edit("two", "2", false), Some(a.clone())),
        ("a.txt", edit("two", "2", false), None),
        ("a.txt", edit("two", "2", true), Some(a.clone())),
        ("a.txt", edit("four", "4", false), None),
        ("a.txt", edit("", "4", false), None),
        ("missing.txt", edit("a", "b", false), None),
        ("nul.txt", edit("a", "b", false), None),
        ("latin1.txt", edit("caf", "tea", false), None),
        ("dir", edit("a", "b", false), None),
        ("big.txt", edit("line 899999\n", "last\n", false), None),
        (
            "big.txt",
            edit("line 1\n", "first\n", false),
            Some(v("big.txt")),
        ),
        ("big.txt", edit("line 2", "line two", true), None),
    ];
    for (path, e, expected) in edits {
        let r = p.edit_text(&t(path), &e, expected.as_deref());
        note(
            &format!("edit {path:?} {e:?} {expected:?}"),
            format!("{r:?}"),
        );
    }
    // A guarded streamed splice: the rest of the file copied by the store.
    let seen = v("big.txt");
    let r = p.edit_text(
        &t("big.txt"),
        &edit("line 3\n", "third\n", false),
        Some(&seen),
    );
    note("guarded edit of the big file", format!("{r:?}"));
    // The touch tolerance: same bytes, new metadata, still fresh.
    let seen = v("a.txt");
    f.touch("a.txt");
    let r = p.edit_text(&t("a.txt"), &edit("three", "3", false), Some(&seen));
    note("edit after touch", format!("{r:?}"));

    if deadlines {
        // Past the call's deadline: whatever the store checks, nothing changes.
        let late = std::time::Instant::now();
        for path in ["a.txt", "big.txt"] {
            let r = dsh_fs::deadline::scope(late, || p.read_text(&t(path), 1 << 30));
            note(
                &format!("late read {path:?}"),
                format!("{:?}", r.map(|c| c.version)),
            );
            let r = dsh_fs::deadline::scope(late, || {
                p.edit_text(&t(path), &edit("e", "E", true), None)
            });
            note(&format!("late edit {path:?}"), format!("{r:?}"));
            let r = dsh_fs::deadline::scope(late, || p.write_text(&t(path), "late\n", None));
            note(&format!("late write {path:?}"), format!("{r:?}"));
        }
    }

    for path in [
        "a.txt",
        "bom.txt",
        "fresh.txt",
        "gone.txt",
        "deep/er/n.txt",
        "latin1.txt",
        "big.txt",
    ] {
        let bytes = f.get(path).map(|b| (b.len(), digest(&b)));
        note(&format!("bytes {path:?}"), format!("{bytes:?}"));
    }
    log
}

/// A stream drained in chunks of `max` bytes: every chunk and the version.
fn stream(p: &DynProvider, t: &dsh_fs::Target, start: u64, max: u32) -> String {
    let mut s = match p.stream_text(t, start) {
        Ok(s) => s,
        Err(e) => return format!("{e:?}"),
    };
    let version = s.version();
    let mut chunks = Vec::new();
    let mut total = 0usize;
    loop {
        match s.next_chunk(max) {
            // The big file in full would make the log unreadable.
            Ok(Some(c)) if chunks.len() < 20 => {
                total += c.len();
                chunks.push(c)
            }
            Ok(Some(c)) => total += c.len(),
            Ok(None) => break,
            Err(e) => return format!("{chunks:?} then {e:?}"),
        }
    }
    format!("{version:?} {total} {chunks:?} {:?}", s.version())
}

/// A listing drained two entries at a time, times reduced to their presence
/// (two scratch directories never share them).
fn list(p: &DynProvider, t: &dsh_fs::Target) -> String {
    let mut l = match p.list_dir(t) {
        Ok(l) => l,
        Err(e) => return format!("{e:?}"),
    };
    let mut rows = Vec::new();
    loop {
        match l.next_entries(2) {
            Ok(page) if page.is_empty() => break,
            Ok(page) => rows.extend(
                page.into_iter()
                    .map(|e| (e.name, e.kind, e.size, e.modified.is_some())),
            ),
            Err(e) => return format!("{rows:?} then {e:?}"),
        }
    }
    format!("{rows:?} skipped {}", l.skipped())
}

fn digest(bytes: &[u8]) -> u64 {
    use std::hash::{DefaultHasher, Hasher};
    let mut h = DefaultHasher::new();
    h.write(bytes);
    h.finish()
}

#[track_caller]
fn same(native: Vec<String>, adapted: Vec<String>) {
    assert_eq!(native.len(), adapted.len());
    for (n, a) in native.iter().zip(&adapted) {
        assert_eq!(n, a, "native, then through the adapter");
    }
}

#[test]
fn the_adapter_over_memory_answers_like_the_native_layer() {
    same(script(&Memory::new()), script(&AdaptedMemory::new()));
}

#[test]
fn the_adapter_over_the_local_disk_answers_like_the_native_layer() {
    let tokens = |log: Vec<String>| log.iter().map(|l| without_tokens(l)).collect();
    same(
        tokens(script(&Local::new())),
        tokens(script(&AdaptedLocal::new())),
    );
}

#[test]
fn the_adapter_over_a_bucket_answers_like_the_native_layer() {
    let tokens = |log: Vec<String>| log.iter().map(|l| without_tokens(l)).collect();
    same(
        tokens(script(&Store::new())),
        tokens(script(&AdaptedBucket::new())),
    );
}

#[test]
fn the_adapter_under_jco_over_memory_answers_like_the_native_layer() {
    same(
        script_without_deadlines(&Memory::new()),
        script_without_deadlines(&JcoMemory::new()),
    );
}

#[test]
fn the_adapter_under_jco_over_the_local_disk_answers_like_the_native_layer() {
    let tokens = |log: Vec<String>| log.iter().map(|l| without_tokens(l)).collect();
    same(
        tokens(script_without_deadlines(&Local::new())),
        tokens(script_without_deadlines(&JcoNode::new())),
    );
}

/// `line` with the metadata token of each version (`token:hash`) masked:
/// inode and times, which two scratch directories never share.
fn without_tokens(line: &str) -> String {
    let parts: Vec<String> = line
        .split('"')
        .map(|part| match part.split_once(':') {
            Some((token, hash))
                if token.contains('.')
                    && token.bytes().all(|b| b == b'.' || b.is_ascii_hexdigit()) =>
            {
                format!("<token>:{hash}")
            }
            _ => part.to_owned(),
        })
        .collect();
    parts.join("\"")
}

/// The tools component over `f`: read, edit, a change behind its back, a
/// stale edit, a re-read and an edit again, a touch that is not a change,
/// then the searches; every tool text.
fn tools(f: &dyn Fixture) -> Vec<String> {
    f.put("src/a.rs", b"fn main() {\n    println!(\"hi\");\n}\n");
    f.put("src/b.rs", b"\xEF\xBB\xBFfn b() {}\r\n");
    f.put("notes.md", b"hi there\n");
    let mut s = runtime()
        .session(f.provider(), SessionOptions::default())
        .unwrap();
    let mut out = Vec::new();
    out.push(ok(call(&mut s, "read", json!({"file_path": "src/a.rs"}))));
    out.push(ok(call(
        &mut s,
        "edit",
        json!({"file_path": "src/a.rs", "old_string": "\"hi\"", "new_string": "\"hello\""}),
    )));
    f.put("src/a.rs", b"fn main() {}\n");
    let stale = fails(
        call(
            &mut s,
            "edit",
            json!({"file_path": "src/a.rs", "old_string": "hello", "new_string": "bye"}),
        ),
        "FS_STALE_VERSION",
    );
    assert_eq!(f.get("src/a.rs").unwrap(), b"fn main() {}\n");
    out.push(stale);
    out.push(ok(call(&mut s, "read", json!({"file_path": "src/a.rs"}))));
    // src/b.rs changes first: the touch that follows waits longer than a
    // clock tick, so the searches (newest first) list alike on any disk.
    out.push(ok(call(&mut s, "read", json!({"file_path": "src/b.rs"}))));
    out.push(ok(call(
        &mut s,
        "edit",
        json!({"file_path": "src/b.rs", "old_string": "b()", "new_string": "c()"}),
    )));
    assert_eq!(f.get("src/b.rs").unwrap(), b"\xEF\xBB\xBFfn c() {}\r\n");
    f.touch("src/a.rs");
    out.push(ok(call(
        &mut s,
        "edit",
        json!({"file_path": "src/a.rs", "old_string": "{}", "new_string": "{ run() }"}),
    )));
    assert_eq!(f.get("src/a.rs").unwrap(), b"fn main() { run() }\n");
    out.push(ok(call(&mut s, "glob", json!({"pattern": "**/*.rs"}))));
    out.push(ok(call(&mut s, "grep", json!({"pattern": "fn [a-z]+"}))));
    out
}

#[test]
fn the_tools_over_the_adapter_read_edit_and_refuse_a_stale_edit() {
    same(tools(&Memory::new()), tools(&AdaptedMemory::new()));
}

#[test]
fn the_tools_search_alike_through_the_adapter_and_natively_on_disk() {
    // The native local provider searches the disk itself; through the
    // adapter the tools search over list-dir and stream-text.
    same(tools(&Local::new()), tools(&AdaptedLocal::new()));
}

#[test]
fn the_tools_over_the_adapter_under_jco_answer_like_the_native_layer() {
    same(tools(&Memory::new()), tools(&JcoMemory::new()));
    same(tools(&Local::new()), tools(&JcoNode::new()));
}

/// The tools component over `f`, asked about paths that are not files:
/// below a file, a directory, nothing at all; with and without a read
/// first. Every answer and code, and the bytes left behind.
fn misses(f: &dyn Fixture) -> Vec<String> {
    f.put("notes.md", b"hi there\n");
    f.put("src/a.rs", b"fn a() {}\n");
    let mut s = runtime()
        .session(f.provider(), SessionOptions::default())
        .unwrap();
    let calls = [
        (
            "edit",
            json!({"file_path": "notes.md/x", "old_string": "a", "new_string": "b"}),
        ),
        ("read", json!({"file_path": "notes.md/x"})),
        ("write", json!({"file_path": "notes.md/x", "content": "x"})),
        (
            "write",
            json!({"file_path": "notes.md/x/y.txt", "content": "x"}),
        ),
        (
            "edit",
            json!({"file_path": "src", "old_string": "a", "new_string": "b"}),
        ),
        ("read", json!({"file_path": "src"})),
        ("write", json!({"file_path": "src", "content": "x"})),
        (
            "edit",
            json!({"file_path": "src/b.rs", "old_string": "a", "new_string": "b"}),
        ),
        ("read", json!({"file_path": "src/b.rs"})),
        ("glob", json!({"pattern": "*", "path": "notes.md"})),
        ("grep", json!({"pattern": "a", "path": "nowhere"})),
    ];
    let mut out: Vec<String> = calls
        .into_iter()
        .map(|(tool, args)| {
            let r = call(&mut s, tool, args.clone());
            let code = r.error.as_ref().map_or("OK", |e| e.code.as_str());
            format!("{tool} {args}: {code} {}", r.text)
        })
        .collect();
    out.push(format!("{:?}", f.get("notes.md")));
    out.push(format!("{:?}", f.get("src/a.rs")));
    out
}

#[test]
fn the_tools_answer_misses_alike_on_every_store() {
    let memory = misses(&Memory::new());
    same(memory.clone(), misses(&Local::new()));
    // A bucket has no directories: it says why a key counts as one.
    let bucket = misses(&Store::new())
        .into_iter()
        .map(|line| line.replace(" (other objects lie under it)", ""))
        .collect();
    same(memory.clone(), bucket);
    same(memory.clone(), misses(&AdaptedMemory::new()));
    same(memory, misses(&JcoMemory::new()));
}

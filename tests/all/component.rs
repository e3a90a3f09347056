//! The tools and the policy through the real component on real files.

use crate::{Workspace, call, code, fails, ok, runtime};
use dsh_fs::{Limits, LocalProvider, LocalStore, SessionOptions};
use serde_json::json;
use std::sync::Arc;

#[test]
fn a_windowed_read_authorizes_an_edit() {
    let ws = Workspace::new();
    let text: String = (1..=5000).map(|i| format!("line {i}\n")).collect();
    ws.write("big.txt", &text);
    let mut s = ws.session();
    fails(
        call(
            &mut s,
            "edit",
            json!({"file_path": "big.txt", "old_string": "line 4999\n", "new_string": "x\n"}),
        ),
        "FS_NOT_OBSERVED",
    );
    let out = ok(call(
        &mut s,
        "read",
        json!({"file_path": "big.txt", "offset": 10, "limit": 3}),
    ));
    assert_eq!(
        out,
        "File: big.txt\n10: line 10\n11: line 11\n12: line 12\n(Lines 10-12 of 5000 shown. Continue with offset=13.)"
    );
    let out = ok(call(
        &mut s,
        "edit",
        json!({"file_path": "big.txt", "old_string": "line 4999\n", "new_string": "x\n"}),
    ));
    assert!(
        out.starts_with("Edited big.txt: 1 replacement at line 4999."),
        "{out}"
    );
    assert_eq!(
        ws.bytes("big.txt"),
        text.replace("line 4999\n", "x\n").as_bytes()
    );
}

#[test]
fn stale_is_reported_before_matching() {
    let ws = Workspace::new();
    ws.write("a.txt", "one\ntwo\n");
    let mut s = ws.session();
    ok(call(&mut s, "read", json!({"file_path": "a.txt"})));
    ws.write("a.txt", "three\n");
    // "two" is no longer there, but the model must learn that the file changed.
    let text = fails(
        call(
            &mut s,
            "edit",
            json!({"file_path": "a.txt", "old_string": "two", "new_string": "2"}),
        ),
        "FS_STALE_VERSION",
    );
    assert!(text.contains("Read the file again"), "{text}");
    assert_eq!(ws.bytes("a.txt"), b"three\n");
    // After a re-read the edit is judged on the current content.
    ok(call(&mut s, "read", json!({"file_path": "a.txt"})));
    fails(
        call(
            &mut s,
            "edit",
            json!({"file_path": "a.txt", "old_string": "two", "new_string": "2"}),
        ),
        "FS_EDIT_NOT_FOUND",
    );
    ok(call(
        &mut s,
        "edit",
        json!({"file_path": "a.txt", "old_string": "three", "new_string": "3"}),
    ));
    assert_eq!(ws.bytes("a.txt"), b"3\n");
}

#[test]
fn writes_follow_the_policy() {
    let ws = Workspace::new();
    ws.write("exists.txt", "keep me\n");
    let mut s = ws.session();
    let text = fails(
        call(
            &mut s,
            "write",
            json!({"file_path": "exists.txt", "content": "clobber"}),
        ),
        "FS_NOT_OBSERVED",
    );
    assert!(text.contains("Read it first"), "{text}");
    assert_eq!(ws.bytes("exists.txt"), b"keep me\n");
    let out = ok(call(
        &mut s,
        "write",
        json!({"file_path": "src/new.rs", "content": "fn main() {}\n"}),
    ));
    assert!(
        out.starts_with("Created src/new.rs (1 line, 13 bytes)."),
        "{out}"
    );
    // A session's own write counts as an observation.
    ok(call(
        &mut s,
        "edit",
        json!({"file_path": "src/new.rs", "old_string": "{}", "new_string": "{ run() }"}),
    ));
    let out = ok(call(
        &mut s,
        "write",
        json!({"file_path": "src/new.rs", "content": "// replaced\n"}),
    ));
    assert!(out.starts_with("Updated src/new.rs"), "{out}");
    ws.write("src/new.rs", "// someone else\n");
    fails(
        call(
            &mut s,
            "write",
            json!({"file_path": "src/new.rs", "content": "mine\n"}),
        ),
        "FS_STALE_VERSION",
    );
    assert_eq!(ws.bytes("src/new.rs"), b"// someone else\n");
}

#[test]
fn sessions_do_not_share_observations() {
    let ws = Workspace::new();
    ws.write("a.txt", "hello\n");
    let mut first = ws.session();
    let mut second = ws.session();
    ok(call(&mut first, "read", json!({"file_path": "a.txt"})));
    fails(
        call(
            &mut second,
            "edit",
            json!({"file_path": "a.txt", "old_string": "hello", "new_string": "x"}),
        ),
        "FS_NOT_OBSERVED",
    );
    ok(call(
        &mut first,
        "edit",
        json!({"file_path": "a.txt", "old_string": "hello", "new_string": "hi"}),
    ));
    ok(call(&mut second, "read", json!({"file_path": "a.txt"})));
    ok(call(
        &mut second,
        "edit",
        json!({"file_path": "a.txt", "old_string": "hi", "new_string": "hey"}),
    ));
    // The first session's observation is now stale.
    fails(
        call(
            &mut first,
            "edit",
            json!({"file_path": "a.txt", "old_string": "hey", "new_string": "yo"}),
        ),
        "FS_STALE_VERSION",
    );
}

#[test]
fn policy_off_is_unconditional() {
    let ws = Workspace::new();
    ws.write("a.txt", "one\n");
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
        "edit",
        json!({"file_path": "a.txt", "old_string": "one", "new_string": "two"}),
    ));
    ok(call(
        &mut s,
        "write",
        json!({"file_path": "a.txt", "content": "three\n"}),
    ));
    ws.write("a.txt", "four\n");
    ok(call(
        &mut s,
        "edit",
        json!({"file_path": "a.txt", "old_string": "four", "new_string": "five"}),
    ));
    assert_eq!(ws.bytes("a.txt"), b"five\n");
    // Matching rules still apply.
    fails(
        call(
            &mut s,
            "edit",
            json!({"file_path": "a.txt", "old_string": "zzz", "new_string": "y"}),
        ),
        "FS_EDIT_NOT_FOUND",
    );
}

#[test]
fn concurrent_sessions_editing_one_file_have_exactly_one_winner() {
    let ws = Workspace::new();
    ws.write("c.txt", "value = 0\n");
    let barrier = Arc::new(std::sync::Barrier::new(2));
    let mut sessions: Vec<_> = (0..2).map(|_| ws.session()).collect();
    for s in &mut sessions {
        ok(call(s, "read", json!({"file_path": "c.txt"})));
    }
    let handles: Vec<_> = sessions
        .into_iter()
        .enumerate()
        .map(|(i, mut s)| {
            let barrier = barrier.clone();
            std::thread::spawn(move || {
                barrier.wait();
                call(&mut s, "edit", json!({"file_path": "c.txt", "old_string": "value = 0", "new_string": format!("value = {}", i + 1)}))
            })
        })
        .collect();
    let results: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    let codes: Vec<_> = results.iter().map(code).collect();
    assert_eq!(codes.iter().filter(|c| **c == "OK").count(), 1, "{codes:?}");
    assert_eq!(
        codes.iter().filter(|c| **c == "FS_STALE_VERSION").count(),
        1,
        "{codes:?}"
    );
    let content = String::from_utf8(ws.bytes("c.txt")).unwrap();
    assert!(
        content == "value = 1\n" || content == "value = 2\n",
        "{content}"
    );
}

#[test]
fn non_text_and_non_files_are_refused_without_blocking() {
    let ws = Workspace::new();
    ws.write("bin.dat", b"\x7fELF\x02\x01\x00\x00binary");
    ws.write("latin1.txt", b"caf\xE9\n");
    std::fs::create_dir(ws.path("dir")).unwrap();
    let fifo = ws.path("pipe");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    let mut s = ws.session();
    let text = fails(
        call(&mut s, "read", json!({"file_path": "bin.dat"})),
        "FS_NOT_TEXT",
    );
    assert!(text.contains("NUL byte at offset 6"), "{text}");
    let text = fails(
        call(&mut s, "read", json!({"file_path": "latin1.txt"})),
        "FS_NOT_TEXT",
    );
    assert!(text.contains("invalid UTF-8 at offset 3"), "{text}");
    fails(
        call(&mut s, "read", json!({"file_path": "dir"})),
        "FS_NOT_REGULAR_FILE",
    );
    // A FIFO with no writer would block a plain open forever.
    let started = std::time::Instant::now();
    fails(
        call(&mut s, "read", json!({"file_path": "pipe"})),
        "FS_NOT_REGULAR_FILE",
    );
    // What the target is comes before the read-before-edit policy.
    fails(
        call(
            &mut s,
            "edit",
            json!({"file_path": "pipe", "old_string": "a", "new_string": "b"}),
        ),
        "FS_NOT_REGULAR_FILE",
    );
    assert!(started.elapsed().as_secs() < 10);
    fails(
        call(
            &mut s,
            "write",
            json!({"file_path": "pipe", "content": "x"}),
        ),
        "FS_NOT_REGULAR_FILE",
    );
    fails(
        call(&mut s, "write", json!({"file_path": "dir", "content": "x"})),
        "FS_NOT_REGULAR_FILE",
    );
    fails(
        call(&mut s, "read", json!({"file_path": "missing.txt"})),
        "FS_NOT_FOUND",
    );
    fails(
        call(&mut s, "read", json!({"file_path": "bin.dat/child"})),
        "FS_NOT_DIRECTORY",
    );
    assert_eq!(ws.bytes("bin.dat"), b"\x7fELF\x02\x01\x00\x00binary");
}

#[test]
fn bad_arguments_get_invalid_args_and_touch_nothing() {
    let ws = Workspace::new();
    ws.write("a.txt", "a\n");
    let before = Workspace::snapshot(&ws.root);
    let mut s = ws.session();
    ok(call(&mut s, "read", json!({"file_path": "a.txt"})));
    let cases = [
        ("read", "not json".to_string(), "not valid JSON"),
        ("read", "[]".into(), "must be a JSON object"),
        ("read", "{}".into(), "missing required field `file_path`"),
        (
            "read",
            r#"{"file_path": 5}"#.into(),
            "`file_path` must be a string",
        ),
        (
            "read",
            r#"{"file_path": "a.txt", "offset": 0}"#.into(),
            "`offset` must be an integer of at least 1",
        ),
        (
            "read",
            r#"{"file_path": "a.txt", "limit": "10"}"#.into(),
            "`limit` must be an integer",
        ),
        (
            "read",
            r#"{"file_path": "a.txt", "filePath": "a.txt"}"#.into(),
            "unknown field `filePath`",
        ),
        (
            "write",
            r#"{"file_path": "a.txt"}"#.into(),
            "missing required field `content`",
        ),
        (
            "edit",
            r#"{"file_path": "a.txt", "old_string": "", "new_string": "x"}"#.into(),
            "`old_string` must not be empty",
        ),
        (
            "edit",
            r#"{"file_path": "a.txt", "old_string": "a", "new_string": "a"}"#.into(),
            "identical",
        ),
        (
            "edit",
            r#"{"file_path": "a.txt", "old_string": "a", "new_string": "b", "replace_all": "yes"}"#
                .into(),
            "`replace_all` must be true or false",
        ),
        // Checked without being built: nesting costs neither stack nor memory.
        (
            "edit",
            format!("{}{}", "[".repeat(100_000), "]".repeat(100_000)),
            "must be a JSON object, got an array",
        ),
    ];
    for (tool, args, needle) in cases {
        let r = s.execute(tool, &args);
        let text = fails(r, "INVALID_ARGS");
        assert!(
            text.contains(needle),
            "{tool} {}: {text}",
            &args[..args.len().min(60)]
        );
    }
    let r = s.execute("delete", "{}");
    fails(r, "UNKNOWN_TOOL");
    let r = s.execute(&"x".repeat(100_000), "{}");
    assert!(
        fails(r, "UNKNOWN_TOOL").len() < 300,
        "a huge tool name is not echoed back"
    );
    // Huge but legal strings work; past the argument limit they are refused
    // before they reach the component.
    let big = "y".repeat(12 << 20);
    let text = fails(
        call(
            &mut s,
            "edit",
            json!({"file_path": "a.txt", "old_string": big, "new_string": "z"}),
        ),
        "FS_EDIT_NOT_FOUND",
    );
    assert!(text.len() < 300);
    let huge = "y".repeat(17 << 20);
    let text = fails(
        call(
            &mut s,
            "write",
            json!({"file_path": "huge.txt", "content": huge}),
        ),
        "INVALID_ARGS",
    );
    assert!(text.contains("more than the 16 MiB limit"), "{text}");
    for nested in [
        "{\"file_path\": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\"a\"]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}",
        "{\"file_path\": {\"a\": {\"b\": {}}}}",
    ] {
        fails(s.execute("read", nested), "INVALID_ARGS");
    }
    fails(
        call(&mut s, "read", json!({"file_path": "a.txt", "offset": 3})),
        "INVALID_ARGS",
    );
    assert_eq!(Workspace::snapshot(&ws.root), before);
    // The session is intact after all of that.
    ok(call(
        &mut s,
        "edit",
        json!({"file_path": "a.txt", "old_string": "a", "new_string": "b"}),
    ));
}

#[test]
fn a_trap_is_an_error_result_and_the_next_call_works() {
    let ws = Workspace::new();
    ws.write("small.txt", "small\n");
    ws.write("nine.txt", "x".repeat(9 << 20));
    let runtime = dsh_fs::Runtime::builder()
        .cache_dir(Some(crate::cache_dir()))
        .limits(Limits {
            memory_bytes: 4 << 20,
            ..Limits::default()
        })
        .build()
        .unwrap();
    let provider = Arc::new(LocalProvider::new(LocalStore::new(&ws.root).unwrap()));
    let mut s = runtime
        .session(provider, SessionOptions::default())
        .unwrap();
    ok(call(&mut s, "read", json!({"file_path": "small.txt"})));
    // 9 MiB of text cannot enter a 4 MiB instance.
    let text = fails(
        call(&mut s, "read", json!({"file_path": "nine.txt"})),
        "INTERNAL_ERROR",
    );
    assert!(text.contains("session was restarted"), "{text}");
    // A fresh instance serves the next call, without the old observations.
    fails(
        call(
            &mut s,
            "edit",
            json!({"file_path": "small.txt", "old_string": "small", "new_string": "big"}),
        ),
        "FS_NOT_OBSERVED",
    );
    ok(call(&mut s, "read", json!({"file_path": "small.txt"})));
    ok(call(
        &mut s,
        "edit",
        json!({"file_path": "small.txt", "old_string": "small", "new_string": "big"}),
    ));
}

#[test]
fn large_files_stream_with_bounded_memory() {
    // The 64 MiB file is read at its end by a separate `dsh-fs call` process
    // whose peak RSS is compared with the same call on a tiny file.
    let ws = Workspace::new();
    let line = format!("{}\n", "y".repeat(79));
    let lines = (64 << 20) / line.len();
    let mut big = line.repeat(lines - 1);
    big.push_str("the very last line\n");
    ws.write("big.txt", &big);
    ws.write("tiny.txt", "tiny\n");
    drop(big);

    let (out, big_rss) = crate::cli::run_measured(&[
        "call",
        "read",
        &json!({"file_path": "big.txt", "offset": lines - 1}).to_string(),
        "--root",
        ws.root.to_str().unwrap(),
    ]);
    assert_eq!(
        out,
        format!("File: big.txt\n{}: {}\n{}: the very last line\n(Lines {}-{} of {} shown; end of file.)\n", lines - 1, "y".repeat(79), lines, lines - 1, lines, lines).replace(" shown; end", "; end")
    );
    let (_, tiny_rss) = crate::cli::run_measured(&[
        "call",
        "read",
        r#"{"file_path":"tiny.txt"}"#,
        "--root",
        ws.root.to_str().unwrap(),
    ]);
    eprintln!(
        "peak RSS: 64 MiB read {} KiB, tiny read {} KiB",
        big_rss, tiny_rss
    );
    // The absolute bound holds the process with its compiled component: a
    // copy of the ~6 MiB embedded in the binary (the code wasmtime runs),
    // and the binary's own pages it was copied from.
    assert!(
        big_rss < 40 * 1024 && big_rss < tiny_rss + 16 * 1024,
        "reading 64 MiB took {big_rss} KiB peak vs {tiny_rss} KiB for a tiny file"
    );
}

#[test]
fn large_files_are_edited_by_streaming_with_the_same_results() {
    let ws = Workspace::new();
    // 12 MiB of LF lines: past the streaming threshold; the marker sits
    // across where 1 MiB chunks meet.
    let mut text: String = (0..150_000).map(|i| format!("{i:>79}\n")).collect();
    let at = (1 << 20) - 10;
    text.replace_range(at..at + 6, "MARKER");
    ws.write("big.txt", &text);
    let mut s = ws.session();
    ok(call(
        &mut s,
        "read",
        json!({"file_path": "big.txt", "limit": 1}),
    ));
    let out = ok(call(
        &mut s,
        "edit",
        json!({"file_path": "big.txt", "old_string": "MARKER", "new_string": "m\nm"}),
    ));
    let line = text[..at].matches('\n').count() + 1;
    assert!(
        out.starts_with(&format!("Edited big.txt: 1 replacement at line {line}.")),
        "{out}"
    );
    let expected = text.replacen("MARKER", "m\nm", 1);
    assert!(
        ws.bytes("big.txt") == expected.as_bytes(),
        "streamed edit differs"
    );
    let text = fails(
        call(
            &mut s,
            "edit",
            json!({"file_path": "big.txt", "old_string": "      99", "new_string": "x"}),
        ),
        "FS_AMBIGUOUS_EDIT",
    );
    assert!(
        text.contains("matches 1111 places") && text.contains("lines 100, 991, 992"),
        "{text}"
    );
    let out = ok(call(
        &mut s,
        "edit",
        json!({"file_path": "big.txt", "old_string": "  149999\n", "new_string": "  last\n", "replace_all": true}),
    ));
    assert!(out.contains("1 replacement"), "{out}");
    fails(
        call(
            &mut s,
            "edit",
            json!({"file_path": "big.txt", "old_string": "nowhere", "new_string": "x"}),
        ),
        "FS_EDIT_NOT_FOUND",
    );
    // A change on disk is stale, before matching.
    let mut changed = ws.bytes("big.txt");
    changed[5] = b'#';
    ws.write("big.txt", &changed);
    fails(
        call(
            &mut s,
            "edit",
            json!({"file_path": "big.txt", "old_string": "nowhere", "new_string": "x"}),
        ),
        "FS_STALE_VERSION",
    );
    assert!(ws.bytes("big.txt") == changed);
    // CRLF files take the in-memory splice and keep their endings.
    let crlf = text_crlf(100_000);
    ws.write("crlf.txt", &crlf);
    ok(call(
        &mut s,
        "read",
        json!({"file_path": "crlf.txt", "limit": 1}),
    ));
    ok(call(
        &mut s,
        "edit",
        json!({"file_path": "crlf.txt", "old_string": "       7\n       8", "new_string": "a\nb"}),
    ));
    assert!(
        ws.bytes("crlf.txt")
            == crlf
                .replacen("       7\r\n       8", "a\r\nb", 1)
                .as_bytes()
    );
    let names: Vec<_> = std::fs::read_dir(&ws.root)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 2, "temp files left: {names:?}");
}

fn text_crlf(lines: usize) -> String {
    (0..lines).map(|i| format!("{i:>8}\r\n")).collect()
}

#[test]
fn a_streamed_edit_of_64_mib_keeps_memory_small() {
    let ws = Workspace::new();
    let mut text = format!("{}\n", "z".repeat(79)).repeat((64 << 20) / 80);
    text.replace_range(32 << 20..(32 << 20) + 6, "MARKER");
    ws.write("big.txt", &text);
    let len = text.len() as u64;
    drop(text);
    let args =
        json!({"file_path": "big.txt", "old_string": "MARKER", "new_string": "marker"}).to_string();
    let root = ws.root.to_str().unwrap();
    let (out, rss) =
        crate::cli::run_measured(&["call", "edit", &args, "--no-policy", "--root", root]);
    eprintln!("peak RSS of a 64 MiB edit: {rss} KiB");
    assert!(out.starts_with("Edited big.txt"), "{out}");
    assert!(rss < 48 * 1024, "editing 64 MiB peaked at {rss} KiB");
    assert_eq!(std::fs::metadata(ws.path("big.txt")).unwrap().len(), len);
    let edited = std::fs::read(ws.path("big.txt")).unwrap();
    assert_eq!(&edited[32 << 20..(32 << 20) + 6], b"marker");
}

#[test]
fn paging_a_large_file_matches_a_fresh_read_and_notices_changes() {
    let ws = Workspace::new();
    // 12 MiB, streamed; a BOM and multi-byte characters shift byte offsets.
    let text: String = (1..=120_000)
        .map(|i| format!("{i:>6} {}\n", "é".repeat(45)))
        .collect();
    ws.write("big.txt", format!("\u{feff}{text}"));
    let read = |s: &mut dsh_fs::Session, offset: u64| {
        ok(call(
            s,
            "read",
            json!({"file_path": "big.txt", "offset": offset, "limit": 50}),
        ))
    };
    let mut paging = ws.session();
    read(&mut paging, 1); // scans the whole file and indexes it
    for offset in [2, 777, 60_001, 119_990, 120_000] {
        let fresh = read(&mut ws.session(), offset);
        assert_eq!(read(&mut paging, offset), fresh, "offset {offset}");
    }
    // A page is an observation: an edit after it is accepted.
    ok(call(
        &mut paging,
        "edit",
        json!({"file_path": "big.txt", "old_string": "  5000 ", "new_string": "  five "}),
    ));
    // After a change the index is not trusted: the page shows the new text.
    let changed = text.replacen(" 60001 ", " CHANGED ", 1);
    ws.write("big.txt", format!("\u{feff}{changed}"));
    let page = read(&mut paging, 60_001);
    assert!(page.contains("\n60001:  CHANGED "), "{page}");
    assert_eq!(page, read(&mut ws.session(), 60_001));
}

#[test]
fn the_embedded_component_is_compiled_with_the_build() {
    // The host's build compiled the component (with the wasmtime CLI that
    // scripts/setup installs): a process with an empty cache does not
    // compile it, and runs it from the binary, writing no cache file (so
    // the first start costs what every start costs).
    let cache = tempfile::tempdir().unwrap();
    let embedded = || {
        dsh_fs::Runtime::builder()
            .cache_dir(Some(cache.path().join("cache")))
            .build()
            .unwrap()
    };
    for _ in 0..2 {
        assert_eq!(
            embedded().origin(),
            dsh_fs::ComponentOrigin::Precompiled,
            "the embedded component was not precompiled: see the build's warning"
        );
    }
    assert!(!cache.path().join("cache").exists());
    // Runtimes come and go in one process: the embedded code is made
    // executable again for each, and runs.
    let ws = Workspace::new();
    ws.write("a.txt", "a\n");
    for _ in 0..3 {
        let runtime = embedded();
        let provider = Arc::new(LocalProvider::new(LocalStore::new(&ws.root).unwrap()));
        let mut s = runtime
            .session(provider, SessionOptions::default())
            .unwrap();
        ok(call(&mut s, "read", json!({"file_path": "a.txt"})));
    }

    // A component given to the builder is compiled on first use, then loaded
    // from the cache.
    let other = || {
        dsh_fs::Runtime::builder()
            .component(dsh_fs::component())
            .cache_dir(Some(cache.path().join("other")))
            .build()
            .unwrap()
    };
    assert_eq!(other().origin(), dsh_fs::ComponentOrigin::Compiled);
    let cached = other();
    assert_eq!(cached.origin(), dsh_fs::ComponentOrigin::Cached);
    // The embedded component (deflated in the binary) inflates to the file
    // the build made, and the hash its cache file is named by, taken by the
    // build script, is the one taken of those bytes here.
    assert_eq!(
        dsh_fs::component(),
        std::fs::read(dsh_fs::COMPONENT_PATH).unwrap()
    );
    let cached_files: Vec<_> = std::fs::read_dir(cache.path().join("other"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(cached_files.len(), 1, "{cached_files:?}");
    let provider = Arc::new(LocalProvider::new(LocalStore::new(&ws.root).unwrap()));
    let mut s = cached.session(provider, SessionOptions::default()).unwrap();
    ok(call(&mut s, "read", json!({"file_path": "a.txt"})));
}

//! `glob` and `grep` through the real component: one script of discovery
//! calls, recorded from the local disk in `tests/fixtures/discovery.json`,
//! answers with the same texts on the memory workspace and the object store
//! (here), the stock `wasmtime` CLI (`wasmtime_cli.rs`) and the JS host
//! (`host/js/test`); plus what only a disk has (links) and the caps.
//!
//! `DSH_FS_BLESS=1` rewrites the file from the local disk.

use crate::contract::{Fixture, Local, Memory, Store};
use crate::hosts::{Script, Step};
use crate::{Workspace, call, fails, ok, runtime};
use dsh_fs::SessionOptions;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The workspace the script searches: ignored, hidden, binary, CRLF and
/// multi-byte files beside plain source.
fn files() -> BTreeMap<String, String> {
    [
        (".gitignore", "target/\n*.log\n"),
        ("src/main.rs", "fn main() {\n    println!(\"hello\");\n}\n"),
        (
            "src/lib.rs",
            "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n// TODO: more\n",
        ),
        ("src/win.txt", "first line\r\nTODO second\r\nthird\r\n"),
        ("target/debug.rs", "fn ignored() {} // TODO\n"),
        ("app.log", "TODO in a log\n"),
        (".hidden/notes.md", "TODO hidden\n"),
        (".env", "TODO=1\n"),
        ("data.bin", "TODO\u{0}binary\n"),
        ("late.txt", "TODO before a NUL\n\u{0}\n"),
        (
            "docs/guide.md",
            "# Guide\nTODO: write the naïve café part\n",
        ),
    ]
    .into_iter()
    .map(|(p, t)| (p.to_owned(), t.to_owned()))
    // A line of 3007 bytes whose 2000-byte cut falls inside a character.
    .chain([(
        "wide/é.txt".to_owned(),
        format!("{} needle\n", "é".repeat(1500)),
    )])
    .collect()
}

/// The calls; every glob names at most one file, so the order by
/// modification time (which backends know differently) cannot differ.
fn calls() -> Vec<(&'static str, Value)> {
    vec![
        ("glob", json!({"pattern": "main.rs"})),
        ("glob", json!({"pattern": "*.bin"})),
        ("glob", json!({"pattern": "notes.md"})),
        ("glob", json!({"pattern": "debug.rs"})),
        ("glob", json!({"pattern": "src/**/lib.rs"})),
        ("glob", json!({"pattern": "*.md", "path": "docs"})),
        ("glob", json!({"pattern": "*.zig"})),
        ("glob", json!({"pattern": "*.rs", "path": "src/main.rs"})),
        ("glob", json!({"pattern": "src/[a-"})),
        ("glob", json!({"pattern": "*.rs", "path": "/etc"})),
        ("grep", json!({"pattern": "TODO"})),
        ("grep", json!({"pattern": "TODO", "include": "*.{md,txt}"})),
        ("grep", json!({"pattern": "third$", "path": "src/win.txt"})),
        ("grep", json!({"pattern": "na.ve caf", "path": "docs"})),
        ("grep", json!({"pattern": "nothing here"})),
        ("grep", json!({"pattern": "fn (main"})),
        ("grep", json!({"pattern": "TODO", "path": "../outside"})),
        ("grep", json!({"pattern": "TODO", "path": "docz"})),
        ("grep", json!({"pattern": "TODO", "path": "docs/guide.mdx"})),
        ("grep", json!({"pattern": "x", "bogus": 1})),
        ("grep", json!({"pattern": "needle$", "path": "wide"})),
    ]
}

/// Runs the script in one session over `fixture`.
fn run(fixture: &dyn Fixture) -> Script {
    let files = files();
    for (path, text) in &files {
        fixture.put(path, text.as_bytes());
    }
    let mut s = runtime()
        .session(fixture.provider(), SessionOptions::default())
        .unwrap();
    let calls = calls()
        .into_iter()
        .map(|(tool, arguments)| {
            let r = call(&mut s, tool, arguments.clone());
            Step {
                tool: tool.to_owned(),
                arguments,
                is_error: r.is_error,
                text: r.text,
            }
        })
        .collect();
    Script { files, calls }
}

fn golden_path() -> PathBuf {
    crate::workspace().join("tests/fixtures/discovery.json")
}

/// The recorded script.
pub fn golden() -> Script {
    let text = std::fs::read_to_string(golden_path()).expect("tests/fixtures/discovery.json");
    serde_json::from_str(&text).unwrap()
}

#[track_caller]
fn same_as_golden(got: Script) {
    let golden = golden();
    assert_eq!(
        golden.files, got.files,
        "DSH_FS_BLESS=1 records the script again"
    );
    assert_eq!(golden.calls.len(), got.calls.len());
    for (want, got) in golden.calls.iter().zip(&got.calls) {
        assert_eq!(want, got);
    }
}

#[test]
fn the_local_disk_gives_the_recorded_texts() {
    let got = run(&Local::new());
    if std::env::var_os("DSH_FS_BLESS").is_some() {
        let text = serde_json::to_string_pretty(&got).unwrap() + "\n";
        std::fs::write(golden_path(), text).unwrap();
        return;
    }
    same_as_golden(got);
}

#[test]
fn the_memory_workspace_gives_the_same_texts() {
    same_as_golden(run(&Memory::new()));
}

#[test]
fn the_object_store_gives_the_same_texts() {
    same_as_golden(run(&Store::new()));
}

/// What the recorded texts must say, so a re-recording cannot bless a bug.
#[test]
fn the_recorded_texts_follow_the_rules() {
    let script = golden();
    let text = |i: usize| script.calls[i].text.as_str();
    assert_eq!(text(0), "src/main.rs");
    assert_eq!(text(1), "data.bin", "glob lists binary files");
    assert_eq!(text(2), ".hidden/notes.md", "glob lists hidden files");
    assert_eq!(text(3), "target/debug.rs", "glob lists ignored files");
    assert_eq!(text(4), "src/lib.rs");
    assert_eq!(text(5), "docs/guide.md");
    assert_eq!(text(6), "No files found");
    assert!(text(7).starts_with("FS_NOT_DIRECTORY: "), "{}", text(7));
    assert!(
        text(8).starts_with("FS_INVALID_INPUT: invalid glob `src/[a-` at character"),
        "{}",
        text(8)
    );
    assert!(text(9).starts_with("FS_SANDBOX_DENIED: "), "{}", text(9));
    // Hidden, ignored and binary files are skipped; CRLF is not shown.
    assert_eq!(
        text(10),
        "Found 3 matches in 3 files\n\ndocs/guide.md:\n  Line 2: TODO: write the naïve café part\n\n\
         src/lib.rs:\n  Line 4: // TODO: more\n\nsrc/win.txt:\n  Line 2: TODO second"
    );
    assert!(!text(11).contains("src/lib.rs"), "{}", text(11));
    assert!(text(11).contains("src/win.txt"), "{}", text(11));
    assert!(text(12).ends_with("Line 3: third"), "{}", text(12));
    assert!(
        text(13).contains("docs/guide.md:\n  Line 2: "),
        "{}",
        text(13)
    );
    assert_eq!(text(14), "No matches found");
    assert!(
        text(15).starts_with("FS_INVALID_INPUT: invalid regex `fn (main` at character 4"),
        "{}",
        text(15)
    );
    assert!(text(16).starts_with("FS_SANDBOX_DENIED: "), "{}", text(16));
    assert!(
        text(17).starts_with("FS_NOT_FOUND: docz does not exist. Did you mean docs?"),
        "{}",
        text(17)
    );
    assert!(text(18).contains("docs/guide.md"), "{}", text(18));
    assert!(text(19).starts_with("INVALID_ARGS: grep: unknown field `bogus`"));
    let cut = format!(
        "Found 1 match in 1 file\n\nwide/é.txt:\n  Line 1: {}… [line cut: 1007 more bytes]",
        "é".repeat(1000)
    );
    assert_eq!(text(20), cut);
}

/// A fresh local workspace with the script's files.
fn local() -> (Workspace, dsh_fs::Session) {
    let ws = Workspace::new();
    for (path, text) in files() {
        ws.write(&path, text);
    }
    let s = ws.session();
    (ws, s)
}

#[test]
fn discovery_is_not_an_observation() {
    let (_ws, mut s) = local();
    ok(call(&mut s, "glob", json!({"pattern": "lib.rs"})));
    ok(call(&mut s, "grep", json!({"pattern": "a \\+ b"})));
    let edit = json!({"file_path": "src/lib.rs", "old_string": "a + b", "new_string": "b + a"});
    fails(call(&mut s, "edit", edit.clone()), "FS_NOT_OBSERVED");
    ok(call(&mut s, "read", json!({"file_path": "src/lib.rs"})));
    ok(call(&mut s, "edit", edit));
}

#[test]
fn links_are_never_followed() {
    use std::os::unix::fs::symlink;
    let (ws, mut s) = local();
    symlink(ws.path("src/main.rs"), ws.path("src/link.rs")).unwrap();
    symlink(&ws.root, ws.path("src/loop")).unwrap();
    symlink(&ws.outside, ws.path("out")).unwrap();
    symlink(ws.outside.join("secret.txt"), ws.path("secret.rs")).unwrap();
    let found = ok(call(&mut s, "glob", json!({"pattern": "*.rs"})));
    let mut names: Vec<&str> = found.lines().collect();
    names.sort();
    assert_eq!(names, ["src/lib.rs", "src/main.rs", "target/debug.rs"]);
    let hits = ok(call(&mut s, "grep", json!({"pattern": "SECRET|fn main"})));
    assert_eq!(
        hits,
        "Found 1 match in 1 file\n\nsrc/main.rs:\n  Line 1: fn main() {"
    );
    for path in ["out", "src/loop", "secret.rs"] {
        let r = call(&mut s, "grep", json!({"pattern": "SECRET", "path": path}));
        assert!(r.is_error, "{path}: {}", r.text);
        assert!(!r.text.contains("TOP SECRET"), "{}", r.text);
    }
}

/// The local disk searches natively (raw bytes, in parallel) and the memory
/// workspace through the component's portable walk over `stream-text`; on
/// files that are not UTF-8 text both skip the file whole, and a UTF-8 BOM
/// is not part of line 1.
#[test]
fn the_native_search_skips_what_read_cannot_show_as_the_portable_one_does() {
    let files: [(&str, &[u8]); 6] = [
        ("latin1.txt", b"needle caf\xe9\n"),
        ("late-nul.txt", b"needle one\nneedle two\n\x00\n"),
        ("utf16.txt", b"\xff\xfen\x00e\x00e\x00d\x00l\x00e\x00\n\x00"),
        ("cut.txt", b"needle \xe2\x9c"),
        ("bom.txt", b"\xef\xbb\xbfneedle after a BOM\n"),
        ("plain.txt", "caf\u{e9} needle\n".as_bytes()),
    ];
    let (local, memory) = (Local::new(), Memory::new());
    let mut texts = Vec::new();
    for f in [&local as &dyn Fixture, &memory] {
        for (path, bytes) in files {
            f.put(path, bytes);
        }
        let mut s = runtime()
            .session(f.provider(), SessionOptions::default())
            .unwrap();
        let one = ok(call(&mut s, "grep", json!({"pattern": "^needle after"})));
        let all = ok(call(&mut s, "grep", json!({"pattern": "needle"})));
        let single = ok(call(
            &mut s,
            "grep",
            json!({"pattern": "needle", "path": "latin1.txt"}),
        ));
        texts.push((one, all, single));
    }
    assert_eq!(texts[0], texts[1], "local (native) vs memory (portable)");
    // The local text came from the native search, not from a fallback.
    let provider = local.provider();
    let root = provider.resolve(".").unwrap();
    let query = dsh_fs_core::SearchQuery::Grep {
        pattern: "needle".into(),
        include: None,
    };
    assert_eq!(
        provider.search(&root, &query).unwrap(),
        Some(texts[0].1.clone())
    );
    let memory_provider = memory.provider();
    let root = memory_provider.resolve(".").unwrap();
    assert_eq!(memory_provider.search(&root, &query).unwrap(), None);
    let (one, all, single) = &texts[0];
    assert_eq!(
        one,
        "Found 1 match in 1 file\n\nbom.txt:\n  Line 1: needle after a BOM"
    );
    assert_eq!(
        all,
        "Found 2 matches in 2 files\n\nbom.txt:\n  Line 1: needle after a BOM\n\n\
         plain.txt:\n  Line 1: caf\u{e9} needle"
    );
    assert_eq!(single, "No matches found");
}

#[test]
fn caps_show_100_paths_and_250_lines_with_footers() {
    let local = Local::new();
    let memory = Memory::new();
    for i in 0..120 {
        let path = format!("many/f{i:03}.txt");
        local.put(&path, b"hit\nmiss\nhit\nhit\n");
        memory.put(&path, b"hit\nmiss\nhit\nhit\n");
    }
    let mut texts = Vec::new();
    for f in [&local as &dyn Fixture, &memory] {
        let mut s = runtime()
            .session(f.provider(), SessionOptions::default())
            .unwrap();
        let found = ok(call(&mut s, "glob", json!({"pattern": "*.txt"})));
        assert_eq!(
            found.lines().filter(|l| l.starts_with("many/")).count(),
            100
        );
        assert!(
            found.ends_with(
                "\n\n(Showing the 100 newest of 120 files; 20 left out. \
                 Narrow the pattern or path to see the rest.)"
            ),
            "{found}"
        );
        let hits = ok(call(&mut s, "grep", json!({"pattern": "^hit$"})));
        assert!(
            hits.starts_with("Found 360 matches in 120 files\n"),
            "{hits}"
        );
        assert_eq!(hits.matches("  Line ").count(), 250, "{hits}");
        assert!(
            hits.ends_with(
                "many/f083.txt:\n  Line 1: hit\n\n(Showing the first 250 of 360 matching lines; \
                 110 left out. Narrow the pattern, path or include to see the rest.)"
            ),
            "{hits}"
        );
        texts.push(hits);
    }
    assert_eq!(texts[0], texts[1]);
    assert!(
        texts[0].contains("many/f083.txt:\n  Line 1: hit\n"),
        "{}",
        texts[0]
    );
}

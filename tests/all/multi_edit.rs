//! `multi_edit`, the extra tool a host turns on: several edits of one file,
//! in order, all or none, in one commit, through the real component on the
//! local disk and the memory store.

use crate::{Workspace, call, fails, ok, runtime};
use dsh_fs::{MemoryStore, Provider, SessionOptions, TextLayer};
use serde_json::{Value, json};
use std::sync::Arc;

fn edits(file: &str, edits: Value) -> Value {
    json!({"file_path": file, "edits": edits})
}

/// The text of a `multi_edit` of `file` that fails with `code`.
#[track_caller]
fn refused(s: &mut dsh_fs::Session, file: &str, list: Value, code: &str) -> String {
    fails(call(s, "multi_edit", edits(file, list)), code)
}

/// A Windows file with a BOM: what must survive byte for byte.
const SRC: &str = "\u{feff}fn main() {\r\n    let total = compute(1, 2);\r\n    println!(\"{total}\");\r\n}\r\n\r\nfn compute(a: u32, b: u32) -> u32 {\r\n    a + b\r\n}\r\n";

#[test]
fn three_edits_land_in_one_commit_with_one_diff_and_every_other_byte_kept() {
    let provider = Arc::new(TextLayer::new(MemoryStore::default()));
    let store = provider.store();
    store.insert("main.rs", SRC);
    let mut s = runtime()
        .session(provider.clone(), SessionOptions::default())
        .unwrap();
    ok(call(&mut s, "read", json!({"file_path": "main.rs"})));
    let version = |p: &TextLayer<MemoryStore>| {
        let t = p.resolve("main.rs").unwrap();
        p.stat(&t).unwrap().unwrap().version
    };
    let before = version(&provider);
    let out = ok(call(
        &mut s,
        "multi_edit",
        edits(
            "main.rs",
            json!([
                {"old_string": "compute(1, 2)", "new_string": "compute(1, 3)"},
                {"old_string": "fn compute(a: u32, b: u32) -> u32 {\n    a + b\n}",
                 "new_string": "fn compute(a: u32, b: u32) -> u32 {\n    // checked\n    a.saturating_add(b)\n}"},
                {"old_string": "u32", "new_string": "u64", "replace_all": true},
            ]),
        ),
    ));
    let want = SRC
        .replace("compute(1, 2)", "compute(1, 3)")
        .replace(
            "    a + b\r\n",
            "    // checked\r\n    a.saturating_add(b)\r\n",
        )
        .replace("u32", "u64");
    assert_eq!(store.get("main.rs").unwrap(), want.as_bytes());
    assert_eq!(
        out,
        "Edited main.rs: 3 edits, 5 replacements (first change at line 2).\n\
@@ -1,3 +1,3 @@\n fn main() {\n-    let total = compute(1, 2);\n+    let total = compute(1, 3);\n     println!(\"{total}\");\n\
@@ -5,4 +5,5 @@\n \n-fn compute(a: u32, b: u32) -> u32 {\n-    a + b\n+fn compute(a: u64, b: u64) -> u64 {\n+    // checked\n+    a.saturating_add(b)\n }"
    );
    // One commit: the memory store numbers its commits, and the version's
    // token moved by one.
    let generation = |v: &str| u64::from_str_radix(v.split(['m', ':']).nth(1).unwrap(), 16);
    assert_eq!(
        generation(&version(&provider)).unwrap(),
        generation(&before).unwrap() + 1,
        "{before} → {}",
        version(&provider)
    );
    // The session knows the version it wrote: an edit needs no read first.
    ok(call(
        &mut s,
        "edit",
        json!({"file_path": "main.rs", "old_string": "// checked", "new_string": "// saturating"}),
    ));
}

#[test]
fn a_miss_in_the_second_of_three_edits_changes_nothing_and_names_it_with_its_diagnosis() {
    let ws = Workspace::new();
    ws.write("main.rs", SRC);
    let mut s = ws.session();
    ok(call(&mut s, "read", json!({"file_path": "main.rs"})));
    let out = refused(
        &mut s,
        "main.rs",
        json!([
            {"old_string": "compute(1, 2)", "new_string": "compute(1, 3)"},
            {"old_string": "    println!(\"{total}\")\n}", "new_string": "  println!(\"= {total}\");\n}"},
            {"old_string": "a + b", "new_string": "b + a"},
        ]),
        "FS_EDIT_NOT_FOUND",
    );
    assert_eq!(ws.bytes("main.rs"), SRC.as_bytes());
    assert!(
        out.starts_with("FS_EDIT_NOT_FOUND: edit 2 of 3: old_string was not found in main.rs; "),
        "{out}"
    );
    assert!(
        out.contains("No edit was applied; main.rs is unchanged."),
        "{out}"
    );
    let single = fails(
        call(
            &mut s,
            "edit",
            json!({"file_path": "main.rs", "old_string": "    println!(\"{total}\")\n}", "new_string": "x"}),
        ),
        "FS_EDIT_NOT_FOUND",
    );
    // The same diagnosis as edit's, named and with what was kept said.
    let (message, excerpt) = single.split_once('\n').unwrap();
    let message = message.strip_prefix("FS_EDIT_NOT_FOUND: ").unwrap();
    assert_eq!(
        out,
        format!(
            "FS_EDIT_NOT_FOUND: edit 2 of 3: {message} No edit was applied; main.rs is \
             unchanged.\n{excerpt}"
        )
    );
    assert!(excerpt.contains("3:     println!(\"{total}\");"), "{out}");
}

#[test]
fn a_miss_is_diagnosed_in_the_text_the_edits_before_it_left() {
    let ws = Workspace::new();
    ws.write(
        "app.py",
        "def load(path):\n    return open(path).read()\n\nx = load('a')\n",
    );
    let mut s = ws.session();
    ok(call(&mut s, "read", json!({"file_path": "app.py"})));
    let out = refused(
        &mut s,
        "app.py",
        json!([
            {"old_string": "def load(path):", "new_string": "def load_text(path):"},
            {"old_string": "def load_text(path) :", "new_string": "def load_text(path: str):"},
        ]),
        "FS_EDIT_NOT_FOUND",
    );
    assert!(out.starts_with("FS_EDIT_NOT_FOUND: edit 2 of 2: "), "{out}");
    // Line 1 as the first edit made it is what the diagnosis shows.
    assert!(out.contains("1: def load_text(path):"), "{out}");
    assert_eq!(
        ws.bytes("app.py"),
        b"def load(path):\n    return open(path).read()\n\nx = load('a')\n"
    );
}

#[test]
fn an_ambiguous_edit_and_bad_lists_are_named_and_change_nothing() {
    let ws = Workspace::new();
    ws.write("a.txt", "one\ntwo\none\n");
    let mut s = ws.session();
    ok(call(&mut s, "read", json!({"file_path": "a.txt"})));
    let out = refused(
        &mut s,
        "a.txt",
        json!([
            {"old_string": "two", "new_string": "2"},
            {"old_string": "one", "new_string": "1"},
        ]),
        "FS_AMBIGUOUS_EDIT",
    );
    assert!(
        out.starts_with(
            "FS_AMBIGUOUS_EDIT: edit 2 of 2: old_string matches 2 places in a.txt (lines 1, 3)"
        ),
        "{out}"
    );
    for (list, says) in [
        (json!([]), "`edits` holds 0 edits; send 1 to 100"),
        (
            json!("x"),
            "`edits` must be an array of edits, got a string",
        ),
        (
            json!([{"old_string": "two", "new_string": "2"}, {"old_string": "one"}]),
            "edit 2 is missing `new_string`",
        ),
        (
            json!([{"old_string": "two", "new_string": "2", "regex": true}]),
            "edit 1 has an unknown field `regex`",
        ),
        (
            json!([{"old_string": "two", "new_string": "2"}, {"old_string": "", "new_string": "x"}]),
            "edit 2 of 2: `old_string` must not be empty",
        ),
        (
            json!([{"old_string": "two", "new_string": "two"}]),
            "edit 1 of 1: `new_string` is identical to `old_string`",
        ),
    ] {
        let out = fails(
            call(&mut s, "multi_edit", edits("a.txt", list)),
            "INVALID_ARGS",
        );
        assert!(out.contains(says), "{out}");
    }
    let many: Vec<Value> = (0..101)
        .map(|i| json!({"old_string": format!("{i}"), "new_string": "x"}))
        .collect();
    fails(
        call(&mut s, "multi_edit", edits("a.txt", Value::Array(many))),
        "INVALID_ARGS",
    );
    assert_eq!(ws.bytes("a.txt"), b"one\ntwo\none\n");
}

#[test]
fn the_policy_holds_as_for_edit() {
    let ws = Workspace::new();
    ws.write("a.txt", "one\ntwo\n");
    let mut s = ws.session();
    let list = || edits("a.txt", json!([{"old_string": "two", "new_string": "2"}]));
    fails(call(&mut s, "multi_edit", list()), "FS_NOT_OBSERVED");
    ok(call(&mut s, "read", json!({"file_path": "a.txt"})));
    ws.write("a.txt", "one\ntwo\nthree\n");
    fails(call(&mut s, "multi_edit", list()), "FS_STALE_VERSION");
    assert_eq!(ws.bytes("a.txt"), b"one\ntwo\nthree\n");
    refused(
        &mut s,
        "missing.txt",
        json!([{"old_string": "a", "new_string": "b"}]),
        "FS_NOT_FOUND",
    );
}

#[test]
fn the_tool_list_stays_as_it_was_and_multi_edit_is_offered_on_request() {
    let names = |defs: Vec<dsh_fs::ToolDefinition>| -> Vec<String> {
        defs.into_iter().map(|d| d.name).collect()
    };
    assert_eq!(
        names(runtime().definitions().unwrap()),
        ["read", "write", "edit", "glob", "grep"]
    );
    let extra = runtime().extra_definitions().unwrap();
    assert_eq!(
        names(extra.clone()),
        ["multi_edit", "checkpoint", "changes", "revert"]
    );
    let schema = &extra[0].parameters;
    assert_eq!(schema["required"], json!(["file_path", "edits"]));
    assert_eq!(schema["properties"]["edits"]["maxItems"], json!(100));
}

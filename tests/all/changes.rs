//! What write and edit answer after a change: the hunks that changed with
//! the file's line numbers, bounded in size, diffed against the version the
//! session observed; freshness is exactly what it was without the diff.

use crate::{Workspace, call, fails, ok, runtime};
use dsh_fs::SessionOptions;
use serde_json::json;

fn write(file: &str, content: &str) -> serde_json::Value {
    json!({"file_path": file, "content": content})
}

const SRC: &str = "fn main() {\n    let a = 1;\n    let b = 2;\n    println!(\"{}\", a + b);\n}\n\nfn helper() -> u32 {\n    7\n}\n";

#[test]
fn an_update_by_write_shows_the_hunks_that_changed() {
    let ws = Workspace::new();
    ws.write("main.rs", SRC);
    let mut s = ws.session();
    ok(call(&mut s, "read", json!({"file_path": "main.rs"})));
    let new = SRC
        .replace("let b = 2;", "let b = 3;")
        .replace("    7\n", "    8\n    + 1\n");
    let out = ok(call(&mut s, "write", write("main.rs", &new)));
    assert_eq!(
        out,
        "Updated main.rs (10 lines, 109 bytes): 3 lines added, 2 removed.\n\
@@ -2,3 +2,3 @@\n     let a = 1;\n-    let b = 2;\n+    let b = 3;\n     println!(\"{}\", a + b);\n\
@@ -7,3 +7,4 @@\n fn helper() -> u32 {\n-    7\n+    8\n+    + 1\n }"
    );
    // The session observed what it wrote: the next write diffs against it.
    let out = ok(call(&mut s, "write", write("main.rs", "fn main() {}\n")));
    assert!(
        out.starts_with("Updated main.rs (1 line, 13 bytes): 1 line added, 10 removed.\n@@ -1,10 +1 @@\n-fn main() {\n"),
        "{out}"
    );
}

#[test]
fn a_big_rewrite_is_cut_and_counted() {
    let ws = Workspace::new();
    let old: String = (1..=500).map(|i| format!("old line {i}\n")).collect();
    let new: String = (1..=500).map(|i| format!("new line {i}\n")).collect();
    ws.write("big.txt", &old);
    let mut s = ws.session();
    ok(call(
        &mut s,
        "read",
        json!({"file_path": "big.txt", "limit": 1}),
    ));
    let out = ok(call(&mut s, "write", write("big.txt", &new)));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 42, "{out}");
    assert_eq!(
        lines[0],
        "Updated big.txt (500 lines, 6392 bytes): 500 lines added, 500 removed."
    );
    assert_eq!(lines[1], "@@ -1,500 +1,500 @@");
    assert_eq!(lines[41], "… 961 more changed lines");
}

#[test]
fn an_old_file_too_large_to_diff_gets_a_summary() {
    let ws = Workspace::new();
    let old = "x".repeat(99) + "\n";
    ws.write("huge.log", old.repeat(50_000)); // 5 MB
    let mut s = ws.session();
    ok(call(
        &mut s,
        "read",
        json!({"file_path": "huge.log", "limit": 1}),
    ));
    let out = ok(call(&mut s, "write", write("huge.log", "short\n")));
    assert_eq!(
        out,
        "Updated huge.log (1 line, 6 bytes). The old file was over 4 MiB, so no diff is shown."
    );
}

#[test]
fn the_diff_never_changes_freshness() {
    let ws = Workspace::new();
    ws.write("a.txt", "one\ntwo\n");
    let mut s = ws.session();
    ok(call(&mut s, "read", json!({"file_path": "a.txt"})));
    // Changed by someone else after the read: stale, as before; untouched.
    ws.write("a.txt", "one\nTWO\n");
    fails(
        call(&mut s, "write", write("a.txt", "mine\n")),
        "FS_STALE_VERSION",
    );
    assert_eq!(ws.bytes("a.txt"), b"one\nTWO\n");
    // Read again; then only the metadata changes (same bytes, new mtime):
    // the write goes through, without a diff against a version it did not see.
    ok(call(&mut s, "read", json!({"file_path": "a.txt"})));
    std::thread::sleep(std::time::Duration::from_millis(20));
    ws.write("a.txt", "one\nTWO\n");
    let out = ok(call(&mut s, "write", write("a.txt", "one\nthree\n")));
    assert_eq!(
        out,
        "Updated a.txt (2 lines, 10 bytes). The file was touched since it was read, so no diff is shown."
    );
    assert_eq!(ws.bytes("a.txt"), b"one\nthree\n");
}

#[test]
fn without_the_policy_the_diff_is_against_the_text_replaced() {
    let ws = Workspace::new();
    ws.write("a.txt", "one\r\ntwo\r\n");
    let mut s = runtime()
        .session(
            ws.provider(),
            SessionOptions {
                observation_policy: false,
                ..Default::default()
            },
        )
        .unwrap();
    let out = ok(call(&mut s, "write", write("a.txt", "one\r\n2\r\n")));
    assert_eq!(
        out,
        "Updated a.txt (2 lines, 8 bytes): 1 line added, 1 removed.\n@@ -1,2 +1,2 @@\n one\n-two\n+2"
    );
}

#[test]
fn an_edit_shows_the_lines_it_changed() {
    let ws = Workspace::new();
    ws.write("main.rs", SRC);
    let mut s = ws.session();
    ok(call(&mut s, "read", json!({"file_path": "main.rs"})));
    let out = ok(call(
        &mut s,
        "edit",
        json!({
            "file_path": "main.rs",
            "old_string": "fn helper() -> u32 {\n    7\n}",
            "new_string": "fn helper() -> u32 {\n    // lucky\n    7\n}",
        }),
    ));
    assert_eq!(
        out,
        "Edited main.rs: 1 replacement at line 7.\n@@ -7,2 +7,3 @@\n fn helper() -> u32 {\n+    // lucky\n     7"
    );
    let out = ok(call(
        &mut s,
        "edit",
        json!({"file_path": "main.rs", "old_string": "    // lucky\n", "new_string": ""}),
    ));
    assert_eq!(
        out,
        "Edited main.rs: 1 replacement at line 8.\n@@ -7,3 +7,2 @@\n fn helper() -> u32 {\n-    // lucky\n     7"
    );
}

#[test]
fn an_edit_of_part_of_a_line_shows_the_line_whole_as_it_now_reads() {
    let ws = Workspace::new();
    ws.write("main.rs", SRC.replace("a + b", "compute(1, 2)"));
    let mut s = ws.session();
    ok(call(&mut s, "read", json!({"file_path": "main.rs"})));
    let out = ok(call(
        &mut s,
        "edit",
        json!({"file_path": "main.rs", "old_string": "compute(1, 2)", "new_string": "compute(1, 3)"}),
    ));
    assert_eq!(
        out,
        "Edited main.rs: 1 replacement at line 4.\n@@ -3,3 +3,3 @@\n     let b = 2;\n\
-    println!(\"{}\", compute(1, 2));\n+    println!(\"{}\", compute(1, 3));\n }"
    );
    // Every occurrence replaced: the first one's lines, then the count.
    ws.write("dup.txt", "x = f(1)\ny = f(1) + f(1)\n");
    ok(call(&mut s, "read", json!({"file_path": "dup.txt"})));
    let out = ok(call(
        &mut s,
        "edit",
        json!({"file_path": "dup.txt", "old_string": "f(1)", "new_string": "g(1)", "replace_all": true}),
    ));
    assert_eq!(
        out,
        "Edited dup.txt: 3 replacements (first at line 1).\n@@ -1,2 +1,2 @@\n-x = f(1)\n\
-y = f(1) + f(1)\n+x = g(1)\n+y = g(1) + g(1)"
    );
    // A file edited by streaming (an LF file over 8 MiB) answers the same
    // way, from one read around the occurrence.
    let big: String = (1..=900_000).map(|i| format!("line {i}\n")).collect();
    ws.write("big.txt", &big);
    ok(call(
        &mut s,
        "read",
        json!({"file_path": "big.txt", "limit": 1}),
    ));
    let out = ok(call(
        &mut s,
        "edit",
        json!({"file_path": "big.txt", "old_string": "line 450000\n", "new_string": "middle\n"}),
    ));
    assert_eq!(
        out,
        "Edited big.txt: 1 replacement at line 450000.\n@@ -449999,3 +449999,3 @@\n line 449999\n-line 450000\n+middle\n line 450001"
    );
}

//! Byte-faithful edits and freshness by content, through the component.

use crate::{Workspace, call, fails, ok};
use serde_json::json;
use std::os::unix::fs::PermissionsExt;

fn edit_roundtrip(before: &[u8], old: &str, new: &str, after: &[u8]) {
    let ws = Workspace::new();
    ws.write("f.txt", before);
    let mut s = ws.session();
    ok(call(&mut s, "read", json!({"file_path": "f.txt"})));
    ok(call(
        &mut s,
        "edit",
        json!({"file_path": "f.txt", "old_string": old, "new_string": new}),
    ));
    assert_eq!(
        String::from_utf8_lossy(&ws.bytes("f.txt")),
        String::from_utf8_lossy(after),
        "editing {:?}",
        String::from_utf8_lossy(before)
    );
}

#[test]
fn bom_is_kept_and_not_shown() {
    let ws = Workspace::new();
    ws.write("bom.txt", b"\xEF\xBB\xBFfirst\nsecond\n");
    let mut s = ws.session();
    let out = ok(call(&mut s, "read", json!({"file_path": "bom.txt"})));
    assert_eq!(
        out,
        "File: bom.txt\n1: first\n2: second\n(End of file: 2 lines.)"
    );
    edit_roundtrip(
        b"\xEF\xBB\xBFfirst\nsecond\n",
        "first",
        "1st",
        b"\xEF\xBB\xBF1st\nsecond\n",
    );
}

#[test]
fn crlf_lines_stay_crlf_and_cr_is_not_shown() {
    let ws = Workspace::new();
    ws.write("w.txt", b"a\r\nb\r\n");
    let mut s = ws.session();
    assert_eq!(
        ok(call(&mut s, "read", json!({"file_path": "w.txt"}))),
        "File: w.txt\n1: a\n2: b\n(End of file: 2 lines.)"
    );
    edit_roundtrip(
        b"a\r\nb\r\nc\r\n",
        "a\nb",
        "A\nB\nB2",
        b"A\r\nB\r\nB2\r\nc\r\n",
    );
}

#[test]
fn mixed_endings_change_only_the_matched_range() {
    edit_roundtrip(
        b"one\r\ntwo\nthree\r\nfour\n",
        "two",
        "2\n2b",
        b"one\r\n2\n2b\nthree\r\nfour\n",
    );
    edit_roundtrip(
        b"one\r\ntwo\nthree\r\nfour\n",
        "three",
        "3",
        b"one\r\ntwo\n3\r\nfour\n",
    );
}

#[test]
fn a_missing_final_newline_stays_missing() {
    edit_roundtrip(b"x\ny", "y", "z", b"x\nz");
    edit_roundtrip(b"x\r\ny", "x", "w", b"w\r\ny");
}

#[test]
fn write_keeps_the_file_mode_and_leaves_no_temp_files() {
    let ws = Workspace::new();
    ws.write("run.sh", "#!/bin/sh\necho hi\n");
    std::fs::set_permissions(ws.path("run.sh"), std::fs::Permissions::from_mode(0o751)).unwrap();
    let mut s = ws.session();
    ok(call(&mut s, "read", json!({"file_path": "run.sh"})));
    ok(call(
        &mut s,
        "edit",
        json!({"file_path": "run.sh", "old_string": "hi", "new_string": "there"}),
    ));
    ok(call(
        &mut s,
        "write",
        json!({"file_path": "run.sh", "content": "#!/bin/sh\n"}),
    ));
    let mode = std::fs::metadata(ws.path("run.sh"))
        .unwrap()
        .permissions()
        .mode()
        & 0o7777;
    assert_eq!(mode, 0o751);
    let names: Vec<_> = std::fs::read_dir(&ws.root)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["run.sh"]);
}

#[test]
fn touch_is_not_stale_but_a_real_change_is() {
    let ws = Workspace::new();
    ws.write("t.txt", "same\n");
    let mut s = ws.session();
    ok(call(&mut s, "read", json!({"file_path": "t.txt"})));
    // New mtime and ctime, same bytes (what `touch` or a no-op formatter does).
    std::thread::sleep(std::time::Duration::from_millis(20));
    let status = std::process::Command::new("touch")
        .arg(ws.path("t.txt"))
        .status()
        .unwrap();
    assert!(status.success());
    ok(call(
        &mut s,
        "edit",
        json!({"file_path": "t.txt", "old_string": "same", "new_string": "edited"}),
    ));
    // The same again through a new inode (an editor's save-by-rename).
    std::fs::write(ws.path("copy.tmp"), "edited\n").unwrap();
    std::fs::rename(ws.path("copy.tmp"), ws.path("t.txt")).unwrap();
    ok(call(
        &mut s,
        "edit",
        json!({"file_path": "t.txt", "old_string": "edited", "new_string": "again"}),
    ));
    // Same size, same inode, different bytes: stale.
    std::fs::write(ws.path("t.txt"), "AGAIN\n").unwrap();
    fails(
        call(
            &mut s,
            "edit",
            json!({"file_path": "t.txt", "old_string": "AGAIN", "new_string": "x"}),
        ),
        "FS_STALE_VERSION",
    );
}

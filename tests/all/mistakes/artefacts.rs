//! Read's cut marker of a long line pasted into old_string, named as the
//! cause with the part that fits and where it stands, through the real
//! component; the file stays as it was. (Placeholders and fences are cases
//! of the corpus table.)

use crate::{Workspace, call, fails, ok};
use serde_json::json;

#[track_caller]
fn miss(ws: &Workspace, file: &str, old: &str) -> String {
    let before = Workspace::snapshot(&ws.root);
    let mut s = ws.session();
    ok(call(&mut s, "read", json!({"file_path": file})));
    let answer = fails(
        call(
            &mut s,
            "edit",
            json!({"file_path": file, "old_string": old, "new_string": "x"}),
        ),
        "FS_EDIT_NOT_FOUND",
    );
    assert_eq!(Workspace::snapshot(&ws.root), before, "{file} changed");
    answer
}

#[test]
fn reads_cut_marker_is_named_with_the_part_that_fits() {
    let ws = Workspace::new();
    let long = format!("const DATA = \"{}\";\n", "ab".repeat(1500));
    ws.write(
        "web/data.js",
        format!("// data\n{long}export default DATA;\n"),
    );
    let mut s = ws.session();
    let read = ok(call(&mut s, "read", json!({"file_path": "web/data.js"})));
    let cut = read.lines().nth(2).unwrap().split_once(": ").unwrap().1;
    assert!(cut.contains("… [line cut: "), "{read}");
    let answer = miss(&ws, "web/data.js", cut);
    assert_eq!(
        answer,
        "FS_EDIT_NOT_FOUND: old_string was not found in web/data.js; line 1 of old_string ends \
with read's cut marker `… [line cut: 1016 more characters]`, which is not in the file (the line \
goes on); old_string up to the marker matches once, at line 2: send that part, and the change to \
it as new_string."
    );
}

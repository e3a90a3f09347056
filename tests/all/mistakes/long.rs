//! A long old_string whose difference lies past the lines the scan compares:
//! the answer names the first line that differs, in old_string and in the
//! file, with the lines around it; the file stays as it was.

use crate::{Workspace, call, fails, ok};
use serde_json::json;

/// A 200-line file and all of it as old_string, but for `slip` on line 150.
fn slipped(slip: fn(&str) -> String) -> (Workspace, String) {
    let ws = Workspace::new();
    let lines: Vec<String> = (1..=200)
        .map(|i| format!("    let value_{i} = compute({i}, \"item {i}\");"))
        .collect();
    ws.write("src/table.rs", lines.join("\n") + "\n");
    let mut old = lines.clone();
    old[149] = slip(&old[149]);
    (ws, old.join("\n") + "\n")
}

#[track_caller]
fn answer(ws: &Workspace, old: &str) -> String {
    let before = Workspace::snapshot(&ws.root);
    let mut s = ws.session();
    ok(call(&mut s, "read", json!({"file_path": "src/table.rs"})));
    let got = fails(
        call(
            &mut s,
            "edit",
            json!({"file_path": "src/table.rs", "old_string": old, "new_string": ""}),
        ),
        "FS_EDIT_NOT_FOUND",
    );
    assert_eq!(Workspace::snapshot(&ws.root), before);
    got
}

#[test]
fn a_slip_far_down_a_long_old_string_is_named_by_its_line() {
    let (ws, old) = slipped(|l| l.replace("item 150", "itme 150"));
    let got = answer(&ws, &old);
    let (message, excerpt) = got.split_once('\n').unwrap();
    assert_eq!(
        message,
        "FS_EDIT_NOT_FOUND: old_string was not found in src/table.rs; its first 149 lines match \
lines 1-149; its line 150 is the first that differs: line 150 has \
`    let value_150 = compute(150, \"item 150\");` where old_string has \
`    let value_150 = compute(150, \"itme 150\");`. Copy old_string from these lines exactly \
(without the `N: ` prefixes):"
    );
    assert!(excerpt.starts_with("148: "), "{excerpt}");
    assert!(excerpt.contains("\n150:     let value_150"), "{excerpt}");
}

#[test]
fn a_spacing_slip_far_down_is_shown_visibly() {
    let (ws, old) = slipped(|l| l.replace("let value_150 =", "let value_150  ="));
    let got = answer(&ws, &old);
    let message = got.lines().next().unwrap();
    assert!(
        message.contains(
            "line 150 has `····let·value_150·=·compute(150,·\"item·150\");` where old_string has \
`····let·value_150··=·compute(150,·\"item·150\");` (`·` a space, `\\t` a tab)"
        ),
        "{message}"
    );
}

//! The same mistakes in a file too large to hold (streamed past 10 MiB):
//! a slip far down a long old_string, read's cut marker, a placeholder and a
//! misspelt word are named as they are in a small file, from the stream;
//! the file stays as it was.

use crate::{Workspace, call, fails, ok};
use serde_json::json;

/// A 200-line table, a line of 3,000 characters (line 201), then filler
/// past the streaming threshold.
fn large() -> (Workspace, Vec<String>) {
    let ws = Workspace::new();
    let mut lines: Vec<String> = (1..=200)
        .map(|i| format!("    let value_{i} = compute({i}, \"item {i}\");"))
        .collect();
    lines.push(format!("const DATA = \"{}\";", "ab".repeat(1500)));
    let filler =
        "// filler line that says nothing in particular, padded to ninety bytes or so.....";
    let mut text = lines.join("\n") + "\n";
    while text.len() < 11 << 20 {
        text.push_str(filler);
        text.push('\n');
    }
    ws.write("big.rs", &text);
    (ws, lines)
}

#[track_caller]
fn miss(ws: &Workspace, old: &str, replace_all: bool) -> String {
    let before = Workspace::snapshot(&ws.root);
    let mut s = ws.session();
    ok(call(
        &mut s,
        "read",
        json!({"file_path": "big.rs", "limit": 5}),
    ));
    let args = json!({"file_path": "big.rs", "old_string": old, "new_string": "x", "replace_all": replace_all});
    let answer = fails(call(&mut s, "edit", args), "FS_EDIT_NOT_FOUND");
    assert_eq!(Workspace::snapshot(&ws.root), before, "big.rs changed");
    answer
}

#[test]
fn a_slip_far_down_a_long_old_string_is_named_from_the_stream() {
    let (ws, lines) = large();
    let mut old = lines[..200].to_vec();
    old[149] = old[149].replace("item 150", "itme 150");
    let answer = miss(&ws, &(old.join("\n") + "\n"), false);
    let (message, excerpt) = answer.split_once('\n').unwrap();
    assert_eq!(
        message,
        "FS_EDIT_NOT_FOUND: old_string was not found in big.rs; its first 149 lines match \
lines 1-149; its line 150 is the first that differs: line 150 has \
`    let value_150 = compute(150, \"item 150\");` where old_string has \
`    let value_150 = compute(150, \"itme 150\");`. Copy old_string from these lines exactly \
(without the `N: ` prefixes):"
    );
    assert!(
        excerpt.starts_with("148: ") && excerpt.contains("\n150: "),
        "{excerpt}"
    );
}

#[test]
fn reads_cut_marker_is_named_from_the_stream() {
    let (ws, lines) = large();
    let cut = format!("{}… [line cut: 1016 more characters]", &lines[200][..2000]);
    assert_eq!(
        miss(&ws, &cut, false),
        "FS_EDIT_NOT_FOUND: old_string was not found in big.rs; line 1 of old_string ends \
with read's cut marker `… [line cut: 1016 more characters]`, which is not in the file (the line \
goes on); old_string up to the marker matches once, at line 201: send that part, and the change to \
it as new_string."
    );
}

#[test]
fn a_placeholder_is_named_from_the_stream_with_the_lines_it_stands_for() {
    let (ws, lines) = large();
    let old = format!(
        "{}\n    // ... existing code ...\n{}\n",
        lines[9], lines[19]
    );
    let answer = miss(&ws, &old, false);
    let (message, excerpt) = answer.split_once('\n').unwrap();
    assert_eq!(
        message,
        "FS_EDIT_NOT_FOUND: old_string was not found in big.rs; line 2 of old_string, \
`// ... existing code ...`, is a placeholder for lines it leaves out, and the file has no such \
line (the lines before it match at line 10): copy the lines it stands for from read's output, or \
make one edit before it and one after."
    );
    assert!(excerpt.contains("10:     let value_10 = "), "{excerpt}");
}

#[test]
fn a_misspelt_word_is_named_from_the_stream_with_its_count() {
    let (ws, _) = large();
    let answer = miss(&ws, "compoute", true);
    assert_eq!(
        answer,
        "FS_EDIT_NOT_FOUND: old_string was not found in big.rs; `compoute` is not in the file, \
but `compute` is, 200 times (first at line 1): if that is the word meant, send it as old_string:\n\
1:     let value_1 = compute(1, \"item 1\");"
    );
}

//! Mistaken paths through the real component: a missing path answers with
//! the close existing files, a directory read with its entries, and nothing
//! outside the root is ever named.

use crate::{Workspace, call, fails, ok};
use serde_json::json;

/// A small project: `src/context.rs` has 120 lines.
fn project() -> Workspace {
    let ws = Workspace::new();
    let context: String = (1..=120).map(|i| format!("// line {i}\n")).collect();
    ws.write("src/context.rs", context);
    ws.write("src/lib.rs", "mod context;\n");
    ws.write("src/util.rs", "pub fn a() {}\n");
    ws.write("src/util.ts", "export {}\n");
    ws.write("src/tools/read.rs", "fn read() {}\n");
    ws.write("README.md", "# project\n");
    ws
}

#[track_caller]
fn read_fails(ws: &Workspace, path: &str, code: &str) -> String {
    let mut s = ws.session();
    fails(call(&mut s, "read", json!({"file_path": path})), code)
}

#[test]
fn a_missing_path_suggests_the_file_meant() {
    let ws = project();
    let before = Workspace::snapshot(&ws.root);
    let cases = [
        (
            "src/Context.rs",
            "names are case-sensitive. Use file_path src/context.rs.",
        ),
        ("src/context", "Did you mean src/context.rs?"),
        ("src/context.rs.orig", "Did you mean src/context.rs?"),
        ("src/contxt.rs", "Did you mean src/context.rs?"),
        ("context.rs", "Did you mean src/context.rs?"),
        (
            "Src/context.rs",
            "names are case-sensitive. Use file_path src/context.rs.",
        ),
        ("src/read.rs", "Did you mean src/tools/read.rs?"),
        ("src/tools/lib.rs", "Did you mean src/lib.rs?"),
        (
            "src/context.rs:99",
            "Use file_path src/context.rs with offset=99.",
        ),
        (
            "src/context.rs:99:5",
            "Use file_path src/context.rs with offset=99.",
        ),
    ];
    for (path, hint) in cases {
        let text = read_fails(&ws, path, "FS_NOT_FOUND");
        // A case slip is named as the cause, after a colon.
        let sep = if hint.starts_with("names") { ":" } else { "." };
        assert_eq!(
            text,
            format!("FS_NOT_FOUND: {path} does not exist{sep} {hint}"),
            "{path}"
        );
    }
    let text = read_fails(&ws, "src/Util", "FS_NOT_FOUND");
    assert_eq!(
        text,
        "FS_NOT_FOUND: src/Util does not exist. Similar existing paths are below; \
use one as file_path.\n  src/util.rs\n  src/util.ts"
    );
    // What the hint says works.
    let mut s = ws.session();
    let window = ok(call(
        &mut s,
        "read",
        json!({"file_path": "src/context.rs", "offset": 99, "limit": 1}),
    ));
    assert!(window.contains("99: // line 99"), "{window}");
    assert_eq!(Workspace::snapshot(&ws.root), before);
}

#[test]
fn nothing_close_keeps_the_plain_answer() {
    let ws = project();
    let text = read_fails(&ws, "nowhere/qqq.txt", "FS_NOT_FOUND");
    assert_eq!(
        text,
        "FS_NOT_FOUND: nowhere/qqq.txt does not exist. Check the path and try again."
    );
}

#[test]
fn an_edit_of_a_missing_file_suggests_write_and_the_similar_path() {
    let ws = project();
    let before = Workspace::snapshot(&ws.root);
    let mut s = ws.session();
    let args = json!({"file_path": "src/contxt.rs", "old_string": "a", "new_string": "b"});
    let text = fails(call(&mut s, "edit", args), "FS_NOT_FOUND");
    assert_eq!(
        text,
        "FS_NOT_FOUND: src/contxt.rs does not exist. Did you mean src/context.rs? \
Otherwise, use write to create a new file."
    );
    let args = json!({"file_path": "brand/new.rs", "old_string": "a", "new_string": "b"});
    let text = fails(call(&mut s, "edit", args), "FS_NOT_FOUND");
    assert_eq!(
        text,
        "FS_NOT_FOUND: brand/new.rs does not exist. Check the path; use write to create a new file."
    );
    // The same name where the missing directory would have been.
    let args = json!({"file_path": "lib/README.md", "old_string": "a", "new_string": "b"});
    let text = fails(call(&mut s, "edit", args), "FS_NOT_FOUND");
    assert_eq!(
        text,
        "FS_NOT_FOUND: lib/README.md does not exist. Did you mean README.md? \
Otherwise, use write to create a new file."
    );
    assert_eq!(Workspace::snapshot(&ws.root), before);
}

#[cfg(unix)]
#[test]
fn suggestions_never_name_links_or_paths_outside_the_root() {
    let ws = project();
    std::os::unix::fs::symlink(ws.outside.join("secret.txt"), ws.path("secret.txt")).unwrap();
    std::os::unix::fs::symlink(&ws.outside, ws.path("src/outside")).unwrap();
    for path in ["Secret.txt", "secret", "src/secret.txt"] {
        let text = read_fails(&ws, path, "FS_NOT_FOUND");
        assert!(!text.contains("Did you mean"), "{text}");
        assert!(!text.contains("TOP SECRET"), "{text}");
    }
}

#[test]
fn the_search_is_bounded_by_a_fixed_budget() {
    let ws = Workspace::new();
    for i in 0..40 {
        ws.write(&format!("d{i:02}/other.txt"), "x");
    }
    ws.write("d39/wanted.rs", "x");
    ws.write("d00/wanted.rs.bak", "x");
    // d00 is listed, d39 lies past the listing budget.
    let text = read_fails(&ws, "wanted.rs", "FS_NOT_FOUND");
    assert_eq!(
        text,
        "FS_NOT_FOUND: wanted.rs does not exist. Did you mean d00/wanted.rs.bak?"
    );
}

#[test]
fn a_directory_read_lists_its_first_entries() {
    let ws = project();
    let text = read_fails(&ws, "src", "FS_NOT_REGULAR_FILE");
    assert_eq!(
        text,
        "FS_NOT_REGULAR_FILE: src is a directory, not a file: 5 entries, listed below \
(directories end with /). Read a file in it with file_path src/context.rs.\n  \
context.rs\n  lib.rs\n  tools/\n  util.rs\n  util.ts"
    );
    let root = read_fails(&ws, ".", "FS_NOT_REGULAR_FILE");
    assert!(
        root.ends_with("file_path README.md.\n  README.md\n  src/"),
        "{root}"
    );
    for i in 0..60 {
        ws.write(&format!("big/f{i:02}.txt"), "x");
    }
    let big = read_fails(&ws, "big/", "FS_NOT_REGULAR_FILE");
    let first = big.lines().next().unwrap();
    assert!(
        first.contains("60 entries, the first 50 listed below"),
        "{first}"
    );
    assert_eq!(big.lines().count(), 51);
    assert!(big.ends_with("  f49.txt"), "{big}");
}

//! Paths spelt one normalisation away, searches in the other tool's syntax,
//! and writes that would destroy lines or twin a name, through the real
//! component on the corpus's files: each answer names the cause and the
//! exact path or call to use, and a refused call leaves every file as it was.

use super::fixture;
use crate::{Workspace, call, fails, ok};
use serde_json::{Value, json};

/// `src/inventory.rs`, `web/cart.js`, `docs/NOTES.md`, and `menü.txt` whose
/// name is stored decomposed (NFD), as macOS and some archives store it.
fn project() -> Workspace {
    let ws = Workspace::new();
    ws.write("src/inventory.rs", fixture("inventory.rs"));
    ws.write("web/cart.js", fixture("cart.js"));
    ws.write("docs/NOTES.md", fixture("NOTES.md"));
    ws.write("menu\u{308}.txt", "soup\n");
    ws
}

#[track_caller]
fn answer(ws: &Workspace, tool: &str, args: Value, code: &str) -> String {
    let mut s = ws.session();
    fails(call(&mut s, tool, args), code)
}

#[test]
fn a_path_one_normalisation_away_names_the_cause_and_the_path() {
    let ws = project();
    let before = Workspace::snapshot(&ws.root);
    let root = ws.root.to_str().unwrap();
    let uri = format!("file://{root}/src/inventory.rs");
    let cases = [
        (
            "src\\inventory.rs".to_owned(),
            "src\\inventory.rs does not exist: paths use `/`, not `\\`. \
Use file_path src/inventory.rs."
                .to_owned(),
        ),
        (
            "docs/notes.md".to_owned(),
            "docs/notes.md does not exist: names are case-sensitive. Use file_path docs/NOTES.md."
                .to_owned(),
        ),
        (
            "SRC\\Inventory.rs".to_owned(),
            "SRC\\Inventory.rs does not exist: paths use `/`, not `\\`; names are \
case-sensitive. Use file_path src/inventory.rs."
                .to_owned(),
        ),
        (
            uri.clone(),
            format!(
                "{uri} does not exist: a `file://` URI is not a path. \
Use file_path src/inventory.rs."
            ),
        ),
        (
            "file://src/inventory.rs".to_owned(),
            "file://src/inventory.rs does not exist: a `file://` URI is not a path. \
Use file_path src/inventory.rs."
                .to_owned(),
        ),
        (
            " src/inventory.rs\n".to_owned(),
            " src/inventory.rs\\n does not exist: the path has spaces around it. \
Use file_path src/inventory.rs."
                .to_owned(),
        ),
        (
            "men\u{fc}.txt".to_owned(),
            "men\u{fc}.txt does not exist: the name on disk is in decomposed Unicode (NFD), \
the path in composed (NFC). Use file_path \"menu\\u0308.txt\" (JSON escapes as written)."
                .to_owned(),
        ),
    ];
    for (path, text) in cases {
        let got = answer(&ws, "read", json!({"file_path": path}), "FS_NOT_FOUND");
        assert_eq!(got, format!("FS_NOT_FOUND: {text}"), "{path:?}");
    }
    // What the answer says works, the escapes included.
    let mut s = ws.session();
    let args = r#"{"file_path": "menu\u0308.txt"}"#;
    assert!(ok(s.execute("read", args)).contains("1: soup"));
    assert_eq!(Workspace::snapshot(&ws.root), before);
}

#[test]
fn a_name_stored_composed_asked_decomposed() {
    let ws = Workspace::new();
    ws.write("caf\u{e9}.md", "# menu\n");
    let text = answer(
        &ws,
        "read",
        json!({"file_path": "cafe\u{301}.md"}),
        "FS_NOT_FOUND",
    );
    assert_eq!(
        text,
        "FS_NOT_FOUND: cafe\u{301}.md does not exist: the name on disk is in composed Unicode \
(NFC), the path in decomposed (NFD). Use file_path \"caf\\u00e9.md\" (JSON escapes as written)."
    );
}

#[test]
fn edit_glob_and_grep_paths_too() {
    let ws = project();
    let before = Workspace::snapshot(&ws.root);
    let edit = json!({"file_path": "Web/Cart.js", "old_string": "a", "new_string": "b"});
    assert_eq!(
        answer(&ws, "edit", edit, "FS_NOT_FOUND"),
        "FS_NOT_FOUND: Web/Cart.js does not exist: names are case-sensitive. \
Use file_path web/cart.js."
    );
    let glob = json!({"pattern": "*.js", "path": "WEB"});
    assert_eq!(
        answer(&ws, "glob", glob, "FS_NOT_FOUND"),
        "FS_NOT_FOUND: WEB does not exist: names are case-sensitive. Use path web."
    );
    let grep = json!({"pattern": "TAX_RATE", "path": "web\\cart.js"});
    assert_eq!(
        answer(&ws, "grep", grep, "FS_NOT_FOUND"),
        "FS_NOT_FOUND: web\\cart.js does not exist: paths use `/`, not `\\`. Use path web/cart.js."
    );
    // Two names equal up to case: no guess, the similar paths instead.
    ws.write("docs/notes.MD", "x\n");
    let text = answer(
        &ws,
        "read",
        json!({"file_path": "docs/Notes.md"}),
        "FS_NOT_FOUND",
    );
    assert!(
        text.starts_with(
            "FS_NOT_FOUND: docs/Notes.md does not exist. Similar existing paths are below"
        ),
        "{text}"
    );
    std::fs::remove_file(ws.path("docs/notes.MD")).unwrap();
    assert_eq!(Workspace::snapshot(&ws.root), before);
}

#[test]
fn a_write_does_not_create_a_misspelt_path_or_a_twin() {
    let ws = project();
    let before = Workspace::snapshot(&ws.root);
    let mut s = ws.session();
    let write = |path: &str| json!({"file_path": path, "content": "# notes\n"});
    let text = fails(call(&mut s, "write", write("src\\lib.rs")), "INVALID_ARGS");
    assert_eq!(
        text,
        "INVALID_ARGS: write: file_path src\\lib.rs: paths use `/`, not `\\`; nothing was \
written. Use file_path src/lib.rs."
    );
    let text = fails(
        call(&mut s, "write", write("docs/notes.md")),
        "INVALID_ARGS",
    );
    assert_eq!(
        text,
        "INVALID_ARGS: write: nothing was written: docs/notes.md would add a name beside \
docs/NOTES.md, differing from it in case only (one name on macOS and Windows). To write that \
file, use file_path docs/NOTES.md; to create docs/notes.md anyway, send the same call again."
    );
    let text = fails(call(&mut s, "write", write("Docs/todo.md")), "INVALID_ARGS");
    assert_eq!(
        text,
        "INVALID_ARGS: write: nothing was written: Docs/todo.md would add a name beside docs, \
differing from it in case only (one name on macOS and Windows). To write that file, use \
file_path docs/todo.md; to create Docs/todo.md anyway, send the same call again."
    );
    let text = fails(
        call(&mut s, "write", write("men\u{fc}.txt")),
        "INVALID_ARGS",
    );
    assert_eq!(
        text,
        "INVALID_ARGS: write: nothing was written: men\u{fc}.txt would add a name beside \
menu\u{308}.txt, differing from it in Unicode form (NFC/NFD) only (one name on macOS). To write \
that file, use file_path \"menu\\u0308.txt\" (JSON escapes as written); to create men\u{fc}.txt \
anyway, send the same call again."
    );
    assert_eq!(Workspace::snapshot(&ws.root), before);
    // A new name in an existing directory, and a twin sent again, are written.
    ok(call(&mut s, "write", write("docs/todo.md")));
    let out = ok(call(&mut s, "write", write("docs/notes.md")));
    assert_eq!(out, "Created docs/notes.md (1 line, 8 bytes).\n+# notes");
    assert_eq!(ws.bytes("docs/NOTES.md"), fixture("NOTES.md"));
}

#[test]
fn a_glob_in_regex_syntax_or_the_wrong_case_says_so() {
    let ws = project();
    let mut s = ws.session();
    let glob = |pattern: &str| json!({ "pattern": pattern });
    assert_eq!(
        ok(call(&mut s, "glob", glob(".*\\.rs$"))),
        "No files found: `.*\\.rs$` is a regular expression, but glob takes wildcards (`*` \
within a name, `**` across directories), e.g. `*.rs`."
    );
    assert_eq!(
        ok(call(&mut s, "glob", glob("^(web|src)/"))),
        "No files found: `^(web|src)/` is a regular expression, but glob takes wildcards (`*` \
within a name, `**` across directories), e.g. `{web,src}/`."
    );
    assert_eq!(
        ok(call(&mut s, "glob", glob("**/notes.md"))),
        "No files found: glob matching is case-sensitive; ignoring case, `**/notes.md` \
matches:\n  docs/NOTES.md"
    );
    // Nothing ignoring case either: the plain answer.
    assert_eq!(ok(call(&mut s, "glob", glob("*.py"))), "No files found");
    assert_eq!(ok(call(&mut s, "glob", glob("*.RS"))).lines().count(), 2);
}

#[test]
fn a_glob_given_to_grep_says_which_syntax_grep_takes() {
    let ws = project();
    let mut s = ws.session();
    let text = fails(
        call(&mut s, "grep", json!({"pattern": "*.rs"})),
        "FS_INVALID_INPUT",
    );
    assert_eq!(
        text,
        "FS_INVALID_INPUT: invalid regex: `*.rs` is a glob, but grep's pattern is a regex \
matched against file contents: find files by name with glob, or search only those files with \
include `*.rs`."
    );
    assert_eq!(
        ok(call(&mut s, "grep", json!({"pattern": "src/*.rs"}))),
        "No matches found: `src/*.rs` is a glob, but grep's pattern is a regex matched against \
file contents: find files by name with glob, or search only those files with include `src/*.rs`."
    );
}

#[test]
fn a_write_that_elides_lines_with_a_placeholder_is_refused() {
    let ws = project();
    let before = Workspace::snapshot(&ws.root);
    let mut s = ws.session();
    ok(call(&mut s, "read", json!({"file_path": "web/cart.js"})));
    let cart = String::from_utf8(fixture("cart.js")).unwrap();
    let head: String = cart.lines().take(5).map(|l| format!("{l}\n")).collect();
    let cases = [
        (
            format!("{head}// ... rest of the file unchanged ...\n"),
            "line 6 of `content` is a placeholder, `// ... rest of the file unchanged ...`, not \
the lines it stands for: web/cart.js would lose 34 of its 39 lines.",
        ),
        (
            "  // ... existing code ...\n".to_owned(),
            "line 1 of `content` is a placeholder, `// ... existing code ...`, not the lines it \
stands for: web/cart.js would lose 39 of its 39 lines.",
        ),
        (
            cart.replacen(
                &cart
                    .lines()
                    .skip(10)
                    .take(12)
                    .collect::<Vec<_>>()
                    .join("\n"),
                "  // ... (methods unchanged)",
                1,
            ),
            "line 11 of `content` is a placeholder, `// ... (methods unchanged)`, not the lines \
it stands for: web/cart.js would lose 12 of its 39 lines.",
        ),
    ];
    for (content, why) in cases {
        let args = json!({"file_path": "web/cart.js", "content": content});
        let text = fails(call(&mut s, "write", args), "INVALID_ARGS");
        assert_eq!(
            text,
            format!(
                "INVALID_ARGS: write: {why} Write the whole content, or use edit to change part \
of the file; web/cart.js is unchanged."
            )
        );
    }
    assert_eq!(Workspace::snapshot(&ws.root), before);
    // A plain rewrite, however short, is written.
    let out = ok(call(
        &mut s,
        "write",
        json!({"file_path": "web/cart.js", "content": head}),
    ));
    assert!(out.starts_with("Updated web/cart.js (5 lines"), "{out}");
}

//! The rules over an in-memory tree: what is walked, what is shown, and the
//! exact footers.

use crate::{Budget, MemTree, glob, grep};
use std::time::Duration;

fn grep_all(tree: &MemTree, pattern: &str) -> String {
    grep(tree, "", pattern, None, &Budget::default()).unwrap()
}

fn glob_all(tree: &MemTree, pattern: &str) -> String {
    glob(tree, "", pattern, &Budget::default()).unwrap()
}

#[test]
fn grep_groups_by_file_in_path_order() {
    let mut t = MemTree::default();
    t.file("a.txt", "x\nneedle one\n", 1)
        .file("a/b.txt", "needle two\nneedle three\n", 1);
    assert_eq!(
        grep_all(&t, "needle"),
        "Found 3 matches in 2 files\n\n\
         a/b.txt:\n  Line 1: needle two\n  Line 2: needle three\n\n\
         a.txt:\n  Line 2: needle one"
    );
    assert_eq!(grep_all(&t, "absent"), "No matches found");
}

#[test]
fn grep_skips_hidden_and_ignored_files_and_honours_whitelists() {
    let mut t = MemTree::default();
    t.file(".gitignore", "target/\n*.log\n!keep.log\n", 1)
        .file("target/out.rs", "hit\n", 1)
        .file("debug.log", "hit\n", 1)
        .file("keep.log", "hit\n", 1)
        .file(".hidden/x.rs", "hit\n", 1)
        .file(".env", "hit\n", 1)
        .file("src/.ignore", "gen.rs\n", 1)
        .file("src/gen.rs", "hit\n", 1)
        .file("src/main.rs", "hit\n", 1);
    let out = grep_all(&t, "hit");
    assert_eq!(
        out,
        "Found 2 matches in 2 files\n\nkeep.log:\n  Line 1: hit\n\nsrc/main.rs:\n  Line 1: hit"
    );
    // A whitelist reveals a hidden file; `.ignore` outranks `.gitignore`.
    let mut t = MemTree::default();
    t.file(".gitignore", "!.github\n", 1)
        .file(".github/ci.yml", "hit\n", 1)
        .file(".ignore", "!kept.txt\n", 1)
        .file("sub/.gitignore", "kept.txt\n", 1)
        .file("sub/kept.txt", "hit\n", 1);
    assert_eq!(
        grep_all(&t, "hit"),
        "Found 2 matches in 2 files\n\n.github/ci.yml:\n  Line 1: hit\n\nsub/kept.txt:\n  Line 1: hit"
    );
}

#[test]
fn glob_includes_hidden_and_ignored_but_never_vcs_metadata() {
    let mut t = MemTree::default();
    t.file(".gitignore", "*.rs\n", 5)
        .file("a.rs", "", 1)
        .file(".hidden/b.rs", "", 3)
        .file(".git/c.rs", "", 9)
        .file("x/.jj/d.rs", "", 9)
        .file("x/.svn", "", 9)
        .file("sub/e.rs", "", 2)
        .link("link.rs");
    assert_eq!(glob_all(&t, "*.rs"), ".hidden/b.rs\nsub/e.rs\na.rs");
    assert_eq!(glob_all(&t, "sub/*.rs"), "sub/e.rs");
    assert_eq!(glob_all(&t, "*.go"), "No files found");
    assert_eq!(
        glob(&t, "sub", "*.rs", &Budget::default()).unwrap(),
        "sub/e.rs"
    );
}

/// What `read` would refuse as not text is skipped whole, as if binary: a NUL
/// anywhere (matches before it dropped too), invalid UTF-8 such as Latin-1,
/// and UTF-16; a UTF-8 BOM is not part of line 1.
#[test]
fn files_that_are_not_utf8_text_are_skipped_whole() {
    let mut t = MemTree::default();
    t.file("bin.dat", b"\x00hit\n", 1)
        .file("late.dat", b"hit one\nhit two\n\x00hit three\n", 1)
        .file("latin1.txt", b"hit caf\xe9\n", 1)
        .file("utf16.txt", b"\xff\xfeh\x00i\x00t\x00\n\x00", 1)
        .file("bom.txt", "\u{feff}hit with BOM\n", 1)
        .file("text.txt", "caf\u{e9} hit\n", 1);
    assert_eq!(
        grep_all(&t, "hit"),
        "Found 2 matches in 2 files\n\n\
         bom.txt:\n  Line 1: hit with BOM\n\n\
         text.txt:\n  Line 1: caf\u{e9} hit"
    );
    assert_eq!(grep_all(&t, "^hit with"), grep_all(&t, "hit with"));
}

#[test]
fn crlf_lines_show_without_their_carriage_return_and_end_at_dollar() {
    let mut t = MemTree::default();
    t.file("w.txt", "one\r\nend here\r\n", 1);
    assert_eq!(
        grep_all(&t, "here$"),
        "Found 1 match in 1 file\n\nw.txt:\n  Line 2: end here"
    );
}

/// `^` and `$` held only at the ends of the file before `multi_line`.
#[test]
fn anchors_match_at_every_line() {
    let mut tree = MemTree::default();
    tree.file("a.txt", "hit\nmiss\r\nhit\r\nhits\n", 1);
    assert_eq!(
        grep_all(&tree, "^hit$"),
        "Found 2 matches in 1 file\n\na.txt:\n  Line 1: hit\n  Line 3: hit"
    );
}

#[test]
fn long_lines_are_cut_on_a_character_boundary_at_2000_bytes() {
    let line = format!("{}{}", "a".repeat(1999), "é".repeat(10));
    let mut t = MemTree::default();
    t.file("long.txt", format!("{line}\n"), 1);
    let out = grep_all(&t, "a");
    let shown = out.rsplit("Line 1: ").next().unwrap();
    assert_eq!(
        shown,
        format!("{}… [line cut: 20 more bytes]", "a".repeat(1999))
    );
}

#[test]
fn grep_shows_250_lines_then_says_how_many_were_left_out() {
    let mut t = MemTree::default();
    t.file("a.txt", "hit\n".repeat(200), 1)
        .file("b.txt", "hit\n".repeat(100), 1);
    let out = grep_all(&t, "hit");
    assert!(
        out.starts_with("Found 300 matches in 2 files\n\na.txt:\n"),
        "{out}"
    );
    assert_eq!(out.matches("  Line ").count(), 250);
    assert!(
        out.contains("  Line 50: hit\n\n(Showing the first 250"),
        "{out}"
    );
    assert!(out.ends_with(
        "(Showing the first 250 of 300 matching lines; 50 left out. \
         Narrow the pattern, path or include to see the rest.)"
    ));
}

#[test]
fn glob_shows_the_100_newest_then_says_how_many_were_left_out() {
    let mut t = MemTree::default();
    for i in 0..150u64 {
        t.file(&format!("f{i:03}.rs"), "", i);
    }
    let out = glob_all(&t, "*.rs");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "f149.rs");
    assert_eq!(lines[99], "f050.rs");
    assert_eq!(
        lines[101],
        "(Showing the 100 newest of 150 files; 50 left out. \
         Narrow the pattern or path to see the rest.)"
    );
}

#[test]
fn include_filters_file_names_with_alternation() {
    let mut t = MemTree::default();
    t.file("a.rs", "hit\n", 1)
        .file("b.ts", "hit\n", 1)
        .file("c.md", "hit\n", 1);
    let out = grep(&t, "", "hit", Some("*.{rs,ts}"), &Budget::default()).unwrap();
    assert!(out.starts_with("Found 2 matches in 2 files"), "{out}");
    assert!(!out.contains("c.md"));
}

#[test]
fn a_spent_budget_says_the_search_stopped_early() {
    let mut t = MemTree::default();
    for i in 0..50 {
        t.file(&format!("f{i}.txt"), "hit\n", 1);
    }
    let budget = Budget::new(Duration::from_secs(5), 20);
    let out = grep(&t, "", "hit", None, &budget).unwrap();
    assert!(
        out.ends_with(
            "(Stopped early: the search used up its budget (5 s), so these results are partial. \
         Narrow the path or pattern and retry.)"
        ),
        "{out}"
    );
}

#[test]
fn missing_paths_and_wrong_kinds_are_errors() {
    let mut t = MemTree::default();
    t.file("a.txt", "x\n", 1).link("l");
    let e = grep(&t, "nope", "x", None, &Budget::default()).unwrap_err();
    assert_eq!(e.code, dsh_fs_core::ErrorCode::NotFound);
    let e = glob(&t, "a.txt", "*", &Budget::default()).unwrap_err();
    assert_eq!(e.code, dsh_fs_core::ErrorCode::NotDirectory);
    let e = grep(&t, "l", "x", None, &Budget::default()).unwrap_err();
    assert_eq!(e.code, dsh_fs_core::ErrorCode::NotRegularFile);
    // An explicit file is searched even though it is hidden.
    t.file(".env", "x\n", 1);
    assert!(
        grep(&t, ".env", "x", None, &Budget::default())
            .unwrap()
            .starts_with("Found 1 match")
    );
}

/// Reads all of `bytes` through [`crate::lines::TextOnly`], `step` bytes per read.
fn text_only(bytes: &[u8], step: usize) -> std::io::Result<Vec<u8>> {
    struct Trickle<'a>(&'a [u8], usize);
    impl std::io::Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.0.len().min(self.1).min(buf.len());
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }
    let mut out = Vec::new();
    std::io::Read::read_to_end(
        &mut crate::lines::TextOnly::new(Trickle(bytes, step)),
        &mut out,
    )?;
    Ok(out)
}

#[test]
fn only_utf8_text_without_nul_passes_whatever_the_read_sizes() {
    let text = "a ✓ é 𝄞 end\n".repeat(3);
    for step in 1..=9 {
        assert_eq!(text_only(text.as_bytes(), step).unwrap(), text.as_bytes());
        let mut cut = text.as_bytes().to_vec();
        cut.truncate(text.find('𝄞').unwrap() + 2);
        assert!(text_only(&cut, step).is_err(), "truncated, step {step}");
        let mut latin1 = text.as_bytes().to_vec();
        latin1.extend_from_slice(b"caf\xe9\n");
        assert!(text_only(&latin1, step).is_err(), "latin-1, step {step}");
        let mut nul = text.as_bytes().to_vec();
        nul.extend_from_slice(b"\0");
        assert!(text_only(&nul, step).is_err(), "NUL, step {step}");
    }
}

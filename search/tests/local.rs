//! The portable search over a real directory: links are listed but never
//! followed (loops and escapes included), and the ignore, hidden and binary
//! rules hold on disk as they do in memory.

use dsh_fs_search::{Budget, LocalTree, glob, grep};
use std::fs;
use std::path::Path;

fn write(root: &Path, path: &str, content: &[u8]) {
    let full = root.join(path);
    fs::create_dir_all(full.parent().unwrap()).unwrap();
    fs::write(full, content).unwrap();
}

#[test]
fn links_are_never_followed_out_of_the_root_or_round_a_loop() {
    let outside = tempfile::tempdir().unwrap();
    write(outside.path(), "secret.rs", b"needle\n");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "src/in.rs", b"needle\n");
    std::os::unix::fs::symlink(outside.path(), root.join("escape")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("secret.rs"), root.join("leak.rs")).unwrap();
    std::os::unix::fs::symlink(root, root.join("src/loop")).unwrap();
    let tree = LocalTree::new(root);
    let b = Budget::default();
    assert_eq!(glob(&tree, "", "**/*.rs", &b).unwrap(), "src/in.rs");
    assert_eq!(
        grep(&tree, "", "needle", None, &b).unwrap(),
        "Found 1 match in 1 file\n\nsrc/in.rs:\n  Line 1: needle"
    );
    // Naming a path through a link does not follow it either.
    assert!(grep(&tree, "escape/secret.rs", "needle", None, &b).is_err());
    assert!(glob(&tree, "escape", "*", &b).is_err());
    assert!(grep(&tree, "leak.rs", "needle", None, &b).is_err());
}

#[test]
fn ignore_hidden_binary_and_crlf_rules_hold_on_disk() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, ".gitignore", b"build/\n");
    write(root, "build/gen.txt", b"hit\n");
    write(root, ".cache/c.txt", b"hit\n");
    write(root, "bin/blob", b"hit\x00hit\n");
    write(root, "win.txt", b"first\r\nhit\r\n");
    let tree = LocalTree::new(root);
    let b = Budget::default();
    assert_eq!(
        grep(&tree, "", "hit$", None, &b).unwrap(),
        "Found 1 match in 1 file\n\nwin.txt:\n  Line 2: hit"
    );
    let all = glob(&tree, "", "*.txt", &b).unwrap();
    assert_eq!(all.lines().count(), 3, "{all}");
}

#[test]
fn a_missing_path_is_not_found() {
    let dir = tempfile::tempdir().unwrap();
    let tree = LocalTree::new(dir.path());
    let e = grep(&tree, "nope", "x", None, &Budget::default()).unwrap_err();
    assert_eq!(e.code, dsh_fs_core::ErrorCode::NotFound);
}

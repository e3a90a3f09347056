//! Every way out of the root is refused, and nothing outside is read or written.

use crate::{Workspace, call, ok};
use serde_json::json;
use std::os::unix::fs::symlink;

#[test]
fn escape_attempts_are_denied_and_leave_the_outside_untouched() {
    let ws = Workspace::new();
    let outside = ws.outside.clone();
    let secret = outside.join("secret.txt");
    ws.write("inside.txt", "inside\n");
    symlink(&secret, ws.path("link-file")).unwrap();
    symlink(&outside, ws.path("link-dir")).unwrap();
    std::fs::create_dir(ws.path("sub")).unwrap();
    symlink("../../outside", ws.path("sub/relative-out")).unwrap();
    symlink(ws.path("link-dir"), ws.path("chain")).unwrap();
    symlink(outside.join("not-there.txt"), ws.path("dangling-out")).unwrap();
    let before = Workspace::snapshot(&outside);
    let root = ws.root.to_str().unwrap().to_owned();

    let paths = [
        "../outside/secret.txt".to_string(),
        "sub/../../outside/secret.txt".into(),
        secret.to_str().unwrap().into(),
        format!("{root}/../outside/secret.txt"),
        "/etc/passwd".into(),
        "/proc/self/root/etc/passwd".into(),
        "link-file".into(),
        "link-dir/secret.txt".into(),
        "sub/relative-out/secret.txt".into(),
        "chain/secret.txt".into(),
        "link-dir/new.txt".into(),
    ];
    let mut s = ws.session();
    for path in &paths {
        for (tool, args) in [
            ("read", json!({"file_path": path})),
            ("write", json!({"file_path": path, "content": "pwned\n"})),
            (
                "edit",
                json!({"file_path": path, "old_string": "TOP", "new_string": "pwned"}),
            ),
        ] {
            let r = call(&mut s, tool, args);
            assert!(r.is_error, "{tool} {path} succeeded: {}", r.text);
            let code = crate::code(&r);
            assert!(
                code == "FS_SANDBOX_DENIED" || (tool == "edit" && code == "FS_NOT_OBSERVED"),
                "{tool} {path}: {}",
                r.text
            );
            assert!(
                !r.text.contains("TOP SECRET") && !r.text.contains("root:"),
                "{tool} {path} leaked: {}",
                r.text
            );
        }
    }
    // A dangling link pointing out is replaced inside the root, never followed out.
    let r = call(
        &mut s,
        "write",
        json!({"file_path": "dangling-out", "content": "here\n"}),
    );
    assert!(
        r.is_error || std::fs::read(ws.path("dangling-out")).unwrap() == b"here\n",
        "{}",
        r.text
    );
    assert_eq!(
        Workspace::snapshot(&outside),
        before,
        "something outside the root changed"
    );
    assert!(!outside.join("not-there.txt").exists());

    // Links that stay inside work, and name the same target as the real path.
    symlink("inside.txt", ws.path("alias.txt")).unwrap();
    ok(call(&mut s, "read", json!({"file_path": "alias.txt"})));
    ok(call(
        &mut s,
        "edit",
        json!({"file_path": "inside.txt", "old_string": "inside", "new_string": "still inside"}),
    ));
    assert!(
        std::fs::symlink_metadata(ws.path("alias.txt"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(ws.bytes("inside.txt"), b"still inside\n");
}

#[test]
fn a_directory_swapped_for_a_symlink_to_the_outside_is_denied() {
    let ws = Workspace::new();
    ws.write("work/file.txt", "TOP\n");
    let mut s = ws.session();
    ok(call(&mut s, "read", json!({"file_path": "work/file.txt"})));
    // Replace the directory with a link to the outside holding a same-named file.
    std::fs::write(ws.outside.join("file.txt"), "TOP\n").unwrap();
    std::fs::rename(ws.path("work"), ws.path("work.old")).unwrap();
    symlink(&ws.outside, ws.path("work")).unwrap();
    let r = call(
        &mut s,
        "edit",
        json!({"file_path": "work/file.txt", "old_string": "TOP", "new_string": "pwned"}),
    );
    assert_eq!(crate::code(&r), "FS_SANDBOX_DENIED", "{}", r.text);
    assert_eq!(
        std::fs::read(ws.outside.join("file.txt")).unwrap(),
        b"TOP\n"
    );
}

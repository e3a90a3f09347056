//! Every way out of the root is refused, and nothing outside is read or written.

use crate::{Workspace, call, ok, runtime};
use dsh_fs::SessionOptions;
use serde_json::json;
use std::os::unix::fs::symlink;
use std::sync::Arc;

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

/// Refusals that count as "denied": the path never reached anything outside.
const REFUSED: &[&str] = &[
    "FS_SANDBOX_DENIED",
    "FS_NOT_REGULAR_FILE",
    "FS_INVALID_INPUT",
    "FS_NOT_FOUND",
    "FS_NOT_OBSERVED",
    "FS_NOT_DIRECTORY",
];

#[test]
fn corpus_of_escape_attempts() {
    let ws = Workspace::new();
    let out = ws.outside.clone();
    let secret = out.join("secret.txt");
    let root = ws.root.to_str().unwrap().to_owned();
    std::fs::create_dir_all(ws.path("a/b/c")).unwrap();
    let link = |target: &std::path::Path, at: &str| symlink(target, ws.path(at)).unwrap();
    link(&secret, "abs-file");
    link(&out, "abs-dir");
    symlink("../outside/secret.txt", ws.path("rel-file")).unwrap();
    symlink("../../../../outside", ws.path("a/b/c/deep-out")).unwrap();
    symlink("../outside", ws.path("rel-dir")).unwrap();
    symlink("rel-dir", ws.path("chain1")).unwrap();
    symlink("chain1", ws.path("chain2")).unwrap();
    symlink("loop2", ws.path("loop1")).unwrap();
    symlink("loop1", ws.path("loop2")).unwrap();
    symlink("self", ws.path("self")).unwrap();
    symlink("/", ws.path("fs-root")).unwrap();
    symlink("/proc/self/root", ws.path("proc-root")).unwrap();
    std::fs::hard_link(&secret, ws.path("hard-link.txt")).unwrap();
    let fifo = std::ffi::CString::new(ws.path("fifo").to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    let dev = std::ffi::CString::new(ws.path("null-device").to_str().unwrap()).unwrap();
    let made_device =
        unsafe { libc::mknod(dev.as_ptr(), libc::S_IFCHR | 0o600, libc::makedev(1, 3)) } == 0;
    std::os::unix::fs::symlink("/dev/zero", ws.path("zero-link")).unwrap();
    let before = Workspace::snapshot(&out);

    let mut attempts: Vec<String> = vec![
        "..".into(),
        "../".into(),
        "../outside/secret.txt".into(),
        "../../../../../../etc/passwd".into(),
        "a/../../outside/secret.txt".into(),
        "a/b/c/../../../../outside/secret.txt".into(),
        "./../outside/secret.txt".into(),
        "a/./../../outside/secret.txt".into(),
        secret.to_str().unwrap().into(),
        format!("{root}/../outside/secret.txt"),
        format!("{root}/a/../../outside/secret.txt"),
        format!("{root}/abs-file"),
        "/etc/passwd".into(),
        "/etc/shadow".into(),
        "/proc/self/root/etc/passwd".into(),
        "/proc/self/environ".into(),
        "/proc/self/cwd/secret.txt".into(),
        "/dev/zero".into(),
        "/".into(),
        "//etc/passwd".into(),
        "abs-file".into(),
        "abs-dir/secret.txt".into(),
        "abs-dir/new-file.txt".into(),
        "rel-file".into(),
        "rel-dir/secret.txt".into(),
        "rel-dir/new-file.txt".into(),
        "a/b/c/deep-out/secret.txt".into(),
        "chain2/secret.txt".into(),
        "chain2/new-file.txt".into(),
        "loop1".into(),
        "loop1/x".into(),
        "self".into(),
        "fs-root/etc/passwd".into(),
        "proc-root/etc/passwd".into(),
        "zero-link".into(),
        "hard-link.txt".into(),
        "fifo".into(),
        "a\0/../../outside/secret.txt".into(),
        "secret.txt\0.rs".into(),
        "x".repeat(300),
        format!("{}/secret.txt", "a/".repeat(3000)),
        "".into(),
    ];
    if made_device {
        attempts.push("null-device".into());
    }
    assert!(
        attempts.len() >= 40,
        "the corpus has only {} attempts",
        attempts.len()
    );
    let mut s = ws.session();
    for path in &attempts {
        for (tool, args) in [
            ("read", json!({"file_path": path, "limit": 5})),
            ("write", json!({"file_path": path, "content": "pwned\n"})),
            (
                "edit",
                json!({"file_path": path, "old_string": "TOP", "new_string": "pwned"}),
            ),
        ] {
            let started = std::time::Instant::now();
            let r = call(&mut s, tool, args);
            let shown: String = path.chars().take(60).collect();
            assert!(r.is_error, "{tool} {shown:?} succeeded: {}", r.text);
            assert!(
                REFUSED.contains(&crate::code(&r)),
                "{tool} {shown:?}: {}",
                r.text
            );
            assert!(
                !r.text.contains("TOP SECRET") && !r.text.contains("root:x"),
                "{tool} {shown:?} leaked: {}",
                r.text
            );
            assert!(started.elapsed().as_secs() < 5, "{tool} {shown:?} blocked");
        }
    }
    assert_eq!(
        Workspace::snapshot(&out),
        before,
        "something outside the root changed"
    );
    assert_eq!(std::fs::read(&secret).unwrap(), b"TOP SECRET\n");
}

#[test]
fn a_symlink_swapped_in_during_writes_never_leads_out() {
    let ws = Workspace::new();
    let out = ws.outside.clone();
    std::fs::write(out.join("file.txt"), "TOP\n").unwrap();
    std::fs::create_dir(ws.path("work")).unwrap();
    std::fs::write(ws.path("work/file.txt"), "TOP\n").unwrap();
    let before = Workspace::snapshot(&out);
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let swapper = {
        let (stop, ws_root, out) = (stop.clone(), ws.root.clone(), out.clone());
        std::thread::spawn(move || {
            let (work, link) = (ws_root.join("work"), ws_root.join("work-link"));
            symlink(&out, &link).unwrap();
            let mut swaps = 0u64;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                // `work` flips between the directory and a symlink to the
                // outside, atomically, so it always exists.
                let cwd = rustix::fs::CWD;
                rustix::fs::renameat_with(
                    cwd,
                    &work,
                    cwd,
                    &link,
                    rustix::fs::RenameFlags::EXCHANGE,
                )
                .unwrap();
                swaps += 1;
            }
            swaps
        })
    };
    let mut s = runtime()
        .session(
            ws.provider(),
            SessionOptions {
                observation_policy: false,
                ..Default::default()
            },
        )
        .unwrap();
    let (mut wrote, mut refused) = (0, 0);
    let deadline = std::time::Instant::now() + std::time::Duration::from_millis(1500);
    while std::time::Instant::now() < deadline {
        for (tool, args) in [
            (
                "write",
                json!({"file_path": "work/file.txt", "content": "pwned\n"}),
            ),
            (
                "edit",
                json!({"file_path": "work/file.txt", "old_string": "TOP", "new_string": "pwned"}),
            ),
            (
                "write",
                json!({"file_path": "work/new.txt", "content": "pwned\n"}),
            ),
        ] {
            if call(&mut s, tool, args).is_error {
                refused += 1;
            } else {
                wrote += 1;
            }
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let swaps = swapper.join().unwrap();
    eprintln!("{swaps} swaps; {wrote} writes landed inside, {refused} refused");
    assert_eq!(
        Workspace::snapshot(&out),
        before,
        "a write went through the swapped-in symlink"
    );
    assert!(
        wrote > 0 && refused > 0,
        "the race did not happen: {wrote} written, {refused} refused"
    );
}

//! Whole-file reads of a local workspace against renames, writers and
//! aliases: the version a read gives describes exactly the text it showed,
//! whatever path the read took to the file.

use crate::{Workspace, call, code, fails, ok};
use serde_json::json;
use std::os::unix::fs::{FileExt, symlink};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

#[test]
fn a_file_renamed_over_between_two_reads_reads_as_the_new_one() {
    let ws = Workspace::new();
    for path in ["f.txt", "deep/er/f.txt"] {
        ws.write(path, "old line\n");
        let mut s = ws.session();
        assert!(ok(call(&mut s, "read", json!({"file_path": path}))).contains("old line"));
        // Another program saves by rename: a new inode under the same name.
        ws.write("new.tmp", "new line\n");
        std::fs::rename(ws.path("new.tmp"), ws.path(path)).unwrap();
        fails(
            call(
                &mut s,
                "edit",
                json!({"file_path": path, "old_string": "line", "new_string": "LINE"}),
            ),
            "FS_STALE_VERSION",
        );
        let again = ok(call(&mut s, "read", json!({"file_path": path})));
        assert!(
            again.contains("new line") && !again.contains("old"),
            "{again}"
        );
        ok(call(
            &mut s,
            "edit",
            json!({"file_path": path, "old_string": "new line", "new_string": "ours"}),
        ));
        assert_eq!(ws.bytes(path), b"ours\n");
    }
}

#[test]
fn a_file_read_by_its_name_or_through_a_link_is_one_file() {
    let ws = Workspace::new();
    ws.write("real/dir/f.txt", "one\n");
    symlink("real", ws.path("alias")).unwrap();
    symlink("dir/f.txt", ws.path("real/file-link")).unwrap();
    let spellings = [
        "real/dir/f.txt",
        "./real//dir/f.txt",
        "alias/dir/f.txt",
        "real/file-link",
        "alias/file-link",
    ];
    for read_as in spellings {
        for edit_as in spellings {
            ws.write("real/dir/f.txt", "one\n");
            let mut s = ws.session();
            ok(call(&mut s, "read", json!({"file_path": read_as})));
            let r = call(
                &mut s,
                "edit",
                json!({"file_path": edit_as, "old_string": "one", "new_string": "two"}),
            );
            assert_eq!(code(&r), "OK", "read {read_as}, edit {edit_as}: {}", r.text);
            assert_eq!(ws.bytes("real/dir/f.txt"), b"two\n");
        }
    }
    assert!(
        std::fs::symlink_metadata(ws.path("real/file-link"))
            .unwrap()
            .is_symlink()
    );
}

/// The letter of every line of `a` or `b` in a read's output, `None` when
/// both occur (a torn read).
fn letter(shown: &str) -> Option<u8> {
    let a = shown.contains("aaaa");
    let b = shown.contains("bbbb");
    match (a, b) {
        (true, false) => Some(b'a'),
        (false, true) => Some(b'b'),
        _ => None,
    }
}

/// Reads raced by a neighbour that rewrites the file in place and renames
/// new versions over it. After each read the neighbour stops; an edit (its
/// freshness decided by the version that read gave) must succeed exactly
/// when the text that read showed is the file now.
#[test]
fn a_concurrent_writer_never_yields_a_version_of_other_content() {
    let ws = Workspace::new();
    let state = |c: u8| format!("{}\n", (c as char).to_string().repeat(63)).repeat(64);
    let (a, b) = (state(b'a'), state(b'b'));
    let (mut fresh, mut stale) = (0, 0);
    for round in 0..150u32 {
        ws.write("f.txt", &a);
        let mut s = ws.session();
        let stop = Arc::new(AtomicBool::new(false));
        let writes = Arc::new(AtomicU32::new(0));
        let neighbour = {
            let (stop, writes) = (stop.clone(), writes.clone());
            let (path, tmp) = (ws.path("f.txt"), ws.path("f.tmp"));
            let (a, b) = (a.clone(), b.clone());
            std::thread::spawn(move || {
                let mut i = 0u32;
                while !stop.load(Ordering::Relaxed) || i < 2 {
                    let next = if i.is_multiple_of(2) { &b } else { &a };
                    if (i / 2 + round).is_multiple_of(3) {
                        std::fs::write(&tmp, next).unwrap();
                        std::fs::rename(&tmp, &path).unwrap();
                    } else if let Ok(file) = std::fs::OpenOptions::new().write(true).open(&path) {
                        file.write_all_at(next.as_bytes(), 0).unwrap();
                    }
                    i += 1;
                    writes.store(i, Ordering::Relaxed);
                }
            })
        };
        // The read starts while the neighbour is writing.
        while writes.load(Ordering::Relaxed) < round % 4 {
            std::hint::spin_loop();
        }
        let shown = ok(call(&mut s, "read", json!({"file_path": "f.txt"})));
        stop.store(true, Ordering::Relaxed);
        neighbour.join().unwrap();
        let now = ws.bytes("f.txt");
        assert!(now == a.as_bytes() || now == b.as_bytes(), "round {round}");
        let seen = letter(&shown);
        let line = (seen.unwrap_or(b'a') as char).to_string().repeat(63);
        let r = call(
            &mut s,
            "edit",
            json!({"file_path": "f.txt", "old_string": line, "new_string": "x", "replace_all": true}),
        );
        let same = seen == Some(now[0]);
        if same {
            assert_eq!(code(&r), "OK", "round {round}: {}", r.text);
            fresh += 1;
        } else {
            assert_eq!(code(&r), "FS_STALE_VERSION", "round {round}: {}", r.text);
            assert_eq!(ws.bytes("f.txt"), now, "round {round}: a stale edit wrote");
            stale += 1;
        }
    }
    eprintln!("reads under a writer: {fresh} matched the file after, {stale} did not");
}

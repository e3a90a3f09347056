//! Hostile calls and hostile neighbours: a call whose arguments ask for
//! terabytes, millions of matches, a lock held by someone else, a deadline
//! that falls around the commit, programs that change the file without our
//! lock, files whose owner or protection must survive, names crafted to
//! fake output. Each attack is checked for its answer, for the file on disk,
//! and, where memory is the attack, for the peak RSS of a `dsh-fs mcp`
//! process serving it (under 128 MiB whatever the arguments).

use crate::mcp_transport::{RSS_LIMIT_KIB, Server};
use crate::object_store::Bucket;
use crate::{Workspace, call, code, fails, ok, runtime, runtime_with_timeout};
use dsh_fs::{
    BoxListing, BoxStream, DynProvider, EditOutcome, EditRequest, FsError, FsInfo, MemoryProvider,
    Provider, SessionOptions, Skipped, Target, TextContent, TextStream, WriteIntent, WriteOutcome,
};
use serde_json::json;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

#[track_caller]
fn assert_bounded(server: &Server, what: &str) {
    let peak = server.peak_rss_kib();
    eprintln!("{what}: peak RSS {} MiB", peak >> 10);
    assert!(peak < RSS_LIMIT_KIB, "{what}: peak RSS {peak} KiB");
}

/// 1000 lines of `x`: a small file with many matches.
fn many_x() -> String {
    "x\n".repeat(1000)
}

#[test]
fn replace_all_that_would_explode_is_refused_before_allocating() {
    // 1000 matches × 2 MiB = 2 GiB: past every limit, on every backend.
    let new = "n".repeat(2 << 20);
    let edit =
        json!({"file_path": "f.txt", "old_string": "x", "new_string": new, "replace_all": true});

    let ws = Workspace::new();
    ws.write("f.txt", many_x());
    let mut server = Server::start(&ws);
    server.call("read", json!({"file_path": "f.txt"}));
    let (text, code) = server.call("edit", edit.clone());
    assert_eq!(code, "FS_TOO_LARGE", "{text}");
    assert!(
        text.contains("2097153000 bytes") && text.contains("1073741824-byte limit"),
        "{text}"
    );
    assert_eq!(ws.bytes("f.txt"), many_x().as_bytes());
    assert_bounded(&server, "local, 2 GiB result");

    let bucket = Bucket::new();
    bucket.put("p/f.txt", many_x().as_bytes());
    let mut server = Server::spawn(bucket.dsh_fs("p", &["mcp"]));
    server.call("read", json!({"file_path": "f.txt"}));
    let (text, code) = server.call("edit", edit.clone());
    assert_eq!(code, "FS_TOO_LARGE", "{text}");
    // Edits of a bucket stream like edits on disk: the same limit.
    assert!(
        text.contains("2097153000 bytes") && text.contains("1073741824-byte limit"),
        "{text}"
    );
    assert_eq!(bucket.get("p/f.txt").unwrap(), many_x().as_bytes());
    assert_bounded(&server, "object store, 2 GiB result");

    let memory = std::sync::Arc::new(MemoryProvider::default());
    memory.store().insert("f.txt", many_x());
    let mut s = crate::runtime()
        .session(memory.clone(), SessionOptions::default())
        .unwrap();
    ok(call(&mut s, "read", json!({"file_path": "f.txt"})));
    fails(call(&mut s, "edit", edit), "FS_TOO_LARGE");
    assert_eq!(memory.store().get("f.txt").unwrap(), many_x().as_bytes());
}

#[test]
fn a_memory_store_refuses_results_it_cannot_hold_before_building_them() {
    // 2000 matches × 10 KiB: a 20 MiB result, within the disk's 1 GiB but
    // past the 16 MiB the memory workspace holds.
    let file = "x\n".repeat(2000);
    let memory = std::sync::Arc::new(MemoryProvider::default());
    memory.store().insert("f.txt", file.clone());
    let mut s = crate::runtime()
        .session(memory.clone(), SessionOptions::default())
        .unwrap();
    ok(call(&mut s, "read", json!({"file_path": "f.txt"})));
    let new = "n".repeat(10 << 10);
    let edit =
        json!({"file_path": "f.txt", "old_string": "x", "new_string": new, "replace_all": true});
    let text = fails(call(&mut s, "edit", edit), "FS_TOO_LARGE");
    assert!(
        text.contains("20482000 bytes") && text.contains("16777216-byte limit"),
        "{text}"
    );
    assert_eq!(memory.store().get("f.txt").unwrap(), file.as_bytes());
    // The same edit on disk goes through.
    let ws = Workspace::new();
    ws.write("f.txt", &file);
    let mut s = ws.session();
    ok(call(&mut s, "read", json!({"file_path": "f.txt"})));
    let edit =
        json!({"file_path": "f.txt", "old_string": "x", "new_string": new, "replace_all": true});
    ok(call(&mut s, "edit", edit));
    assert_eq!(ws.bytes("f.txt").len(), 20_482_000);
}

#[test]
fn large_replacements_stream_to_disk_in_bounded_memory() {
    // 20 matches × 15 MiB: a 300 MiB result, written without holding it.
    let ws = Workspace::new();
    let file = "x\n".repeat(20);
    ws.write("f.txt", &file);
    let mut server = Server::start(&ws);
    server.call("read", json!({"file_path": "f.txt"}));
    let new = "n".repeat(15 << 20);
    let (text, code) = server.call(
        "edit",
        json!({"file_path": "f.txt", "old_string": "x", "new_string": new, "replace_all": true}),
    );
    assert_eq!(code, "OK", "{text}");
    assert_eq!(
        std::fs::metadata(ws.path("f.txt")).unwrap().len(),
        20 * ((15 << 20) + 1)
    );
    assert_bounded(&server, "local, 300 MiB result");
}

#[test]
fn millions_of_matches_are_counted_in_bounded_memory() {
    let ws = Workspace::new();
    // LF, streamed (over 8 MiB); CRLF, in memory (under 16 MiB).
    let lf = "x\n".repeat(10 << 20);
    let crlf = "x\r\n".repeat(4 << 20);
    ws.write("lf.txt", &lf);
    ws.write("crlf.txt", &crlf);
    let mut server = Server::start(&ws);
    for (name, count) in [("lf.txt", 10u64 << 20), ("crlf.txt", 4 << 20)] {
        server.call("read", json!({"file_path": name, "limit": 1}));
        let (text, code) = server.call(
            "edit",
            json!({"file_path": name, "old_string": "x", "new_string": "y"}),
        );
        assert_eq!(code, "FS_AMBIGUOUS_EDIT", "{text}");
        assert!(text.contains(&format!("matches {count} places")), "{text}");
        assert!(
            text.contains("(lines 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, …)"),
            "{text}"
        );
        let (text, code) = server.call(
            "edit",
            json!({"file_path": name, "old_string": "x", "new_string": "yz", "replace_all": true}),
        );
        assert_eq!(code, "OK", "{text}");
        assert!(text.contains(&format!("{count} replacements")), "{text}");
    }
    assert_eq!(ws.bytes("lf.txt"), "yz\n".repeat(10 << 20).as_bytes());
    assert_eq!(ws.bytes("crlf.txt"), "yz\r\n".repeat(4 << 20).as_bytes());
    assert_bounded(&server, "14M matches, ambiguous and replaced");
}

#[test]
fn large_crlf_edits_are_bounded() {
    let ws = Workspace::new();
    let big = "line\r\n".repeat(5 << 20); // 30 MiB, CRLF
    let small = format!("first\r\n{}", "line\r\n".repeat(2 << 20)); // 12 MiB
    ws.write("big.txt", &big);
    ws.write("small.txt", &small);
    let mut server = Server::start(&ws);
    server.call("read", json!({"file_path": "big.txt", "limit": 1}));
    let (text, code) = server.call(
        "edit",
        json!({"file_path": "big.txt", "old_string": "line\nline", "new_string": "x"}),
    );
    assert_eq!(code, "FS_TOO_LARGE", "{text}");
    assert!(text.contains("CRLF"), "{text}");
    assert_eq!(ws.bytes("big.txt").len(), big.len());
    server.call("read", json!({"file_path": "small.txt", "limit": 1}));
    let (text, code) = server.call(
        "edit",
        json!({"file_path": "small.txt", "old_string": "first\n", "new_string": "1\n2\n"}),
    );
    assert_eq!(code, "OK", "{text}");
    assert!(ws.bytes("small.txt").starts_with(b"1\r\n2\r\nline\r\n"));
    assert_bounded(&server, "CRLF edits of 30 and 12 MiB");
}

#[test]
fn a_write_over_a_large_read_file_hashes_it_in_chunks() {
    let ws = Workspace::new();
    let line = format!("{}\n", "a".repeat(79));
    let file = std::fs::File::create(ws.path("big.txt")).unwrap();
    let mut out = std::io::BufWriter::new(file);
    for _ in 0..(200 << 20) / 80 {
        std::io::Write::write_all(&mut out, line.as_bytes()).unwrap();
    }
    drop(out);
    let mut server = Server::start(&ws);
    server.call(
        "read",
        json!({"file_path": "big.txt", "offset": 5, "limit": 1}),
    );
    let (text, code) = server.call(
        "write",
        json!({"file_path": "big.txt", "content": "small\n"}),
    );
    assert_eq!(code, "OK", "{text}");
    assert_eq!(ws.bytes("big.txt"), b"small\n");
    assert_bounded(&server, "write over a read 200 MiB file");
}

/// Holds `flock(LOCK_EX)` on `dir` like another process would (a separate
/// open file description), for `hold`, from another thread.
fn hold_lock(dir: &std::path::Path, hold: Duration) -> std::thread::JoinHandle<()> {
    use std::os::fd::AsRawFd;
    let handle = std::fs::File::open(dir).unwrap();
    assert_eq!(unsafe { libc::flock(handle.as_raw_fd(), libc::LOCK_EX) }, 0);
    std::thread::spawn(move || {
        std::thread::sleep(hold);
        drop(handle);
    })
}

#[test]
fn a_lock_held_elsewhere_answers_busy_by_the_deadline() {
    let ws = Workspace::new();
    ws.write("f.txt", "old\n");
    let runtime = runtime_with_timeout(Duration::from_millis(500));
    let mut s = runtime
        .session(ws.provider(), SessionOptions::default())
        .unwrap();
    ok(call(&mut s, "read", json!({"file_path": "f.txt"})));
    let holder = hold_lock(&ws.root, Duration::from_secs(3));
    let started = Instant::now();
    let text = fails(
        call(
            &mut s,
            "edit",
            json!({"file_path": "f.txt", "old_string": "old", "new_string": "new"}),
        ),
        "FS_BUSY",
    );
    assert!(text.contains("another process holds the lock"), "{text}");
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    fails(
        call(
            &mut s,
            "write",
            json!({"file_path": "g.txt", "content": "g\n"}),
        ),
        "FS_BUSY",
    );
    assert_eq!(ws.bytes("f.txt"), b"old\n");
    assert!(!ws.path("g.txt").exists());
    holder.join().unwrap();
    // The session is intact: its observation still holds.
    ok(call(
        &mut s,
        "edit",
        json!({"file_path": "f.txt", "old_string": "old", "new_string": "new"}),
    ));
    assert_eq!(ws.bytes("f.txt"), b"new\n");
}

#[test]
fn the_answer_is_true_when_the_deadline_falls_around_the_commit() {
    let ws = Workspace::new();
    let runtime = runtime_with_timeout(Duration::from_millis(300));
    let mut s = runtime
        .session(
            ws.provider(),
            SessionOptions {
                observation_policy: false,
                ..Default::default()
            },
        )
        .unwrap();
    let mut outcomes = std::collections::BTreeMap::<String, u32>::new();
    for (round, hold_ms) in (200..=400).step_by(10).enumerate() {
        let content = format!("round {round}\n");
        let holder = hold_lock(&ws.root, Duration::from_millis(hold_ms));
        let result = call(
            &mut s,
            "write",
            json!({"file_path": "f.txt", "content": content}),
        );
        holder.join().unwrap();
        let on_disk = std::fs::read(ws.path("f.txt")).unwrap_or_default();
        let changed = on_disk == content.as_bytes();
        // Success exactly when the file holds the new content.
        assert_eq!(
            !result.is_error, changed,
            "hold {hold_ms} ms: {}",
            result.text
        );
        *outcomes.entry(code(&result).to_owned()).or_default() += 1;
    }
    eprintln!("outcomes around a 300 ms deadline: {outcomes:?}");
}

/// `rounds` edits of `path`, each raced by an editor-style save (a temp
/// file renamed over it); returns how many saves the edit overwrote while
/// reporting success.
fn race_editor_saves(ws: &Workspace, path: &str, body: &str, rounds: u32) -> u32 {
    let mut s = ws.session();
    let mut lost = 0;
    for round in 0..rounds {
        let base = format!("base {round}\n{body}");
        ws.write(path, &base);
        ok(call(&mut s, "read", json!({"file_path": path, "limit": 1})));
        let (target, tmp) = (ws.path(path), ws.path(".editor-swap"));
        let theirs = format!("theirs {round}\n{body}");
        let delay = Duration::from_micros(u64::from(round % 40) * 50);
        let neighbour = std::thread::spawn(move || {
            std::thread::sleep(delay);
            std::fs::write(&tmp, theirs).unwrap();
            std::fs::rename(&tmp, &target).unwrap();
        });
        let result = call(
            &mut s,
            "edit",
            json!({"file_path": path, "old_string": format!("base {round}"), "new_string": format!("ours {round}")}),
        );
        neighbour.join().unwrap();
        let now = ws.bytes(path);
        // Our content on disk means our rename came last, after a save we
        // never read: a lost update, whatever we answered.
        if now.starts_with(format!("ours {round}\n").as_bytes()) {
            assert!(!result.is_error);
            lost += 1;
        } else {
            assert!(now.starts_with(format!("theirs {round}\n").as_bytes()));
        }
    }
    no_temp_files(ws);
    lost
}

/// Asserts that every commit, kept or put back, removed its temp name.
fn no_temp_files(ws: &Workspace) {
    let left: Vec<String> = std::fs::read_dir(&ws.root)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".dsh-fs-"))
        .collect();
    assert!(left.is_empty(), "temp files left behind: {left:?}");
}

#[test]
#[ignore = "timing: run alone (scripts/test runs it with --ignored --test-threads=1); the parallel suite's load widens the race window it measures"]
fn editor_style_saves_during_an_edit_are_not_overwritten() {
    let ws = Workspace::new();
    let small = race_editor_saves(&ws, "small.txt", "body\n", 300);
    // 12 MiB: the streamed edit, whose copy takes milliseconds.
    let large = race_editor_saves(&ws, "large.txt", &"y".repeat(12 << 20), 30);
    eprintln!("saves overwritten: {small} of 300 small edits, {large} of 30 streamed edits");
    // The saves are timed to land inside our edit. One that lands between
    // the guard's last check and the commit comes out of the exchange and
    // is put back (before the exchange: 3-9 of 300 lost here).
    assert!(
        small == 0 && large == 0,
        "lost: {small} small, {large} streamed"
    );
}

/// `rounds` edits of `path`, each raced by a neighbour that writes the
/// file in place (same inode, its first line overwritten); returns how many
/// of those writes the edit overwrote while reporting success.
fn race_in_place_writes(ws: &Workspace, path: &str, body: &str, rounds: u32) -> u32 {
    let mut s = ws.session();
    let mut lost = 0;
    for round in 0..rounds {
        ws.write(path, format!("base {round:04}\n{body}"));
        ok(call(&mut s, "read", json!({"file_path": path, "limit": 1})));
        let target = ws.path(path);
        let delay = Duration::from_micros(u64::from(round % 40) * 50);
        let neighbour = std::thread::spawn(move || {
            std::thread::sleep(delay);
            let file = std::fs::OpenOptions::new()
                .write(true)
                .open(&target)
                .unwrap();
            file.write_all_at(b"THEM", 0).unwrap();
        });
        let result = call(
            &mut s,
            "edit",
            json!({"file_path": path, "old_string": format!("base {round:04}"), "new_string": format!("ours {round:04}")}),
        );
        neighbour.join().unwrap();
        let now = ws.bytes(path);
        // The neighbour wrote whichever file the path named when it opened
        // it: ours on disk without their bytes means we replaced their write.
        if now.starts_with(format!("ours {round:04}\n").as_bytes()) {
            assert!(!result.is_error);
            lost += 1;
        } else {
            assert!(now.starts_with(b"THEM"), "round {round}: {}", result.text);
        }
    }
    no_temp_files(ws);
    lost
}

#[test]
#[ignore = "timing: run alone (scripts/test runs it with --ignored --test-threads=1); the parallel suite's load widens the race window it measures"]
fn in_place_writes_during_an_edit_are_not_overwritten() {
    let ws = Workspace::new();
    let small = race_in_place_writes(&ws, "small.txt", "body\n", 300);
    let large = race_in_place_writes(&ws, "large.txt", &"y".repeat(12 << 20), 30);
    eprintln!(
        "in-place writes overwritten: {small} of 300 small edits, {large} of 30 streamed edits"
    );
    // What remains is a write into the old file by a neighbour that opened
    // it before the exchange and writes after the check of what came out:
    // 0-2 in 300 here (before the exchange: 3-4). A streamed edit is reached
    // the same way only by a neighbour starved for the whole edit (~20 ms):
    // a write before the commit fails the edit as stale. Traced, such a
    // neighbour opens the old file between the check and the exchange; it
    // came out at 0-2 in 30 on a loaded 2-core machine.
    assert!(
        small <= 5 && large <= 2,
        "lost: {small} small, {large} streamed"
    );
}

/// The check a streamed edit relies on once it no longer reads the file a
/// second time: the local store's commit guard, made deterministic here. A
/// neighbour writes in place (same inode) after the store opened the file
/// and copied from it; the commit must refuse and leave their bytes.
#[test]
fn an_in_place_write_between_the_copy_and_the_commit_is_stale() {
    use dsh_fs::{LocalProvider, LocalStore};
    use dsh_fs_core::store::{ByteStore, Guard, Object, Replace};
    let ws = Workspace::new();
    ws.write("f.txt", "ours\nrest\n");
    let provider = LocalProvider::new(LocalStore::new(&ws.root).unwrap());
    let target = provider.resolve("f.txt").unwrap();
    let (mut replace, current) = provider.store().replace(&target, false).unwrap();
    let mut object = current.unwrap();
    let token = object.meta().token.clone();
    replace.write(b"OURS\n").unwrap();
    replace.copy(&mut object, 5, 5).unwrap();
    // Past the timestamp granularity of filesystems without fine-grained
    // change times, so the write shows in the metadata token.
    std::thread::sleep(Duration::from_millis(10));
    let neighbour = std::fs::OpenOptions::new()
        .write(true)
        .open(ws.path("f.txt"))
        .unwrap();
    neighbour.write_all_at(b"THEM", 0).unwrap();
    assert_ne!(object.token_now().unwrap(), token, "fstat of the open file");
    let e = replace.commit(Guard::Unchanged(&token)).unwrap_err();
    assert_eq!(e.code, dsh_fs::ErrorCode::StaleVersion, "{e:?}");
    assert_eq!(ws.bytes("f.txt"), b"THEM\nrest\n");
    let names: Vec<_> = std::fs::read_dir(&ws.root)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names, ["f.txt"], "no temp file is left behind");
}

#[test]
fn a_create_racing_a_neighbour_never_replaces_its_file() {
    let ws = Workspace::new();
    let mut s = ws.session();
    for round in 0..200u32 {
        let path = format!("new-{round}.txt");
        let (target, tmp) = (ws.path(&path), ws.path(".creator"));
        let delay = Duration::from_micros(u64::from(round % 40) * 25);
        let neighbour = std::thread::spawn(move || {
            std::thread::sleep(delay);
            std::fs::write(&tmp, "theirs\n").unwrap();
            std::fs::rename(&tmp, &target).unwrap();
        });
        let result = call(
            &mut s,
            "write",
            json!({"file_path": path, "content": "ours\n"}),
        );
        neighbour.join().unwrap();
        if ws.bytes(&path) == b"ours\n" {
            panic!(
                "round {round}: our create replaced the neighbour's file ({})",
                result.text
            );
        }
    }
}

#[test]
fn an_edit_keeps_owner_group_mode_and_extended_attributes() {
    let ws = Workspace::new();
    ws.write("f.txt", "old\n");
    let path = ws.path("f.txt");
    let c_path = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    let root = unsafe { libc::geteuid() } == 0;
    if root {
        assert_eq!(unsafe { libc::chown(c_path.as_ptr(), 65534, 65534) }, 0);
    }
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o640)).unwrap();
    let set = unsafe {
        libc::setxattr(
            c_path.as_ptr(),
            c"user.dsh-test".as_ptr(),
            b"kept".as_ptr().cast(),
            4,
            0,
        )
    };
    let xattrs = set == 0;
    let before = std::fs::metadata(&path).unwrap();

    let mut s = ws.session();
    ok(call(&mut s, "read", json!({"file_path": "f.txt"})));
    ok(call(
        &mut s,
        "edit",
        json!({"file_path": "f.txt", "old_string": "old", "new_string": "new"}),
    ));
    let after = std::fs::metadata(&path).unwrap();
    assert_eq!(ws.bytes("f.txt"), b"new\n");
    assert_ne!(after.ino(), before.ino(), "replaced by rename");
    assert_eq!((after.uid(), after.gid()), (before.uid(), before.gid()));
    assert_eq!(after.mode() & 0o7777, 0o640);
    if xattrs {
        let mut value = [0u8; 16];
        let n = unsafe {
            libc::getxattr(
                c_path.as_ptr(),
                c"user.dsh-test".as_ptr(),
                value.as_mut_ptr().cast(),
                16,
            )
        };
        assert_eq!(&value[..n.max(0) as usize], b"kept");
    } else {
        eprintln!("this filesystem has no user extended attributes; checked owner and mode only");
    }
}

#[test]
fn write_protected_files_are_refused() {
    use std::os::unix::process::CommandExt;
    let ws = Workspace::new();
    ws.write("ro.txt", "keep\n");
    let path = ws.path("ro.txt");
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o444)).unwrap();
    let mut cmd = crate::cli::dsh_fs();
    cmd.args([
        "call",
        "edit",
        r#"{"file_path":"ro.txt","old_string":"keep","new_string":"lost"}"#,
    ])
    .arg("--root")
    .arg(&ws.root)
    .arg("--no-policy");
    if unsafe { libc::geteuid() } == 0 {
        // As root every file is writable: play the file's owner instead,
        // who owns the directory too (so a rename would go through).
        for dir in [ws.root.parent().unwrap(), &ws.root] {
            std::fs::set_permissions(dir, std::os::unix::fs::PermissionsExt::from_mode(0o755))
                .unwrap();
        }
        for p in [&ws.root, &path] {
            let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
            assert_eq!(unsafe { libc::chown(c.as_ptr(), 65534, 65534) }, 0);
        }
        cmd.uid(65534)
            .gid(65534)
            .env_remove("DSH_FS_CACHE_DIR")
            .env("HOME", &ws.root);
    }
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.starts_with("FS_PERMISSION_DENIED: ro.txt is write-protected"),
        "{stdout}"
    );
    assert_eq!(ws.bytes("ro.txt"), b"keep\n");
}

#[test]
fn temp_names_never_touch_user_files() {
    let ws = Workspace::new();
    ws.write("f.txt", "f\n");
    ws.write("g.txt", "g\n");
    ws.write(".f.txt.dsh-fs-tmp", "a user's file\n");
    std::fs::create_dir(ws.path(".g.txt.dsh-fs-tmp")).unwrap();
    let mut s = ws.session();
    for name in ["f.txt", "g.txt"] {
        ok(call(&mut s, "read", json!({"file_path": name})));
        ok(call(
            &mut s,
            "edit",
            json!({"file_path": name, "old_string": "\n", "new_string": "!\n"}),
        ));
        ok(call(
            &mut s,
            "write",
            json!({"file_path": name, "content": "w\n"}),
        ));
    }
    assert_eq!(ws.bytes(".f.txt.dsh-fs-tmp"), b"a user's file\n");
    assert!(ws.path(".g.txt.dsh-fs-tmp").is_dir());
    let mut names: Vec<_> = std::fs::read_dir(&ws.root)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [".f.txt.dsh-fs-tmp", ".g.txt.dsh-fs-tmp", "f.txt", "g.txt"]
    );
}

#[test]
fn control_characters_in_names_cannot_fake_output() {
    let ws = Workspace::new();
    let name = "a\nFile: fake.txt\n1: injected";
    ws.write(name, "real\n");
    let mut s = ws.session();
    let text = ok(call(&mut s, "read", json!({"file_path": name})));
    assert!(
        text.starts_with("File: a\\nFile: fake.txt\\n1: injected\n"),
        "{text}"
    );
    assert_eq!(
        text.lines().filter(|l| l.starts_with("File: ")).count(),
        1,
        "{text}"
    );
    let text = fails(
        call(
            &mut s,
            "edit",
            json!({"file_path": name, "old_string": "zzz", "new_string": "y"}),
        ),
        "FS_EDIT_NOT_FOUND",
    );
    assert!(!text.lines().any(|l| l.starts_with("File: fake")), "{text}");
}

#[test]
fn a_trailing_slash_on_a_file_is_not_a_directory() {
    let ws = Workspace::new();
    ws.write("f.txt", "f\n");
    let mut s = ws.session();
    fails(
        call(&mut s, "read", json!({"file_path": "f.txt/"})),
        "FS_NOT_DIRECTORY",
    );
    ok(call(&mut s, "read", json!({"file_path": "f.txt"})));
    fails(
        call(
            &mut s,
            "edit",
            json!({"file_path": "f.txt/", "old_string": "f", "new_string": "g"}),
        ),
        "FS_NOT_DIRECTORY",
    );
    fails(
        call(
            &mut s,
            "write",
            json!({"file_path": "f.txt/", "content": "g\n"}),
        ),
        "FS_NOT_DIRECTORY",
    );
    fails(
        call(
            &mut s,
            "write",
            json!({"file_path": "new/", "content": "n\n"}),
        ),
        "FS_INVALID_INPUT",
    );
    assert_eq!(ws.bytes("f.txt"), b"f\n");
    assert!(!ws.path("new").exists());
}

/// The workspace's provider with its streams made by `stream`: a
/// neighbour that acts when a stream opens, or a provider that lies.
struct Meddler<F> {
    inner: Arc<DynProvider>,
    stream: F,
}

impl<F> std::fmt::Debug for Meddler<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Meddler").finish_non_exhaustive()
    }
}

impl<F> Provider for Meddler<F>
where
    F: Fn(&DynProvider, &Target, u64) -> Result<BoxStream, FsError>,
{
    type Target = Target;
    type Stream = BoxStream;
    type Listing = BoxListing;

    fn resolve(&self, path: &str) -> Result<Target, FsError> {
        self.inner.resolve(path)
    }
    fn stat(&self, target: &Target) -> Result<Option<FsInfo>, FsError> {
        self.inner.stat(target)
    }
    fn read_text(&self, target: &Target, max_bytes: u64) -> Result<TextContent, FsError> {
        self.inner.read_text(target, max_bytes)
    }
    fn stream_text(&self, target: &Target, start: u64) -> Result<dsh_fs::BoxStream, FsError> {
        (self.stream)(&*self.inner, target, start)
    }
    fn write_text(
        &self,
        target: &Target,
        content: &str,
        intent: Option<WriteIntent>,
    ) -> Result<WriteOutcome, FsError> {
        self.inner.write_text(target, content, intent)
    }
    fn edit_text(
        &self,
        target: &Target,
        edit: &EditRequest,
        expected: Option<&str>,
    ) -> Result<EditOutcome, FsError> {
        self.inner.edit_text(target, edit, expected)
    }
    fn edit_texts(
        &self,
        target: &Target,
        edits: &[EditRequest],
        expected: Option<&str>,
    ) -> Result<EditOutcome, dsh_fs::EditsError> {
        self.inner.edit_texts(target, edits, expected)
    }
    fn remove_file(&self, target: &Target, expected: &str) -> Result<(), FsError> {
        self.inner.remove_file(target, expected)
    }
    fn list_dir(&self, target: &Target) -> Result<dsh_fs::BoxListing, FsError> {
        self.inner.list_dir(target)
    }
}

/// 12 MiB of lines that each name their own number, `width` bytes long.
fn self_numbered(tag: &str, width: usize) -> String {
    let mut text = String::new();
    let mut n = 1;
    while text.len() < 12 << 20 {
        let line = format!("{tag} {n:08} ");
        text.push_str(&format!("{line:.<width$}\n"));
        n += 1;
    }
    text
}

#[test]
fn a_swap_between_stat_and_open_never_mislabels_a_page() {
    let ws = Workspace::new();
    ws.write("large.txt", self_numbered("A", 40));
    ws.write("other.txt", self_numbered("B", 70));
    // A neighbour that swaps `large.txt` for another file (rename over it)
    // at the worst moment for a paged read: after the stat that matched the
    // line index, before the stream opens the file.
    let armed = Arc::new(AtomicBool::new(false));
    let (root, swap) = (ws.root.clone(), armed.clone());
    let provider = Arc::new(Meddler {
        inner: ws.provider(),
        stream: move |inner: &DynProvider, target: &Target, start: u64| {
            if start > 0 && swap.swap(false, Ordering::SeqCst) {
                std::fs::rename(root.join("other.txt"), root.join("large.txt")).unwrap();
            }
            inner.stream_text(target, start)
        },
    });
    let mut s = runtime()
        .session(provider.clone(), SessionOptions::default())
        .unwrap();
    // The first read scans the file and indexes it; the second pages from
    // the index while the neighbour swaps the file under it.
    ok(call(
        &mut s,
        "read",
        json!({"file_path": "large.txt", "limit": 1}),
    ));
    armed.store(true, Ordering::SeqCst);
    let page = ok(call(
        &mut s,
        "read",
        json!({"file_path": "large.txt", "offset": 150000, "limit": 3}),
    ));
    assert!(!armed.load(Ordering::SeqCst), "the swap never ran");
    let shown: Vec<&str> = page.lines().filter(|l| l.contains(": B ")).collect();
    assert_eq!(shown.len(), 3, "{page}");
    for line in shown {
        let (label, rest) = line.split_once(": B ").unwrap();
        assert_eq!(
            label.trim().parse::<u64>().unwrap(),
            rest[..8].parse::<u64>().unwrap(),
            "{page}"
        );
    }
}

/// A stream that says it passed over one line more than it was asked to.
struct Overcounting(BoxStream);

impl TextStream for Overcounting {
    fn next_chunk(&mut self, max_bytes: u32) -> Result<Option<String>, FsError> {
        self.0.next_chunk(max_bytes)
    }
    fn skip(&mut self, max_bytes: u32, max_lines: u64) -> Result<Option<Skipped>, FsError> {
        let skipped = self.0.skip(max_bytes, max_lines)?;
        Ok(skipped.map(|s| Skipped {
            lines: max_lines.saturating_add(1),
            ..s
        }))
    }
    fn version(&self) -> Option<String> {
        self.0.version()
    }
}

#[test]
fn a_provider_that_skips_more_lines_than_asked_is_not_believed() {
    let ws = Workspace::new();
    ws.write("large.txt", self_numbered("A", 40));
    let provider = Arc::new(Meddler {
        inner: ws.provider(),
        stream: |inner: &DynProvider, target: &Target, start: u64| {
            let honest = inner.stream_text(target, start)?;
            Ok(Box::new(Overcounting(honest)) as BoxStream)
        },
    });
    let mut s = runtime()
        .session(provider, SessionOptions::default())
        .unwrap();
    let text = fails(
        call(
            &mut s,
            "read",
            json!({"file_path": "large.txt", "offset": 150000, "limit": 3}),
        ),
        "FS_IO_ERROR",
    );
    assert!(text.contains("the provider skipped"), "{text}");
    assert!(
        !text.contains(": A "),
        "no line is shown under a wrong number: {text}"
    );
    // Nothing was observed: the file cannot be edited on the strength of it.
    fails(
        call(
            &mut s,
            "edit",
            json!({"file_path": "large.txt", "old_string": "A 00000001 ", "new_string": "B"}),
        ),
        "FS_NOT_OBSERVED",
    );
}

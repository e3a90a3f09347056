//! Calls as a plugin runtime makes them: each one a fresh session, with only
//! the state directory carrying what was read.

use super::*;
use std::fs;
use tempfile::TempDir;

struct Setup {
    root: TempDir,
    state: TempDir,
}

impl Setup {
    fn new() -> Self {
        Setup {
            root: tempfile::tempdir().unwrap(),
            state: tempfile::tempdir().unwrap(),
        }
    }

    fn settings(&self) -> Settings {
        Settings {
            root: self.root.path().into(),
            state: Some(self.state.path().into()),
            state_in_workspace: false,
            session: "default".into(),
            journal_from_first_change: false,
            journal_bytes: None,
        }
    }

    /// The settings of the component that offers undo.
    fn undo(&self) -> Settings {
        Settings {
            journal_from_first_change: true,
            ..self.settings()
        }
    }

    fn call_undo(&self, tool: &str, args: serde_json::Value) -> String {
        call(&self.undo(), tool, &args.to_string())
    }

    /// The journal's files in the state directory: (indexes, texts).
    fn journal_files(&self) -> (usize, usize) {
        let names: Vec<String> = fs::read_dir(self.state.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        let count = |p: &str| names.iter().filter(|n| n.starts_with(p)).count();
        (count("journal-"), count("jtext-"))
    }

    fn call(&self, tool: &str, args: serde_json::Value) -> String {
        call(&self.settings(), tool, &args.to_string())
    }

    fn file(&self, name: &str) -> String {
        fs::read_to_string(self.root.path().join(name)).unwrap()
    }
}

fn edit(old: &str, new: &str) -> serde_json::Value {
    serde_json::json!({"file_path": "a.txt", "old_string": old, "new_string": new})
}

#[test]
fn read_before_edit_holds_across_fresh_sessions() {
    let s = Setup::new();
    fs::write(s.root.path().join("a.txt"), "one\ntwo\n").unwrap();
    let refused = s.call("edit", edit("one", "1"));
    assert!(refused.starts_with("FS_NOT_OBSERVED: "), "{refused}");
    assert_eq!(s.file("a.txt"), "one\ntwo\n");

    let read = s.call("read", serde_json::json!({"file_path": "a.txt"}));
    assert!(read.contains("one"), "{read}");
    let edited = s.call("edit", edit("one", "1"));
    assert!(!edited.starts_with("FS_"), "{edited}");
    // Its own edit counts as seen: a second edit needs no read.
    let again = s.call("edit", edit("two", "2"));
    assert!(!again.starts_with("FS_"), "{again}");
    assert_eq!(s.file("a.txt"), "1\n2\n");

    fs::write(s.root.path().join("a.txt"), "1\n2\nthree\n").unwrap();
    let stale = s.call("edit", edit("three", "3"));
    assert!(stale.starts_with("FS_STALE_VERSION: "), "{stale}");
    assert_eq!(s.file("a.txt"), "1\n2\nthree\n");
    s.call("read", serde_json::json!({"file_path": "a.txt"}));
    let fresh = s.call("edit", edit("three", "3"));
    assert!(!fresh.starts_with("FS_"), "{fresh}");
    assert_eq!(s.file("a.txt"), "1\n2\n3\n");
}

#[test]
fn sessions_sharing_a_state_directory_stay_apart() {
    let s = Setup::new();
    fs::write(s.root.path().join("a.txt"), "one\n").unwrap();
    s.call("read", serde_json::json!({"file_path": "a.txt"}));
    let other = Settings {
        session: "other".into(),
        ..s.settings()
    };
    let refused = call(&other, "edit", &edit("one", "1").to_string());
    assert!(refused.starts_with("FS_NOT_OBSERVED: "), "{refused}");
    assert_eq!(s.file("a.txt"), "one\n");
}

#[test]
fn without_a_usable_state_directory_changes_are_refused_with_the_fix() {
    let s = Setup::new();
    fs::write(s.root.path().join("a.txt"), "one\n").unwrap();
    let read = serde_json::json!({"file_path": "a.txt"}).to_string();
    let cases = [
        (None, false, "DSH_FS_STATE names none"),
        (Some("state".into()), false, "is not absolute"),
        (
            Some(s.root.path().join("state")),
            false,
            "inside the workspace",
        ),
        (
            Some(s.state.path().join("missing")),
            false,
            "not a directory granted",
        ),
    ];
    for (state, inside, why) in cases {
        let settings = Settings {
            state,
            state_in_workspace: inside,
            ..s.settings()
        };
        for tool in ["read", "write", "edit"] {
            let text = call(&settings, tool, &read);
            assert!(text.starts_with("FS_IO_ERROR: "), "{text}");
            assert!(
                text.contains(why) && text.contains("DSH_FS_STATE=/state"),
                "{text}"
            );
        }
    }
    assert_eq!(s.file("a.txt"), "one\n");
    // Discovery needs no state.
    let settings = Settings {
        state: None,
        ..s.settings()
    };
    let found = call(&settings, "glob", r#"{"pattern": "*.txt"}"#);
    assert!(found.contains("a.txt"), "{found}");
}

#[test]
fn a_state_directory_inside_the_workspace_serves_when_asked_for() {
    let s = Setup::new();
    fs::create_dir(s.root.path().join(".state")).unwrap();
    fs::write(s.root.path().join("a.txt"), "one\n").unwrap();
    let settings = Settings {
        state: Some(s.root.path().join(".state")),
        state_in_workspace: true,
        ..s.settings()
    };
    call(&settings, "read", r#"{"file_path": "a.txt"}"#);
    let edited = call(&settings, "edit", &edit("one", "1").to_string());
    assert!(!edited.starts_with("FS_"), "{edited}");
}

#[test]
fn a_state_write_that_fails_is_said_and_asks_for_a_read_next_time() {
    let s = Setup::new();
    fs::write(s.root.path().join("a.txt"), "one\n").unwrap();
    let state = s.state.path().join("ro");
    fs::create_dir(&state).unwrap();
    let mut perms = fs::metadata(&state).unwrap().permissions();
    perms.set_readonly(true);
    fs::set_permissions(&state, perms).unwrap();
    if fs::write(state.join("probe"), "").is_ok() {
        return; // root ignores the mode: nothing to refuse
    }
    let settings = Settings {
        state: Some(state),
        ..s.settings()
    };
    let read = call(&settings, "read", r#"{"file_path": "a.txt"}"#);
    assert!(
        read.contains("could not record it in the state directory"),
        "{read}"
    );
    let refused = call(&settings, "edit", &edit("one", "1").to_string());
    assert!(refused.starts_with("FS_NOT_OBSERVED: "), "{refused}");
}

#[test]
fn unknown_tools_and_bad_arguments_answer_as_the_session_does() {
    let s = Setup::new();
    assert!(
        s.call("delete", serde_json::json!({}))
            .starts_with("UNKNOWN_TOOL: ")
    );
    let bad = s.call("read", serde_json::json!({"file_path": 3}));
    assert!(bad.starts_with("INVALID_ARGS: "), "{bad}");
}

#[test]
fn the_journal_outlives_every_call_and_starts_at_the_first_change() {
    let s = Setup::new();
    fs::write(s.root.path().join("a.txt"), "one\r\ntwo\r\n").unwrap();
    // The lean component keeps nothing until a checkpoint.
    s.call("read", serde_json::json!({"file_path": "a.txt"}));
    assert_eq!(s.journal_files(), (0, 0));
    let none = s.call_undo("revert", serde_json::json!({}));
    assert!(none.starts_with("INVALID_ARGS: "), "{none}");

    let edited = s.call_undo("edit", edit("one", "1"));
    assert!(!edited.starts_with("FS_"), "{edited}");
    assert_eq!(s.journal_files(), (1, 1));
    let mark = s.call_undo("checkpoint", serde_json::json!({"label": "mid"}));
    assert!(
        mark.starts_with("Checkpoint 2 (mid) set after 1 change."),
        "{mark}"
    );
    let multi = s.call_undo(
        "multi_edit",
        serde_json::json!({"file_path": "a.txt", "edits": [
            {"old_string": "1", "new_string": "uno"},
            {"old_string": "two", "new_string": "dos"},
        ]}),
    );
    assert!(multi.starts_with("Edited a.txt: 2 edits"), "{multi}");
    let listed = s.call_undo("changes", serde_json::json!({}));
    assert!(
        listed.contains("Updated a.txt: 2 lines added, 2 removed."),
        "{listed}"
    );
    let back = s.call_undo("revert", serde_json::json!({"to": 1}));
    assert!(
        back.starts_with("Reverted to checkpoint 1 (session start): 1 file restored"),
        "{back}"
    );
    assert_eq!(s.file("a.txt"), "one\r\ntwo\r\n");
    let redo = s.call_undo("revert", serde_json::json!({"to": 3}));
    assert!(redo.contains("Restored a.txt"), "{redo}");
    assert_eq!(s.file("a.txt"), "uno\r\ndos\r\n");
    // Each kept text once, by its bytes: the three versions a.txt had.
    assert_eq!(s.journal_files(), (1, 3));
    // Another session over the same state directory has no journal.
    let other = Settings {
        session: "other".into(),
        ..s.undo()
    };
    let theirs = call(&other, "changes", "{}");
    assert!(theirs.contains("no checkpoint yet"), "{theirs}");
}

#[test]
fn a_lost_or_damaged_old_text_is_not_undoable_and_nothing_is_touched() {
    let s = Setup::new();
    fs::write(s.root.path().join("a.txt"), "one\n").unwrap();
    fs::write(s.root.path().join("b.txt"), "bee\n").unwrap();
    s.call_undo("read", serde_json::json!({"file_path": "a.txt"}));
    s.call_undo("read", serde_json::json!({"file_path": "b.txt"}));
    s.call_undo("edit", edit("one", "1"));
    s.call_undo(
        "edit",
        serde_json::json!({"file_path": "b.txt", "old_string": "bee", "new_string": "B"}),
    );
    // One text damaged in place, the other removed.
    let texts: Vec<_> = fs::read_dir(s.state.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .starts_with("jtext-")
        })
        .collect();
    assert_eq!(texts.len(), 2);
    for path in &texts {
        match fs::read_to_string(path).unwrap().as_str() {
            "one\n" => fs::write(path, "onf\n").unwrap(),
            _ => fs::remove_file(path).unwrap(),
        }
    }
    let out = s.call_undo("revert", serde_json::json!({"to": 1}));
    assert!(
        out.starts_with(
            "Reverted to checkpoint 1 (session start): 0 files restored, 2 left alone."
        ),
        "{out}"
    );
    assert_eq!(
        out.matches("not undoable: its old text is missing or damaged")
            .count(),
        2,
        "{out}"
    );
    assert_eq!(s.file("a.txt"), "1\n");
    assert_eq!(s.file("b.txt"), "B\n");
}

#[test]
fn a_damaged_index_reads_as_no_journal_and_a_checkpoint_starts_anew() {
    let s = Setup::new();
    fs::write(s.root.path().join("a.txt"), "one\n").unwrap();
    s.call_undo("read", serde_json::json!({"file_path": "a.txt"}));
    s.call_undo("edit", edit("one", "1"));
    let index = fs::read_dir(s.state.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "idx"))
        .unwrap();
    let whole = fs::read(&index).unwrap();
    fs::write(&index, &whole[..whole.len() - 2]).unwrap();
    let none = s.call_undo("changes", serde_json::json!({}));
    assert!(none.contains("no checkpoint yet"), "{none}");
    let mark = s.call_undo("checkpoint", serde_json::json!({}));
    assert!(
        mark.starts_with("Checkpoint 1 set after 0 changes."),
        "{mark}"
    );
    assert_eq!(s.file("a.txt"), "1\n");
}

#[test]
fn the_runtime_sets_the_journals_budget() {
    let s = Setup::new();
    fs::write(s.root.path().join("a.txt"), "one\n").unwrap();
    let with = |bytes: &str| Settings {
        journal_bytes: Some(bytes.into()),
        ..s.undo()
    };
    let off = call(&with("0"), "checkpoint", "{}");
    assert!(off.contains("its host turned it off"), "{off}");
    let bad = call(&with("lots"), "checkpoint", "{}");
    assert!(
        bad.starts_with("INVALID_ARGS: DSH_FS_JOURNAL_BYTES=\"lots\" is not a whole number"),
        "{bad}"
    );
    assert_eq!(s.journal_files(), (0, 0));
    // Two bytes: the edit's old text is not kept, and revert says so.
    call(&with("2"), "read", r#"{"file_path": "a.txt"}"#);
    call(&with("2"), "edit", &edit("one", "1").to_string());
    let back = call(&with("2"), "revert", "{}");
    assert!(
        back.contains(
            "Left alone a.txt: not undoable: it was larger than the journal's whole budget"
        ),
        "{back}"
    );
    assert_eq!(s.file("a.txt"), "1\n");
}

/// A tmpfs of `size` mounted on a fresh directory, unmounted when dropped.
struct Tmpfs(TempDir);

impl Tmpfs {
    /// `None`, saying why, where mounting is not permitted (not root).
    fn mount(size: &str) -> Option<Tmpfs> {
        let dir = tempfile::tempdir().unwrap();
        let out = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .output();
        match out {
            Ok(out) if out.status.success() => Some(Tmpfs(dir)),
            Ok(out) => {
                println!(
                    "skipped: mount -t tmpfs failed: {}",
                    String::from_utf8_lossy(&out.stderr).trim()
                );
                None
            }
            Err(e) => {
                println!("skipped: mount cannot be run: {e}");
                None
            }
        }
    }

    /// Fills what is left; the filler's path.
    fn fill(&self) -> std::path::PathBuf {
        use std::io::Write;
        let path = self.0.path().join("filler");
        let mut file = fs::File::create(&path).unwrap();
        while file.write_all(&[0; 4096]).is_ok() {}
        path
    }

    /// Every name in it that is a writer's file or a lock left behind.
    fn leftovers(&self) -> Vec<String> {
        fs::read_dir(self.0.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| n.ends_with(".tmp") || n.starts_with("lock-"))
            .collect()
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg(self.0.path())
            .status();
    }
}

/// A state directory of 1 MiB and a 2 MiB file: the journal cannot keep
/// its old text, and nothing it wrote stays; a directory filled to the
/// last byte is said to be the reason edits are refused, leaves nothing
/// behind either, and works again once freed.
#[test]
fn a_full_state_directory_leaves_nothing_behind_and_works_again_once_freed() {
    let Some(tmpfs) = Tmpfs::mount("1m") else {
        return;
    };
    let s = Setup::new();
    let undo = Settings {
        state: Some(tmpfs.0.path().into()),
        ..s.undo()
    };
    let run = |tool: &str, args: serde_json::Value| call(&undo, tool, &args.to_string());
    let big: String = (0..200_000).map(|i| format!("line {i}\n")).collect();
    assert!(big.len() > 2 << 20);
    fs::write(s.root.path().join("a.txt"), &big).unwrap();
    fs::write(s.root.path().join("b.txt"), "bee\n").unwrap();
    let read_a = serde_json::json!({"file_path": "a.txt", "limit": 1});
    assert!(!run("read", read_a.clone()).contains("(Note:"));
    let edited = run("edit", edit("line 0\n", "first\n"));
    assert!(edited.starts_with("Edited a.txt"), "{edited}");
    assert_eq!(tmpfs.leftovers(), Vec::<String>::new());
    // Reads are recorded again, and the next edit needs none.
    let read = run("read", read_a);
    assert!(!read.contains("(Note:"), "{read}");
    let again = run("edit", edit("first\n", "1st\n"));
    assert!(again.starts_with("Edited a.txt"), "{again}");
    assert!(s.file("a.txt").starts_with("1st\nline 1\n"));

    let filler = tmpfs.fill();
    let read_b = serde_json::json!({"file_path": "b.txt"});
    let read = run("read", read_b.clone());
    assert!(read.contains("bee"), "{read}");
    assert!(
        read.contains("could not record it in the state directory"),
        "{read}"
    );
    let edit_b = serde_json::json!({"file_path": "b.txt", "old_string": "bee", "new_string": "B"});
    let refused = run("edit", edit_b.clone());
    assert!(refused.starts_with("FS_NOT_OBSERVED: "), "{refused}");
    assert!(
        refused.contains("cannot write in the state directory"),
        "{refused}"
    );
    assert_eq!(s.file("b.txt"), "bee\n");
    assert_eq!(tmpfs.leftovers(), Vec::<String>::new());

    fs::remove_file(filler).unwrap();
    let read = run("read", read_b);
    assert!(!read.contains("(Note:"), "{read}");
    let edited = run("edit", edit_b);
    assert!(edited.starts_with("Edited b.txt"), "{edited}");
    assert_eq!(s.file("b.txt"), "B\n");
    assert_eq!(tmpfs.leftovers(), Vec::<String>::new());
}

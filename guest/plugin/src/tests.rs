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
        }
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

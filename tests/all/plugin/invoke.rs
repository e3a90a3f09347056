//! One scenario through `wasmtime run --invoke`, a process per call, against
//! the same scenario in one in-process session: the same texts, call by call.

use super::{Grants, as_result};
use crate::Workspace;
use serde_json::{Value, json};

/// A step of the scenario: a call, or a change made behind the agent's back.
enum Step {
    Call(&'static str, Value),
    Outside(&'static str, &'static str),
}

fn scenario() -> Vec<Step> {
    use Step::*;
    let edit =
        |old: &str, new: &str| json!({"file_path": "a.txt", "old_string": old, "new_string": new});
    vec![
        Call("edit", edit("one", "1")),
        Call("read", json!({"file_path": "a.txt"})),
        Call("edit", edit("one", "1")),
        Outside("a.txt", "1\ntwo\nthree\n"),
        Call("edit", edit("two", "2")),
        Call(
            "read",
            json!({"file_path": "a.txt", "offset": 2, "limit": 1}),
        ),
        Call("edit", edit("two", "2")),
        Call(
            "edit",
            json!({"file_path": "a.txt", "old_string": "e", "new_string": "E", "replace_all": true}),
        ),
        Call(
            "write",
            json!({"file_path": "a.txt", "content": "replaced\n"}),
        ),
        Call(
            "write",
            json!({"file_path": "new/b.txt", "content": "bee\n"}),
        ),
        Call(
            "write",
            json!({"file_path": "new/b.txt", "content": "bee again\n"}),
        ),
        Call("read", json!({"file_path": "../outside/secret.txt"})),
        Call("read", json!({"file_path": "missing.txt"})),
        Call("glob", json!({"pattern": "**/*.txt"})),
        Call("grep", json!({"pattern": "bee|repl", "include": "*.txt"})),
        Call("read", json!({"file_path": "a.txt", "limit": 0})),
    ]
}

#[test]
fn every_call_in_a_fresh_process_answers_as_one_session_does() {
    let (library, plugin) = (Workspace::new(), Workspace::new());
    let state = tempfile::tempdir().unwrap();
    for ws in [&library, &plugin] {
        ws.write("a.txt", "one\ntwo\n");
    }
    let grants = Grants {
        root: &plugin.root,
        state: Some(state.path()),
        session: "default",
    };
    let mut session = library.session();
    let mut codes = Vec::new();
    for step in scenario() {
        match step {
            Step::Outside(file, text) => {
                library.write(file, text);
                plugin.write(file, text);
            }
            Step::Call(tool, args) => {
                let expected = crate::call(&mut session, tool, args.clone());
                let got = grants.call(tool, &args);
                assert_eq!(got, expected.text, "{tool} {args}");
                codes.push(crate::code(&expected).to_owned());
                assert_eq!(
                    Workspace::snapshot(&plugin.root),
                    Workspace::snapshot(&library.root)
                        .into_iter()
                        .map(|(p, b)| (plugin.root.join(p.strip_prefix(&library.root).unwrap()), b))
                        .collect::<Vec<_>>(),
                    "after {tool} {args}"
                );
            }
        }
    }
    // The scenario meets the policy's refusals and its successes.
    let expected = [
        "FS_NOT_OBSERVED",
        "OK",
        "OK",
        "FS_STALE_VERSION",
        "OK",
        "OK",
        "OK",
        "OK",
        "OK",
        "OK",
        "FS_SANDBOX_DENIED",
        "FS_NOT_FOUND",
        "OK",
        "OK",
        "INVALID_ARGS",
    ];
    assert_eq!(codes, expected);
}

#[test]
fn the_policy_holds_across_two_invocations_sharing_a_state_directory() {
    let ws = Workspace::new();
    ws.write("a.txt", "one\n");
    let state = tempfile::tempdir().unwrap();
    let grants = Grants {
        root: &ws.root,
        state: Some(state.path()),
        session: "default",
    };
    let edit = json!({"file_path": "a.txt", "old_string": "one", "new_string": "1"});
    let read = grants.call("read", &json!({"file_path": "a.txt"}));
    assert_eq!(read, "File: a.txt\n1: one\n(End of file: 1 line.)");
    let edited = grants.call("edit", &edit);
    assert!(edited.starts_with("Edited a.txt"), "{edited}");
    assert_eq!(ws.bytes("a.txt"), b"1\n");

    // Another state directory knows nothing.
    let fresh = tempfile::tempdir().unwrap();
    let elsewhere = Grants {
        state: Some(fresh.path()),
        ..grants
    };
    let edit = json!({"file_path": "a.txt", "old_string": "1", "new_string": "one"});
    assert!(
        elsewhere
            .call("edit", &edit)
            .starts_with("FS_NOT_OBSERVED: ")
    );
    assert_eq!(ws.bytes("a.txt"), b"1\n");
}

#[test]
fn without_a_state_directory_a_change_names_the_fix() {
    let ws = Workspace::new();
    ws.write("a.txt", "one\n");
    let grants = Grants {
        root: &ws.root,
        state: None,
        session: "default",
    };
    let read = grants.call("read", &json!({"file_path": "a.txt"}));
    assert_eq!(
        read,
        "FS_IO_ERROR: read needs a state directory, where dsh-fs keeps what was read and \
         changed between calls, and DSH_FS_STATE names none: grant a directory outside the workspace and name \
         it in DSH_FS_STATE (wasmtime run: --dir HOST_DIR::/state --env DSH_FS_STATE=/state; \
         wassette: its policy file, as the one shipped beside the component does)."
    );
    let found = grants.call("glob", &json!({"pattern": "*.txt"}));
    assert!(found.contains("a.txt"), "{found}");
}

/// The journal scenario of `tests/all/undo.rs` through the
/// `fs-plugin-undo` component: a `wasmtime run --invoke` process per call,
/// the journal carried between them by the state directory alone.
#[test]
fn the_journal_scenario_runs_with_a_fresh_process_per_call() {
    let ws = Workspace::new();
    let state = tempfile::tempdir().unwrap();
    let grants = Grants {
        root: &ws.root,
        state: Some(state.path()),
        session: "default",
    };
    crate::undo::scenario(&ws, &mut |tool, args| {
        as_result(grants.call_undo(tool, &args))
    });
}

/// `multi-edit` takes its edits as a list of records and answers as the
/// library's `multi_edit` does: a miss in edit 2 of 3 leaves the file as it
/// was; the undo component's journal starts at its first change.
#[test]
fn multi_edit_through_the_undo_component_answers_as_the_library_does() {
    let (library, plugin) = (Workspace::new(), Workspace::new());
    let state = tempfile::tempdir().unwrap();
    let text = "fn main() {\r\n    let total = 1;\r\n    println!(\"{total}\");\r\n}\r\n";
    for ws in [&library, &plugin] {
        ws.write("main.rs", text);
    }
    let grants = Grants {
        root: &plugin.root,
        state: Some(state.path()),
        session: "default",
    };
    let mut session = library.session();
    let edits = |second: &str| {
        json!({"file_path": "main.rs", "edits": [
            {"old_string": "total", "new_string": "sum", "replace_all": true},
            {"old_string": second, "new_string": "let sum = 2;"},
            {"old_string": "fn main", "new_string": "pub fn main"},
        ]})
    };
    let steps = [
        ("read", json!({"file_path": "main.rs"})),
        ("multi_edit", edits("let total = 1;")),
        ("multi_edit", edits("let sum = 1;")),
    ];
    let mut answers = Vec::new();
    for (tool, args) in steps {
        let expected = crate::call(&mut session, tool, args.clone());
        let got = grants.call_undo(tool, &args);
        assert_eq!(got, expected.text, "{tool} {args}");
        answers.push(got);
    }
    assert!(
        answers[1].starts_with("FS_EDIT_NOT_FOUND: edit 2 of 3: old_string was not found"),
        "{}",
        answers[1]
    );
    assert!(
        answers[2].starts_with("Edited main.rs: 3 edits"),
        "{}",
        answers[2]
    );
    assert_eq!(plugin.bytes("main.rs"), library.bytes("main.rs"));
    let back = grants.call_undo("revert", &json!({}));
    assert!(
        back.starts_with("Reverted to checkpoint 1 (session start): 1 file restored"),
        "{back}"
    );
    assert_eq!(plugin.bytes("main.rs"), text.as_bytes());
}

#[test]
fn the_plugins_import_only_wasi_and_carry_the_tools_descriptions() {
    let lean = super::component().to_path_buf();
    let undo = lean.with_file_name("dsh_fs_plugin_undo.wasm");
    let five = crate::runtime().definitions().unwrap();
    assert_eq!(five.len(), 5);
    let mut nine = five.clone();
    nine.extend(crate::runtime().extra_definitions().unwrap());
    for (wasm, definitions) in [(lean, five), (undo, nine)] {
        let wasm = std::fs::read(wasm).unwrap();
        let imports = crate::wasmtime_cli::top_level_imports(&wasm);
        assert!(
            imports
                .iter()
                .any(|i| i.starts_with("wasi:filesystem/preopens@")),
            "{imports:?}"
        );
        let foreign: Vec<_> = imports.iter().filter(|i| !i.starts_with("wasi:")).collect();
        assert!(foreign.is_empty(), "imports beyond WASI: {foreign:?}");
        // The package-docs section wassette reads: each function's
        // description is the tool's own.
        let docs = wasmparser::Parser::new(0)
            .parse_all(&wasm)
            .find_map(|p| match p.unwrap() {
                wasmparser::Payload::CustomSection(c) if c.name() == "package-docs" => {
                    Some(c.data().to_vec())
                }
                _ => None,
            })
            .expect("a package-docs section");
        let docs: serde_json::Value = serde_json::from_slice(&docs[1..]).unwrap();
        let exports = docs["worlds"]["root"]["func_exports"].as_object().unwrap();
        assert_eq!(exports.len(), definitions.len());
        for d in definitions {
            let name = d.name.replace('_', "-");
            assert_eq!(exports[&name]["docs"], d.description, "{name}");
        }
    }
}

//! Same texts on every host: a representative part of the mistakes corpus
//! (miss diagnoses, pasted prefixes and markers, long and misspelt
//! old_strings, path spellings, glob and grep misuse, destructive writes, a
//! missing file, an offset past the end, an identical write, an update's
//! diff) as one session's calls, recorded
//! from the native host in `tests/fixtures/mistakes/hosts.json`. The stock
//! `wasmtime` CLI (`wasmtime_cli.rs`) and the JS host (`host/js/test`) replay
//! the same file and must answer with the same texts.
//!
//! `DSH_FS_BLESS=1` rewrites the file from the native host.

use crate::mistakes::{CASES, fixture};
use crate::{Workspace, call};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The cases replayed on every host, by name.
const SUBSET: &[&str] = &[
    "rust: tabs where the file has spaces",
    "rust: read's prefixes on every line",
    "rust: read's prefix on the first line only",
    "rust: the edit was already applied",
    "rust: \\n written as two characters",
    "rust: nothing like it in the file",
    "rust: a placeholder comment for the lines in between",
    "rust: old_string in a markdown fence",
    "python: quotes swapped",
    "markdown: straight quotes and -- for typographic ones",
    "crlf: indentation in a CRLF file",
    "order: an edit of a file that does not exist",
    "paths: `\\` separators",
    "paths: the wrong case",
    "paths: a file:// URI",
    "paths: a trailing space",
    "glob: a regular expression for a glob",
    "glob: the wrong case",
    "grep: a glob for a regex",
    "write: a placeholder for the rest of the file",
    "write: a twin of a name in another case",
    "long: one slip far down a whole-file old_string",
    "artefacts: read's cut marker of a long line",
    "spelt: replace_all of a misspelt word",
    "args: read's prefixes pasted into new_string",
    "args: read's output pasted as content",
    "args: new_string left out",
    "args: an offset past the end",
];

/// One session's calls with what they answered.
#[derive(Debug, PartialEq, Serialize, Deserialize)]
pub struct Script {
    /// The workspace before the first call: path → text.
    pub files: BTreeMap<String, String>,
    pub calls: Vec<Step>,
}

#[derive(Debug, PartialEq, Serialize, Deserialize)]
pub struct Step {
    pub tool: String,
    pub arguments: Value,
    pub is_error: bool,
    pub text: String,
}

fn golden_path() -> PathBuf {
    crate::workspace().join("tests/fixtures/mistakes/hosts.json")
}

/// The recorded script.
pub fn golden() -> Script {
    let text = std::fs::read_to_string(golden_path()).expect("tests/fixtures/mistakes/hosts.json");
    serde_json::from_str(&text).unwrap()
}

/// The calls of the script, without their answers.
fn calls() -> (BTreeMap<String, String>, Vec<(String, Value)>) {
    let mut files = BTreeMap::new();
    let mut calls = Vec::new();
    for name in SUBSET {
        let case = CASES
            .iter()
            .find(|c| c.name == *name)
            .unwrap_or_else(|| panic!("no case {name:?}"));
        let text = String::from_utf8(fixture(case.file)).unwrap();
        files.insert(case.file.to_owned(), text);
        if case.read {
            calls.push(("read".to_owned(), json!({"file_path": case.file})));
        }
        calls.push((case.tool.to_owned(), (case.args)()));
    }
    let cart = files["cart.js"].clone();
    calls.push((
        "write".to_owned(),
        json!({"file_path": "cart.js", "content": cart}),
    ));
    let updated = cart
        .replace("0.08", "0.0825")
        .replace("  clear() {", "  reset() {");
    calls.push((
        "write".to_owned(),
        json!({"file_path": "cart.js", "content": updated}),
    ));
    (files, calls)
}

/// Runs `calls` in one session of the native host over `files`.
fn run_native(files: &BTreeMap<String, String>, calls: Vec<(String, Value)>) -> Script {
    let ws = Workspace::new();
    for (path, text) in files {
        ws.write(path, text);
    }
    let mut s = ws.session();
    let calls = calls
        .into_iter()
        .map(|(tool, arguments)| {
            let r = call(&mut s, &tool, arguments.clone());
            Step {
                tool,
                arguments,
                is_error: r.is_error,
                text: r.text,
            }
        })
        .collect();
    Script {
        files: files.clone(),
        calls,
    }
}

#[test]
fn the_native_host_gives_the_recorded_texts() {
    let (files, calls) = calls();
    let native = run_native(&files, calls);
    if std::env::var_os("DSH_FS_BLESS").is_some() {
        let text = serde_json::to_string_pretty(&native).unwrap() + "\n";
        std::fs::write(golden_path(), text).unwrap();
        return;
    }
    let golden = golden();
    assert_eq!(
        golden.files, native.files,
        "DSH_FS_BLESS=1 records the corpus again"
    );
    for (want, got) in golden.calls.iter().zip(&native.calls) {
        assert_eq!(want, got);
    }
    assert_eq!(golden.calls.len(), native.calls.len());
    let errors = native.calls.iter().filter(|c| c.is_error).count();
    let failing = SUBSET
        .iter()
        .filter(|name| CASES.iter().any(|c| c.name == **name && c.code != "OK"))
        .count();
    assert_eq!(
        errors, failing,
        "every case but glob's answers with an error"
    );
}

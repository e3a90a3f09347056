//! The `dsh-fs` binary as a user runs it.

use crate::Workspace;
use std::process::Command;

pub fn dsh_fs() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_dsh-fs"));
    cmd.env("DSH_FS_CACHE_DIR", crate::cache_dir());
    cmd
}

/// Runs `dsh-fs ARGS`, returning stdout and the process's peak RSS in KiB
/// (as it reports it with `DSH_FS_STATS`).
pub fn run_measured(args: &[&str]) -> (String, u64) {
    let out = dsh_fs()
        .args(args)
        .env("DSH_FS_STATS", "1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "dsh-fs {args:?} failed: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    let stderr = String::from_utf8(out.stderr).unwrap();
    let peak = stderr
        .split_once("peak_rss_kib=")
        .and_then(|(_, v)| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no peak RSS in {stderr:?}"));
    (String::from_utf8(out.stdout).unwrap(), peak)
}

#[test]
fn call_runs_one_tool_and_sets_the_exit_code() {
    let ws = Workspace::new();
    ws.write("notes.md", "# Notes\nfirst\n");
    let root = ws.root.to_str().unwrap();
    let out = dsh_fs()
        .args([
            "call",
            "read",
            r#"{"file_path":"notes.md"}"#,
            "--root",
            root,
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "File: notes.md\n1: # Notes\n2: first\n(End of file: 2 lines.)\n"
    );
    let out = dsh_fs()
        .args([
            "call",
            "read",
            r#"{"file_path":"notes.md","limit":1}"#,
            "--json",
            "--root",
            root,
        ])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "{\"text\":\"File: notes.md\\n1: # Notes\\n(Lines 1-1 of 2 shown. Continue with offset=2.)\",\"is_error\":false,\"error\":null}\n"
    );

    // Each `call` is its own session: an edit without a read is refused...
    let out = dsh_fs()
        .args([
            "call",
            "edit",
            r#"{"file_path":"notes.md","old_string":"first","new_string":"1st"}"#,
            "--root",
            root,
            "--json",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let result: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["is_error"], true);
    assert_eq!(result["error"]["code"], "FS_NOT_OBSERVED");
    // ...unless the policy is off.
    let out = dsh_fs()
        .args([
            "call",
            "edit",
            r#"{"file_path":"notes.md","old_string":"first","new_string":"1st"}"#,
            "--root",
            root,
            "--no-policy",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(ws.bytes("notes.md"), b"# Notes\n1st\n");

    let out = dsh_fs()
        .args(["call", "read", "{}", "--root", "/definitely/not/here"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "dsh-fs: workspace root /definitely/not/here: No such file or directory (os error 2)\n"
    );
    let e = dsh_fs::LocalStore::new("/definitely/not/here").unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::NotFound);
    assert!(e.to_string().contains("/definitely/not/here"), "{e}");
}

#[test]
fn tools_prints_the_definitions() {
    let out = dsh_fs().arg("tools").output().unwrap();
    assert!(out.status.success());
    let defs: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<_> = defs
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["read", "write", "edit", "glob", "grep"]);
    assert_eq!(defs[0]["parameters"]["required"][0], "file_path");
}

/// The README's first command: it shows the file as it starts, a write, the
/// policy at work, and leaves no scratch directory behind.
#[test]
fn demo_shows_the_original_and_a_write_and_cleans_up() {
    let tmp = tempfile::tempdir().unwrap();
    let out = dsh_fs()
        .arg("demo")
        .env("TMPDIR", tmp.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success(), "{stdout}");
    let expected_in_order = [
        "hello.py on disk:\n  \"def greet(name):\\r\\n\"",
        "> write {\"content\":\"# Notes\\n- greet everyone\\n\",\"file_path\":\"notes.md\"}\nCreated notes.md",
        "FS_NOT_OBSERVED",
        "Edited hello.py",
        "FS_STALE_VERSION",
        "FS_SANDBOX_DENIED",
        "hello.py on disk:",
        "(removed ",
    ];
    let mut rest = stdout.as_str();
    for expected in expected_in_order {
        let at = rest
            .find(expected)
            .unwrap_or_else(|| panic!("{expected:?} missing or out of order in:\n{stdout}"));
        rest = &rest[at + expected.len()..];
    }
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
}

#[test]
fn call_runs_glob_and_grep() {
    let ws = Workspace::new();
    ws.write("docs/notes.md", "# Notes\nfirst\n");
    let root = ws.root.to_str().unwrap();
    let run = |tool: &str, args: &str| {
        let out = dsh_fs()
            .args(["call", tool, args, "--root", root])
            .output()
            .unwrap();
        (out.status.code(), String::from_utf8(out.stdout).unwrap())
    };
    assert_eq!(
        run("glob", r#"{"pattern":"*.md"}"#),
        (Some(0), "docs/notes.md\n".into())
    );
    assert_eq!(
        run("grep", r#"{"pattern":"^first$","path":"docs"}"#),
        (
            Some(0),
            "Found 1 match in 1 file\n\ndocs/notes.md:\n  Line 2: first\n".into()
        )
    );
    let (status, text) = run("grep", r#"{"pattern":"x","path":"/etc"}"#);
    assert_eq!(status, Some(1));
    assert!(text.starts_with("FS_SANDBOX_DENIED: "), "{text}");
}

/// A reader that goes away early (`dsh-fs demo | head -1`) ends the demo
/// quietly, as it would any Unix tool: no panic message, no error exit, and
/// its scratch directory removed all the same.
#[test]
fn a_closed_pipe_ends_the_demo_quietly_and_cleans_up() {
    use std::io::{BufRead, Read};
    let mut child = dsh_fs()
        .arg("demo")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    let scratch = first
        .strip_prefix("workspace: ")
        .map(|p| std::path::PathBuf::from(p.trim_end()))
        .unwrap_or_else(|| panic!("first line: {first:?}"));
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    let status = child.wait().unwrap();
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(status.success(), "{status}: {stderr}");
    assert!(!scratch.exists(), "{} was left behind", scratch.display());
}

/// The README's `dsh-fs serve` snippet, run as written (in a scratch
/// directory instead of `/tmp/dsh-fs-try`, with the built binary on PATH).
#[test]
fn the_readme_serve_snippet_runs() {
    let readme = include_str!("../../README.md");
    let end = readme
        .find("  dsh-fs serve --root /tmp/dsh-fs-try\n```")
        .expect("the serve snippet is in the README");
    let start = readme[..end].rfind("```sh\n").unwrap() + "```sh\n".len();
    let snippet = &readme[start..end + "  dsh-fs serve --root /tmp/dsh-fs-try\n".len()];
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("try");
    let script = snippet.replace("/tmp/dsh-fs-try", dir.to_str().unwrap());
    let bin_dir = std::path::Path::new(env!("CARGO_BIN_EXE_dsh-fs"))
        .parent()
        .unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new("bash")
        .args(["-euo", "pipefail", "-c", &script])
        .env("PATH", path)
        .env("DSH_FS_CACHE_DIR", crate::cache_dir())
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let replies: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(replies.len(), 2, "{stdout}");
    assert!(replies.iter().all(|r| r["error"].is_null()), "{stdout}");
    assert_eq!(
        std::fs::read_to_string(dir.join("main.rs")).unwrap(),
        "fn main() {\n    println!(\"hi\");\n}\n"
    );
}

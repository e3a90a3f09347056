//! `dsh-fs-bench` at its smallest: every section runs, each of its calls
//! succeeds (the bench stops at the first that does not), and a search finds
//! what the generated tree holds. No figure is judged here.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The `dsh-fs` binary the bench runs for its process figures, built into
/// this target directory when the test run has not built it.
fn dsh_fs_beside(bench: &Path) -> PathBuf {
    let cli = bench.with_file_name("dsh-fs");
    if !cli.is_file() {
        let status = Command::new(env!("CARGO"))
            .args(["build", "-p", "dsh-fs", "--bin", "dsh-fs"])
            .status()
            .expect("running cargo");
        assert!(status.success(), "building dsh-fs failed");
    }
    cli
}

#[test]
fn every_figure_runs_at_its_smallest() {
    let bench = Path::new(env!("CARGO_BIN_EXE_dsh-fs-bench"));
    assert!(dsh_fs_beside(bench).is_file());
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let dir = tmp.join(format!("bench-smallest-{}", std::process::id()));
    let out = Command::new(bench)
        .args(["--max-mib", "1", "--reps", "1", "--calls", "20"])
        .args(["--search-files", "40", "--dir"])
        .arg(&dir)
        // The tests' compiled-component cache, not the user's.
        .env("DSH_FS_CACHE_DIR", tmp.join("dsh-fs-cache"))
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "dsh-fs-bench failed: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for figure in [
        "grep literal",
        "Found 1 match in 1 file",
        "glob **/*.rs",
        "first windowed read",
        "host paths: first windowed read",
        "library",
        // Measured where installed, else skipped with the reason.
        "(npm package, NodeStore)",
        "wheel",
        "edit of the marker line",
        "edit miss",
        "20 sequential reads of a 4 KiB file",
        "refused argument, no I/O",
        "each in turns with the library's loop",
        "serve: one at a time",
        "mcp: one at a time",
        "cold start",
    ] {
        assert!(stdout.contains(figure), "no {figure:?} in:\n{stdout}");
    }
    // Node, where measured, with its transport beside it and held to the
    // library plus that transport.
    if stdout.contains("reads 1-5 of its process") {
        for part in [
            "(Node's transport:",
            "against the library plus the transport",
        ] {
            assert!(
                stdout.contains(part),
                "Node measured without {part:?}:\n{stdout}"
            );
        }
    }
}

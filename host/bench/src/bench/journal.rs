//! The change journal under load: `changes` and `revert` over 6,000 files
//! and 40,000 changes, against the revert's writes made by hand; and the
//! peak RSS of `dsh-fs serve` through 36,500 writes at a 3,519-byte path
//! with a journal, against the same writes without one.

use super::{cli, expect_ok, median, show, timed};
use anyhow::{Context, Result};
use dsh_fs::{
    DynProvider, LocalProvider, LocalStore, MemoryStore, Runtime, SessionOptions, TextLayer,
};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

/// Files the journal figures change, and changes made to them.
const FILES: usize = 6_000;
const CHANGES: usize = 40_000;

/// Writes at one long path, the size of the attack that trapped before.
const LONG_WRITES: usize = 36_500;

pub(super) fn run(runtime: &Runtime, dir: &Path, reps: usize) -> Result<()> {
    println!("change journal: {FILES} files, {CHANGES} changes");
    let root = dir.join("journal");
    let disk = || -> Result<Arc<DynProvider>> {
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root)?;
        Ok(Arc::new(LocalProvider::new(LocalStore::new(&root)?)))
    };
    let memory = || -> Result<Arc<DynProvider>> {
        Ok(Arc::new(TextLayer::<MemoryStore>::new(
            MemoryStore::default(),
        )))
    };
    undo(runtime, reps, "local disk", &disk)?;
    undo(runtime, reps, "memory", &memory)?;

    let exe = cli()?;
    let root = dir.join("journal-long");
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root)?;
    let path = format!("{}f", "d/".repeat(1759));
    let (plain, plain_time) = serve_writes(&exe, &root, &path, false)?;
    let (journaled, journaled_time) = serve_writes(&exe, &root, &path, true)?;
    println!(
        "  {LONG_WRITES} writes at a {}-byte path through `serve`: peak RSS {} MiB with a \
         journal, {} MiB without ({:.1} s, {:.1} s)",
        path.len(),
        journaled >> 10,
        plain >> 10,
        journaled_time.as_secs_f64(),
        plain_time.as_secs_f64()
    );
    Ok(())
}

/// `changes` and `revert` after [`CHANGES`] writes of [`FILES`] files on
/// a fresh workspace from `workspace`, against the revert's writes by hand.
fn undo(
    runtime: &Runtime,
    reps: usize,
    shown: &str,
    workspace: &dyn Fn() -> Result<Arc<DynProvider>>,
) -> Result<()> {
    let (mut changes, mut revert, mut by_hand) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..reps.max(1) {
        let provider = workspace()?;
        let name = |i: usize| format!("d{}/f{i}.txt", i % 60);
        let content = |i: usize| format!("change {i}\n");
        // The revert's work by hand: one write of each file's first text.
        let mut plain = runtime.session(provider.clone(), blind())?;
        for i in 0..FILES {
            expect_ok(plain.execute("write", &write(&name(i), &content(i))))?;
        }
        by_hand.push(timed(|| {
            for i in 0..FILES {
                expect_ok(plain.execute("write", &write(&name(i), "put back\n")))?;
            }
            Ok(())
        })?);
        let mut s = runtime.session(provider, blind())?;
        expect_ok(s.execute("checkpoint", "{}"))?;
        for i in 0..CHANGES {
            expect_ok(s.execute("write", &write(&name(i % FILES), &content(i))))?;
        }
        changes.push(timed(|| expect_ok(s.execute("changes", "{}")))?);
        revert.push(timed(|| {
            let r = s.execute("revert", "{}");
            anyhow::ensure!(
                r.text
                    .starts_with(&format!("Reverted to checkpoint 1: {FILES} files restored")),
                "{}",
                &r.text[..r.text.len().min(300)]
            );
            Ok(())
        })?);
    }
    for v in [&mut changes, &mut revert, &mut by_hand] {
        v.sort();
    }
    println!(
        "  {shown:>10}: changes {}  revert {}  the revert's {FILES} writes by hand {}  revert/by \
         hand {:.2}x",
        show(&changes),
        show(&revert),
        show(&by_hand),
        median(&revert).as_secs_f64() / median(&by_hand).as_secs_f64()
    );
    Ok(())
}

/// A session without the read-before-write policy: the figures time the
/// journal, not the reads a policy would ask for.
fn blind() -> SessionOptions {
    SessionOptions {
        observation_policy: false,
        ..Default::default()
    }
}

fn write(path: &str, content: &str) -> String {
    serde_json::json!({"file_path": path, "content": content}).to_string()
}

/// [`LONG_WRITES`] writes of a 2-byte file at `path` through one
/// `dsh-fs serve`, after a checkpoint when `journal`: its peak RSS in KiB
/// (VmHWM) and the time they took.
fn serve_writes(exe: &Path, root: &Path, path: &str, journal: bool) -> Result<(u64, Duration)> {
    let mut child = Command::new(exe)
        .args(["serve", "--no-policy", "--root"])
        .arg(root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()?;
    let mut stdin = child.stdin.take().context("stdin")?;
    let mut stdout = BufReader::new(child.stdout.take().context("stdout")?);
    let mut call = |line: String| -> Result<()> {
        writeln!(stdin, "{line}")?;
        let mut reply = String::new();
        stdout.read_line(&mut reply)?;
        let reply: serde_json::Value = serde_json::from_str(&reply)?;
        anyhow::ensure!(reply["is_error"] == false, "{reply}");
        Ok(())
    };
    if journal {
        call(r#"{"tool":"checkpoint","arguments":{}}"#.to_owned())?;
    }
    let took = timed(|| {
        for i in 0..LONG_WRITES {
            let args = serde_json::json!({"file_path": path, "content": format!("{}\n", i % 10)});
            call(serde_json::json!({"tool": "write", "arguments": args}).to_string())?;
        }
        Ok(())
    })?;
    let status = std::fs::read_to_string(format!("/proc/{}/status", child.id()))?;
    let peak = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .context("no VmHWM")?;
    drop(stdin);
    child.wait()?;
    Ok((peak, took))
}

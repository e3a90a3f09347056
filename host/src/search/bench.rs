//! `dsh-fs bench` figures for discovery: glob and grep over a generated tree of
//! many small files, through the parallel fast path and the portable walk,
//! against `rg` with equivalent flags in the same run, and the peak RSS of each.

use crate::bench::{median, run_quiet, sample, show, timed};
use anyhow::{Context, Result};
use dsh_fs_search::{Budget, LocalTree};
use std::io::Write;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// The literal grep looks for: in one file of 100.
const LITERAL: &str = "needle_literal";
/// The regex grep looks for.
const REGEX: &str = r"fn \w+_handler\(\w+: u(8|16)\)";

/// Generates the tree (kept between runs), then prints the figures.
pub fn run(dir: &Path, files: usize, reps: usize) -> Result<()> {
    let tree = dir.join(format!("search-{files}"));
    generate(&tree, files).context("generating the search tree")?;
    let root = tree.as_path();
    let rg = which_rg();
    println!("glob and grep over {files} files (peak RSS: this process, reset before each)");
    let grep_flags = [
        "--no-require-git",
        "--no-ignore-parent",
        "--no-ignore-global",
        "--no-ignore-exclude",
        "--crlf",
        "-n",
    ];
    let figures: [(&str, &[&str], Search); 3] = [
        ("grep literal", &grep_flags, Search::Grep(LITERAL)),
        ("grep regex  ", &grep_flags, Search::Grep(REGEX)),
        (
            "glob **/*.rs",
            &[
                "--files",
                "--hidden",
                "--no-ignore",
                "-g",
                "**/*.rs",
                "-g",
                "!.git",
            ],
            Search::Glob("**/*.rs"),
        ),
    ];
    for (label, flags, search) in figures {
        let fast = sample(reps, || timed(|| search.fast(root)))?;
        let fast_rss = peak_rss_of(|| search.fast(root))?;
        let portable = sample(reps.min(3), || timed(|| search.portable(root)))?;
        let portable_rss = peak_rss_of(|| search.portable(root))?;
        let Some(rg) = &rg else {
            println!(
                "  {label}  fast {}  portable {}  (rg not installed)",
                show(&fast),
                show(&portable)
            );
            continue;
        };
        let baseline = sample(reps, || {
            let mut cmd = Command::new(rg);
            cmd.args(flags);
            if let Search::Grep(pattern) = search {
                cmd.arg("--").arg(pattern);
            }
            timed(|| run_quiet(cmd.arg(root)))
        })?;
        let ratio = |v: &[Duration]| median(v).as_secs_f64() / median(&baseline).as_secs_f64();
        println!(
            "  {label}  fast {} ({:.2}x rg, peak RSS {} MiB)  portable {} ({:.2}x rg, peak RSS {} MiB)  rg {}",
            show(&fast),
            ratio(&fast),
            fast_rss >> 10,
            show(&portable),
            ratio(&portable),
            portable_rss >> 10,
            show(&baseline)
        );
        println!("      found: {}", summary(search, root));
    }
    Ok(())
}

#[derive(Clone, Copy)]
enum Search<'a> {
    Grep(&'a str),
    Glob(&'a str),
}

impl Search<'_> {
    fn fast(self, root: &Path) -> Result<()> {
        let b = Budget::default();
        let out = match self {
            Search::Grep(p) => super::grep(root, "", p, None, &b),
            Search::Glob(p) => super::glob(root, "", p, &b),
        };
        checked(out, &b)
    }

    fn portable(self, root: &Path) -> Result<()> {
        let (b, tree) = (Budget::default(), LocalTree::new(root));
        let out = match self {
            Search::Grep(p) => dsh_fs_search::grep(&tree, "", p, None, &b),
            Search::Glob(p) => dsh_fs_search::glob(&tree, "", p, &b),
        };
        checked(out, &b)
    }
}

fn checked(out: Result<String, dsh_fs_core::FsError>, b: &Budget) -> Result<()> {
    let out = out.map_err(|e| anyhow::anyhow!("{e}"))?;
    anyhow::ensure!(!b.spent(), "the search ran out of budget");
    anyhow::ensure!(!out.starts_with("No "), "the search found nothing: {out}");
    Ok(())
}

/// What the fast path found, in one line: grep's header or glob's footer.
fn summary(search: Search<'_>, root: &Path) -> String {
    let b = Budget::default();
    let out = match search {
        Search::Grep(p) => super::grep(root, "", p, None, &b),
        Search::Glob(p) => super::glob(root, "", p, &b),
    };
    let out = out.unwrap_or_else(|e| e.to_string());
    let line = match search {
        Search::Grep(_) => out.lines().next(),
        Search::Glob(_) => out.lines().last(),
    };
    line.unwrap_or_default().to_owned()
}

fn which_rg() -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("rg"))
        .find(|p| p.is_file())
}

/// Peak resident set (KiB) while `f` runs: the high-water mark is reset first
/// (Linux `clear_refs`), so it is this process's RSS plus what `f` adds.
fn peak_rss_of(f: impl FnOnce() -> Result<()>) -> Result<u64> {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
    f()?;
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    Ok(status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0))
}

/// A source-like tree: 100 files per directory, two levels deep, a mix of
/// extensions, an ignored build directory and a hidden one, ~1 KiB per file.
fn generate(root: &Path, files: usize) -> Result<()> {
    let done = root.join(".generated");
    if done.exists() {
        return Ok(());
    }
    let _ = std::fs::remove_dir_all(root);
    std::fs::create_dir_all(root)?;
    std::fs::write(root.join(".gitignore"), "build/\n*.tmp\n")?;
    let exts = ["rs", "ts", "md", "json", "tmp"];
    let mut made = std::collections::HashSet::new();
    for i in 0..files {
        let top = match i % 50 {
            0 => "build".to_owned(),
            1 => ".cache".to_owned(),
            _ => format!("pkg{:03}", i / 4000),
        };
        let dir = root.join(top).join(format!("mod{:02}", (i / 100) % 40));
        if made.insert(dir.clone()) {
            std::fs::create_dir_all(&dir)?;
        }
        let path = dir.join(format!("file{i}.{}", exts[i % exts.len()]));
        let mut out = std::io::BufWriter::new(std::fs::File::create(&path)?);
        for line in 0..24 {
            match (i * 31 + line) % 97 {
                0 if i % 100 == 7 => writeln!(out, "    let x = {LITERAL}({line});")?,
                1 => writeln!(out, "fn item{line}_handler(v: u16) -> u32 {{ v as u32 }}")?,
                _ => writeln!(out, "    // line {line} of file {i}: nothing to see here")?,
            }
        }
        out.flush()?;
    }
    std::fs::write(done, files.to_string())?;
    Ok(())
}

//! `dsh-fs bench` figures for discovery: the `glob` and `grep` tools through
//! the component over a local directory of many small files (the native fast
//! path behind the provider seam), the portable walk without it, and `rg`
//! with equivalent flags in the same run; peak RSS of a `dsh-fs call` process
//! doing each search.

use crate::bench::{child_peak_rss, median, run_quiet, sample, show, timed};
use anyhow::{Context, Result};
use dsh_fs::{DynProvider, LocalProvider, LocalStore};
use dsh_fs::{Runtime, SessionOptions};
use dsh_fs_search::{Budget, LocalTree};
use std::io::Write;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

/// The literal grep looks for: on a line of its own at the end of one file in
/// 400, from the 8th.
const LITERAL: &str = "needle_literal";
/// The regex grep looks for.
const REGEX: &str = r"fn \w+_handler\(\w+: u(8|16)\)";

/// Generates the tree (kept between runs), then prints the figures.
pub fn run(runtime: &Runtime, exe: &Path, dir: &Path, files: usize, reps: usize) -> Result<()> {
    let tree = dir.join(format!("search-{files}"));
    generate(&tree, files).context("generating the search tree")?;
    let root = tree.as_path();
    let provider: Arc<DynProvider> = Arc::new(LocalProvider::new(LocalStore::new(root)?));
    let mut session = runtime.session(provider, SessionOptions::default())?;
    let rg = which_rg();
    println!(
        "glob and grep over {files} files: the tools through the component, the portable walk, rg"
    );
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
        let (tool, args) = search.call();
        let mut found = String::new();
        let through = sample(reps, || {
            timed(|| {
                let r = session.execute(tool, &args);
                anyhow::ensure!(!r.is_error, "{tool} failed: {}", r.text);
                anyhow::ensure!(!r.text.starts_with("No "), "{tool} found nothing");
                found = r.text;
                Ok(())
            })
        })?;
        let rss = child_peak_rss(exe, root, &["call", tool, &args, "--root"])?;
        let portable = sample(reps.min(3), || timed(|| search.portable(root)))?;
        let Some(rg) = &rg else {
            println!(
                "  {label}  tool {}  portable {}  (rg not installed)",
                show(&through),
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
            "  {label}  tool {} ({:.2}x rg, peak RSS {} MiB)  portable {} ({:.2}x rg)  rg {}",
            show(&through),
            ratio(&through),
            rss >> 10,
            show(&portable),
            ratio(&portable),
            show(&baseline)
        );
        println!("      found: {}", summary(search, &found));
    }
    Ok(())
}

#[derive(Clone, Copy)]
enum Search<'a> {
    Grep(&'a str),
    Glob(&'a str),
}

impl Search<'_> {
    /// The tool call: its name and arguments.
    fn call(self) -> (&'static str, String) {
        match self {
            Search::Grep(p) => ("grep", serde_json::json!({ "pattern": p }).to_string()),
            Search::Glob(p) => ("glob", serde_json::json!({ "pattern": p }).to_string()),
        }
    }

    fn portable(self, root: &Path) -> Result<()> {
        let (b, tree) = (Budget::default(), LocalTree::new(root));
        let out = match self {
            Search::Grep(p) => dsh_fs_search::grep(&tree, "", p, None, &b),
            Search::Glob(p) => dsh_fs_search::glob(&tree, "", p, &b),
        };
        let out = out.map_err(|e| anyhow::anyhow!("{e}"))?;
        anyhow::ensure!(!b.spent(), "the search ran out of budget");
        anyhow::ensure!(!out.starts_with("No "), "the search found nothing: {out}");
        Ok(())
    }
}

/// What the tool found, in one line: grep's header or glob's footer.
fn summary(search: Search<'_>, found: &str) -> String {
    let line = match search {
        Search::Grep(_) => found.lines().next(),
        Search::Glob(_) => found.lines().last(),
    };
    line.unwrap_or_default().to_owned()
}

fn which_rg() -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("rg"))
        .find(|p| p.is_file())
}

/// A source-like tree: 100 files per directory, two levels deep, a mix of
/// extensions, an ignored build directory and a hidden one, ~1 KiB per file.
fn generate(root: &Path, files: usize) -> Result<()> {
    // What the stamp says names the layout too: a tree left by an older
    // generator is made again.
    let done = root.join(".generated");
    let stamp = format!("{files} files, layout 3");
    if std::fs::read_to_string(&done).is_ok_and(|s| s == stamp) {
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
                1 => writeln!(out, "fn item{line}_handler(v: u16) -> u32 {{ v as u32 }}")?,
                _ => writeln!(out, "    // line {line} of file {i}: nothing to see here")?,
            }
        }
        if i % 400 == 7 {
            writeln!(out, "    let x = {LITERAL}(24);")?;
        }
        out.flush()?;
    }
    std::fs::write(done, stamp)?;
    Ok(())
}

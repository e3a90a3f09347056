//! The figures behind the performance claims, each against a
//! baseline measured in the same run (these machines are noisy; ratios are
//! what to compare). Prints; asserts nothing.

use anyhow::{Context, Result, bail};
use dsh_fs::{DynProvider, LocalProvider, LocalStore, Runtime, SessionOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

mod bucket;
mod hosts;
mod journal;
mod miss;
mod search;

pub use bucket::StoreBench;

/// What to measure.
#[derive(Clone, Debug)]
pub struct BenchOptions {
    /// Where the generated files live (kept between runs).
    pub dir: PathBuf,
    /// Repetitions per figure.
    pub reps: usize,
    /// Largest file size in MiB (1024 for the full run).
    pub max_mib: u64,
    /// Calls in the small-read loop.
    pub calls: usize,
    /// Files in the generated tree that glob and grep walk (0 skips them).
    pub search_files: usize,
    /// Measure only the edit of a large object in this store.
    pub store: Option<StoreBench>,
    /// Measure only the change journal under load.
    pub journal: bool,
    /// The Node.js that runs the npm package for the host-path figures.
    pub node: PathBuf,
    /// The Python with the wheel installed, for the host-path figures.
    pub python: PathBuf,
}

/// The `dsh-fs` binary the process figures measure: the one built beside
/// this benchmark (`cargo build --release -p dsh-fs -p dsh-fs-bench`).
fn cli() -> Result<PathBuf> {
    let exe = std::env::current_exe()?;
    let cli = exe.with_file_name("dsh-fs");
    if !cli.is_file() {
        bail!(
            "{} is missing: the cold-start and memory figures run it; build it with \
             `cargo build --release -p dsh-fs -p dsh-fs-bench`",
            cli.display()
        );
    }
    Ok(cli)
}

/// Runs every benchmark and prints the table.
pub fn run(opts: &BenchOptions) -> Result<()> {
    std::fs::create_dir_all(&opts.dir)?;
    let exe = cli()?;
    if let Some(store) = &opts.store {
        return bucket::figure(&opts.dir, store, opts.reps);
    }
    let runtime = Runtime::new()?;
    if opts.journal {
        return journal::run(&runtime, &opts.dir, opts.reps);
    }
    if opts.search_files > 0 {
        search::run(&runtime, &exe, &opts.dir, opts.search_files, opts.reps)?;
    }
    let provider: Arc<DynProvider> = Arc::new(LocalProvider::new(LocalStore::new(&opts.dir)?));
    println!(
        "dsh-fs-bench: {} repetitions, median [min-max]\n",
        opts.reps
    );

    let sizes: Vec<u64> = [1, 100, 1024]
        .into_iter()
        .filter(|&m| m <= opts.max_mib)
        .collect();
    if !sizes.is_empty() {
        println!("first windowed read (offset = middle line, limit 2000) vs `wc -l`");
    }
    for &mib in &sizes {
        let file = text_file(&opts.dir, mib)?;
        let mid = lines_in(mib) / 2;
        let args = format!(
            r#"{{"file_path":"{}","offset":{mid},"limit":2000}}"#,
            name(&file)
        );
        let read = sample(opts.reps, || {
            let mut s = runtime.session(provider.clone(), SessionOptions::default())?;
            timed(|| expect_ok(s.execute("read", &args)))
        })?;
        let wc = sample(opts.reps, || {
            timed(|| run_quiet(Command::new("wc").arg("-l").arg(&file)))
        })?;
        let rss = child_peak_rss(&exe, &opts.dir, &["call", "read", &args, "--root"])?;
        println!(
            "  {:>5} MiB  read {}  wc -l {}  ratio {:.2}x  peak RSS {} MiB",
            mib,
            show(&read),
            show(&wc),
            median(&read).as_secs_f64() / median(&wc).as_secs_f64(),
            rss / 1024
        );
    }

    let host_sizes: Vec<u64> = sizes.iter().copied().filter(|&m| m <= 100).collect();
    if !host_sizes.is_empty() {
        let others = [
            hosts::OtherHost::Node(opts.node.clone()),
            hosts::OtherHost::Wheel(opts.python.clone()),
        ];
        hosts::first_reads(
            &runtime,
            &provider,
            &exe,
            &opts.dir,
            opts.reps,
            &host_sizes,
            &others,
        )?;
    }

    if sizes.iter().any(|&m| m >= 100) {
        println!("\npaging: next read of the unchanged file at another offset, same session");
    }
    for &mib in sizes.iter().filter(|&&m| m >= 100) {
        let file = text_file(&opts.dir, mib)?;
        let mid = lines_in(mib) / 2;
        let first = format!(
            r#"{{"file_path":"{}","offset":{mid},"limit":2000}}"#,
            name(&file)
        );
        let next = format!(
            r#"{{"file_path":"{}","offset":{},"limit":2000}}"#,
            name(&file),
            mid + 2000
        );
        let mut firsts = Vec::new();
        let pages = sample(opts.reps, || {
            let mut s = runtime.session(provider.clone(), SessionOptions::default())?;
            firsts.push(timed(|| expect_ok(s.execute("read", &first)))?);
            timed(|| expect_ok(s.execute("read", &next)))
        })?;
        firsts.sort();
        println!(
            "  {:>5} MiB  page {}  first {}  ratio {:.2}x",
            mib,
            show(&pages),
            show(&firsts),
            median(&pages).as_secs_f64() / median(&firsts).as_secs_f64()
        );
    }

    if !sizes.is_empty() {
        println!("\nedit of the marker line vs `cp` + fsync of the same file");
    }
    for &mib in sizes.iter().filter(|&&m| m <= 100) {
        let file = text_file(&opts.dir, mib)?;
        let work = opts.dir.join(format!("edit-{mib}.txt"));
        std::fs::copy(&file, &work)?;
        let mut s = blind_session(&runtime, provider.clone())?;
        let (there, back) = marker_edits(&name(&work), mib);
        let mut flip = false;
        let copy_to = opts.dir.join("copy.tmp");
        let edit = || {
            let args = if flip { &back } else { &there };
            flip = !flip;
            timed(|| expect_ok(s.execute("edit", args)))
        };
        let copy = || {
            timed(|| {
                std::fs::copy(&work, &copy_to)?;
                std::fs::File::open(&copy_to)?.sync_all()?;
                Ok(())
            })
        };
        let (edits, copies) = sample_pair(opts.reps, edit, copy)?;
        let args = marker_edit(
            &name(&work),
            mib,
            if flip { "EDITED" } else { "MARKER" },
            "CHILD",
        );
        let rss = child_peak_rss(
            &exe,
            &opts.dir,
            &["call", "edit", &args, "--no-policy", "--root"],
        )?;
        println!(
            "  {:>5} MiB  edit {}  cp+fsync {}  ratio {:.2}x  peak RSS {} MiB",
            mib,
            show(&edits),
            show(&copies),
            median(&edits).as_secs_f64() / median(&copies).as_secs_f64(),
            rss / 1024
        );
        std::fs::remove_file(&work)?;
        std::fs::remove_file(&copy_to)?;
    }

    miss::figure(opts, &runtime, &provider, &exe, &sizes)?;

    println!(
        "\n{} sequential reads of a 4 KiB file in one session",
        opts.calls
    );
    for rel in ["small-4k.txt", "deep/er/still/small-4k.txt"] {
        let small = opts.dir.join(rel);
        std::fs::create_dir_all(small.parent().unwrap_or(&opts.dir))?;
        std::fs::write(&small, hosts::small_file())?;
    }
    // The last row is the floor under the others: a call refused while its
    // arguments are parsed does no I/O, so what it costs the component over
    // the native library is the boundary and the guest's own code.
    for (args, label, refused) in [
        (r#"{"file_path":"small-4k.txt"}"#, "component", false),
        (
            r#"{"file_path":"deep/er/still/small-4k.txt"}"#,
            "3 directories deep: component",
            false,
        ),
        (
            r#"{"file_path":"small-4k.txt","limit":0}"#,
            "refused argument, no I/O: component",
            true,
        ),
    ] {
        let mut wasm = runtime.session(provider.clone(), SessionOptions::default())?;
        // The tools library natively over its own store on the same directory.
        let local = LocalProvider::new(LocalStore::new(&opts.dir)?);
        let mut native = dsh_fs_tools::Session::new(local, true);
        let check = |is_error: bool, text: &str, side: &str| {
            if is_error != refused {
                bail!("{side} read of {args}: {text}");
            }
            Ok(())
        };
        // In turns, so that a change in the machine's load weighs on both.
        let (wasm_t, native_t) = sample_pair(
            opts.reps,
            || {
                timed(|| {
                    for _ in 0..opts.calls {
                        let r = wasm.execute("read", args);
                        check(r.is_error, &r.text, "component")?;
                    }
                    Ok(())
                })
            },
            || {
                timed(|| {
                    for _ in 0..opts.calls {
                        let r = native.execute("read", args);
                        check(r.is_error(), &r.text, "native")?;
                    }
                    Ok(())
                })
            },
        )?;
        let per_s = |d: Duration| opts.calls as f64 / d.as_secs_f64();
        println!(
            "  {label} {:.0} calls/s ({:.1} µs/call)  native {:.0} calls/s ({:.1} µs/call)  ratio {:.2}x",
            per_s(median(&wasm_t)),
            median(&wasm_t).as_secs_f64() * 1e6 / opts.calls as f64,
            per_s(median(&native_t)),
            median(&native_t).as_secs_f64() * 1e6 / opts.calls as f64,
            median(&wasm_t).as_secs_f64() / median(&native_t).as_secs_f64()
        );
    }

    println!(
        "the same 4 KiB reads through the host paths, one session, raw client, each in turns \
         with the library's loop"
    );
    let mut wasm = runtime.session(provider.clone(), SessionOptions::default())?;
    let library = || {
        timed(|| {
            for _ in 0..opts.calls {
                expect_ok(wasm.execute("read", r#"{"file_path":"small-4k.txt"}"#))?;
            }
            Ok(())
        })
    };
    hosts::small_reads(&exe, &opts.dir, opts.reps, opts.calls, library)?;

    println!(
        "\ncold start: process start to first result of `dsh-fs call read` (4 KiB file) vs `cat`"
    );
    let small = opts.dir.join("small-4k.txt");
    let args = format!(r#"{{"file_path":"{}"}}"#, name(&small));
    let cache = opts.dir.join("cold-cache");
    let call = |cache: &Path| {
        timed(|| {
            run_quiet(
                Command::new(&exe)
                    .args(["call", "read", &args, "--root"])
                    .arg(&opts.dir)
                    .env("DSH_FS_CACHE_DIR", cache),
            )
        })
    };
    call(&cache)?; // fill the cache
    let warm = sample(opts.reps, || call(&cache))?;
    let cold = sample(opts.reps, || {
        let _ = std::fs::remove_dir_all(&cache);
        call(&cache)
    })?;
    let cat = sample(opts.reps, || {
        timed(|| run_quiet(Command::new("cat").arg(&small)))
    })?;
    println!(
        "  cached {}  uncached {}  cat {}  ratio cached/cat {:.1}x",
        show(&warm),
        show(&cold),
        show(&cat),
        median(&warm).as_secs_f64() / median(&cat).as_secs_f64()
    );
    Ok(())
}

/// Lines of 80 bytes in a file of `mib` MiB.
fn lines_in(mib: u64) -> u64 {
    (mib << 20) / 80
}

fn marker(mib: u64) -> String {
    format!("{:<79}", format!("MARKER line of the {mib} MiB file"))
}

/// The `mib` MiB text file of 80-byte lines with the marker line in the middle.
fn text_file(dir: &Path, mib: u64) -> Result<PathBuf> {
    let path = dir.join(format!("text-{mib}mib.txt"));
    let lines = lines_in(mib);
    if std::fs::metadata(&path).is_ok_and(|m| m.len() == lines * 80) {
        return Ok(path);
    }
    let mut out = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(&path)?);
    for i in 0..lines {
        if i == lines / 2 {
            writeln!(out, "{}", marker(mib))?;
        } else {
            writeln!(
                out,
                "{:<79}",
                format!("line {i} of a generated text file, padded to eighty bytes")
            )?;
        }
    }
    out.flush()?;
    Ok(path)
}

/// A session that edits without reading first, as the benchmarks do.
fn blind_session(runtime: &Runtime, provider: Arc<DynProvider>) -> Result<dsh_fs::Session> {
    runtime.session(
        provider,
        SessionOptions {
            observation_policy: false,
            ..Default::default()
        },
    )
}

/// The arguments of an edit of the marker line of the `mib` MiB file at
/// `path`: the line with `from` in place of `MARKER` becomes the line with
/// `to`.
fn marker_edit(path: &str, mib: u64, from: &str, to: &str) -> String {
    let marker = marker(mib);
    serde_json::json!({
        "file_path": path,
        "old_string": marker.replace("MARKER", from),
        "new_string": marker.replace("MARKER", to),
    })
    .to_string()
}

/// The edit there and the edit back, so that each finds its text.
fn marker_edits(path: &str, mib: u64) -> (String, String) {
    (
        marker_edit(path, mib, "MARKER", "EDITED"),
        marker_edit(path, mib, "EDITED", "MARKER"),
    )
}

fn name(path: &Path) -> String {
    path.file_name().unwrap().to_string_lossy().into_owned()
}

fn expect_ok(r: dsh_fs::ToolResult) -> Result<()> {
    if r.is_error {
        bail!("call failed: {}", r.text);
    }
    Ok(())
}

pub(crate) fn run_quiet(cmd: &mut Command) -> Result<()> {
    let out = cmd.output().context("spawning")?;
    if !out.status.success() {
        bail!("{:?} failed: {}", cmd, String::from_utf8_lossy(&out.stderr));
    }
    Ok(())
}

pub(crate) fn timed(f: impl FnOnce() -> Result<()>) -> Result<Duration> {
    let t = Instant::now();
    f()?;
    Ok(t.elapsed())
}

pub(crate) fn sample(
    reps: usize,
    mut f: impl FnMut() -> Result<Duration>,
) -> Result<Vec<Duration>> {
    f()?; // warm-up: page cache, code paths
    let mut v = (0..reps).map(|_| f()).collect::<Result<Vec<_>>>()?;
    v.sort();
    Ok(v)
}

/// Like [`sample`] for a figure and its baseline, run in turns so that a
/// change in the machine's load weighs on both alike.
pub(crate) fn sample_pair(
    reps: usize,
    mut f: impl FnMut() -> Result<Duration>,
    mut g: impl FnMut() -> Result<Duration>,
) -> Result<(Vec<Duration>, Vec<Duration>)> {
    f()?;
    g()?;
    let (mut fs, mut gs) = (Vec::new(), Vec::new());
    for _ in 0..reps {
        fs.push(f()?);
        gs.push(g()?);
    }
    fs.sort();
    gs.sort();
    Ok((fs, gs))
}

pub(crate) fn median(v: &[Duration]) -> Duration {
    v[v.len() / 2]
}

pub(crate) fn show(v: &[Duration]) -> String {
    let ms = |d: &Duration| d.as_secs_f64() * 1e3;
    format!(
        "{:.2} ms [{:.2}-{:.2}]",
        ms(&median(v)),
        ms(&v[0]),
        ms(&v[v.len() - 1])
    )
}

/// Peak RSS (KiB) of `dsh-fs ARGS DIR` in its own process.
pub(crate) fn child_peak_rss(exe: &Path, dir: &Path, args: &[&str]) -> Result<u64> {
    let out = Command::new(exe)
        .args(args)
        .arg(dir)
        .env("DSH_FS_STATS", "1")
        .output()?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    stderr
        .split_once("peak_rss_kib=")
        .and_then(|(_, v)| v.trim().parse().ok())
        .with_context(|| format!("no peak RSS reported: {stderr}"))
}

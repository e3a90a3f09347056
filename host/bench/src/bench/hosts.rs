//! The host paths a user takes, each against the library in process: the
//! `dsh-fs serve` JSON lines and the `dsh-fs mcp` server, both driven by a
//! raw client over pipes (no SDK, so what is measured is the server and its
//! transport), and the server's own CPU time for the call; and where they
//! are installed, the npm package in Node and the wheel in Python, each run
//! by its own script on the same file.

use super::{lines_in, median, name, sample_pair, show, text_file, timed};
use anyhow::{Context, Result, bail};
use dsh_fs::{DynProvider, Runtime, SessionOptions};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

/// The protocol a server process speaks on its stdin and stdout.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Protocol {
    /// `dsh-fs serve`: `{"tool","arguments"}` in, `{"text","is_error","error"}` out.
    Serve,
    /// `dsh-fs mcp`: JSON-RPC `tools/call` after the `initialize` handshake.
    Mcp,
}

impl Protocol {
    pub(super) fn label(self) -> &'static str {
        match self {
            Protocol::Serve => "serve",
            Protocol::Mcp => "mcp",
        }
    }
}

/// A `dsh-fs serve` or `dsh-fs mcp` process on a directory, one session.
pub(super) struct Server {
    protocol: Protocol,
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
    line: String,
    bytes: Vec<u8>,
}

impl Server {
    /// Starts the server on `dir` and, for MCP, completes the handshake.
    pub(super) fn start(exe: &Path, dir: &Path, protocol: Protocol) -> Result<Self> {
        let mut child = Command::new(exe)
            .arg(protocol.label())
            .arg("--root")
            .arg(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .context("starting dsh-fs")?;
        let stdin = child.stdin.take().context("no stdin")?;
        let stdout = BufReader::with_capacity(1 << 20, child.stdout.take().context("no stdout")?);
        let mut server = Server {
            protocol,
            child,
            stdin,
            stdout,
            next_id: 1,
            line: String::new(),
            bytes: Vec::new(),
        };
        if protocol == Protocol::Mcp {
            server.send(&json!({
                "jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "dsh-fs-bench", "version": "0"}
                }
            }))?;
            server.stdin.flush()?;
            server.answer(0)?;
            server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))?;
        }
        Ok(server)
    }

    /// Writes the request of one call (not flushed) and returns its id.
    pub(super) fn request(&mut self, tool: &str, arguments: &str) -> Result<u64> {
        let arguments: Value = serde_json::from_str(arguments)?;
        let id = self.next_id;
        self.next_id += 1;
        let message = match self.protocol {
            Protocol::Serve => json!({"tool": tool, "arguments": arguments}),
            Protocol::Mcp => json!({
                "jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": tool, "arguments": arguments}
            }),
        };
        self.send(&message)?;
        Ok(id)
    }

    /// Reads the answer to call `id` and fails unless it succeeded.
    pub(super) fn expect_ok(&mut self, id: u64) -> Result<()> {
        let answer = self.answer(id)?;
        let failed = match self.protocol {
            Protocol::Serve => answer["is_error"] != json!(false),
            Protocol::Mcp => {
                answer["result"]["isError"] == json!(true) || answer["result"].is_null()
            }
        };
        if failed {
            bail!("{} call {id} failed: {answer}", self.protocol.label());
        }
        Ok(())
    }

    /// One call, written and answered.
    pub(super) fn call(&mut self, tool: &str, arguments: &str) -> Result<()> {
        let id = self.request(tool, arguments)?;
        self.stdin.flush()?;
        self.expect_ok(id)
    }

    /// CPU time the server process has used so far, all its threads
    /// (`/proc/PID/task/*/schedstat`, nanoseconds; Linux only).
    pub(super) fn cpu(&self) -> Option<Duration> {
        let tasks = std::fs::read_dir(format!("/proc/{}/task", self.child.id())).ok()?;
        let mut ns = 0u64;
        for task in tasks {
            let stat = std::fs::read_to_string(task.ok()?.path().join("schedstat")).ok()?;
            ns += stat.split_whitespace().next()?.parse::<u64>().ok()?;
        }
        Some(Duration::from_nanos(ns))
    }

    /// The wall time of `f` on this server, with the CPU time its threads
    /// spent meanwhile pushed onto `cpu` where the system tells it.
    fn timed_with_cpu(
        &mut self,
        cpu: &mut Vec<Duration>,
        f: impl FnOnce(&mut Self) -> Result<()>,
    ) -> Result<Duration> {
        let before = self.cpu();
        let wall = timed(|| f(self))?;
        if let (Some(before), Some(after)) = (before, self.cpu()) {
            cpu.push(after.saturating_sub(before));
        }
        Ok(wall)
    }

    fn send(&mut self, message: &Value) -> Result<()> {
        serde_json::to_writer(&mut self.stdin, message)?;
        self.stdin.write_all(b"\n")?;
        Ok(())
    }

    /// The next line that answers `id` (the serve protocol answers in order;
    /// MCP may interleave notifications).
    fn answer(&mut self, id: u64) -> Result<Value> {
        loop {
            self.line.clear();
            if self.stdout.read_line(&mut self.line)? == 0 {
                bail!("{} closed its stdout", self.protocol.label());
            }
            let message: Value = serde_json::from_str(&self.line)?;
            if self.protocol == Protocol::Serve || message["id"] == json!(id) {
                return Ok(message);
            }
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The first windowed read of each file through each host path, against the
/// same read in process. Every figure is one call in a fresh session: a
/// fresh server process, started and warmed by a read of a small file first.
pub(super) fn first_reads(
    runtime: &Runtime,
    provider: &Arc<DynProvider>,
    exe: &Path,
    dir: &Path,
    reps: usize,
    sizes: &[u64],
    others: &[OtherHost],
) -> Result<()> {
    let small = r#"{"file_path":"small-4k.txt"}"#;
    std::fs::write(dir.join("small-4k.txt"), small_file())?;
    // A host that could not be measured is said so once, then left out.
    let mut skipped = vec![false; others.len()];
    println!(
        "\nhost paths: first windowed read (offset = middle line, limit 2000), each in a fresh \
         session, against the library in process (in turns with serve and mcp); server CPU = all \
         its threads during the call"
    );
    for &mib in sizes {
        let file = text_file(dir, mib)?;
        let args = format!(
            r#"{{"file_path":"{}","offset":{},"limit":2000}}"#,
            name(&file),
            lines_in(mib) / 2
        );
        let mut library_read = || {
            let mut s = runtime.session(provider.clone(), SessionOptions::default())?;
            timed(|| super::expect_ok(s.execute("read", &args)))
        };
        // Each path in turns with the library, its ratio to the library's
        // repetitions beside it; the library's figure is all of those.
        let mut library = Vec::new();
        let mut paths = String::new();
        for protocol in [Protocol::Serve, Protocol::Mcp] {
            let mut cpu = Vec::new();
            let (walls, beside) = sample_pair(
                reps,
                || {
                    let mut server = Server::start(exe, dir, protocol)?;
                    server.call("read", small)?;
                    server.timed_with_cpu(&mut cpu, |server| server.call("read", &args))
                },
                &mut library_read,
            )?;
            let cpu = median_cpu(cpu).map_or("?".to_owned(), |d| {
                format!("{:.1} ms", d.as_secs_f64() * 1e3)
            });
            paths += &format!(
                "  {} {} ({:.2}x library {:.2} ms, server CPU {cpu})",
                protocol.label(),
                show(&walls),
                median(&walls).as_secs_f64() / median(&beside).as_secs_f64(),
                median(&beside).as_secs_f64() * 1e3
            );
            library.extend(beside);
        }
        library.sort();
        let row = format!("  {mib:>5} MiB  library {}{paths}", show(&library));
        println!("{row}");
        let library = median(&library);
        for (host, skipped) in others.iter().zip(&mut skipped) {
            if *skipped {
                continue;
            }
            match host.reads(&file, reps, library) {
                Ok(line) => println!("             {line}"),
                Err(why) => {
                    println!("             {}: skipped, {why}", host.label());
                    *skipped = true;
                }
            }
        }
    }
    Ok(())
}

/// A host of the npm package or the wheel, measured by its own script on
/// the file the library reads (`host/js/bench-first-read.mjs`,
/// `host/python/bench/first_read.py --reads`): each read a fresh session in
/// one process of that host, the milliseconds printed as a JSON line.
pub(super) enum OtherHost {
    /// Node running the npm package over `NodeStore`.
    Node(PathBuf),
    /// A Python with the wheel installed.
    Wheel(PathBuf),
}

impl OtherHost {
    fn label(&self) -> &'static str {
        match self {
            OtherHost::Node(_) => "Node (npm package, NodeStore)",
            OtherHost::Wheel(_) => "wheel",
        }
    }

    /// The host's reads of `file`, as a line to print beside the library's
    /// median; `Err` says why the host was not measured.
    fn reads(
        &self,
        file: &Path,
        reps: usize,
        library: Duration,
    ) -> std::result::Result<String, String> {
        let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut command;
        let (program, script, reads) = match self {
            OtherHost::Node(node) => {
                if !source.join("js/generated").is_dir() {
                    return Err("no transpiled component: `npm --prefix host/js run build`".into());
                }
                // V8 optimizes the hot code during the first reads of a
                // process: the first five are one figure, the last `reps`,
                // once that has settled, another.
                let (script, reads) = (source.join("js/bench-first-read.mjs"), 10 + reps);
                command = Command::new(node);
                command.arg(&script).arg(file).arg(reads.to_string());
                (node, script, reads)
            }
            OtherHost::Wheel(python) => {
                let (script, reads) = (source.join("python/bench/first_read.py"), reps + 1);
                command = Command::new(python);
                command
                    .arg(&script)
                    .arg("--reads")
                    .arg(reads.to_string())
                    .arg(file);
                (python, script, reads)
            }
        };
        let out = command
            .stderr(Stdio::piped())
            .output()
            .map_err(|err| format!("`{}` did not start ({err})", program.display()))?;
        if !out.status.success() {
            let stderr = String::from_utf8_lossy(&out.stderr);
            if stderr.contains("No module named 'dsh_fs'") {
                return Err(format!(
                    "`{}` has no `dsh_fs`: install the wheel (README, Python) or name a Python \
                     that has it with --python",
                    program.display()
                ));
            }
            let last = stderr.lines().rev().find(|l| !l.trim().is_empty());
            return Err(format!(
                "`{} {}` failed: {}",
                program.display(),
                script.display(),
                last.unwrap_or("no message")
            ));
        }
        let parsed: Value = String::from_utf8_lossy(&out.stdout)
            .lines()
            .rev()
            .find_map(|l| serde_json::from_str(l).ok())
            .ok_or("its script printed no figures")?;
        let durations = |key: &str| -> Vec<Duration> {
            parsed[key]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|v| v.as_f64())
                .map(|ms| Duration::from_secs_f64(ms / 1e3))
                .collect()
        };
        let ms = durations("ms");
        if ms.len() != reads {
            return Err(format!("its script printed {} of {reads} reads", ms.len()));
        }
        let sorted = |mut v: Vec<Duration>| {
            v.sort();
            v
        };
        let ratio = |v: &[Duration]| median(v).as_secs_f64() / library.as_secs_f64();
        Ok(match self {
            OtherHost::Node(_) => {
                let first = sorted(ms[..5].to_vec());
                let settled = sorted(ms[ms.len() - reps..].to_vec());
                // The same file handed over without the component, after
                // each of those reads: what Node's host pays before any work.
                let transport = durations("transport");
                if transport.len() != reads {
                    return Err(format!(
                        "its script printed {} of {reads} transport passes",
                        transport.len()
                    ));
                }
                let transport = sorted(transport[reads - reps..].to_vec());
                // What the issue asks of a host path: the library's cost plus
                // its transport's.
                let allowed = library + median(&transport);
                format!(
                    "Node {} (npm package, NodeStore): reads 1-5 of its process {} ({:.2}x \
                     library), the last {reps} {} ({:.2}x); the file handed over as to the \
                     component, without it (Node's transport: NodeStore's reads, each chunk \
                     copied into a WebAssembly memory) {} ({:.2}x); the last {reps} against \
                     the library plus the transport ({:.2} ms) {:.2}x",
                    parsed["node"].as_str().unwrap_or("?"),
                    show(&first),
                    ratio(&first),
                    show(&settled),
                    ratio(&settled),
                    show(&transport),
                    ratio(&transport),
                    allowed.as_secs_f64() * 1e3,
                    median(&settled).as_secs_f64() / allowed.as_secs_f64(),
                )
            }
            OtherHost::Wheel(_) => {
                // The first read of the process, like the library's warm-up
                // call, is left out.
                let reads = sorted(ms[1..].to_vec());
                format!(
                    "wheel, Python {}: {} ({:.2}x library)",
                    parsed["python"].as_str().unwrap_or("?"),
                    show(&reads),
                    ratio(&reads),
                )
            }
        })
    }
}

/// `calls` reads of a 4 KiB file through each host path in one session:
/// one at a time (each written once the last is answered) and pipelined (a
/// thread writes them all while the answers are read), each in turns with
/// `library`, the same loop in process, so that a change in the machine's
/// load weighs on both alike.
pub(super) fn small_reads(
    exe: &Path,
    dir: &Path,
    reps: usize,
    calls: usize,
    mut library: impl FnMut() -> Result<Duration>,
) -> Result<()> {
    let args = r#"{"file_path":"small-4k.txt"}"#;
    let per_s = |d: Duration| calls as f64 / d.as_secs_f64();
    for protocol in [Protocol::Serve, Protocol::Mcp] {
        let mut server = Server::start(exe, dir, protocol)?;
        let (one_by_one, beside_one) = sample_pair(
            reps,
            || {
                timed(|| {
                    for _ in 0..calls {
                        server.call("read", args)?;
                    }
                    Ok(())
                })
            },
            &mut library,
        )?;
        drop(server);
        let mut cpu = Vec::new();
        let (pipelined, beside_pipelined) = sample_pair(
            reps,
            || {
                let mut server = Server::start(exe, dir, protocol)?;
                server.call("read", args)?;
                server.timed_with_cpu(&mut cpu, |server| pipeline(server, args, calls))
            },
            &mut library,
        )?;
        let cpu = median_cpu(cpu).map_or("?".to_owned(), |d| {
            format!("{:.1} µs", d.as_secs_f64() * 1e6 / calls as f64)
        });
        let ratio = |host: &[Duration], library: &[Duration]| {
            median(library).as_secs_f64() / median(host).as_secs_f64()
        };
        println!(
            "  {}: one at a time {:.0} calls/s ({:.2}x library {:.0}), pipelined {:.0} calls/s \
             ({:.2}x library {:.0}, server CPU {cpu} a call)",
            protocol.label(),
            per_s(median(&one_by_one)),
            ratio(&one_by_one, &beside_one),
            per_s(median(&beside_one)),
            per_s(median(&pipelined)),
            ratio(&pipelined, &beside_pipelined),
            per_s(median(&beside_pipelined)),
        );
    }
    Ok(())
}

/// The median of the servers' CPU times, when the system gave any.
fn median_cpu(mut cpu: Vec<Duration>) -> Option<Duration> {
    cpu.sort();
    cpu.get(cpu.len() / 2).copied()
}

/// Writes `calls` requests from another thread while reading their answers.
fn pipeline(server: &mut Server, args: &str, calls: usize) -> Result<()> {
    let mut requests = Vec::new();
    for _ in 0..calls {
        server.next_id += 1;
        let id = server.next_id - 1;
        let request = match server.protocol {
            Protocol::Serve => {
                json!({"tool": "read", "arguments": serde_json::from_str::<Value>(args)?})
            }
            Protocol::Mcp => json!({
                "jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": "read", "arguments": serde_json::from_str::<Value>(args)?}
            }),
        };
        serde_json::to_writer(&mut requests, &request)?;
        requests.push(b'\n');
    }
    let stdin = &mut server.stdin;
    std::thread::scope(|scope| {
        let writer = scope.spawn(move || -> Result<()> {
            stdin.write_all(&requests)?;
            stdin.flush()?;
            Ok(())
        });
        let mut answers = || -> Result<()> {
            for _ in 0..calls {
                server_answer(&mut server.stdout, &mut server.bytes, server.protocol)?;
            }
            Ok(())
        };
        let read = answers();
        writer.join().expect("writer thread")?;
        read
    })
}

/// Reads one answer line (any id) and fails unless it succeeded, looking
/// only where the protocol puts what it checks (the id at the start of an
/// MCP line, the error flag at the end of either), so that the client's own
/// work on a reply stays small beside the server's on the same two cores.
fn server_answer(
    stdout: &mut BufReader<ChildStdout>,
    line: &mut Vec<u8>,
    protocol: Protocol,
) -> Result<()> {
    let has =
        |part: &[u8], needle: &str| part.windows(needle.len()).any(|w| w == needle.as_bytes());
    loop {
        line.clear();
        if stdout.read_until(b'\n', line)? == 0 {
            bail!("{} closed its stdout", protocol.label());
        }
        let head = &line[..line.len().min(48)];
        let tail = &line[line.len().saturating_sub(48)..];
        let ok = match protocol {
            Protocol::Serve => has(tail, r#""is_error":false"#),
            Protocol::Mcp => {
                if !has(head, r#""id":"#) {
                    continue; // a notification
                }
                has(tail, r#""isError":false"#)
            }
        };
        if !ok {
            bail!(
                "{} call failed: {}",
                protocol.label(),
                String::from_utf8_lossy(line)
            );
        }
        return Ok(());
    }
}

/// The 4 KiB file of the small-read figures: 52 lines of 79 digits, cut.
pub(super) fn small_file() -> String {
    let lines: String = (0..52).map(|i| format!("{i:>79}\n")).collect();
    lines[..4096].to_owned()
}

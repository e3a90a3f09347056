//! The host paths a user takes, each against the library in process: the
//! `dsh-fs serve` JSON lines and the `dsh-fs mcp` server, both driven by a
//! raw client over pipes (no SDK, so what is measured is the server and its
//! transport), and the server's own CPU time for the call.

use super::{lines_in, median, name, sample, show, text_file, timed};
use anyhow::{Context, Result, bail};
use dsh_fs::{DynProvider, Runtime, SessionOptions};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
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
) -> Result<()> {
    let small = r#"{"file_path":"small-4k.txt"}"#;
    std::fs::write(dir.join("small-4k.txt"), small_file())?;
    println!(
        "\nhost paths: first windowed read (offset = middle line, limit 2000), each in a fresh \
         session, against the library in process; server CPU = all its threads during the call"
    );
    for &mib in sizes {
        let file = text_file(dir, mib)?;
        let args = format!(
            r#"{{"file_path":"{}","offset":{},"limit":2000}}"#,
            name(&file),
            lines_in(mib) / 2
        );
        let library = sample(reps, || {
            let mut s = runtime.session(provider.clone(), SessionOptions::default())?;
            timed(|| super::expect_ok(s.execute("read", &args)))
        })?;
        let mut row = format!("  {mib:>5} MiB  library {}", show(&library));
        for protocol in [Protocol::Serve, Protocol::Mcp] {
            let mut cpu = Vec::new();
            let walls = sample(reps, || {
                let mut server = Server::start(exe, dir, protocol)?;
                server.call("read", small)?;
                let before = server.cpu();
                let wall = timed(|| server.call("read", &args))?;
                if let (Some(before), Some(after)) = (before, server.cpu()) {
                    cpu.push(after.saturating_sub(before));
                }
                Ok(wall)
            })?;
            cpu.sort();
            let cpu = cpu.get(cpu.len() / 2).map_or("?".to_owned(), |d| {
                format!("{:.1} ms", d.as_secs_f64() * 1e3)
            });
            row += &format!(
                "  {} {} ({:.2}x, server CPU {cpu})",
                protocol.label(),
                show(&walls),
                median(&walls).as_secs_f64() / median(&library).as_secs_f64()
            );
        }
        println!("{row}");
    }
    Ok(())
}

/// `calls` reads of a 4 KiB file through each host path in one session:
/// one at a time (each written once the last is answered) and pipelined (a
/// thread writes them all while the answers are read), against `library`,
/// the same loop in process.
pub(super) fn small_reads(
    exe: &Path,
    dir: &Path,
    reps: usize,
    calls: usize,
    library: Duration,
) -> Result<()> {
    let args = r#"{"file_path":"small-4k.txt"}"#;
    let per_s = |d: Duration| calls as f64 / d.as_secs_f64();
    for protocol in [Protocol::Serve, Protocol::Mcp] {
        let mut server = Server::start(exe, dir, protocol)?;
        let one_by_one = sample(reps, || {
            timed(|| {
                for _ in 0..calls {
                    server.call("read", args)?;
                }
                Ok(())
            })
        })?;
        drop(server);
        let pipelined = sample(reps, || {
            let mut server = Server::start(exe, dir, protocol)?;
            server.call("read", args)?;
            timed(|| pipeline(&mut server, args, calls))
        })?;
        println!(
            "  {}: one at a time {:.0} calls/s ({:.2}x library), pipelined {:.0} calls/s \
             ({:.2}x library)",
            protocol.label(),
            per_s(median(&one_by_one)),
            per_s(median(&one_by_one)) / per_s(library),
            per_s(median(&pipelined)),
            per_s(median(&pipelined)) / per_s(library),
        );
    }
    Ok(())
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
                server_answer(&mut server.stdout, &mut server.line, server.protocol)?;
            }
            Ok(())
        };
        let read = answers();
        writer.join().expect("writer thread")?;
        read
    })
}

/// Reads one answer line (any id) and fails unless it succeeded.
fn server_answer(
    stdout: &mut BufReader<ChildStdout>,
    line: &mut String,
    protocol: Protocol,
) -> Result<()> {
    loop {
        line.clear();
        if stdout.read_line(line)? == 0 {
            bail!("{} closed its stdout", protocol.label());
        }
        let ok = match protocol {
            Protocol::Serve => line.contains(r#""is_error":false"#),
            Protocol::Mcp => {
                if !line.contains(r#""id":"#) {
                    continue; // a notification
                }
                line.contains(r#""isError":false"#)
            }
        };
        if !ok {
            bail!("{} call failed: {line}", protocol.label());
        }
        return Ok(());
    }
}

/// The 4 KiB file of the small-read figures: 52 lines of 79 digits, cut.
pub(super) fn small_file() -> String {
    let lines: String = (0..52).map(|i| format!("{i:>79}\n")).collect();
    lines[..4096].to_owned()
}

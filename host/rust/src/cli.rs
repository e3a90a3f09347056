//! The `dsh-fs` command: tool definitions, one-off calls, a guided demo, a
//! JSON-lines session (the protocol of the `wasmtime run` command component)
//! and the MCP stdio server, all through the embedded tools component. It
//! lives in the library so that the `dsh-fs` binary and the Python wheel's
//! `dsh-fs` script run the same code.

use crate::{DynProvider, LocalProvider, LocalStore, Runtime, SessionOptions, demo};
use anyhow::Result;
use clap::{Parser, Subcommand};
use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Parser)]
#[command(
    name = "dsh-fs",
    version,
    about = "Sandboxed read/write/edit tools for AI agents, as a WebAssembly component"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print the tool definitions (name, description, guidance, JSON Schema) as JSON.
    Tools,
    /// Run one tool call against a directory and print the result.
    Call {
        /// Tool name: read, write or edit.
        tool: String,
        /// The arguments as a JSON object, e.g. '{"file_path":"src/main.rs"}'.
        arguments: String,
        #[command(flatten)]
        workspace: Workspace,
        /// Print the whole result as JSON instead of its text.
        #[arg(long)]
        json: bool,
    },
    /// Serve JSON lines on stdin/stdout, one session for the whole process:
    /// {"tool":"read","arguments":{...}} in, {"text":...,"is_error":...,"error":...} out.
    Serve {
        #[command(flatten)]
        workspace: Workspace,
    },
    /// Serve the tools over MCP on stdin/stdout (one connection = one session).
    Mcp {
        #[command(flatten)]
        workspace: Workspace,
        /// Also offer these extra tools (comma-separated): multi_edit, and the
        /// change journal's checkpoint, changes and revert (checkpoint 1 is
        /// the session's start).
        #[arg(long, value_delimiter = ',')]
        extra_tools: Vec<String>,
    },
    /// Walk through write → refused edit → read → edit → stale edit → re-read → edit
    /// on a scratch directory (removed afterwards).
    Demo {
        /// Directory to work in, kept afterwards (default: a scratch directory, removed).
        #[arg(long)]
        root: Option<PathBuf>,
    },
}

#[derive(clap::Args)]
struct Workspace {
    /// The workspace root; nothing outside it can be read or written.
    #[arg(long, default_value = ".")]
    root: PathBuf,
    /// Serve an object store prefix instead of a directory: s3://BUCKET/PREFIX.
    /// Credentials come from the AWS environment variables (AWS_ACCESS_KEY_ID, ...).
    #[arg(long, value_name = "URL", conflicts_with = "root")]
    store: Option<String>,
    /// S3 endpoint URL for MinIO, moto or another S3-compatible server
    /// [default: $AWS_ENDPOINT_URL, else AWS].
    #[arg(long, value_name = "URL", requires = "store")]
    endpoint: Option<String>,
    /// The bucket's region [default: $AWS_REGION, else us-east-1].
    #[arg(long, requires = "store")]
    region: Option<String>,
    /// Turn the read-before-write/edit policy off: writes and edits become unconditional.
    #[arg(long)]
    no_policy: bool,
}

impl Workspace {
    fn open(&self) -> Result<(Arc<DynProvider>, SessionOptions)> {
        let provider: Arc<DynProvider> = match &self.store {
            Some(url) => {
                let options = crate::S3Options {
                    endpoint: self.endpoint.clone(),
                    region: self.region.clone(),
                };
                Arc::new(crate::ObjectStoreProvider::new(
                    crate::BucketStore::from_url(url, &options)?,
                ))
            }
            None => Arc::new(LocalProvider::new(LocalStore::new(&self.root)?)),
        };
        let options = SessionOptions {
            observation_policy: !self.no_policy,
            ..Default::default()
        };
        Ok((provider, options))
    }
}

/// Runs the `dsh-fs` command with `args` (the first is the program name, as
/// in `std::env::args_os`) and returns its exit status: 0 on success, 1 when
/// a `call` returned an error result, 2 for bad usage or a workspace that
/// cannot be opened. Writes to the process's stdout and stderr.
pub fn main<I, T>(args: I) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let started = std::time::Instant::now();
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            // `--help` and `--version` are errors to clap too, printed on stdout with status 0.
            let _ = e.print();
            return u8::try_from(e.exit_code()).unwrap_or(2);
        }
    };
    if matches!(cli.command, Command::Tools | Command::Call { .. }) {
        // One-shot commands behave like other Unix tools when their reader
        // goes away (`dsh-fs tools | head`): they end quietly instead of
        // panicking in `println!`. Servers keep Rust's default and see the
        // error on their own writes; so does the demo, which has a scratch
        // directory to remove first.
        // SAFETY: restoring the default disposition of one signal; no code
        // of ours relies on it being ignored, and the process ends with the
        // command (also when the Python wheel's script runs it).
        unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    }
    let code = match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("dsh-fs: {e:#}");
            2
        }
    };
    if std::env::var_os("DSH_FS_STATS").is_some() {
        report_stats(started);
    }
    // An embedding process (the Python script) never runs Rust's exit-time
    // flush of stdout.
    let _ = std::io::Write::flush(&mut std::io::stdout());
    code
}

/// With `DSH_FS_STATS` set: wall time and peak resident memory on stderr,
/// for benchmarks and memory tests (peak RSS from `/proc`, Linux only).
fn report_stats(started: std::time::Instant) {
    let peak_kib = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        });
    let peak = peak_kib.map_or("unknown".to_owned(), |k| k.to_string());
    eprintln!(
        "dsh-fs stats: wall_us={} peak_rss_kib={peak}",
        started.elapsed().as_micros()
    );
}

fn run(cli: Cli) -> Result<u8> {
    match cli.command {
        Command::Tools => {
            let defs = Runtime::new()?.definitions()?;
            println!("{}", serde_json::to_string_pretty(&defs)?);
            Ok(0)
        }
        Command::Call {
            tool,
            arguments,
            workspace,
            json,
        } => {
            let (provider, options) = workspace.open()?;
            let mut session = Runtime::new()?.session(provider, options)?;
            let result = session.execute(&tool, &arguments);
            let is_error = result.is_error;
            if json {
                println!("{}", reply(result).to_json());
            } else {
                println!("{}", result.text);
            }
            Ok(if is_error { 1 } else { 0 })
        }
        Command::Serve { workspace } => {
            crate::mcp::return_large_blocks();
            let (provider, options) = workspace.open()?;
            let mut session = Runtime::new()?.session(provider, options)?;
            let piece = widen_stdout_pipe();
            // The replies go out on a thread of their own while the next
            // requests run.
            dsh_fs_command::serve_beside(
                std::io::stdin().lock(),
                std::io::stdout(),
                piece,
                |tool, args| reply(session.execute(tool, args)),
            )?;
            Ok(0)
        }
        Command::Mcp {
            workspace,
            extra_tools,
        } => {
            let (provider, options) = workspace.open()?;
            let runtime = Runtime::new()?;
            let server = crate::mcp::McpServer::new(&runtime, provider, options)?
                .offering(&runtime, &extra_tools)?;
            // One thread for the protocol: the calls of the session run on
            // a thread of their own, and worker threads only woke each
            // other up around each call.
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?
                .block_on(server.serve_stdio())?;
            Ok(0)
        }
        Command::Demo { root } => {
            demo::run(root)?;
            Ok(0)
        }
    }
}

/// The capacity `serve` asks of its stdout when that is a pipe (Linux's
/// limit for an unprivileged process, `/proc/sys/fs/pipe-max-size`).
const STDOUT_PIPE_BYTES: usize = 1 << 20;

/// Widens stdout to [`STDOUT_PIPE_BYTES`] when it is a narrower pipe, and
/// returns the most bytes `serve` should write at once: a quarter of the
/// pipe's capacity, from 64 KiB (a default pipe, a file or a socket) to a
/// batch of replies, 256 KiB. A client that reads its replies as they come
/// empties the pipe and sleeps after each write; waking it is the writer's
/// cost, ~15 µs when it slept on an idle CPU of a 2-vCPU VM, so a write a
/// fourth as often leaves that CPU to the client and the calls (pipelined
/// 4 KiB reads 0.69–0.74× the library's rate with 64 KiB pipes, 0.74–0.76×
/// with 1 MiB ones, 30–40 runs of each in turns). A pipe's capacity is the
/// kernel's memory, not this process's, and one reader's at a time.
fn widen_stdout_pipe() -> usize {
    let quarter = |capacity: usize| {
        (capacity / 4).clamp(dsh_fs_command::WRITE_BYTES, dsh_fs_command::BATCH_BYTES)
    };
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        let fd = std::io::stdout().as_raw_fd();
        // SAFETY: fcntl with integer arguments on this process's stdout:
        // it reads or sets a pipe's capacity, and fails on anything else.
        let capacity = unsafe {
            match libc::fcntl(fd, libc::F_GETPIPE_SZ) {
                now if now < 0 => return quarter(0),
                now if now as usize >= STDOUT_PIPE_BYTES => now,
                // Over the user's pipe quota it fails: the pipe stays as it is.
                now => {
                    libc::fcntl(fd, libc::F_SETPIPE_SZ, STDOUT_PIPE_BYTES as libc::c_int).max(now)
                }
            }
        };
        quarter(capacity as usize)
    }
    #[cfg(not(target_os = "linux"))]
    quarter(0)
}

/// A result in the JSON-lines form shared with the command component:
/// `{"text":...,"is_error":...,"error":{...}|null}`.
fn reply(result: crate::ToolResult) -> dsh_fs_command::Reply {
    dsh_fs_command::Reply {
        text: result.text,
        error: result.error.map(|e| dsh_fs_command::ReplyError {
            code: e.code,
            message: e.message,
        }),
    }
}

//! The MCP server behind `dsh-fs mcp`: the component's tools over the
//! official `rmcp` SDK. One connection is one session, so observations made
//! by one MCP client never authorize another's edits.
//!
//! rmcp runs the protocol; `transport` frames it on stdio and bounds it:
//! every request gets an answer (an over-long or malformed line too, by the
//! `id` found in it), and a client that does not read stdout stops the
//! server from reading stdin instead of making it buffer.

mod lines;
mod malformed;
mod salvage;
mod transport;

use crate::session::{Session, ToolResult};
use crate::{Runtime, SessionOptions, ToolError};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    JsonObject, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, mpsc};
use tokio::sync::oneshot;

/// An MCP server for one session over one provider.
pub struct McpServer {
    calls: Calls,
    tools: Vec<Tool>,
    instructions: String,
    /// Where tool calls wait while stdout is backed up (stdio only).
    output_gate: Option<transport::OutputGate>,
}

impl McpServer {
    /// A server whose one session runs on `provider`.
    pub fn new(
        runtime: &Runtime,
        provider: Arc<crate::DynProvider>,
        options: SessionOptions,
    ) -> anyhow::Result<Self> {
        let definitions = runtime.definitions()?;
        let mut instructions = String::from(
            "Tools for UTF-8 text files in one workspace. An error starts with its CODE and says \
what to do next.",
        );
        let tools = definitions
            .into_iter()
            .map(|d| {
                instructions.push_str(&format!("\n\n{}: {}", d.name, d.guidance));
                tool(d)
            })
            .collect();
        Ok(McpServer {
            calls: Calls::start(runtime.session(provider, options)?)?,
            tools,
            instructions,
            output_gate: None,
        })
    }

    /// The server offering the extra tools named (see
    /// [`Runtime::extra_definitions`]) after the usual ones; an unknown name
    /// is an error that lists the extra tools there are.
    pub fn offering(mut self, runtime: &Runtime, names: &[String]) -> anyhow::Result<Self> {
        if names.is_empty() {
            return Ok(self);
        }
        let mut extra = runtime.extra_definitions()?;
        for name in names {
            let Some(at) = extra.iter().position(|d| d.name == *name) else {
                let known: Vec<&str> = extra.iter().map(|d| d.name.as_str()).collect();
                anyhow::bail!(
                    "there is no extra tool named {name:?}; the extra tools are {}",
                    known.join(", ")
                );
            };
            let d = extra.remove(at);
            self.instructions
                .push_str(&format!("\n\n{}: {}", d.name, d.guidance));
            self.tools.push(tool(d));
        }
        // The change journal starts at a checkpoint: with the undo tools, the
        // session's start is checkpoint 1, so `revert` can go back to it.
        let undo = ["checkpoint", "changes", "revert"];
        if names.iter().any(|n| undo.contains(&n.as_str())) {
            let (answer, set) = mpsc::channel();
            let arguments = r#"{"label":"session start"}"#.to_owned();
            let job = Job::new("checkpoint", arguments, Answer::Wait(answer));
            self.calls.queue(job)?;
            let set = set
                .recv()
                .map_err(|_| anyhow::anyhow!("the session stopped"))?;
            anyhow::ensure!(!set.is_error, "{}", set.text);
        }
        Ok(self)
    }

    /// Serves MCP on stdin/stdout until the client disconnects.
    ///
    /// On glibc this also makes `malloc` return freed blocks larger than
    /// the tools' I/O chunks to the system, so that memory freed after a
    /// large request is not kept by the allocator.
    pub async fn serve_stdio(mut self) -> anyhow::Result<()> {
        return_large_blocks();
        let (input, output) = rmcp::transport::stdio_pipes();
        let transport = transport::StdioTransport::new(input, output);
        self.output_gate = Some(transport.output_gate());
        let service = self.serve(transport).await?;
        service.waiting().await?;
        Ok(())
    }
}

/// The largest buffer a call allocates and frees once per chunk of I/O: the
/// component streams files in chunks of at most 1 MiB (its `STREAM_CHUNK`,
/// 256 KiB), and the text layer and the stores copy, hash and edit in 1 MiB
/// chunks (`CHUNK`, `COPY_CHUNK`), each chunk in a fresh buffer.
const IO_CHUNK_BYTES: usize = 1 << 20;

/// Blocks at least this large are served by `mmap` and go back to the
/// system when freed: twice an I/O chunk, so that a chunk's buffer (a little
/// over [`IO_CHUNK_BYTES`] with the bytes carried over and malloc's header)
/// always stays in the heap.
const MMAP_THRESHOLD: usize = 2 * IO_CHUNK_BYTES;

/// Has glibc serve blocks of [`MMAP_THRESHOLD`] or more with `mmap`, so that
/// they go back to the system when freed. By default glibc raises that
/// threshold to the largest block freed so far (up to 32 MiB); after one
/// large request, each thread's arena keeps the space of its copies for
/// good, and pipelined 15 MiB writes grew the server by ~45 MiB per write
/// instead of peaking at ~90 MiB whatever their number.
///
/// The threshold stays above the I/O chunks, and the heap keeps up to twice
/// the threshold free at its top (glibc's own ratio; fixing the threshold
/// leaves the trim at its 128 KiB default). With the threshold at 1 MiB, or
/// the default trim, every 1 MiB chunk was a fresh `mmap` (or heap growth)
/// whose 256 pages faulted in and went back at once: reading a 100 MiB file
/// over MCP cost twice the CPU of `dsh-fs serve`, half of it in page faults.
pub(crate) fn return_large_blocks() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes tunables of the allocator.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD as libc::c_int);
        libc::mallopt(libc::M_TRIM_THRESHOLD, (2 * MMAP_THRESHOLD) as libc::c_int);
    }
}

impl McpServer {
    /// The answer to a call of a tool this server does not offer: the
    /// session's `UNKNOWN_TOOL`, naming the tools offered.
    fn unknown_tool(&self, name: &str) -> ToolResult {
        let shown: String = name.chars().take(64).collect();
        let offered: Vec<&str> = self.tools.iter().map(|t| t.name.as_ref()).collect();
        let listed = match offered.split_last() {
            Some((last, [])) => (*last).to_owned(),
            Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
            None => "none".to_owned(),
        };
        let message = format!("there is no tool named {shown:?}; the tools are {listed}.");
        ToolResult {
            text: format!("UNKNOWN_TOOL: {message}"),
            is_error: true,
            error: Some(ToolError {
                code: "UNKNOWN_TOOL".to_owned(),
                message,
            }),
        }
    }
}

/// The answer to a `tools/call` refused before it reached the session.
fn refused_call(message: String) -> CallToolResult {
    to_mcp(ToolResult {
        text: format!("INVALID_ARGS: {message}"),
        is_error: true,
        error: Some(ToolError {
            code: "INVALID_ARGS".to_owned(),
            message,
        }),
    })
}

/// The MCP form of a tool result: the text, `isError`, and on failure
/// `{"error":{"code","message"}}` as structured content.
fn to_mcp(result: ToolResult) -> CallToolResult {
    let content = vec![ContentBlock::text(result.text)];
    match result.error {
        None => CallToolResult::success(content),
        Some(error) => {
            let mut r = CallToolResult::error(content);
            r.structured_content = Some(serde_json::json!({ "error": error }));
            r
        }
    }
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("dsh-fs", env!("CARGO_PKG_VERSION")))
            .with_instructions(self.instructions.clone())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.tools.clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        // A tool the host did not offer is not there, although the session
        // could run it: the extra tools are the host's to turn on.
        if !self.tools.iter().any(|t| t.name == request.name) {
            return Ok(to_mcp(self.unknown_tool(&request.name)).into());
        }
        let arguments =
            serde_json::Value::Object(request.arguments.unwrap_or_default()).to_string();
        let (answer, result) = oneshot::channel();
        let mut job = Job::new(&request.name, arguments, Answer::Task(answer));
        job.gate = (self.output_gate.clone()).map(|gate| (gate, tokio::runtime::Handle::current()));
        let ct = context.ct.clone();
        job.cancelled = Some(Box::new(move || ct.is_cancelled()));
        self.calls
            .queue(job)
            .map_err(|e| McpError::internal_error(e.to_string(), None))?;
        tokio::select! {
            result = result => match result {
                Ok(result) => Ok(to_mcp(result).into()),
                Err(_) => Err(McpError::internal_error("the call was cancelled", None)),
            },
            () = context.ct.cancelled() => {
                Err(McpError::internal_error("the call was cancelled", None))
            }
        }
    }
}

/// The session's calls, run one at a time in the order they came, on a
/// thread of their own: the protocol's thread stays free to answer pings
/// and take cancellations while a call runs. A queued call hands over to
/// the next without waking the protocol's thread, and the thread waiting for
/// work is woken once per call at most (tokio's blocking pool took a lock,
/// a condition variable and two threads in turn for each call: ~5 futex
/// calls a call).
struct Calls {
    jobs: Option<mpsc::Sender<Job>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// One tool call waiting for the session.
struct Job {
    tool: String,
    arguments: String,
    /// Waited at before the call starts, with the runtime that writes the
    /// answers: stdout backed up stops the work.
    gate: Option<(transport::OutputGate, tokio::runtime::Handle)>,
    /// Whether the client cancelled the call; one cancelled before it
    /// starts is dropped.
    cancelled: Option<Box<dyn Fn() -> bool + Send>>,
    answer: Answer,
}

/// Where a call's result goes.
enum Answer {
    /// To an async task, which may stop waiting.
    Task(oneshot::Sender<ToolResult>),
    /// To a thread that waits for it.
    Wait(mpsc::Sender<ToolResult>),
}

impl Job {
    fn new(tool: &str, arguments: String, answer: Answer) -> Self {
        Job {
            tool: tool.to_owned(),
            arguments,
            gate: None,
            cancelled: None,
            answer,
        }
    }

    /// Whether the call is no longer wanted: cancelled, or nobody waits
    /// for its answer.
    fn abandoned(&self) -> bool {
        matches!(&self.answer, Answer::Task(task) if task.is_closed())
            || self.cancelled.as_ref().is_some_and(|c| c())
    }

    fn answer(self, result: ToolResult) {
        match self.answer {
            Answer::Task(task) => drop(task.send(result)),
            Answer::Wait(thread) => drop(thread.send(result)),
        }
    }
}

impl Calls {
    /// Moves `session` to its own thread, which ends with the last sender.
    fn start(mut session: Session) -> anyhow::Result<Self> {
        let (jobs, queue) = mpsc::channel::<Job>();
        let thread = std::thread::Builder::new()
            .name("dsh-fs-session".into())
            .spawn(move || {
                for job in queue {
                    if let Some((gate, runtime)) = &job.gate {
                        gate.wait_blocking(runtime);
                    }
                    if job.abandoned() {
                        continue;
                    }
                    let run = std::panic::catch_unwind(AssertUnwindSafe(|| {
                        session.execute(&job.tool, &job.arguments)
                    }));
                    let result = run.unwrap_or_else(|panic| {
                        let what = panic
                            .downcast_ref::<&str>()
                            .copied()
                            .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
                            .unwrap_or("a panic");
                        ToolResult::host_error(
                            "INTERNAL_ERROR",
                            format!("the tool call failed in the host: {what}"),
                        )
                    });
                    job.answer(result);
                }
            })?;
        Ok(Calls {
            jobs: Some(jobs),
            thread: Some(thread),
        })
    }

    fn queue(&self, job: Job) -> anyhow::Result<()> {
        (self.jobs.as_ref())
            .and_then(|jobs| jobs.send(job).ok())
            .ok_or_else(|| anyhow::anyhow!("the session stopped"))
    }
}

/// The server ends once the call running is done: a write or edit the
/// client asked for is carried out whole even when it has gone. Calls
/// queued behind it were given up with their client and do not start.
impl Drop for Calls {
    fn drop(&mut self) {
        self.jobs = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// A tool as MCP lists it: the component's definition, with the title and
/// behaviour hints (`readOnlyHint`, `destructiveHint`, `idempotentHint`)
/// clients use for permission prompts. Every tool works inside one
/// workspace, so none is open-world.
fn tool(d: crate::ToolDefinition) -> Tool {
    let schema: JsonObject = match d.parameters {
        serde_json::Value::Object(map) => map,
        _ => JsonObject::new(),
    };
    let title = if d.title.is_empty() {
        d.name.clone()
    } else {
        d.title
    };
    let annotations = ToolAnnotations::with_title(title.clone())
        .read_only(d.hints.read_only)
        .destructive(d.hints.destructive)
        .idempotent(d.hints.idempotent)
        .open_world(false);
    Tool::new(d.name, d.description, Arc::new(schema))
        .with_title(title)
        .with_annotations(annotations)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{LocalProvider, LocalStore, Runtime, SessionOptions};
    use std::path::Path;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::Duration;
    use tokio::sync::watch;

    fn calls(dir: &Path) -> Calls {
        let runtime = Runtime::new().unwrap();
        let provider = Arc::new(LocalProvider::new(LocalStore::new(dir).unwrap()));
        Calls::start(
            runtime
                .session(provider, SessionOptions::default())
                .unwrap(),
        )
        .unwrap()
    }

    fn write(path: &str) -> (Job, oneshot::Receiver<ToolResult>) {
        let (answer, result) = oneshot::channel();
        let arguments = serde_json::json!({"file_path": path, "content": path}).to_string();
        (Job::new("write", arguments, Answer::Task(answer)), result)
    }

    /// In the order queued; a call cancelled, or whose caller stopped
    /// waiting, before it starts never runs, and the ones after it do.
    #[test]
    fn calls_run_in_turn_and_given_up_ones_never_start() {
        let dir = tempfile::tempdir().unwrap();
        let calls = calls(dir.path());
        let (first, first_done) = write("a.txt");
        let (mut cancelled, cancelled_done) = write("b.txt");
        cancelled.cancelled = Some(Box::new(|| true));
        let (abandoned, abandoned_done) = write("c.txt");
        drop(abandoned_done);
        let (answer, read_done) = oneshot::channel();
        let read = r#"{"file_path":"a.txt"}"#.to_owned();
        let read = Job::new("read", read, Answer::Task(answer));
        for job in [first, cancelled, abandoned, read] {
            calls.queue(job).unwrap();
        }
        assert!(!first_done.blocking_recv().unwrap().is_error);
        assert!(cancelled_done.blocking_recv().is_err());
        let read = read_done.blocking_recv().unwrap();
        assert!(read.text.contains("1: a.txt"), "{}", read.text);
        drop(calls);
        assert!(dir.path().join("a.txt").exists());
        assert!(!dir.path().join("b.txt").exists());
        assert!(!dir.path().join("c.txt").exists());
    }

    /// While the unwritten answers are over the budget, the next call waits
    /// before it starts; one cancelled while it waits never runs.
    #[test]
    fn calls_wait_while_stdout_is_backed_up() {
        let dir = tempfile::tempdir().unwrap();
        let calls = calls(dir.path());
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let (unwritten, gate) = watch::channel(transport::OUTPUT_BUDGET);
        let gated = |path: &str, cancel: &Arc<AtomicBool>| {
            let (mut job, done) = write(path);
            job.gate = Some((
                transport::OutputGate(gate.clone()),
                runtime.handle().clone(),
            ));
            let cancel = cancel.clone();
            job.cancelled = Some(Box::new(move || cancel.load(Ordering::SeqCst)));
            (job, done)
        };
        let (keep, drop_it) = (Arc::default(), Arc::new(AtomicBool::new(false)));
        let (cancelled, cancelled_done) = gated("cancelled.txt", &drop_it);
        let (waiting, waiting_done) = gated("waiting.txt", &keep);
        calls.queue(cancelled).unwrap();
        calls.queue(waiting).unwrap();
        std::thread::sleep(Duration::from_millis(200));
        assert!(!dir.path().join("cancelled.txt").exists());
        assert!(!dir.path().join("waiting.txt").exists());
        drop_it.store(true, Ordering::SeqCst);
        unwritten.send_replace(transport::OUTPUT_BUDGET - 1);
        assert!(cancelled_done.blocking_recv().is_err());
        assert!(!waiting_done.blocking_recv().unwrap().is_error);
        assert!(dir.path().join("waiting.txt").exists());
        assert!(!dir.path().join("cancelled.txt").exists());
    }
}

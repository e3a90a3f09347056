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
use std::sync::Arc;
use tokio::sync::Mutex;

/// An MCP server for one session over one provider.
pub struct McpServer {
    session: Arc<Mutex<Session>>,
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
            session: Arc::new(Mutex::new(runtime.session(provider, options)?)),
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
            let mut session = self
                .session
                .try_lock()
                .map_err(|_| anyhow::anyhow!("the session is busy"))?;
            let set = session.execute("checkpoint", r#"{"label":"session start"}"#);
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
        // Calls of one session run one at a time, off the async threads, and
        // only while stdout keeps up; a call cancelled while it waits is dropped.
        let ready = async {
            let session = self.session.clone().lock_owned().await;
            if let Some(gate) = &self.output_gate {
                gate.wait().await;
            }
            session
        };
        let mut session = tokio::select! {
            session = ready => session,
            () = context.ct.cancelled() => {
                return Err(McpError::internal_error("the call was cancelled", None));
            }
        };
        let tool = request.name.to_string();
        let arguments =
            serde_json::Value::Object(request.arguments.unwrap_or_default()).to_string();
        let result = tokio::task::spawn_blocking(move || session.execute(&tool, &arguments))
            .await
            .map_err(|e| McpError::internal_error(format!("tool call panicked: {e}"), None))?;
        Ok(to_mcp(result).into())
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

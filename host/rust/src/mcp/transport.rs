//! The stdio transport under the MCP server: JSON lines, read by one task
//! and written by another, with each request bounded on the way in and its
//! answer on the way out. A client that sends too much or reads too slowly
//! slows the server down instead of growing its memory.

use super::lines::{Line, LineReader};
use super::malformed::{self, Answer};
use super::salvage;
use rmcp::RoleServer;
use rmcp::model::{
    ClientJsonRpcMessage, ClientNotification, ClientRequest, ErrorData, JsonRpcMessage, RequestId,
    ServerJsonRpcMessage, ServerResult,
};
use rmcp::transport::Transport;
use serde::Serialize;
use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::io;
use std::sync::{Arc, Mutex, PoisonError};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc, oneshot, watch};
use tokio::task::JoinHandle;

/// The longest line taken as a message: the tool-arguments limit plus room
/// for the JSON-RPC envelope. A longer line is answered with an error naming
/// this limit, and discarded as it arrives.
pub(super) const MAX_LINE_BYTES: usize = dsh_fs_core::MAX_ARGUMENT_BYTES + (64 << 10);
/// Requests read but not yet answered on stdout. At this many, the server
/// stops reading stdin until an answer has been written.
pub(super) const MAX_IN_FLIGHT: usize = 8;
/// Bytes of the lines of those requests: one line of the largest size and
/// small requests beside it. Reading waits while it is spent.
pub(super) const INPUT_BUDGET: usize = MAX_LINE_BYTES + (1 << 20);
/// Unwritten answer bytes above which a tool call waits before it starts.
pub(super) const OUTPUT_BUDGET: usize = 8 << 20;
/// JSON values one message may hold: parsing costs far more memory per value
/// than the value's text, so a line of `[0,0,0,…]` is refused, not parsed.
pub(super) const MAX_JSON_VALUES: usize = 1 << 16;
/// The read buffer on stdin.
const READ_BUFFER: usize = 64 << 10;

/// MCP over this process's stdin and stdout, for rmcp's service loop.
pub(super) struct StdioTransport {
    incoming: mpsc::Receiver<ClientJsonRpcMessage>,
    outgoing: Option<mpsc::Sender<Frame>>,
    shared: Arc<Shared>,
    reader: JoinHandle<()>,
    writer: Option<JoinHandle<()>>,
}

/// State of the reading side that the sending side settles.
struct Shared {
    /// The ticket of each request delivered to rmcp and not yet answered.
    in_flight: Mutex<HashMap<RequestId, Ticket>>,
    /// Bytes queued for stdout and not yet written.
    unwritten: watch::Sender<usize>,
}

impl Shared {
    fn in_flight(&self) -> std::sync::MutexGuard<'_, HashMap<RequestId, Ticket>> {
        self.in_flight
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

/// What a request holds until its answer is written: one of the
/// [`MAX_IN_FLIGHT`] slots and its line's share of [`INPUT_BUDGET`].
struct Ticket {
    _slot: OwnedSemaphorePermit,
    _bytes: Option<OwnedSemaphorePermit>,
}

/// One line for stdout and what it releases once written.
struct Frame {
    bytes: Vec<u8>,
    _ticket: Option<Ticket>,
    _charge: Charge,
    written: Option<oneshot::Sender<()>>,
}

impl Frame {
    fn new(message: &impl Serialize, ticket: Option<Ticket>, shared: &Arc<Shared>) -> Self {
        let mut bytes = serde_json::to_vec(message).unwrap_or_else(|e| {
            let error = ErrorData::internal_error(format!("unserializable answer: {e}"), None);
            serde_json::to_vec(&ErrorResponse::new(None, error)).expect("plain JSON")
        });
        bytes.push(b'\n');
        shared.unwritten.send_modify(|n| *n += bytes.len());
        Frame {
            _charge: Charge {
                shared: shared.clone(),
                bytes: bytes.len(),
            },
            bytes,
            _ticket: ticket,
            written: None,
        }
    }
}

/// Counts a frame's bytes as unwritten until it is dropped.
struct Charge {
    shared: Arc<Shared>,
    bytes: usize,
}

impl Drop for Charge {
    fn drop(&mut self) {
        self.shared.unwritten.send_modify(|n| *n -= self.bytes);
    }
}

/// A JSON-RPC error response whose `id` is `null` when it is not known.
#[derive(Serialize)]
struct ErrorResponse {
    jsonrpc: &'static str,
    id: Option<RequestId>,
    error: ErrorData,
}

impl ErrorResponse {
    fn new(id: Option<RequestId>, error: ErrorData) -> Self {
        ErrorResponse {
            jsonrpc: "2.0",
            id,
            error,
        }
    }
}

/// Lets tool calls wait while more than [`OUTPUT_BUDGET`] bytes of answers
/// are unwritten, so that a client not reading stdout stops the work too.
#[derive(Clone, Debug)]
pub(super) struct OutputGate(pub(super) watch::Receiver<usize>);

impl OutputGate {
    /// Returns once the unwritten answers are under [`OUTPUT_BUDGET`].
    pub(super) async fn wait(&self) {
        let mut unwritten = self.0.clone();
        let _ = unwritten.wait_for(|&n| n < OUTPUT_BUDGET).await;
    }

    /// [`OutputGate::wait`] from a thread outside `runtime`, the one that
    /// writes the answers.
    pub(super) fn wait_blocking(&self, runtime: &tokio::runtime::Handle) {
        if *self.0.borrow() >= OUTPUT_BUDGET {
            runtime.block_on(self.wait());
        }
    }
}

impl StdioTransport {
    /// Starts reading `input` and writing `output` on the current runtime.
    pub(super) fn new<R, W>(input: R, output: W) -> Self
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let shared = Arc::new(Shared {
            in_flight: Mutex::default(),
            unwritten: watch::Sender::new(0),
        });
        let (to_rmcp, incoming) = mpsc::channel(1);
        let (outgoing, frames) = mpsc::channel(MAX_IN_FLIGHT);
        let reader = tokio::spawn(read_requests(
            input,
            to_rmcp,
            outgoing.clone(),
            shared.clone(),
        ));
        let writer = tokio::spawn(write_frames(output, frames));
        StdioTransport {
            incoming,
            outgoing: Some(outgoing),
            shared,
            reader,
            writer: Some(writer),
        }
    }

    /// The gate tool calls wait at while stdout is backed up.
    pub(super) fn output_gate(&self) -> OutputGate {
        OutputGate(self.shared.unwritten.subscribe())
    }
}

impl Drop for StdioTransport {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

impl Transport<RoleServer> for StdioTransport {
    type Error = io::Error;

    /// Queues `item` for stdout and completes once it is written. An answer
    /// brings its request's ticket along, released when it is written.
    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl Future<Output = io::Result<()>> + Send + 'static {
        let answered = match &item {
            JsonRpcMessage::Response(response) => Some(&response.id),
            JsonRpcMessage::Error(error) => error.id.as_ref(),
            _ => None,
        };
        let ticket = answered.and_then(|id| self.shared.in_flight().remove(id));
        let frame = Frame::new(&item, ticket, &self.shared);
        drop(item);
        let outgoing = self.outgoing.clone();
        async move {
            let outgoing = outgoing.ok_or_else(closed)?;
            write(&outgoing, frame).await
        }
    }

    /// The next message from stdin, in order; `None` at its end or once
    /// stdout is gone.
    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        let message = {
            let outgoing = self.outgoing.as_ref()?;
            tokio::select! {
                message = self.incoming.recv() => message?,
                () = outgoing.closed() => return None,
            }
        };
        // rmcp never answers a cancelled request, so its slot is free now.
        if let JsonRpcMessage::Notification(notification) = &message
            && let ClientNotification::CancelledNotification(cancelled) = &notification.notification
            && let Some(id) = &cancelled.params.request_id
        {
            self.shared.in_flight().remove(id);
        }
        Some(message)
    }

    /// Stops reading, writes what is queued, and returns.
    async fn close(&mut self) -> io::Result<()> {
        self.reader.abort();
        self.outgoing = None;
        if let Some(writer) = self.writer.take() {
            let _ = writer.await;
        }
        Ok(())
    }
}

fn closed() -> io::Error {
    io::Error::new(io::ErrorKind::BrokenPipe, "stdout is closed")
}

/// Queues `frame` and waits until it is written.
async fn write(outgoing: &mpsc::Sender<Frame>, mut frame: Frame) -> io::Result<()> {
    let (written, done) = oneshot::channel();
    frame.written = Some(written);
    outgoing.send(frame).await.map_err(|_| closed())?;
    done.await.map_err(|_| closed())
}

/// Writes frames in order, flushing whenever the queue runs empty.
async fn write_frames(mut output: impl AsyncWrite + Unpin, mut frames: mpsc::Receiver<Frame>) {
    while let Some(mut frame) = frames.recv().await {
        if output.write_all(&frame.bytes).await.is_err() {
            return;
        }
        if frames.is_empty() && output.flush().await.is_err() {
            return;
        }
        if let Some(written) = frame.written.take() {
            let _ = written.send(());
        }
    }
    let _ = output.flush().await;
}

/// Reads lines from `input` while there is room in flight: messages go to
/// rmcp, and lines rmcp cannot take are answered here.
async fn read_requests(
    input: impl AsyncRead + Unpin,
    to_rmcp: mpsc::Sender<ClientJsonRpcMessage>,
    outgoing: mpsc::Sender<Frame>,
    shared: Arc<Shared>,
) {
    let slots = Arc::new(Semaphore::new(MAX_IN_FLIGHT));
    let budget = Arc::new(Semaphore::new(INPUT_BUDGET));
    let mut lines = LineReader::new(input, READ_BUFFER, MAX_LINE_BYTES);
    loop {
        let Ok(slot) = slots.clone().acquire_owned().await else {
            return;
        };
        let Ok(Some(line)) = lines.next(&budget).await else {
            return;
        };
        let (parsed, bytes) = match line {
            Line::TooLong { head, tail, len } => (
                Err(malformed::too_long(&head, &tail, len, MAX_LINE_BYTES)),
                None,
            ),
            Line::Complete(line, bytes) => (parse(&line), bytes),
        };
        let ticket = Ticket {
            _slot: slot,
            _bytes: bytes,
        };
        let sent = match parsed {
            Ok(None) => continue,
            Ok(Some(message)) => deliver(message, ticket, &shared, &to_rmcp, &outgoing).await,
            Err(answer) => reply(answer, ticket, &shared, &outgoing).await,
        };
        if sent.is_err() {
            return;
        }
    }
}

/// Hands `message` to rmcp; a request keeps `ticket` in flight until answered.
async fn deliver(
    message: ClientJsonRpcMessage,
    ticket: Ticket,
    shared: &Arc<Shared>,
    to_rmcp: &mpsc::Sender<ClientJsonRpcMessage>,
    outgoing: &mpsc::Sender<Frame>,
) -> Result<(), ()> {
    if let JsonRpcMessage::Request(request) = &message {
        let refused = match shared.in_flight().entry(request.id.clone()) {
            Entry::Occupied(_) => Some(ticket),
            Entry::Vacant(entry) => {
                entry.insert(ticket);
                None
            }
        };
        if let Some(ticket) = refused {
            let error =
                ErrorData::invalid_request("the request id is in use by a request in flight", None);
            let answer = Answer::Error(Some(request.id.clone()), error);
            return reply(answer, ticket, shared, outgoing).await;
        }
    }
    to_rmcp.send(message).await.map_err(drop)
}

/// Queues `answer` for stdout; `ticket` is released once it is written.
async fn reply(
    answer: Answer,
    ticket: Ticket,
    shared: &Arc<Shared>,
    outgoing: &mpsc::Sender<Frame>,
) -> Result<(), ()> {
    let ticket = Some(ticket);
    let frame = match answer {
        Answer::Nothing => return Ok(()),
        Answer::Error(id, error) => Frame::new(&ErrorResponse::new(id, error), ticket, shared),
        Answer::ToolError(id, message) => {
            let result = ServerResult::CallToolResult(super::refused_call(message));
            Frame::new(&ServerJsonRpcMessage::response(result, id), ticket, shared)
        }
    };
    outgoing.send(frame).await.map_err(drop)
}

/// One complete line as a message (`None` for a blank line), or what to
/// answer instead.
fn parse(line: &[u8]) -> Result<Option<ClientJsonRpcMessage>, Answer> {
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    if salvage::more_values_than(line, MAX_JSON_VALUES) {
        return Err(malformed::too_many_values(line, MAX_JSON_VALUES));
    }
    let message = serde_json::from_slice(line).map_err(|e| malformed::unparsable(line, &e))?;
    if let JsonRpcMessage::Request(request) = &message
        && let ClientRequest::CustomRequest(custom) = &request.request
        && let Some(answer) = malformed::misparsed(&request.id, custom)
    {
        return Err(answer);
    }
    Ok(Some(message))
}

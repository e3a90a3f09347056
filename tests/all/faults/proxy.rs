//! A fault-injecting HTTP/1.1 proxy on 127.0.0.1, put between the object
//! store and moto: it forwards each request on a fresh upstream connection
//! and, while armed, counts them and spoils the k-th one with one
//! [`HttpFault`] (an S3 5xx answered before or after moto saw the request, a
//! connection reset before the request is sent on or after moto answered,
//! or an answer held past the call's deadline). Every connection it serves
//! is bounded in time.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// What the k-th request gets instead of a faithful relay.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum HttpFault {
    /// `503 SlowDown`, answered without sending the request on: S3's "not
    /// processed, try again".
    SlowDown503,
    /// `500 InternalError`, answered without sending the request on.
    Internal500,
    /// `500 InternalError` after moto carried the request out: S3's "may or
    /// may not have been processed" (a PUT landed, the client sees a 5xx).
    Internal500After,
    /// The client's connection is reset once its request was read, before
    /// it is sent on.
    ResetBefore,
    /// The request is carried out by moto, then the client's connection is
    /// reset instead of relaying the answer (a PUT landed, the client sees
    /// a broken connection).
    ResetAfter,
    /// Moto's answer is held until after the call's deadline, then relayed.
    Delay,
}

pub(super) const HTTP_FAULTS: [HttpFault; 6] = [
    HttpFault::SlowDown503,
    HttpFault::Internal500,
    HttpFault::Internal500After,
    HttpFault::ResetBefore,
    HttpFault::ResetAfter,
    HttpFault::Delay,
];

/// What one armed call saw.
#[derive(Debug, Default)]
pub(crate) struct Seen {
    /// Requests while armed, as `METHOD path?query`, in arrival order.
    pub(crate) requests: Vec<String>,
    /// The request the fault fired at.
    pub(crate) fired: Option<String>,
    /// What went wrong in the proxy itself (a test bug, never the store's).
    pub(super) broken: Vec<String>,
}

#[derive(Debug, Default)]
struct Plan {
    armed: bool,
    fault: Option<(HttpFault, usize)>,
    /// When a held answer is relayed.
    hold_until: Option<Instant>,
    seen: Seen,
}

/// The shared proxy of this test binary, in front of the shared moto.
pub(crate) struct Proxy {
    addr: SocketAddr,
    plan: Arc<Mutex<Plan>>,
    _runtime: tokio::runtime::Runtime,
}

/// Longest one client connection is served, whatever happens upstream.
const CONNECTION_BOUND: Duration = Duration::from_secs(60);

/// Largest request or response head accepted.
const MAX_HEAD: usize = 64 << 10;

impl Proxy {
    pub(super) fn shared() -> &'static Proxy {
        static PROXY: OnceLock<Proxy> = OnceLock::new();
        PROXY.get_or_init(Proxy::new)
    }

    /// A proxy of its own in front of the shared moto (to count one test's
    /// requests while the sweep arms the shared one).
    pub(crate) fn new() -> Proxy {
        let upstream = crate::object_store::Moto::shared().endpoint();
        let upstream: SocketAddr = upstream
            .strip_prefix("http://")
            .and_then(|a| a.parse().ok())
            .expect("moto listens on http://127.0.0.1:PORT");
        Proxy::start(upstream)
    }

    fn start(upstream: SocketAddr) -> Proxy {
        assert!(
            upstream.ip().is_loopback(),
            "the proxy forwards to loopback only"
        );
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("fault-proxy")
            .enable_all()
            .build()
            .unwrap();
        let listener = runtime
            .block_on(TcpListener::bind("127.0.0.1:0"))
            .expect("a loopback port for the proxy");
        let addr = listener.local_addr().unwrap();
        let plan = Arc::new(Mutex::new(Plan::default()));
        let shared = plan.clone();
        runtime.spawn(async move {
            loop {
                let Ok((client, _)) = listener.accept().await else {
                    continue;
                };
                let plan = shared.clone();
                tokio::spawn(async move {
                    let served =
                        tokio::time::timeout(CONNECTION_BOUND, serve(client, upstream, &plan))
                            .await;
                    let why = match served {
                        Ok(Ok(())) => return,
                        Ok(Err(e)) => format!("serving a connection: {e}"),
                        Err(_) => format!("a connection took longer than {CONNECTION_BOUND:?}"),
                    };
                    lock(&plan).seen.broken.push(why);
                });
            }
        });
        Proxy {
            addr,
            plan,
            _runtime: runtime,
        }
    }

    /// The endpoint URL to give a client.
    pub(crate) fn endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Counts the requests from now on and spoils the k-th (1-based) with
    /// `fault`; a held answer is relayed at `hold_until`.
    pub(crate) fn arm(&self, fault: Option<(HttpFault, usize)>, hold_until: Option<Instant>) {
        *lock(&self.plan) = Plan {
            armed: true,
            fault,
            hold_until,
            seen: Seen::default(),
        };
    }

    /// Stops counting; what the armed call sent.
    pub(crate) fn disarm(&self) -> Seen {
        std::mem::take(&mut *lock(&self.plan)).seen
    }
}

fn lock(plan: &Mutex<Plan>) -> MutexGuard<'_, Plan> {
    plan.lock().unwrap_or_else(|p| p.into_inner())
}

/// What to do with one request.
enum Step {
    Relay,
    Fault(HttpFault, Option<Instant>),
}

/// Counts `request` and says what to do with it.
fn on(plan: &Mutex<Plan>, request: &str) -> Step {
    let mut p = lock(plan);
    if !p.armed {
        return Step::Relay;
    }
    p.seen.requests.push(request.to_owned());
    match p.fault {
        Some((fault, k)) if k == p.seen.requests.len() => {
            p.seen.fired = Some(request.to_owned());
            Step::Fault(fault, p.hold_until)
        }
        _ => Step::Relay,
    }
}

/// Serves one client connection: one request, one answer (or none), closed.
/// Moto answers HTTP/1.0 and closes, and every relayed answer says
/// `Connection: close`, so a client never sends a second request on it.
async fn serve(
    mut client: TcpStream,
    upstream: SocketAddr,
    plan: &Mutex<Plan>,
) -> std::io::Result<()> {
    client.set_nodelay(true)?;
    let Some(request) = read_request(&mut client).await? else {
        return Ok(());
    };
    match on(plan, &request.line) {
        Step::Relay => {
            let answer = forward(&request, upstream).await?;
            client.write_all(&answer).await?;
        }
        Step::Fault(fault, hold_until) => match fault {
            HttpFault::SlowDown503 => client.write_all(&s3_error(503)).await?,
            HttpFault::Internal500 => client.write_all(&s3_error(500)).await?,
            HttpFault::Internal500After => {
                forward(&request, upstream).await?;
                client.write_all(&s3_error(500)).await?;
            }
            HttpFault::ResetBefore => return reset(client),
            HttpFault::ResetAfter => {
                forward(&request, upstream).await?;
                return reset(client);
            }
            HttpFault::Delay => {
                let answer = forward(&request, upstream).await?;
                if let Some(at) = hold_until {
                    tokio::time::sleep_until(at.into()).await;
                }
                client.write_all(&answer).await?;
            }
        },
    }
    let _ = client.shutdown().await;
    Ok(())
}

/// Closes the connection with a TCP reset (`SO_LINGER` 0), not a FIN.
fn reset(client: TcpStream) -> std::io::Result<()> {
    client.set_zero_linger()?;
    drop(client);
    Ok(())
}

/// One request as read from the client: its first line and every byte of it.
struct Request {
    /// `METHOD target`, for counting and reports.
    line: String,
    head: String,
    body: Vec<u8>,
}

/// Reads one request; `None` when the client closed without sending one.
async fn read_request(client: &mut TcpStream) -> std::io::Result<Option<Request>> {
    let mut buf = Vec::new();
    let end = loop {
        if let Some(at) = find(&buf, b"\r\n\r\n") {
            break at + 4;
        }
        if buf.len() > MAX_HEAD {
            return Err(std::io::Error::other("a request head of more than 64 KiB"));
        }
        let mut chunk = [0u8; 16 << 10];
        let n = client.read(&mut chunk).await?;
        if n == 0 {
            return if buf.is_empty() {
                Ok(None)
            } else {
                Err(std::io::Error::other("the client closed mid-request"))
            };
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8(buf[..end].to_vec())
        .map_err(|_| std::io::Error::other("a request head that is not UTF-8"))?;
    let mut body = buf[end..].to_vec();
    let mut length = 0usize;
    for line in head.split("\r\n").skip(1) {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        if name.eq_ignore_ascii_case("content-length") {
            length = value
                .parse()
                .map_err(|_| std::io::Error::other("a bad Content-Length"))?;
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            return Err(std::io::Error::other(format!(
                "a request body in Transfer-Encoding {value}, which this proxy does not relay"
            )));
        } else if name.eq_ignore_ascii_case("expect") {
            return Err(std::io::Error::other(format!(
                "a request that expects {value}, which this proxy does not answer"
            )));
        }
    }
    if body.len() > length {
        return Err(std::io::Error::other(
            "bytes after the request body (a pipelined request)",
        ));
    }
    let missing = length - body.len();
    let start = body.len();
    body.resize(length, 0);
    if missing > 0 {
        client.read_exact(&mut body[start..]).await?;
    }
    let line = head
        .split("\r\n")
        .next()
        .unwrap_or("")
        .rsplit_once(' ')
        .map_or("", |(line, _version)| line)
        .to_owned();
    Ok(Some(Request { line, head, body }))
}

/// Sends `request` to moto on a new connection (saying `Connection: close`)
/// and reads its whole answer; the answer says `Connection: close` too.
async fn forward(request: &Request, upstream: SocketAddr) -> std::io::Result<Vec<u8>> {
    let mut moto = TcpStream::connect(upstream).await?;
    moto.set_nodelay(true)?;
    let mut sent = without_connection(&request.head).into_bytes();
    sent.extend_from_slice(b"Connection: close\r\n\r\n");
    sent.extend_from_slice(&request.body);
    moto.write_all(&sent).await?;
    let mut answer = Vec::new();
    moto.read_to_end(&mut answer).await?;
    let end = find(&answer, b"\r\n\r\n")
        .filter(|&at| at < MAX_HEAD)
        .ok_or_else(|| {
            std::io::Error::other(format!(
                "moto answered {} bytes without a head",
                answer.len()
            ))
        })?
        + 4;
    let head = std::str::from_utf8(&answer[..end])
        .map_err(|_| std::io::Error::other("an answer head that is not UTF-8"))?;
    let mut out = without_connection(head).into_bytes();
    out.extend_from_slice(b"Connection: close\r\n\r\n");
    out.extend_from_slice(&answer[end..]);
    Ok(out)
}

/// A head (ending in its blank line) without its `Connection` and
/// `Keep-Alive` fields or the blank line, each line ending in CRLF.
fn without_connection(head: &str) -> String {
    head.trim_end_matches("\r\n")
        .split("\r\n")
        .filter(|line| {
            let name = line.split(':').next().unwrap_or("");
            !name.eq_ignore_ascii_case("connection") && !name.eq_ignore_ascii_case("keep-alive")
        })
        .map(|line| format!("{line}\r\n"))
        .collect()
}

/// An S3 error answer with its XML body.
fn s3_error(status: u16) -> Vec<u8> {
    let (reason, code, message) = match status {
        503 => (
            "Service Unavailable",
            "SlowDown",
            "Please reduce your request rate.",
        ),
        _ => (
            "Internal Server Error",
            "InternalError",
            "We encountered an internal error. Please try again.",
        ),
    };
    let body = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>{code}</Code><Message>{message}</Message><RequestId>fault-injection</RequestId></Error>"
    );
    format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: application/xml\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

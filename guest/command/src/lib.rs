//! The JSON-lines protocol of the `dsh-fs` command component, independent of
//! WIT so it is unit-tested natively.
//!
//! One request per input line, `{"tool":"read","arguments":{...}}`, and one
//! result per request on its own output line, in order:
//! `{"text":...,"is_error":...,"error":{"code":...,"message":...}|null}`.
//! Blank lines are skipped. A line that is not such a request (bad JSON, not
//! an object, no `tool`, an unknown key, invalid UTF-8) gets an `INVALID_ARGS`
//! result and the session goes on. `arguments` is optional (`{}`) and is
//! handed to the tool as it is, so the tool reports what is wrong with it.
//!
//! ```
//! use dsh_fs_command::{Reply, serve};
//!
//! let input = "{\"tool\":\"read\",\"arguments\":{\"file_path\":\"a.txt\"}}\nnot json\n";
//! let mut output = Vec::new();
//! serve(input.as_bytes(), &mut output, |tool, args| {
//!     Reply::ok(format!("{tool} {args}"))
//! })
//! .unwrap();
//! let lines: Vec<&str> = std::str::from_utf8(&output).unwrap().lines().collect();
//! assert_eq!(lines[0], r#"{"text":"read {\"file_path\":\"a.txt\"}","is_error":false,"error":null}"#);
//! assert!(lines[1].contains(r#""code":"INVALID_ARGS""#));
//! ```
#![deny(missing_docs)]

use serde::Deserializer as _;
use serde::Serialize;
use serde::de::{MapAccess, Visitor};
use serde_json::value::RawValue;
use std::cell::Cell;
use std::io::{self, BufRead, Read, Write};
#[cfg(not(target_family = "wasm"))]
use std::time::{Duration, Instant};

/// The result of one request, as written on one output line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reply {
    /// The text for the model (on error, `CODE: message`).
    pub text: String,
    /// The structured error, `Some` exactly when the call failed.
    pub error: Option<ReplyError>,
}

/// A failure with a stable code.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ReplyError {
    /// Stable code, e.g. `FS_STALE_VERSION` or `INVALID_ARGS`.
    pub code: String,
    /// One line saying what went wrong and what to do next.
    pub message: String,
}

impl Reply {
    /// A successful result with `text`.
    pub fn ok(text: impl Into<String>) -> Self {
        Reply {
            text: text.into(),
            error: None,
        }
    }

    /// A failed result; its text is `CODE: message`.
    pub fn err(code: impl Into<String>, message: impl Into<String>) -> Self {
        let (code, message) = (code.into(), message.into());
        Reply {
            text: format!("{code}: {message}"),
            error: Some(ReplyError { code, message }),
        }
    }

    /// The reply as one JSON object (no newline), keys in the documented
    /// order: `text`, `is_error` (derived from `error`, so the two can never
    /// disagree), `error` (`null` on success). The same bytes as
    /// `serde_json` would write; the text, the bulk of every reply, is
    /// escaped sixteen bytes at a time.
    pub fn to_json(&self) -> String {
        let mut json = String::new();
        self.push_json(&mut json);
        json
    }

    /// Appends [`Reply::to_json`] to `json`.
    pub fn push_json(&self, json: &mut String) {
        json.reserve(self.text.len() + 64);
        json.push_str(r#"{"text":"#);
        push_json_string(json, &self.text);
        match &self.error {
            None => json.push_str(r#","is_error":false,"error":null}"#),
            Some(error) => {
                json.push_str(r#","is_error":true,"error":"#);
                json.push_str(&serde_json::to_string(error).expect("strings always serialize"));
                json.push('}');
            }
        }
    }
}

/// Appends `text` to `json` as a JSON string, escaped as `serde_json`
/// escapes it (`\"`, `\\`, `\n` and the other short forms, `\u00XX` for
/// the other control characters, nothing else). On x86-64 it takes sixteen
/// bytes at a time (`escape_blocks`); in the rest, and everywhere elsewhere,
/// it finds each byte to escape eight bytes at a time ([`next_special`]) and
/// copies the run before it whole: `serde_json`'s byte-by-byte loop was a fifth of `dsh-fs serve`'s
/// time on 4 KiB reads, and looking at each byte of a word that held one
/// (a line feed every line) cost a 4 KiB read's reply 1.9 µs.
fn push_json_string(json: &mut String, text: &str) {
    let bytes = text.as_bytes();
    json.reserve(bytes.len() + 2);
    json.push('"');
    #[cfg(target_arch = "x86_64")]
    let mut start = escape_blocks(json, text);
    #[cfg(not(target_arch = "x86_64"))]
    let mut start = 0;
    let mut buf = [0; 6];
    while let Some(at) = next_special(bytes, start) {
        // An escaped byte is ASCII, so `at` is a character boundary.
        json.push_str(&text[start..at]);
        json.push_str(escaped(bytes[at], &mut buf));
        start = at + 1;
    }
    json.push_str(&text[start..]);
    json.push('"');
}

/// How JSON writes `byte`, one that [`next_special`] finds.
fn escaped(byte: u8, buf: &mut [u8; 6]) -> &str {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    match byte {
        b'"' => "\\\"",
        b'\\' => "\\\\",
        b'\n' => "\\n",
        b'\r' => "\\r",
        b'\t' => "\\t",
        0x08 => "\\b",
        0x0c => "\\f",
        byte => {
            *buf = *b"\\u00__";
            buf[4] = HEX[usize::from(byte >> 4)];
            buf[5] = HEX[usize::from(byte & 0xf)];
            std::str::from_utf8(buf).expect("ASCII")
        }
    }
}

/// Escapes the whole sixteen-byte blocks of `text` onto `json` and returns
/// where they ended, a character boundary. Each block is stored whole past
/// the output's end, and the output is taken up to the block's first byte
/// to escape (all of it when there is none), that byte escaped, and the
/// next block read after it: one store a block where copying each run
/// between two line feeds was a call to `memcpy` (a 4 KiB read's reply,
/// 52 lines: 7.8% of `serve`'s time before).
#[cfg(target_arch = "x86_64")]
fn escape_blocks(json: &mut String, text: &str) -> usize {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_min_epu8, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8, _mm_storeu_si128,
    };
    let bytes = text.as_bytes();
    let mut at = 0;
    let mut buf = [0; 6];
    // SAFETY: SSE2 is part of x86-64 itself. Each load reads sixteen bytes
    // of `bytes` (`at + 16` is at most its length); each store writes
    // sixteen bytes of `out`'s spare capacity, reserved just before. The
    // length is then set over bytes written, `text`'s bytes up to the first
    // to escape; escapes are ASCII. A block may end inside a character
    // (the next one goes on with it): at the end, the output is cut back
    // with `at` to a character boundary, where `text` and so `json` are
    // UTF-8, before `json` is used as a string again.
    unsafe {
        let out = json.as_mut_vec();
        let quote = _mm_set1_epi8(b'"' as i8);
        let backslash = _mm_set1_epi8(b'\\' as i8);
        let last_control = _mm_set1_epi8(0x1f);
        while at + 16 <= bytes.len() {
            out.reserve(16);
            let len = out.len();
            let v = _mm_loadu_si128(bytes.as_ptr().add(at).cast::<__m128i>());
            _mm_storeu_si128(out.as_mut_ptr().add(len).cast::<__m128i>(), v);
            // A byte is at most 0x1f when its unsigned minimum with 0x1f is
            // itself.
            let control = _mm_cmpeq_epi8(_mm_min_epu8(v, last_control), v);
            let found = _mm_or_si128(
                control,
                _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)),
            );
            let mask = _mm_movemask_epi8(found) as u32;
            if mask == 0 {
                out.set_len(len + 16);
                at += 16;
            } else {
                let first = mask.trailing_zeros() as usize;
                out.set_len(len + first);
                out.extend_from_slice(escaped(bytes[at + first], &mut buf).as_bytes());
                at += first + 1;
            }
        }
        while !text.is_char_boundary(at) {
            at -= 1;
            out.pop();
        }
    }
    at
}

/// The index of the first byte at or after `from` that JSON escapes: `"`,
/// `\`, or a control character below 0x20, eight bytes at a time. On x86-64
/// it sees only the last few bytes, after `escape_blocks`.
fn next_special(bytes: &[u8], from: usize) -> Option<usize> {
    const ONES: u64 = u64::from_le_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_le_bytes([0x80; 8]);
    /// The high bit of each byte of `word` below `n` (`n` ≤ 0x80), exact up
    /// to the lowest: a borrow may mark bytes above it, never below.
    fn below(word: u64, n: u8) -> u64 {
        word.wrapping_sub(ONES * u64::from(n)) & !word & HIGHS
    }
    let mut at = from;
    while let Some(chunk) = bytes.get(at..at + 8) {
        let word = u64::from_le_bytes(chunk.try_into().expect("eight bytes"));
        let found = below(word, 0x20)
            | below(word ^ (ONES * u64::from(b'"')), 1)
            | below(word ^ (ONES * u64::from(b'\\')), 1);
        if found != 0 {
            // Little-endian: the lowest set bit is the first byte found.
            return Some(at + (found.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    let tail = bytes.get(at..)?;
    tail.iter()
        .position(|&b| b < 0x20 || b == b'"' || b == b'\\')
        .map(|i| at + i)
}

/// A well-formed request line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    /// The tool name, passed on as given (the tools report unknown names).
    pub tool: String,
    /// The arguments as JSON text (`{}` when absent).
    pub arguments: String,
}

/// Parses one request line; `Err` is the reply for a malformed line.
pub fn parse_request(line: &str, number: u64) -> Result<Request, Reply> {
    well_formed(line).map_or_else(|| checked(line, number), Ok)
}

/// A well-formed line, read in one pass (114 against 190 ns for a 4 KiB
/// read's request); `None` for any other line, which [`checked`] reads
/// again to say what is wrong with it.
fn well_formed(line: &str) -> Option<Request> {
    let unknown = Cell::new(None);
    let mut de = serde_json::Deserializer::from_str(line);
    match de.deserialize_map(RequestKeys { unknown: &unknown }) {
        Ok((Some(Some(tool)), arguments)) if de.end().is_ok() => Some(Request {
            tool,
            arguments: arguments_text(arguments),
        }),
        _ => None,
    }
}

/// The text of `arguments`: `{}` when absent or null.
fn arguments_text(arguments: Option<&RawValue>) -> String {
    match arguments {
        None => "{}".to_owned(),
        Some(raw) if raw.get() == "null" => "{}".to_owned(),
        Some(raw) => raw.get().to_owned(),
    }
}

/// [`parse_request`] checking the whole line before its keys, so that the
/// reply for a malformed line names its first fault.
fn checked(line: &str, number: u64) -> Result<Request, Reply> {
    let bad = |what: String| {
        Reply::err(
            "INVALID_ARGS",
            format!(
                "line {number} is not a request ({what}). Send one JSON object per line: \
                 {{\"tool\":\"read\",\"arguments\":{{\"file_path\":\"...\"}}}}."
            ),
        )
    };
    // Checked whole, but only `tool` and the text of `arguments` are kept: a
    // line of millions of values costs no more memory than its bytes.
    let raw: &RawValue =
        serde_json::from_str(line).map_err(|e| bad(format!("invalid JSON: {e}")))?;
    if !raw.get().starts_with('{') {
        return Err(bad("not a JSON object".into()));
    }
    let unknown = Cell::new(None);
    let parsed = serde_json::Deserializer::from_str(raw.get())
        .deserialize_map(RequestKeys { unknown: &unknown });
    let (tool, arguments) = match parsed {
        Ok(keys) => keys,
        Err(e) => {
            return Err(bad(match unknown.take() {
                Some(key) => {
                    let shown: String = key.chars().take(64).collect();
                    format!("unknown key `{shown}`; the keys are `tool` and `arguments`")
                }
                None => format!("invalid JSON: {e}"),
            }));
        }
    };
    let tool = match tool {
        Some(Some(tool)) => tool,
        Some(None) => return Err(bad("`tool` must be a string".into())),
        None => return Err(bad("`tool` is missing".into())),
    };
    Ok(Request {
        tool,
        arguments: arguments_text(arguments),
    })
}

/// A request line's object, visited key by key: `tool` (`Some(None)` when it
/// is not a string) and the raw `arguments`; the first other key is put in
/// `unknown` and ends the visit.
struct RequestKeys<'u> {
    unknown: &'u Cell<Option<String>>,
}

impl<'de> Visitor<'de> for RequestKeys<'_> {
    type Value = (Option<Option<String>>, Option<&'de RawValue>);

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Self::Value, A::Error> {
        let (mut tool, mut arguments) = (None, None);
        while let Some(key) = access.next_key::<Key>()? {
            match key {
                Key::Tool => {
                    let raw: &'de RawValue = access.next_value()?;
                    tool = Some(serde_json::from_str::<String>(raw.get()).ok());
                }
                Key::Arguments => arguments = Some(access.next_value()?),
                Key::Other(key) => {
                    self.unknown.set(Some(key));
                    return Err(serde::de::Error::custom("unknown key"));
                }
            }
        }
        Ok((tool, arguments))
    }
}

/// A key of a request's object, read without a copy when it is one of
/// the two it may have.
enum Key {
    Tool,
    Arguments,
    Other(String),
}

impl<'de> serde::Deserialize<'de> for Key {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Name;
        impl Visitor<'_> for Name {
            type Value = Key;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a key")
            }

            fn visit_str<E>(self, key: &str) -> Result<Key, E> {
                Ok(match key {
                    "tool" => Key::Tool,
                    "arguments" => Key::Arguments,
                    other => Key::Other(other.to_owned()),
                })
            }
        }
        deserializer.deserialize_identifier(Name)
    }
}

/// Longest request line taken: the 16 MiB argument limit plus room for the
/// JSON around it. A longer line is answered without being held whole.
pub const MAX_LINE_BYTES: u64 = (16 << 20) + (64 << 10);

/// Reads and drops the rest of a line; returns how many bytes it had.
fn skip_line(input: &mut impl BufRead) -> io::Result<u64> {
    let mut dropped = 0u64;
    loop {
        let buf = input.fill_buf()?;
        if buf.is_empty() {
            return Ok(dropped);
        }
        let (used, done) = match memchr_newline(buf) {
            Some(at) => (at + 1, true),
            None => (buf.len(), false),
        };
        input.consume(used);
        dropped += used as u64;
        if done {
            return Ok(dropped);
        }
    }
}

fn memchr_newline(buf: &[u8]) -> Option<usize> {
    buf.iter().position(|&b| b == b'\n')
}

/// The most replies [`serve`] writes at once, when it can: a pipe's default
/// capacity.
pub const WRITE_BYTES: usize = 64 << 10;

/// The most replies [`serve_beside`] hands its writer at once, when more
/// requests wait: each batch is a hand-over between threads, and one that
/// finds the writer asleep (after [`NAPPING`] without a batch) wakes it
/// (batches of four times [`WRITE_BYTES`], a quarter as many as of one,
/// took 1.13–1.20 against 1.20–1.25 s for 100,000 pipelined 4 KiB reads
/// when every batch woke the writer).
#[cfg(not(target_family = "wasm"))]
pub const BATCH_BYTES: usize = 4 * WRITE_BYTES;

/// How long [`serve_beside`]'s writer sleeps before it looks for the next
/// batch again, while batches come less than [`NAPPING`] apart. Waking a
/// thread that waits for a batch is the calls' thread's cost, ~15 µs when
/// the writer slept on an idle CPU of a 2-vCPU VM (a 4 KiB read costs
/// 5.6 µs); a writer that naps finds the batch itself (pipelined 4 KiB
/// reads 0.77–0.78× the library's rate, 0.83–0.84× with naps of 50 or
/// 100 µs, 30 runs of each in turns). A reply written at once, with
/// nothing in flight before it, never waits for a nap.
#[cfg(not(target_family = "wasm"))]
const NAP: Duration = Duration::from_micros(50);

/// How long after its last batch [`serve_beside`]'s writer naps before it
/// sleeps until the next: calls slower than this pay a wake-up each.
#[cfg(not(target_family = "wasm"))]
const NAPPING: Duration = Duration::from_millis(1);

/// The next batch for [`serve_beside`]'s writer, `None` once the calls are
/// over; `last` is when it took the one before.
#[cfg(not(target_family = "wasm"))]
fn next_batch<T>(batches: &std::sync::mpsc::Receiver<T>, last: Instant) -> Option<T> {
    use std::sync::mpsc::TryRecvError;
    loop {
        match batches.try_recv() {
            Ok(batch) => return Some(batch),
            Err(TryRecvError::Disconnected) => return None,
            Err(TryRecvError::Empty) if last.elapsed() < NAPPING => std::thread::sleep(NAP),
            Err(TryRecvError::Empty) => return batches.recv().ok(),
        }
    }
}

/// Serves requests from `input` until its end: each non-blank line is parsed
/// and, when well formed, run through `execute(tool, arguments_json)`; each
/// reply is written as one line. Replies are flushed whenever no whole
/// request is waiting in the input buffer, so a client may wait for a result
/// before sending the next request, and a client that sends many at once
/// gets their replies in as few writes. Fails only when reading `input` or
/// writing `output` fails. A line over [`MAX_LINE_BYTES`] is answered with
/// `INVALID_ARGS` and skipped without being held.
pub fn serve(
    input: impl Read,
    output: impl Write,
    execute: impl FnMut(&str, &str) -> Reply,
) -> io::Result<()> {
    let mut pending = Pending::new(output, WRITE_BYTES);
    answer(input, execute, |reply, waiting| {
        pending.take(&reply, waiting)
    })?;
    pending.end()
}

/// Replies not yet written: each is escaped straight into `text`, and
/// `text` is written whole, so a reply is copied once on its way to `output`.
struct Pending<W> {
    output: W,
    text: String,
    /// The most bytes written at once when they can be.
    piece: usize,
}

impl<W: Write> Pending<W> {
    fn new(output: W, piece: usize) -> Self {
        Pending {
            output,
            text: String::with_capacity(piece),
            piece,
        }
    }

    /// Adds `reply`, and writes what is pending unless a whole request is
    /// `waiting`: then the next reply joins it.
    fn take(&mut self, reply: &Reply, waiting: bool) -> io::Result<()> {
        // Written in pieces of at most `piece` bytes when they can be: a
        // write larger than a pipe's capacity, to a reader that keeps up,
        // still waits for it to read, once for every write.
        if !self.text.is_empty() && self.text.len() + reply.text.len() + 64 > self.piece {
            self.write()?;
        }
        reply.push_json(&mut self.text);
        self.text.push('\n');
        if !waiting {
            self.write()?;
            self.output.flush()?;
        }
        Ok(())
    }

    /// Writes what is pending; a large reply's room is not kept for the
    /// small ones after it.
    fn write(&mut self) -> io::Result<()> {
        self.output.write_all(self.text.as_bytes())?;
        self.text.clear();
        self.text.shrink_to(self.piece);
        Ok(())
    }

    fn end(mut self) -> io::Result<()> {
        self.write()?;
        self.output.flush()
    }
}

/// The loop of [`serve`]: reads each request, runs it, and hands its reply
/// to `deliver` with whether another whole request is already waiting.
fn answer(
    input: impl Read,
    mut execute: impl FnMut(&str, &str) -> Reply,
    mut deliver: impl FnMut(Reply, bool) -> io::Result<()>,
) -> io::Result<()> {
    let mut input = io::BufReader::with_capacity(64 << 10, input);
    let mut line = Vec::new();
    let mut number = 0u64;
    loop {
        line.clear();
        if input
            .by_ref()
            .take(MAX_LINE_BYTES + 1)
            .read_until(b'\n', &mut line)?
            == 0
        {
            return Ok(());
        }
        number += 1;
        let over = line.len() as u64 > MAX_LINE_BYTES && line.last() != Some(&b'\n');
        let reply = if over {
            let dropped = skip_line(&mut input)?;
            Reply::err(
                "INVALID_ARGS",
                format!(
                    "line {number} has {} bytes, more than the {MAX_LINE_BYTES}-byte limit of a \
                     request. Split the content into several calls.",
                    line.len() as u64 + dropped
                ),
            )
        } else {
            match std::str::from_utf8(&line) {
                Err(e) => Reply::err(
                    "INVALID_ARGS",
                    format!(
                        "line {number} is not UTF-8 (invalid byte at offset {}). Send UTF-8 JSON.",
                        e.valid_up_to()
                    ),
                ),
                Ok(text) if text.trim().is_empty() => continue,
                Ok(text) => match parse_request(text.trim_end_matches(['\n', '\r']), number) {
                    Ok(request) => execute(&request.tool, &request.arguments),
                    Err(reply) => reply,
                },
            }
        };
        deliver(reply, memchr_newline(input.buffer()).is_some())?;
    }
}

/// [`serve`], with the replies escaped and written by a thread of their own
/// while the next requests run, when a client sends requests before the
/// last ones are answered: on two cores the escaping and the writes to a
/// pipe leave the calls' thread. A reply that no other request waits
/// behind, with nothing left to write before it, is written where it ran,
/// so a client that waits for each answer waits no longer than under
/// [`serve`]. The same bytes in the same order as [`serve`] writes; when
/// writing fails, at most the calls already running or handed over run
/// before the error is returned. `piece` is the most bytes written at once
/// when more are ready: [`WRITE_BYTES`] for a pipe of the default capacity,
/// a quarter of a larger pipe's.
#[cfg(not(target_family = "wasm"))]
pub fn serve_beside(
    input: impl Read,
    output: impl Write + Send,
    piece: usize,
    execute: impl FnMut(&str, &str) -> Reply,
) -> io::Result<()> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Mutex, mpsc};

    /// Replies handed over at once, and whether to flush after them.
    struct Batch {
        replies: Vec<Reply>,
        flush: bool,
    }
    let pending = Mutex::new(Pending::new(output, piece));
    // Batches handed to the writer and not yet written.
    let in_flight = AtomicUsize::new(0);
    let gone = || io::Error::other("the reply writer stopped");
    let write = |batch: Batch| -> io::Result<()> {
        let mut pending = pending.lock().map_err(|_| gone())?;
        let last = batch.replies.len().saturating_sub(1);
        for (i, reply) in batch.replies.iter().enumerate() {
            pending.take(reply, i < last || !batch.flush)?;
        }
        Ok(())
    };
    // One batch may wait while another is written: past that, the calls
    // wait for the writer, as they wait for `output` under [`serve`].
    let (to_writer, batches) = mpsc::sync_channel::<Batch>(1);
    std::thread::scope(|scope| {
        let writer = std::thread::Builder::new()
            .name("dsh-fs-writer".into())
            .spawn_scoped(scope, || -> io::Result<()> {
                // Moved in whole: a receiver is not shared.
                let batches = batches;
                let mut last = Instant::now();
                while let Some(batch) = next_batch(&batches, last) {
                    write(batch)?;
                    in_flight.fetch_sub(1, Ordering::Release);
                    last = Instant::now();
                }
                Ok(())
            })?;
        let mut replies = Vec::new();
        let mut bytes = 0;
        let served = answer(input, execute, |reply, waiting| {
            bytes += reply.text.len() + 64;
            replies.push(reply);
            if waiting && bytes < BATCH_BYTES {
                return Ok(());
            }
            bytes = 0;
            let batch = Batch {
                replies: std::mem::take(&mut replies),
                flush: !waiting,
            };
            if !waiting && in_flight.load(Ordering::Acquire) == 0 {
                return write(batch);
            }
            in_flight.fetch_add(1, Ordering::Release);
            to_writer.send(batch).map_err(|_| gone())
        });
        let rest = Batch {
            replies,
            flush: true,
        };
        let served = served.and_then(|()| {
            in_flight.fetch_add(1, Ordering::Release);
            to_writer.send(rest).map_err(|_| gone())
        });
        drop(to_writer);
        let wrote = writer.join().unwrap_or_else(|_| Err(gone()));
        // A failed write stops the writer first: its error says why.
        wrote.and(served)
    })?;
    pending.into_inner().map_err(|_| gone())?.end()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    #[test]
    fn replies_are_the_json_serde_writes() {
        let mut texts: Vec<String> = (0u8..0x80).map(|b| format!("a{}b", b as char)).collect();
        texts.extend(
            [
                "",
                "plain ascii text of more than eight bytes",
                "1:\tfn main() {\n2:\t    println!(\"hi\\n\");\r\n3:}\u{7f}",
                "é中😀\u{2028}\"quoted\" and \\ \u{1}\u{1f} end",
                "12345678\"2345678\\\n",
            ]
            .map(String::from),
        );
        for text in texts {
            for reply in [Reply::ok(text.clone()), Reply::err("FS_X", text.clone())] {
                #[derive(Serialize)]
                struct Wire<'a> {
                    text: &'a str,
                    is_error: bool,
                    error: Option<&'a ReplyError>,
                }
                let expected = serde_json::to_string(&Wire {
                    text: &reply.text,
                    is_error: reply.error.is_some(),
                    error: reply.error.as_ref(),
                })
                .unwrap();
                assert_eq!(reply.to_json(), expected, "{text:?}");
            }
        }
    }

    #[test]
    fn every_byte_to_escape_is_found_at_every_place_in_a_word() {
        // Each byte JSON escapes, and its neighbours that it does not, at
        // each offset of two vectors and a word, alone, beside another, after a
        // multi-byte character, and repeated.
        let mut bytes: Vec<char> = (0u8..0x20).map(char::from).collect();
        bytes.extend([
            '"', '\\', ' ', '!', '#', '[', ']', '\u{7f}', 'é', '\u{2028}', '😀',
        ]);
        for &c in &bytes {
            for at in 0..40 {
                let mut plain: Vec<char> =
                    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMN".chars().collect();
                plain[at] = c;
                let alone: String = plain.iter().collect();
                let mut pair = plain.clone();
                pair[(at + 3) % 40] = '\n';
                let pair: String = pair.iter().collect();
                let after = format!("é{alone}");
                let repeated: String = std::iter::repeat_n(c, at + 1).collect();
                for text in [alone, pair, after, repeated] {
                    let mut json = String::new();
                    push_json_string(&mut json, &text);
                    assert_eq!(json, serde_json::to_string(&text).unwrap(), "{text:?}");
                }
            }
        }
    }

    fn run(input: &str) -> Vec<Value> {
        let execute = |tool: &str, args: &str| {
            if tool == "fail" {
                Reply::err("FS_NOT_FOUND", "x does not exist")
            } else {
                Reply::ok(format!("{tool}|{args}"))
            }
        };
        let mut out = Vec::new();
        serve(input.as_bytes(), &mut out, execute).unwrap();
        for piece in [WRITE_BYTES, 4 * WRITE_BYTES] {
            let mut beside = Vec::new();
            serve_beside(input.as_bytes(), &mut beside, piece, execute).unwrap();
            assert_eq!(
                beside, out,
                "serve_beside wrote other bytes ({piece}-byte pieces)"
            );
        }
        String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    #[test]
    fn one_reply_per_request_in_order() {
        let out = run(concat!(
            "{\"tool\":\"read\",\"arguments\":{\"file_path\":\"a\"}}\n",
            "\n   \r\n",
            "{\"tool\":\"write\"}\r\n",
            "{\"tool\":\"fail\",\"arguments\":null}",
        ));
        assert_eq!(out.len(), 3);
        assert_eq!(
            out[0],
            json!({"text": "read|{\"file_path\":\"a\"}", "is_error": false, "error": null})
        );
        assert_eq!(out[1]["text"], "write|{}");
        assert_eq!(
            out[2],
            json!({
                "text": "FS_NOT_FOUND: x does not exist",
                "is_error": true,
                "error": {"code": "FS_NOT_FOUND", "message": "x does not exist"},
            })
        );
    }

    #[test]
    fn an_over_long_line_is_answered_and_the_session_goes_on() {
        let long = io::repeat(b'x').take(20 << 20);
        let input = io::BufReader::new(long.chain(&b"\n{\"tool\":\"read\"}\n"[..]));
        let mut out = Vec::new();
        let mut calls = Vec::new();
        serve(input, &mut out, |tool, _| {
            calls.push(tool.to_owned());
            Reply::ok(tool.to_owned())
        })
        .unwrap();
        let out: Vec<Value> = String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(out.len(), 2, "{out:?}");
        assert_eq!(out[0]["error"]["code"], "INVALID_ARGS");
        let text = out[0]["text"].as_str().unwrap();
        assert!(text.contains("line 1 has 20971521 bytes"), "{text}");
        assert_eq!(out[1]["text"], "read");
        assert_eq!(calls, ["read"]);
    }

    #[test]
    fn the_one_pass_reading_agrees_with_the_checked_one() {
        let lines = [
            r#"{"tool":"read","arguments":{"file_path":"a"}}"#,
            r#"  { "arguments" : {"n": [1, {"x": null}]} , "tool" : "edit" }  "#,
            r#"{"t\u006fol":"r\u00e9ad","arguments":null}"#,
            r#"{"tool":"write"}"#,
            r#"{"tool":"a","tool":"b","arguments":{}}"#,
            r#"{"tool":"read","arguments":{}} x"#,
            r#"{"tool":"read","arguments":{}"#,
            r#"{"tool":7,"arguments":{}}"#,
            r#"{"tool":"read","args":{}}"#,
            r#"{"arguments":{}}"#,
            r#"[{"tool":"read"}]"#,
            "{}",
            "",
        ];
        for line in lines {
            let checked = checked(line, 1);
            match well_formed(line) {
                Some(request) => assert_eq!(Ok(&request), checked.as_ref(), "{line}"),
                None => assert!(checked.is_err(), "{line}: {checked:?}"),
            }
        }
        let read = well_formed(lines[2]).expect("escaped keys and a null are well formed");
        assert_eq!(
            (read.tool.as_str(), read.arguments.as_str()),
            ("réad", "{}")
        );
    }

    #[test]
    fn malformed_lines_get_error_replies_and_the_session_goes_on() {
        let input = [
            &b"not json\n"[..],
            b"[1,2]\n",
            b"{\"arguments\":{}}\n",
            b"{\"tool\":7}\n",
            b"{\"tool\":\"read\",\"args\":{}}\n",
            b"{\"tool\":\"read\",\"arguments\":{}}\xff\n",
            b"{\"tool\":\"read\"}\n",
        ]
        .concat();
        let mut out = Vec::new();
        serve(&input[..], &mut out, |_, _| Reply::ok("ran")).unwrap();
        let replies: Vec<Value> = String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(replies.len(), 7);
        for (i, reply) in replies[..6].iter().enumerate() {
            assert_eq!(reply["is_error"], true, "{reply}");
            assert_eq!(reply["error"]["code"], "INVALID_ARGS", "{reply}");
            let line = format!("line {} ", i + 1);
            assert!(reply["text"].as_str().unwrap().contains(&line), "{reply}");
        }
        assert!(replies[4]["text"].as_str().unwrap().contains("`args`"));
        assert_eq!(replies[6]["text"], "ran");
    }

    /// Replies of many sizes, one over [`WRITE_BYTES`], and malformed lines
    /// among them.
    fn many_requests(n: usize) -> (String, impl FnMut(&str, &str) -> Reply + Copy) {
        let mut input = String::new();
        for i in 0..n {
            match i % 7 {
                3 => input.push_str("not json\n"),
                _ => input.push_str(&format!("{{\"tool\":\"t\",\"arguments\":{{\"n\":{i}}}}}\n")),
            }
        }
        let execute = |_: &str, args: &str| {
            let n: usize = args[5..args.len() - 1].parse().unwrap();
            let size = if n == 500 {
                3 * WRITE_BYTES
            } else {
                n % 97 * 41
            };
            Reply::ok(format!("{n}:{}", "x\"\n".repeat(size / 3)))
        };
        (input, execute)
    }

    /// An output that takes its time over each write, so that batches are
    /// still waiting for the writer when the next replies are ready.
    struct Slow(Vec<u8>);

    impl Write for Slow {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            std::thread::sleep(std::time::Duration::from_micros(200));
            self.0.extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn replies_written_beside_the_calls_keep_their_order() {
        let (input, execute) = many_requests(3000);
        let mut out = Vec::new();
        serve(input.as_bytes(), &mut out, execute).unwrap();
        // Read a few bytes at a time, so that a request is often cut at the
        // end of the input buffer and its reply is written at once, while
        // the batches before it may still be on their way.
        struct Trickle<'a>(&'a [u8]);
        impl Read for Trickle<'_> {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                let n = buf.len().min(self.0.len()).min(1000);
                buf[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        assert_eq!(out.iter().filter(|&&b| b == b'\n').count(), 3000);
        for piece in [WRITE_BYTES, 4 * WRITE_BYTES] {
            let mut slow = Slow(Vec::new());
            serve_beside(Trickle(input.as_bytes()), &mut slow, piece, execute).unwrap();
            assert!(
                slow.0 == out,
                "the replies came out in another order or changed ({piece}-byte pieces)"
            );
        }
    }

    #[test]
    fn a_failed_write_stops_the_calls_and_is_returned() {
        struct Broken(usize);
        impl Write for Broken {
            fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
                if self.0 < buf.len() {
                    return Err(io::Error::new(io::ErrorKind::BrokenPipe, "reader gone"));
                }
                self.0 -= buf.len();
                Ok(buf.len())
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let (input, mut execute) = many_requests(20_000);
        let mut calls = 0;
        let e = serve_beside(
            input.as_bytes(),
            Broken(200 << 10),
            WRITE_BYTES,
            |tool, args| {
                calls += 1;
                execute(tool, args)
            },
        )
        .unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::BrokenPipe, "{e}");
        assert!(calls < 5_000, "{calls} calls ran after the output broke");
    }

    #[test]
    fn a_client_that_waits_for_each_reply_gets_it() {
        let (from_client, mut to_server) = io::pipe().unwrap();
        let (from_server, to_client) = io::pipe().unwrap();
        let server = std::thread::spawn(move || {
            serve_beside(from_client, to_client, WRITE_BYTES, |tool, args| {
                Reply::ok(format!("{tool}|{args}"))
            })
        });
        let (done, finished) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut replies = io::BufReader::new(from_server);
            let mut line = String::new();
            for i in 0..200 {
                writeln!(to_server, r#"{{"tool":"t","arguments":{{"n":{i}}}}}"#).unwrap();
                line.clear();
                replies.read_line(&mut line).unwrap();
                let reply: Value = serde_json::from_str(&line).unwrap();
                assert_eq!(reply["text"], format!(r#"t|{{"n":{i}}}"#));
            }
            drop(to_server);
            done.send(()).unwrap();
        });
        finished
            .recv_timeout(std::time::Duration::from_secs(20))
            .expect("every reply within 20 s of its request");
        server.join().unwrap().unwrap();
    }
}

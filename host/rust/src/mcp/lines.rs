//! Reading stdin as lines without ever holding more than one line of the
//! limit: bytes are charged to a budget before they are copied, and a longer
//! line keeps only its ends while the rest is read and dropped.

use super::salvage::EDGE_BYTES;
use std::io;
use std::sync::Arc;
use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// A line of input, without its `\n`.
pub(super) enum Line {
    /// A line of at most the reader's limit, with its share of the budget.
    Complete(Vec<u8>, Option<OwnedSemaphorePermit>),
    /// A longer line: its first and last [`EDGE_BYTES`] and its length.
    TooLong {
        head: Vec<u8>,
        tail: Vec<u8>,
        len: u64,
    },
}

/// Reads lines of at most `max_line` bytes, charging each to a budget.
pub(super) struct LineReader<R> {
    input: BufReader<R>,
    max_line: usize,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    /// Lines of `input`, read through a buffer of `buffer` bytes.
    pub(super) fn new(input: R, buffer: usize, max_line: usize) -> Self {
        LineReader {
            input: BufReader::with_capacity(buffer, input),
            max_line,
        }
    }

    /// The next line, or `None` at the end of input. A line takes permits
    /// from `budget` for its bytes before they are copied, so reading waits
    /// while the budget is spent; a line over `max_line` keeps only
    /// its ends (and no permits) while the rest is read and dropped.
    pub(super) async fn next(&mut self, budget: &Arc<Semaphore>) -> io::Result<Option<Line>> {
        let mut line = Vec::new();
        let mut charge: Option<OwnedSemaphorePermit> = None;
        let mut tail: Option<Vec<u8>> = None;
        let mut len = 0u64;
        loop {
            let available = self.input.fill_buf().await?.len();
            if available == 0 {
                return Ok((len > 0).then(|| finish(line, charge, tail, len)));
            }
            if tail.is_none() {
                let want = available.min(self.max_line + 1 - line.len());
                let permits = u32::try_from(want).expect("at most the read buffer");
                let Ok(permit) = budget.clone().acquire_many_owned(permits).await else {
                    return Ok(None);
                };
                match &mut charge {
                    Some(charge) => charge.merge(permit),
                    None => charge = Some(permit),
                }
            }
            let buf = self.input.fill_buf().await?; // buffered: no read
            let newline = memchr::memchr(b'\n', buf);
            let chunk = &buf[..newline.unwrap_or(buf.len())];
            len += chunk.len() as u64;
            match &mut tail {
                None if line.len() + chunk.len() <= self.max_line => {
                    line.extend_from_slice(chunk);
                }
                None => {
                    let mut kept = Vec::with_capacity(3 * EDGE_BYTES);
                    keep_last(&mut kept, &line);
                    keep_last(&mut kept, chunk);
                    line.truncate(EDGE_BYTES);
                    line.shrink_to_fit();
                    charge = None;
                    tail = Some(kept);
                }
                Some(kept) => keep_last(kept, chunk),
            }
            let consumed = chunk.len() + usize::from(newline.is_some());
            self.input.consume(consumed);
            if let Some(charge) = &mut charge {
                drop(charge.split(charge.num_permits() - line.len()));
            }
            if newline.is_some() {
                return Ok(Some(finish(line, charge, tail, len)));
            }
        }
    }
}

fn finish(
    line: Vec<u8>,
    charge: Option<OwnedSemaphorePermit>,
    tail: Option<Vec<u8>>,
    len: u64,
) -> Line {
    match tail {
        None => Line::Complete(line, charge),
        Some(mut tail) => {
            tail.drain(..tail.len().saturating_sub(EDGE_BYTES));
            Line::TooLong {
                head: line,
                tail,
                len,
            }
        }
    }
}

/// Appends `bytes` to `kept`, keeping at least its last [`EDGE_BYTES`] and at
/// most twice that.
fn keep_last(kept: &mut Vec<u8>, bytes: &[u8]) {
    if bytes.len() >= EDGE_BYTES {
        kept.clear();
        kept.extend_from_slice(&bytes[bytes.len() - EDGE_BYTES..]);
        return;
    }
    kept.extend_from_slice(bytes);
    if kept.len() > 2 * EDGE_BYTES {
        kept.drain(..kept.len() - EDGE_BYTES);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_line_over_the_limit_keeps_its_ends_and_no_budget() {
        let long = format!("{{\"id\":1,{}\"id\":2}}", "x".repeat(100_000));
        let input = format!("{long}\r\n\n{{}}");
        let budget = Arc::new(Semaphore::new(60_001));
        let mut lines = LineReader::new(input.as_bytes(), 4096, 60_000);
        let Some(Line::TooLong { head, tail, len }) = lines.next(&budget).await.unwrap() else {
            panic!("not too long");
        };
        assert_eq!(len, long.len() as u64 + 1);
        assert_eq!(head, long.as_bytes()[..EDGE_BYTES]);
        assert_eq!(
            tail,
            format!("{long}\r").as_bytes()[len as usize - EDGE_BYTES..]
        );
        assert_eq!(budget.available_permits(), 60_001);

        let Some(Line::Complete(blank, _)) = lines.next(&budget).await.unwrap() else {
            panic!("no blank line");
        };
        assert!(blank.is_empty());
        let Some(Line::Complete(last, charge)) = lines.next(&budget).await.unwrap() else {
            panic!("no last line");
        };
        assert_eq!(
            (last.as_slice(), charge.unwrap().num_permits()),
            (&b"{}"[..], 2)
        );
        assert!(lines.next(&budget).await.unwrap().is_none());
    }
}

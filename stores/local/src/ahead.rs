//! Reading ahead while a large file is read from start to end: a second
//! thread `pread`s the next blocks while the caller decodes and scans the
//! last one, so the kernel's copy into memory (two fifths of a first read of
//! a large file) runs beside that work instead of before it.
//!
//! Only the bytes move to the other thread; what they mean, their hash and
//! the version are the caller's, in order, as without it. The thread reads
//! from its own descriptor of the same open file, stays at most [`DEPTH`]
//! blocks ahead, and stops when the reader is dropped or the file ends.

use cap_std::fs::File;
use rustix::io::Errno;
use std::io;
use std::sync::mpsc::{Receiver, RecvError, TryRecvError, sync_channel};
use std::time::{Duration, Instant};

/// Bytes read ahead at a time: the component's stream chunk, so that a
/// block becomes the chunk's buffer whole, without a copy.
pub(crate) const BLOCK: usize = 256 << 10;

/// How long a reader waiting for a block polls for it before it sleeps.
const SPIN: Duration = Duration::from_micros(100);

/// Blocks read and not yet taken, at most.
const DEPTH: usize = 2;

/// Bytes left to read below which no thread is started: a short rest is not
/// worth a thread's start and the hand-offs (a 1 MiB read takes 0.6 ms
/// without one).
pub(crate) const MIN_LEFT: u64 = 2 << 20;

/// The blocks of one file from one offset on, read by a thread.
#[derive(Debug)]
pub(crate) struct ReadAhead {
    blocks: Receiver<io::Result<Vec<u8>>>,
    /// The block being taken from, and how much of it was taken.
    block: Vec<u8>,
    taken: usize,
    /// File offset of the next byte handed out.
    at: u64,
    ended: bool,
}

impl ReadAhead {
    /// Starts reading `file` ahead from `at`.
    pub(crate) fn start(file: &File, at: u64) -> io::Result<Self> {
        let file = file.try_clone()?;
        let (sender, blocks) = sync_channel(DEPTH);
        std::thread::Builder::new()
            .name("dsh-fs-read-ahead".into())
            .spawn(move || {
                let mut offset = at;
                loop {
                    let mut block = Vec::with_capacity(BLOCK);
                    let read = loop {
                        match rustix::io::pread(
                            &file,
                            rustix::buffer::spare_capacity(&mut block),
                            offset,
                        ) {
                            Err(Errno::INTR) => continue,
                            other => break other,
                        }
                    };
                    let last = !matches!(read, Ok(n) if n > 0);
                    offset += *read.as_ref().unwrap_or(&0) as u64;
                    // A closed channel: the reader is gone.
                    if sender
                        .send(read.map(|_| block).map_err(io::Error::from))
                        .is_err()
                        || last
                    {
                        return;
                    }
                }
            })?;
        Ok(ReadAhead {
            blocks,
            block: Vec::new(),
            taken: 0,
            at,
            ended: false,
        })
    }

    /// The next block. When the reader is ahead of the thread, it polls
    /// for up to [`SPIN`] before it sleeps: a block is read in less than
    /// that from the page cache, and a reader that slept would wait for the
    /// thread's wake-up (on a VM, an interrupt to another virtual CPU) at
    /// every block.
    fn next_block(&self) -> Result<io::Result<Vec<u8>>, RecvError> {
        let until = Instant::now() + SPIN;
        loop {
            for _ in 0..64 {
                match self.blocks.try_recv() {
                    Ok(block) => return Ok(block),
                    Err(TryRecvError::Empty) => std::hint::spin_loop(),
                    Err(TryRecvError::Disconnected) => return Err(RecvError),
                }
            }
            if Instant::now() >= until {
                return self.blocks.recv();
            }
        }
    }

    /// The offset a read must start at to be served from here.
    pub(crate) fn at(&self) -> u64 {
        self.at
    }

    /// Appends the next bytes to `buf`, at most its spare capacity, like
    /// `Object::read_append`: 0 at the end of the file. `None` when the
    /// thread is gone without a word, for the caller to read itself.
    pub(crate) fn read_append(&mut self, buf: &mut Vec<u8>) -> Option<io::Result<usize>> {
        let mut appended = 0;
        while buf.len() < buf.capacity() {
            if self.taken == self.block.len() {
                if self.ended {
                    break;
                }
                match self.next_block() {
                    Ok(Ok(block)) if block.is_empty() => self.ended = true,
                    Ok(Ok(block)) => (self.block, self.taken) = (block, 0),
                    // What was read so far is handed out first.
                    Ok(Err(_)) | Err(_) if appended > 0 => break,
                    Ok(Err(e)) => return Some(Err(e)),
                    Err(_) => return None,
                }
                continue;
            }
            let left = self.block.len() - self.taken;
            if buf.is_empty() && self.taken == 0 && left <= buf.capacity() {
                // The whole block is the buffer.
                *buf = std::mem::take(&mut self.block);
                appended = left;
                self.taken = 0;
                break;
            }
            let n = left.min(buf.capacity() - buf.len());
            buf.extend_from_slice(&self.block[self.taken..self.taken + n]);
            self.taken += n;
            appended += n;
        }
        self.at += appended as u64;
        Some(Ok(appended))
    }
}

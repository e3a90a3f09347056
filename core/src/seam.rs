//! The pieces of the text layer that stores use too: lexical path
//! normalization, version tokens and the freshness rule, the checks of a
//! guarded write, the stream decoder, and I/O error codes. One copy, so a
//! version or an intent means the same thing on every backend.

use crate::{ErrorCode, FsError, Skipped, Version, WriteIntent};
use std::path::{Path, PathBuf};

/// Longest path accepted (Linux's `PATH_MAX`).
pub const MAX_PATH_BYTES: usize = 4096;

/// Turns a model path into a normalized root-relative path with `/`
/// separators, purely lexically: `.` dropped, `..` applied, absolute paths
/// accepted only under one of `roots` (`sandbox-denied` otherwise, and for a
/// `..` that climbs above the root).
pub fn normalize(path: &str, roots: &[PathBuf]) -> Result<String, FsError> {
    if path.is_empty() {
        return Err(FsError::new(ErrorCode::InvalidInput, "the path is empty"));
    }
    if path.len() > MAX_PATH_BYTES {
        return Err(FsError::new(
            ErrorCode::InvalidInput,
            format!(
                "the path is {} bytes long, more than the {MAX_PATH_BYTES} allowed",
                path.len()
            ),
        ));
    }
    if path.contains('\0') {
        return Err(FsError::new(
            ErrorCode::InvalidInput,
            "the path contains a NUL byte",
        ));
    }
    let relative = if Path::new(path).is_absolute() {
        let rel = roots
            .iter()
            .find_map(|root| Path::new(path).strip_prefix(root).ok())
            .ok_or_else(|| FsError::sandbox_denied(path))?;
        rel.to_str().expect("a suffix of a str is a str")
    } else {
        path
    };
    let mut parts: Vec<&str> = Vec::new();
    for part in relative.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop().ok_or_else(|| FsError::sandbox_denied(path))?;
            }
            name => parts.push(name),
        }
    }
    Ok(parts.join("/"))
}

/// The display form of a root-relative key.
pub fn display(key: &str) -> String {
    if key.is_empty() {
        ".".to_owned()
    } else {
        key.to_owned()
    }
}

/// A version token: backend metadata, then the content hash.
pub fn version(meta: &str, hash: u128) -> Version {
    // Written out by hand, as `{meta}:{hash:032x}`: every read makes one.
    let mut v = String::with_capacity(meta.len() + 33);
    v.push_str(meta);
    v.push(':');
    for i in (0..32).rev() {
        let d = (hash >> (i * 4)) as u32 & 0xf;
        v.push(char::from_digit(d, 16).unwrap_or('0'));
    }
    v
}

/// Whether `expected` still describes a file whose content hashes to
/// `hash` (metadata `meta`): the content hash decides when the token has one,
/// so a `touch` is not a change; a metadata-only token (from `stat`) must match
/// exactly.
pub fn still_fresh(expected: &str, meta: &str, hash: u128) -> bool {
    match expected.rsplit_once(':') {
        Some((_, h)) => u128::from_str_radix(h, 16).is_ok_and(|h| h == hash),
        None => expected == meta,
    }
}

/// The shared checks of a write under `intent`, given the current file (if
/// any) as `(metadata token, content hash)`.
pub fn check_write_intent(
    display: &str,
    intent: Option<&WriteIntent>,
    current: Option<(&str, u128)>,
) -> Result<(), FsError> {
    match (intent, current) {
        (None, _) | (Some(WriteIntent::CreateIfAbsent), None) => Ok(()),
        (Some(WriteIntent::CreateIfAbsent), Some(_)) => Err(FsError::new(
            ErrorCode::NotObserved,
            format!("{display} already exists and has not been read in this session"),
        )),
        (Some(WriteIntent::ReplaceIfVersion(_)), None) => Err(vanished(display)),
        (Some(WriteIntent::ReplaceIfVersion(v)), Some((meta, hash))) => {
            if still_fresh(v, meta, hash) {
                Ok(())
            } else {
                Err(FsError::stale(display))
            }
        }
    }
}

/// `stale-version` for a file that is gone.
#[cold]
pub fn vanished(display: &str) -> FsError {
    FsError::new(
        ErrorCode::StaleVersion,
        format!("{display} no longer exists (it was deleted or moved since it was read)"),
    )
}

/// The seam's code for an I/O error, by its portable kind. Backends first
/// handle what only they can recognize (a sandbox escape, a symlink loop),
/// then hand the rest here.
pub fn from_io(e: &std::io::Error, shown: &str) -> FsError {
    use std::io::ErrorKind as K;
    match e.kind() {
        K::NotFound => FsError::not_found(shown),
        K::PermissionDenied => FsError::new(
            ErrorCode::PermissionDenied,
            format!("access to {shown} was denied"),
        ),
        K::NotADirectory => FsError::new(
            ErrorCode::NotDirectory,
            format!("a parent of {shown} is not a directory"),
        ),
        K::IsADirectory => {
            FsError::new(ErrorCode::NotRegularFile, format!("{shown} is a directory"))
        }
        K::InvalidFilename => FsError::new(
            ErrorCode::InvalidInput,
            format!("{shown}: a name is too long"),
        ),
        K::ReadOnlyFilesystem => FsError::new(
            ErrorCode::PermissionDenied,
            format!("{shown} is on a read-only filesystem"),
        ),
        K::StorageFull => FsError::new(
            ErrorCode::IoError,
            format!("no space left to write {shown}"),
        ),
        _ => FsError::new(ErrorCode::IoError, format!("{shown}: {e}")),
    }
}

/// `invalid-input` for a path that goes through a symbolic link loop.
#[cold]
pub fn symlink_loop(shown: &str) -> FsError {
    FsError::new(
        ErrorCode::InvalidInput,
        format!("{shown} goes through a symbolic link loop"),
    )
}

/// Largest chunk a provider's stream hands out, whatever the caller asks for.
pub const MAX_CHUNK: u32 = 8 << 20;

/// The piece a skip reads at a time: small enough that a core's cache holds
/// it while it is hashed, checked and counted.
pub const SKIP_PIECE: usize = 256 << 10;

/// The text side of a provider's `text-stream`: the backend reads raw bytes
/// (from a file, a ranged GET, ...) into buffers this makes, and it decodes
/// them, hashes them when the stream began at the start of the file, and
/// makes the version once the bytes end.
#[derive(Debug)]
pub struct StreamText {
    decoder: crate::text::StreamDecoder,
    /// Hashes the content when the stream started at the beginning.
    hasher: Option<crate::text::ContentHasher>,
    meta: String,
    shown: String,
    ended: bool,
    version: Option<Version>,
    /// Decoded text not handed out yet, from `carry.1` on: what a skip
    /// read past the line feed it stopped at.
    carry: (String, usize),
    /// A buffer kept between the pieces a skip reads.
    spare: Vec<u8>,
}

impl StreamText {
    /// The state of a stream of the file `shown` at metadata `meta`,
    /// starting `start` bytes into its text (0: at the beginning, BOM included).
    pub fn new(meta: String, shown: &str, start: u64) -> Self {
        let (decoder, hasher) = if start == 0 {
            (
                crate::text::StreamDecoder::new(),
                Some(crate::text::ContentHasher::new()),
            )
        } else {
            (crate::text::StreamDecoder::resume(start), None)
        };
        StreamText {
            decoder,
            hasher,
            meta,
            shown: shown.to_owned(),
            ended: false,
            version: None,
            carry: (String::new(), 0),
            spare: Vec::new(),
        }
    }

    /// The path shown to the model, for messages.
    pub fn shown(&self) -> &str {
        &self.shown
    }

    /// Whether the bytes have ended (every later chunk is `None`).
    pub fn ended(&self) -> bool {
        self.ended
    }

    /// How many new bytes to read for a chunk of at most `max_bytes`.
    pub fn want(&self, max_bytes: u32) -> usize {
        (max_bytes.clamp(4, MAX_CHUNK) as usize)
            .saturating_sub(self.decoder.pending())
            .max(1)
    }

    /// A buffer holding the bytes carried over from the last chunk; append
    /// the new bytes after its current length and pass it to [`Self::feed`].
    pub fn buffer(&mut self, capacity: usize) -> Vec<u8> {
        self.decoder.begin(capacity)
    }

    /// Decodes `buf` (from [`Self::buffer`]; its new bytes start at `from`),
    /// returning the text of every complete character, without copying.
    pub fn feed(&mut self, buf: Vec<u8>, from: usize) -> Result<String, FsError> {
        if let Some(hasher) = &mut self.hasher {
            hasher.update(&buf[from..]);
        }
        self.decoder
            .decode(buf)
            .map_err(|e| FsError::not_text(&self.shown, &e.to_string()))
    }

    /// The bytes ended; `buf` (from [`Self::buffer`]) holds what was carried
    /// over, which must not be a cut-off character.
    pub fn end(&mut self, buf: Vec<u8>) -> Result<(), FsError> {
        let not_text = |e: crate::text::NotText| FsError::not_text(&self.shown, &e.to_string());
        self.decoder.decode(buf).map_err(not_text)?;
        self.decoder.finish().map_err(not_text)?;
        self.ended = true;
        self.version = self
            .hasher
            .as_ref()
            .map(|h| version(&self.meta, h.finish()));
        Ok(())
    }

    /// The next chunk of text from a byte source: `read` appends at most the
    /// buffer's spare capacity to it and returns how many bytes it read (0 at
    /// the end), like [`crate::store::Object::read_append`].
    pub fn next_from(
        &mut self,
        max_bytes: u32,
        mut read: impl FnMut(&mut Vec<u8>) -> Result<usize, FsError>,
    ) -> Result<Option<String>, FsError> {
        if let Some(text) = self.take_carry(max_bytes) {
            return Ok(Some(text));
        }
        if self.ended {
            return Ok(None);
        }
        let want = self.want(max_bytes);
        loop {
            // Read straight into the buffer that becomes the chunk's String,
            // limited to `want` bytes by its spare capacity (`buffer` makes
            // it with exactly that room, as `Vec::with_capacity` promises).
            let mut buf = self.buffer(want);
            let from = buf.len();
            let n = read(&mut buf)?;
            debug_assert_eq!(buf.len(), from + n);
            if n == 0 {
                self.end(buf)?;
                return Ok(None);
            }
            let text = self.feed(buf, from)?;
            if !text.is_empty() {
                return Ok(Some(text));
            }
        }
    }

    /// At most `max_bytes` of the text a skip left over, if it left any.
    fn take_carry(&mut self, max_bytes: u32) -> Option<String> {
        let (text, at) = &mut self.carry;
        let rest = text.get(*at..).filter(|rest| !rest.is_empty())?;
        let cut = rest.floor_char_boundary(max_bytes.clamp(4, MAX_CHUNK) as usize);
        if *at == 0 && cut == text.len() {
            return Some(std::mem::take(text));
        }
        let piece = rest[..cut].to_owned();
        *at += cut;
        Some(piece)
    }

    /// Passes over the next text (see [`crate::store::TextStream::skip`]),
    /// reading it from a byte source as [`Self::next_from`] does, a piece of
    /// at most [`SKIP_PIECE`] bytes at a time into one reused buffer: each
    /// piece is hashed, checked and counted while it is in cache, and none
    /// is handed out. Text read past the line feed it stops at is kept for
    /// the next call.
    pub fn skip_from(
        &mut self,
        max_bytes: u32,
        max_lines: u64,
        mut read: impl FnMut(&mut Vec<u8>) -> Result<usize, FsError>,
    ) -> Result<Option<Skipped>, FsError> {
        let max = u64::from(max_bytes.max(4));
        let mut done = Skipped::default();
        while done.lines < max_lines && done.bytes < max {
            let (text, at) = if self.carry.1 < self.carry.0.len() {
                std::mem::take(&mut self.carry)
            } else if self.ended {
                break;
            } else {
                let mut buf = self.decoder.begin_in(std::mem::take(&mut self.spare));
                let from = buf.len();
                buf.reserve_exact((max - done.bytes).min(SKIP_PIECE as u64) as usize);
                if read(&mut buf)? == 0 {
                    self.end(buf)?;
                    break;
                }
                (self.feed(buf, from)?, 0)
            };
            let rest = &text.as_bytes()[at..];
            let room = text[at..].floor_char_boundary((max - done.bytes) as usize);
            let pass = match crate::text::nth_newline(&rest[..room], max_lines - done.lines) {
                Ok(feed) => {
                    done.lines = max_lines;
                    feed + 1
                }
                Err(seen) => {
                    done.lines += seen;
                    room
                }
            };
            if pass > 0 {
                done.bytes += pass as u64;
                done.mid_line = rest[pass - 1] != b'\n';
            }
            if at + pass < text.len() {
                self.carry = (text, at + pass);
                break;
            }
            self.spare = text.into_bytes();
        }
        if done.bytes == 0 && max_lines > 0 {
            return Ok(None);
        }
        Ok(Some(done))
    }

    /// The version of the whole content, once ended; `None` for a stream that
    /// began past the start.
    pub fn version(&self) -> Option<Version> {
        self.version.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_is_lexical_and_confined() {
        let root = &[PathBuf::from("/work/root")];
        let ok = |p: &str| normalize(p, root).unwrap();
        let denied = |p: &str| normalize(p, root).unwrap_err().code;
        assert_eq!(ok("a/./b//c.txt"), "a/b/c.txt");
        assert_eq!(ok("a/../b.txt"), "b.txt");
        assert_eq!(ok("/work/root/x/y"), "x/y");
        assert_eq!(ok("."), "");
        assert_eq!(ok("/work/root"), "");
        assert_eq!(denied("../x"), ErrorCode::SandboxDenied);
        assert_eq!(denied("a/../../x"), ErrorCode::SandboxDenied);
        assert_eq!(denied("/etc/passwd"), ErrorCode::SandboxDenied);
        assert_eq!(denied("/work/rootx/y"), ErrorCode::SandboxDenied);
        assert_eq!(denied("/work/root/../x"), ErrorCode::SandboxDenied);
        assert_eq!(denied(""), ErrorCode::InvalidInput);
        assert_eq!(denied("a\0b"), ErrorCode::InvalidInput);
    }

    #[test]
    fn a_version_is_the_token_then_the_hash_in_32_hex_digits() {
        for hash in [0, 1, 0xabc, u128::MAX, 1 << 127, 0x0123_4567_89ab_cdef] {
            assert_eq!(version("m.1", hash), format!("m.1:{hash:032x}"));
        }
    }

    #[test]
    fn freshness_follows_content_not_metadata() {
        let v = version("m1", 42);
        assert!(still_fresh(&v, "m2", 42));
        assert!(!still_fresh(&v, "m1", 43));
        assert!(still_fresh("m1", "m1", 0));
        assert!(!still_fresh("m1", "m2", 0));
    }
}

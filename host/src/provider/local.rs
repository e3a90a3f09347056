//! [`LocalProvider`]: a directory on the local disk, confined with cap-std.
//!
//! Every operation goes through a `cap_std::fs::Dir` opened on the root, so
//! `..`, absolute symlinks and symlinks whose target leaves the root fail at
//! each use, not only at resolve time. Writes are atomic (same-directory temp
//! file, fsync, rename, fsync of the directory) and mutations hold an
//! exclusive `flock` on the parent directory, which serialises threads and
//! processes alike.

use super::{
    MAX_CHUNK, MAX_EDIT_BYTES, Provider, Target, TextStream, check_write_intent, display,
    normalize, splice_checked, vanished, version,
};
use cap_std::ambient_authority;
use cap_std::fs::{Dir, File, Metadata, MetadataExt, OpenOptions, OpenOptionsExt};
use dsh_fs_core::text::{ContentHasher, StreamDecoder, content_hash};
use dsh_fs_core::{
    EditOutcome, EditRequest, EntryKind, ErrorCode, FsError, FsInfo, TextContent, Version,
    WriteIntent, WriteOperation, WriteOutcome, text,
};
use rustix::fs::{FlockOperation, OFlags};
use rustix::io::Errno;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// A workspace rooted at one local directory.
#[derive(Debug)]
pub struct LocalProvider {
    dir: Dir,
    /// Absolute spellings of the root that absolute model paths may start with.
    roots: Vec<PathBuf>,
}

impl LocalProvider {
    /// Opens `root` (which must be an existing directory) as the workspace.
    pub fn new(root: impl AsRef<Path>) -> io::Result<Self> {
        let root = root.as_ref();
        let dir = Dir::open_ambient_dir(root, ambient_authority())?;
        let absolute = std::path::absolute(root)?;
        let canonical = std::fs::canonicalize(root)?;
        let mut roots = vec![canonical];
        if roots[0] != absolute {
            roots.push(absolute);
        }
        Ok(LocalProvider { dir, roots })
    }

    /// The canonical absolute path of the root.
    pub fn root(&self) -> &Path {
        &self.roots[0]
    }

    /// The canonical root-relative form of a normalized path: symlinks inside
    /// the root resolved, so every spelling of a file has one key. For a path
    /// that does not exist yet, its deepest existing ancestor is resolved.
    fn canonical(&self, rel: &str, shown: &str) -> Result<String, FsError> {
        if rel.is_empty() {
            return Ok(String::new());
        }
        let path = Path::new(rel);
        let mut missing: Vec<&std::ffi::OsStr> = Vec::new();
        let mut at = Some(path);
        while let Some(p) = at.filter(|p| !p.as_os_str().is_empty()) {
            match self.dir.canonicalize(p) {
                Ok(mut real) => {
                    real.extend(missing.iter().rev());
                    return real
                        .to_str()
                        .map(|s| s.trim_start_matches("./").to_owned())
                        .ok_or_else(|| {
                            FsError::new(ErrorCode::InvalidInput, "the path is not UTF-8")
                        });
                }
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    missing.extend(p.file_name());
                    at = p.parent();
                }
                Err(e) => return Err(map_io(e, shown)),
            }
        }
        Ok(rel.to_owned())
    }

    fn open_parent(&self, key: &str) -> io::Result<Dir> {
        self.dir.open_dir(parent_of(key))
    }
}

impl Provider for LocalProvider {
    fn resolve(&self, path: &str) -> Result<Target, FsError> {
        let rel = normalize(path, &self.roots)?;
        let key = self.canonical(&rel, path)?;
        Ok(Target::new(display(&rel), key))
    }

    fn stat(&self, target: &Target) -> Result<Option<FsInfo>, FsError> {
        match self.dir.metadata(rel_path(target.key())) {
            Ok(meta) => Ok(Some(FsInfo {
                version: meta_token(&meta),
                kind: if meta.is_file() {
                    EntryKind::File
                } else if meta.is_dir() {
                    EntryKind::Directory
                } else {
                    EntryKind::Other
                },
                size: Some(meta.len()),
            })),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(map_io(e, target.display_path())),
        }
    }

    fn read_text(&self, target: &Target, max_bytes: u64) -> Result<TextContent, FsError> {
        let shown = target.display_path();
        let (bytes, meta) = read_stable(&self.dir, target.key(), shown, max_bytes)?;
        let text = text::decode(&bytes).map_err(|e| FsError::not_text(shown, &e.to_string()))?;
        let text = text.to_owned();
        Ok(TextContent {
            text,
            version: version(&meta_token(&meta), content_hash(&bytes)),
        })
    }

    fn stream_text(&self, target: &Target) -> Result<Box<dyn TextStream>, FsError> {
        let shown = target.display_path();
        let (file, meta) = open_regular(&self.dir, rel_path(target.key()), shown)?;
        Ok(Box::new(LocalStream {
            file,
            meta: meta_token(&meta),
            shown: shown.to_owned(),
            decoder: StreamDecoder::new(),
            hasher: ContentHasher::new(),
            buf: Vec::new(),
            done: None,
        }))
    }

    fn write_text(
        &self,
        target: &Target,
        content: &str,
        intent: Option<WriteIntent>,
    ) -> Result<WriteOutcome, FsError> {
        let shown = target.display_path();
        let name = file_name(target, shown)?;
        let parent = match self.open_parent(target.key()) {
            Ok(dir) => dir,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                if matches!(intent, Some(WriteIntent::ReplaceIfVersion(_))) {
                    return Err(vanished(shown));
                }
                self.dir
                    .create_dir_all(parent_of(target.key()))
                    .and_then(|()| self.open_parent(target.key()))
                    .map_err(|e| map_io(e, shown))?
            }
            Err(e) => return Err(map_io(e, shown)),
        };
        let lock = lock(&parent, shown)?;

        let current = match open_regular(&parent, Path::new(name), shown) {
            Ok((mut file, meta)) => {
                // The content hash is needed only to honour a version guard.
                let hash = if matches!(intent, Some(WriteIntent::ReplaceIfVersion(_))) {
                    let mut bytes = Vec::new();
                    file.read_to_end(&mut bytes).map_err(|e| map_io(e, shown))?;
                    content_hash(&bytes)
                } else {
                    0
                };
                Some((meta, hash))
            }
            Err(e) if e.code == ErrorCode::NotFound => None,
            Err(e) => return Err(e),
        };
        let token = current.as_ref().map(|(m, _)| meta_token(m));
        check_write_intent(
            shown,
            intent.as_ref(),
            current
                .as_ref()
                .zip(token.as_deref())
                .map(|((_, h), t)| (t, *h)),
        )?;
        let mode = current.as_ref().map(|(m, _)| m.mode() & 0o7777);
        let after = replace_atomically(&parent, &lock, name, content.as_bytes(), mode, shown)?;
        Ok(WriteOutcome {
            operation: if current.is_some() {
                WriteOperation::Updated
            } else {
                WriteOperation::Created
            },
            version: version(&meta_token(&after), content_hash(content.as_bytes())),
        })
    }

    fn edit_text(
        &self,
        target: &Target,
        edit: &EditRequest,
        expected: Option<&str>,
    ) -> Result<EditOutcome, FsError> {
        let shown = target.display_path();
        let name = file_name(target, shown)?;
        let parent = match self.open_parent(target.key()) {
            Ok(dir) => dir,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(vanished(shown)),
            Err(e) => return Err(map_io(e, shown)),
        };
        let lock = lock(&parent, shown)?;
        let (bytes, meta) = match read_stable(&parent, name, shown, MAX_EDIT_BYTES) {
            Err(e) if e.code == ErrorCode::NotFound => return Err(vanished(shown)),
            other => other?,
        };
        let spliced = splice_checked(shown, &bytes, &meta_token(&meta), edit, expected)?;
        drop(bytes);
        let after = replace_atomically(
            &parent,
            &lock,
            name,
            &spliced.bytes,
            Some(meta.mode() & 0o7777),
            shown,
        )?;
        Ok(EditOutcome {
            replacements: spliced.replacements,
            version: version(&meta_token(&after), content_hash(&spliced.bytes)),
            first_line: spliced.first_line,
        })
    }
}

/// Chunked reader over one open file.
struct LocalStream {
    file: File,
    meta: String,
    shown: String,
    decoder: StreamDecoder,
    hasher: ContentHasher,
    buf: Vec<u8>,
    done: Option<Version>,
}

impl TextStream for LocalStream {
    fn next_chunk(&mut self, max_bytes: u32) -> Result<Option<String>, FsError> {
        if self.done.is_some() {
            return Ok(None);
        }
        let want = (max_bytes.clamp(4, MAX_CHUNK) as usize).saturating_sub(self.decoder.pending());
        self.buf.resize(want.max(1), 0);
        loop {
            let n = match self.file.read(&mut self.buf) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(map_io(e, &self.shown)),
            };
            if n == 0 {
                self.decoder
                    .finish()
                    .map_err(|e| FsError::not_text(&self.shown, &e.to_string()))?;
                self.done = Some(version(&self.meta, self.hasher.finish()));
                return Ok(None);
            }
            self.hasher.update(&self.buf[..n]);
            let text = self
                .decoder
                .push(&self.buf[..n])
                .map_err(|e| FsError::not_text(&self.shown, &e.to_string()))?;
            if !text.is_empty() {
                return Ok(Some(text));
            }
        }
    }

    fn version(&self) -> Option<Version> {
        self.done.clone()
    }
}

/// `key` as a path for cap-std: the root itself is `.`.
fn rel_path(key: &str) -> &Path {
    Path::new(if key.is_empty() { "." } else { key })
}

fn parent_of(key: &str) -> &Path {
    rel_path(key.rsplit_once('/').map_or("", |(p, _)| p))
}

fn file_name<'k>(target: &'k Target, shown: &str) -> Result<&'k str, FsError> {
    match target.key().rsplit('/').next() {
        Some(name) if !name.is_empty() => Ok(name),
        _ => Err(FsError::new(
            ErrorCode::NotRegularFile,
            format!("{shown} is the workspace root, a directory"),
        )),
    }
}

/// Opens a regular file for reading without ever blocking: `O_NONBLOCK`
/// keeps a FIFO's open from waiting for a writer, and the type is checked on
/// the open descriptor, so a swap after a check cannot slip a FIFO in.
fn open_regular(dir: &Dir, path: &Path, shown: &str) -> Result<(File, Metadata), FsError> {
    let flags = (OFlags::NONBLOCK | OFlags::NOCTTY).bits() as i32;
    let file = dir
        .open_with(path, OpenOptions::new().read(true).custom_flags(flags))
        .map_err(|e| map_io(e, shown))?;
    let meta = file.metadata().map_err(|e| map_io(e, shown))?;
    if !meta.is_file() {
        let what = if meta.is_dir() {
            "a directory"
        } else {
            "not a regular file (FIFO, socket or device)"
        };
        return Err(FsError::new(
            ErrorCode::NotRegularFile,
            format!("{shown} is {what}"),
        ));
    }
    Ok((file, meta))
}

/// Reads a whole regular file of at most `max_bytes`, retrying (a few times)
/// when its metadata changed during the read so the bytes are one state.
fn read_stable(
    dir: &Dir,
    key: &str,
    shown: &str,
    max_bytes: u64,
) -> Result<(Vec<u8>, Metadata), FsError> {
    let too_large = |size: u64| {
        FsError::new(
            ErrorCode::TooLarge,
            format!("{shown} has {size} bytes, more than the {max_bytes} this call reads"),
        )
    };
    let mut attempt = 0;
    loop {
        let (file, before) = open_regular(dir, rel_path(key), shown)?;
        if before.len() > max_bytes {
            return Err(too_large(before.len()));
        }
        let mut bytes = Vec::with_capacity(before.len() as usize + 1);
        file.take(max_bytes.saturating_add(1))
            .read_to_end(&mut bytes)
            .map_err(|e| map_io(e, shown))?;
        if bytes.len() as u64 > max_bytes {
            return Err(too_large(bytes.len() as u64));
        }
        let after = dir.metadata(rel_path(key)).map_err(|e| map_io(e, shown))?;
        attempt += 1;
        if meta_token(&before) == meta_token(&after) || attempt == 3 {
            return Ok((bytes, after));
        }
    }
}

/// Takes the exclusive lock that serialises mutations in `dir`; released
/// when the returned handle is dropped. (cap-std opens directories with
/// `O_PATH`, which cannot be locked or synced, hence a readable handle.)
fn lock(dir: &Dir, shown: &str) -> Result<File, FsError> {
    let handle = dir.open(".").map_err(|e| map_io(e, shown))?;
    rustix::fs::flock(&handle, FlockOperation::LockExclusive)
        .map_err(|e| map_io(io::Error::from(e), shown))?;
    Ok(handle)
}

/// Replaces `name` in `dir` by `bytes` atomically and durably: a new temp
/// file in the same directory, written, given `mode`, fsynced, renamed over
/// `name`, and the directory fsynced (through `lock`, its readable handle). The temp file is removed on any failure.
fn replace_atomically(
    dir: &Dir,
    lock: &File,
    name: &str,
    bytes: &[u8],
    mode: Option<u32>,
    shown: &str,
) -> Result<Metadata, FsError> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let io = |e| map_io(e, shown);
    let (tmp, mut file) = loop {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let tmp = format!(".{name}.{}.{n}.dsh-fs-tmp", std::process::id());
        match dir.open_with(
            &tmp,
            OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(mode.unwrap_or(0o666)),
        ) {
            Ok(f) => break (tmp, f),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(io(e)),
        }
    };
    let written = (|| {
        file.write_all(bytes)?;
        if let Some(mode) = mode {
            // The create mode is masked by the umask; the old mode is kept exactly.
            rustix::fs::fchmod(&file, rustix::fs::Mode::from_raw_mode(mode))?;
        }
        file.sync_all()?;
        drop(file);
        dir.rename(&tmp, dir, name)
    })();
    if let Err(e) = written {
        let _ = dir.remove_file(&tmp);
        return Err(io(e));
    }
    rustix::fs::fsync(lock).map_err(|e| io(e.into()))?;
    dir.metadata(name).map_err(io)
}

/// Metadata part of a version: inode, size, mtime and ctime in nanoseconds.
fn meta_token(m: &Metadata) -> String {
    let ns = |s: i64, n: i64| (s as i128) * 1_000_000_000 + n as i128;
    format!(
        "{:x}.{:x}.{:x}.{:x}",
        m.ino(),
        m.size(),
        ns(m.mtime(), m.mtime_nsec()),
        ns(m.ctime(), m.ctime_nsec())
    )
}

/// Maps an I/O error to the seam's codes. cap-std reports an escape from the
/// root as `PermissionDenied` without an OS error number.
fn map_io(e: io::Error, shown: &str) -> FsError {
    let errno = e.raw_os_error().map(Errno::from_raw_os_error);
    match (e.kind(), errno) {
        (io::ErrorKind::NotFound, _) => FsError::not_found(shown),
        (io::ErrorKind::PermissionDenied, None) => FsError::sandbox_denied(shown),
        (io::ErrorKind::PermissionDenied, Some(_)) => FsError::new(
            ErrorCode::PermissionDenied,
            format!("access to {shown} was denied"),
        ),
        (_, Some(Errno::NOTDIR)) => FsError::new(
            ErrorCode::NotDirectory,
            format!("a parent of {shown} is not a directory"),
        ),
        (_, Some(Errno::ISDIR)) => {
            FsError::new(ErrorCode::NotRegularFile, format!("{shown} is a directory"))
        }
        (_, Some(Errno::LOOP)) => FsError::new(
            ErrorCode::InvalidInput,
            format!("{shown} goes through a symbolic link loop"),
        ),
        (_, Some(Errno::NAMETOOLONG)) => FsError::new(
            ErrorCode::InvalidInput,
            format!("{shown}: a name is too long"),
        ),
        (_, Some(Errno::ROFS)) => FsError::new(
            ErrorCode::PermissionDenied,
            format!("{shown} is on a read-only filesystem"),
        ),
        (_, Some(Errno::NOSPC)) => FsError::new(
            ErrorCode::IoError,
            format!("no space left to write {shown}"),
        ),
        _ => FsError::new(ErrorCode::IoError, format!("{shown}: {e}")),
    }
}

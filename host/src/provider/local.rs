//! [`LocalProvider`]: a directory on the local disk, confined with cap-std.
//!
//! Every operation goes through a `cap_std::fs::Dir` opened on the root, so
//! `..`, absolute symlinks and symlinks whose target leaves the root fail at
//! each use, not only at resolve time. Writes are atomic (same-directory temp
//! file, fsync, rename, fsync of the directory) and mutations hold an
//! exclusive `flock` on the parent directory, which serialises threads and
//! processes alike.

use super::{
    MAX_EDIT_BYTES, Provider, Target, TextStream, check_write_intent, display, normalize,
    splice_checked, vanished, version,
};
use cap_std::ambient_authority;
use cap_std::fs::{Dir, File, Metadata, MetadataExt, OpenOptions, OpenOptionsExt};
use dsh_fs_core::seam::StreamText;
use dsh_fs_core::text::{ContentHasher, content_hash};
use dsh_fs_core::{
    EditOutcome, EditRequest, EntryKind, ErrorCode, FsError, FsInfo, TextContent, Version,
    WriteIntent, WriteOperation, WriteOutcome, text,
};
use rustix::fs::{FlockOperation, OFlags};
use rustix::io::Errno;
use std::io::{self, Read, Seek, Write};
use std::path::{Path, PathBuf};

/// A workspace rooted at one local directory.
#[derive(Debug)]
pub struct LocalProvider {
    dir: Dir,
    /// Absolute spellings of the root that absolute model paths may start with.
    roots: Vec<PathBuf>,
    /// Whether files with more than one hard link may be read and edited.
    hard_links: bool,
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
        Ok(LocalProvider {
            dir,
            roots,
            hard_links: false,
        })
    }

    /// Allows reading and editing files that have other hard links. Off by
    /// default: a hard link is indistinguishable from its twin, which may lie
    /// outside the root, so such files are `sandbox-denied`. (Writes never
    /// modify a linked twin: they replace the name by rename.)
    pub fn allow_hard_links(mut self, allow: bool) -> Self {
        self.hard_links = allow;
        self
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
        // A final component that is not a symlink is kept by name: resolving
        // it would race with writers renaming new versions over it (the old
        // inode's name reads as "NAME (deleted)"). Its parents are resolved.
        match self.dir.symlink_metadata(path) {
            Ok(meta) if meta.file_type().is_symlink() => {}
            Ok(_) | Err(_) if path.parent().is_some() => {
                missing.extend(path.file_name());
                at = path.parent();
            }
            _ => {}
        }
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
        let (bytes, meta) =
            read_stable(&self.dir, target.key(), shown, max_bytes, self.hard_links)?;
        let version = version(&meta_token(&meta), content_hash(&bytes));
        let text =
            text::decode_owned(bytes).map_err(|e| FsError::not_text(shown, &e.to_string()))?;
        Ok(TextContent { text, version })
    }

    fn stream_text(&self, target: &Target, start: u64) -> Result<Box<dyn TextStream>, FsError> {
        let shown = target.display_path();
        let (mut file, meta) =
            open_regular(&self.dir, rel_path(target.key()), shown, self.hard_links)?;
        if start > 0 {
            // Skip the BOM, then seek: the text offset is past it.
            let mut head = [0u8; 3];
            let n = read_full(&mut file, &mut head).map_err(|e| map_io(e, shown))?;
            let skip = text::bom_len(&head[..n]) as u64;
            file.seek(io::SeekFrom::Start(skip + start))
                .map_err(|e| map_io(e, shown))?;
        }
        Ok(Box::new(LocalStream {
            file,
            text: StreamText::new(meta_token(&meta), shown, start),
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

        let current = match open_regular(&parent, Path::new(name), shown, self.hard_links) {
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
        let after = replace_atomically(
            &lock,
            name,
            mode,
            shown,
            write_bytes(content.as_bytes(), shown),
        )?;
        Ok(WriteOutcome {
            operation: if current.is_some() {
                WriteOperation::Updated
            } else {
                WriteOperation::Created
            },
            version: version(&after, content_hash(content.as_bytes())),
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
        let (file, meta) = match open_regular(&parent, Path::new(name), shown, self.hard_links) {
            Err(e) if e.code == ErrorCode::NotFound => return Err(vanished(shown)),
            other => other?,
        };
        if meta.len() > STREAM_EDIT_BYTES
            && let Some(outcome) = edit_streaming(file, &meta, &lock, name, shown, edit, expected)?
        {
            return Ok(outcome);
        }
        let (bytes, meta) = match read_stable(&parent, name, shown, MAX_EDIT_BYTES, self.hard_links)
        {
            Err(e) if e.code == ErrorCode::NotFound => return Err(vanished(shown)),
            other => other?,
        };
        let spliced = splice_checked(shown, &bytes, &meta_token(&meta), edit, expected)?;
        drop(bytes);
        let after = replace_atomically(
            &lock,
            name,
            Some(meta.mode() & 0o7777),
            shown,
            write_bytes(&spliced.bytes, shown),
        )?;
        Ok(EditOutcome {
            replacements: spliced.replacements,
            version: version(&after, content_hash(&spliced.bytes)),
            first_line: spliced.first_line,
        })
    }
}

/// Files above this size are edited by streaming (when they have no CRs).
const STREAM_EDIT_BYTES: u64 = 8 << 20;
/// Buffer size of a streamed edit.
const STREAM_EDIT_CHUNK: usize = 1 << 20;

/// Chunked reader over one open file.
struct LocalStream {
    file: File,
    text: StreamText,
}

impl TextStream for LocalStream {
    fn next_chunk(&mut self, max_bytes: u32) -> Result<Option<String>, FsError> {
        let (file, text) = (&mut self.file, &mut self.text);
        let shown = text.shown().to_owned();
        text.next_from(max_bytes, |buf| {
            loop {
                match file.read(buf) {
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    other => return other.map_err(|e| map_io(e, &shown)),
                }
            }
        })
    }

    fn version(&self) -> Option<Version> {
        self.text.version()
    }
}

/// Reads until `buf` is full or the file ends; the number of bytes read.
fn read_full(file: &mut File, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match file.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
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
fn open_regular(
    dir: &Dir,
    path: &Path,
    shown: &str,
    hard_links: bool,
) -> Result<(File, Metadata), FsError> {
    let flags = (OFlags::NONBLOCK | OFlags::NOCTTY).bits() as i32;
    let mut options = OpenOptions::new();
    options.read(true).custom_flags(flags);
    let file = dir
        .open_with(path, &options)
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
    if meta.nlink() > 1 && !hard_links {
        return Err(FsError::new(
            ErrorCode::SandboxDenied,
            format!(
                "{shown} has {} hard links, and a linked copy may lie outside the workspace",
                meta.nlink()
            ),
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
    hard_links: bool,
) -> Result<(Vec<u8>, Metadata), FsError> {
    let too_large = |size: u64| {
        FsError::new(
            ErrorCode::TooLarge,
            format!("{shown} has {size} bytes, more than the {max_bytes} this call reads"),
        )
    };
    let mut attempt = 0;
    loop {
        let (mut file, before) = open_regular(dir, rel_path(key), shown, hard_links)?;
        if before.len() > max_bytes {
            return Err(too_large(before.len()));
        }
        let mut bytes = Vec::with_capacity(before.len() as usize + 1);
        (&mut file)
            .take(max_bytes.saturating_add(1))
            .read_to_end(&mut bytes)
            .map_err(|e| map_io(e, shown))?;
        if bytes.len() as u64 > max_bytes {
            return Err(too_large(bytes.len() as u64));
        }
        // The open descriptor's metadata: a rename over the name does not
        // concern the bytes just read, an in-place change does.
        let after = file.metadata().map_err(|e| map_io(e, shown))?;
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

/// Replaces `name` atomically and durably by what `fill` writes, under the
/// directory lock held through `dir` (the directory's readable handle): an
/// anonymous `O_TMPFILE` is filled, given `mode`, fsynced, linked as
/// `.NAME.dsh-fs-tmp` and renamed over `name`; then the directory is fsynced.
/// A process killed while writing leaves nothing behind; one killed between
/// link and rename leaves the fixed temp name, which the next mutation of the
/// file removes first. Returns the new file's metadata token.
fn replace_atomically(
    dir: &File,
    name: &str,
    mode: Option<u32>,
    shown: &str,
    fill: impl FnOnce(&mut std::fs::File) -> Result<(), FsError>,
) -> Result<String, FsError> {
    use rustix::fs::{AtFlags, Mode, OFlags as O};
    let fail = |e: Errno| map_io(e.into(), shown);
    let tmp = format!(".{name}.dsh-fs-tmp");
    match rustix::fs::unlinkat(dir, &tmp, AtFlags::empty()) {
        Ok(()) | Err(Errno::NOENT) => {}
        Err(e) => return Err(fail(e)),
    }
    let create_mode = Mode::from_raw_mode(mode.unwrap_or(0o666));
    let (fd, anonymous) =
        match rustix::fs::openat(dir, ".", O::TMPFILE | O::WRONLY | O::CLOEXEC, create_mode) {
            Ok(fd) => (fd, true),
            // Filesystems without O_TMPFILE get a named temp file from the start.
            Err(Errno::OPNOTSUPP | Errno::ISDIR | Errno::INVAL | Errno::NOENT) => {
                let flags = O::CREATE | O::EXCL | O::WRONLY | O::CLOEXEC;
                (
                    rustix::fs::openat(dir, &tmp, flags, create_mode).map_err(fail)?,
                    false,
                )
            }
            Err(e) => return Err(fail(e)),
        };
    let written = (|| -> Result<(), FsError> {
        let mut file = std::fs::File::from(fd);
        fill(&mut file)?;
        if let Some(mode) = mode {
            // The create mode is masked by the umask; the old mode is kept exactly.
            rustix::fs::fchmod(&file, Mode::from_raw_mode(mode)).map_err(fail)?;
        }
        rustix::fs::fsync(&file).map_err(fail)?;
        if anonymous {
            let proc_path = format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(&file));
            rustix::fs::linkat(&file, "", dir, &tmp, AtFlags::EMPTY_PATH)
                .or_else(|_| {
                    rustix::fs::linkat(
                        rustix::fs::CWD,
                        &proc_path,
                        dir,
                        &tmp,
                        AtFlags::SYMLINK_FOLLOW,
                    )
                })
                .map_err(fail)?;
        }
        rustix::fs::renameat(dir, &tmp, dir, name).map_err(fail)
    })();
    if let Err(e) = written {
        let _ = rustix::fs::unlinkat(dir, &tmp, AtFlags::empty());
        return Err(e);
    }
    rustix::fs::fsync(dir).map_err(fail)?;
    let st = rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW).map_err(fail)?;
    Ok(token(
        st.st_ino,
        st.st_size as u64,
        (st.st_mtime as i64, st.st_mtime_nsec as i64),
        (st.st_ctime as i64, st.st_ctime_nsec as i64),
    ))
}

/// Writes `bytes` whole, for [`replace_atomically`].
fn write_bytes<'a>(
    bytes: &'a [u8],
    shown: &'a str,
) -> impl FnOnce(&mut std::fs::File) -> Result<(), FsError> + 'a {
    move |f| f.write_all(bytes).map_err(|e| map_io(e, shown))
}

/// The streamed form of an edit, for large files without CRs: a planning
/// pass in chunks, the freshness check, then a copy of the unmatched ranges
/// around the replacements. Memory stays at two chunk buffers whatever the
/// file size. `None` when the file needs the in-memory splice.
fn edit_streaming(
    mut file: File,
    meta: &Metadata,
    lock: &File,
    name: &str,
    shown: &str,
    edit: &EditRequest,
    expected: Option<&str>,
) -> Result<Option<EditOutcome>, FsError> {
    use dsh_fs_core::stream_splice::{PlanError, Planner};
    let io = |e| map_io(e, shown);
    let mut planner = match Planner::new(edit) {
        Ok(p) => p,
        Err(PlanError::InMemory) => return Ok(None),
        Err(PlanError::Splice(e)) => return Err(e.into_fs_error(shown)),
    };
    let mut buf = vec![0u8; STREAM_EDIT_CHUNK];
    loop {
        let n = file.read(&mut buf).map_err(io)?;
        if n == 0 {
            break;
        }
        // Anything unusual (a CR, bytes that are not text) is judged by the
        // in-memory path, which also orders staleness before other errors.
        if planner.push(&buf[..n]).is_err() {
            return Ok(None);
        }
    }
    let (hash, plan) = planner.finish();
    if let Some(v) = expected
        && !super::still_fresh(v, &meta_token(meta), hash)
    {
        return Err(FsError::stale(shown));
    }
    let plan = match plan {
        Ok(plan) => plan,
        Err(PlanError::InMemory) => return Ok(None),
        Err(PlanError::Splice(e)) => return Err(e.into_fs_error(shown)),
    };

    let mut source = file.into_std();
    let mut written = ContentHasher::new();
    let after = replace_atomically(lock, name, Some(meta.mode() & 0o7777), shown, |out| {
        let mut seen = ContentHasher::new();
        source.seek(io::SeekFrom::Start(0)).map_err(io)?;
        // Moves `len` source bytes: hashed as read, and copied unless dropped.
        let mut copy = |len: u64, out: Option<(&mut std::fs::File, &mut ContentHasher)>| {
            let mut out = out;
            let mut left = len;
            while left > 0 {
                let n = (left as usize).min(buf.len());
                source.read_exact(&mut buf[..n]).map_err(io)?;
                seen.update(&buf[..n]);
                if let Some((file, hasher)) = out.as_mut() {
                    hasher.update(&buf[..n]);
                    file.write_all(&buf[..n]).map_err(io)?;
                }
                left -= n as u64;
            }
            Ok::<(), FsError>(())
        };
        let mut at = 0;
        for &start in &plan.starts {
            copy(start - at, Some((&mut *out, &mut written)))?;
            copy(plan.old_len, None)?;
            out.write_all(edit.new_string.as_bytes()).map_err(io)?;
            written.update(edit.new_string.as_bytes());
            at = start + plan.old_len;
        }
        copy(meta.len() - at, Some((&mut *out, &mut written)))?;
        // The lock keeps other dsh-fs writers out; this catches anyone else.
        if seen.finish() != plan.hash {
            return Err(FsError::stale(shown));
        }
        Ok(())
    })?;
    Ok(Some(EditOutcome {
        replacements: plan.starts.len() as u32,
        version: version(&after, written.finish()),
        first_line: plan.first_line,
    }))
}

/// Metadata part of a version: inode, size, mtime and ctime in nanoseconds.
fn meta_token(m: &Metadata) -> String {
    token(
        m.ino(),
        m.size(),
        (m.mtime(), m.mtime_nsec()),
        (m.ctime(), m.ctime_nsec()),
    )
}

fn token(ino: u64, size: u64, mtime: (i64, i64), ctime: (i64, i64)) -> String {
    let ns = |(s, n): (i64, i64)| (s as i128) * 1_000_000_000 + n as i128;
    format!("{ino:x}.{size:x}.{:x}.{:x}", ns(mtime), ns(ctime))
}

/// Maps an I/O error to the seam's codes. cap-std reports an escape from the
/// root as `PermissionDenied` without an OS error number.
fn map_io(e: io::Error, shown: &str) -> FsError {
    match (e.kind(), e.raw_os_error().map(Errno::from_raw_os_error)) {
        (io::ErrorKind::PermissionDenied, None) => FsError::sandbox_denied(shown),
        (_, Some(Errno::LOOP)) => dsh_fs_core::seam::symlink_loop(shown),
        _ => dsh_fs_core::seam::from_io(&e, shown),
    }
}

//! [`LocalProvider`]: a directory on the local disk, confined with cap-std.
//!
//! Every operation goes through a `cap_std::fs::Dir` opened on the root, so
//! `..`, absolute symlinks and symlinks whose target leaves the root fail at
//! each use, not only at resolve time. Writes are atomic (same-directory temp
//! file, fsync, rename, fsync of the directory) and mutations hold an
//! exclusive `flock` on the parent directory, which serialises threads and
//! processes alike.

mod commit;
mod edit;
mod list;

use super::{
    Provider, Target, TextStream, check_write_intent, display, normalize, vanished, version,
};
use cap_std::ambient_authority;
use cap_std::fs::{Dir, File, Metadata, MetadataExt, OpenOptions, OpenOptionsExt};
use dsh_fs_core::seam::StreamText;
use dsh_fs_core::text::{ContentHasher, content_hash};
use dsh_fs_core::{
    EditOutcome, EditRequest, EntryKind, ErrorCode, FsError, FsInfo, SearchQuery, TextContent,
    Version, WriteIntent, WriteOperation, WriteOutcome, text,
};
use rustix::fs::OFlags;
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
    /// The error names the root: `workspace root /x: No such file or
    /// directory (os error 2)`.
    pub fn new(root: impl AsRef<Path>) -> io::Result<Self> {
        let root = root.as_ref();
        let named = |e: io::Error| {
            io::Error::new(e.kind(), format!("workspace root {}: {e}", root.display()))
        };
        let dir = Dir::open_ambient_dir(root, ambient_authority()).map_err(named)?;
        let absolute = std::path::absolute(root).map_err(named)?;
        let canonical = std::fs::canonicalize(root).map_err(named)?;
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

    fn stream_text(&self, target: &Target, start: u64) -> Result<super::BoxStream, FsError> {
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
        let lock = commit::lock(&parent, shown)?;

        let current = match open_regular(&parent, Path::new(name), shown, self.hard_links) {
            Ok(found) => Some(found),
            Err(e) if e.code == ErrorCode::NotFound => None,
            Err(e) => return Err(e),
        };
        // The content hash is needed only to honour a version guard; it is
        // streamed, so a large old file is never loaded.
        let hash = match (&intent, &current) {
            (Some(WriteIntent::ReplaceIfVersion(_)), Some((file, _))) => hash_file(file, shown)?,
            _ => 0,
        };
        let token = current.as_ref().map(|(_, m)| meta_token(m));
        check_write_intent(shown, intent.as_ref(), token.as_deref().map(|t| (t, hash)))?;
        if current.is_some() {
            commit::check_writable(&lock, name, shown)?;
        }
        let guard = match (&intent, &current) {
            (_, Some((_, meta))) if intent.is_some() => commit::Guard::Unchanged(meta),
            (Some(_), None) => commit::Guard::Absent,
            _ => commit::Guard::None,
        };
        let original = current
            .as_ref()
            .map(|(file, meta)| commit::Original { file, meta });
        let after = commit::replace(&lock, name, original, guard, shown, |f| {
            f.write_all(content.as_bytes())
                .map_err(|e| map_io(e, shown))
        })?;
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
        let lock = commit::lock(&parent, shown)?;
        let (file, meta) = match open_regular(&parent, Path::new(name), shown, self.hard_links) {
            Err(e) if e.code == ErrorCode::NotFound => return Err(vanished(shown)),
            other => other?,
        };
        edit::apply(edit::Edit {
            lock: &lock,
            name,
            shown,
            file,
            meta,
            edit,
            expected,
        })
    }

    fn list_dir(&self, target: &Target) -> Result<super::BoxListing, FsError> {
        let listing = list::list(&self.dir, target.key(), target.display_path())?;
        Ok(Box::new(listing))
    }

    /// The parallel walk and search of [`crate::search`], from the path the
    /// model gave (a link on the way is refused as the portable walk refuses it).
    fn search(&self, target: &Target, query: &SearchQuery) -> Result<Option<String>, FsError> {
        let shown = target.display_path();
        let at = if shown == "." { "" } else { shown };
        let budget = dsh_fs_search::Budget::default();
        let root = self.root();
        match query {
            SearchQuery::Glob(pattern) => crate::search::glob(root, at, pattern, &budget),
            SearchQuery::Grep { pattern, include } => {
                crate::search::grep(root, at, pattern, include.as_deref(), &budget)
            }
        }
        .map(Some)
    }
}

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

/// The content hash of an open file, read in chunks.
fn hash_file(file: &File, shown: &str) -> Result<u128, FsError> {
    let mut hasher = ContentHasher::new();
    let mut buf = vec![0u8; edit::CHUNK];
    let mut reader = file;
    loop {
        match edit::read_some(&mut reader, &mut buf).map_err(|e| map_io(e, shown))? {
            0 => return Ok(hasher.finish()),
            n => hasher.update(&buf[..n]),
        }
    }
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

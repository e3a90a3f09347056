//! [`WasiProvider`]: the `dsh:fs/provider` operations over `std::fs` under one
//! root, with the same semantics as the host's local provider: versions are
//! metadata plus a content hash, freshness is by content, writes are atomic
//! (same-directory temp file, fsync, rename) and edits are byte-faithful.

mod list;

use crate::meta::{self, Stat};
use crate::paths::file_name;
use dsh_fs_core::seam::{
    StreamText, check_write_intent, display, normalize, still_fresh, vanished, version,
};
use dsh_fs_core::text::content_hash;
use dsh_fs_core::{
    EditOutcome, EditRequest, EntryKind, ErrorCode, FsError, FsInfo, TextContent, Version,
    WriteIntent, WriteOperation, WriteOutcome, splice, text,
};
use std::collections::VecDeque;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Largest file an edit loads.
/// Edits are spliced in memory, bounded like every in-memory result.
const MAX_EDIT_BYTES: u64 = dsh_fs_core::MAX_IN_MEMORY_BYTES;
/// Symlinks followed while resolving one path before it counts as a loop.
const MAX_LINKS: u32 = 40;

/// A workspace rooted at one directory.
///
/// Inside a WASI runtime the root is a guest path under a preopened
/// directory and the runtime confines every access to the preopens; the
/// provider adds its own lexical and symlink checks at resolve time, so the
/// model gets `sandbox-denied` for `..`, absolute paths outside the root and
/// symlinks that lead out, at any depth.
#[derive(Debug)]
pub struct WasiProvider {
    root: PathBuf,
}

/// A resolved path: made only by [`WasiProvider::resolve`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    display: String,
    key: String,
}

impl Target {
    /// The path shown to the model: the normalized path as the model spelled it.
    pub fn display_path(&self) -> &str {
        &self.display
    }

    /// The root-relative path with every symlink inside the root resolved
    /// (`""` is the root): equal for every spelling of the same file.
    pub fn key(&self) -> &str {
        &self.key
    }
}

impl WasiProvider {
    /// Opens `root`, an absolute path naming an existing directory, as the workspace.
    pub fn new(root: impl Into<PathBuf>) -> Result<Self, FsError> {
        let root = root.into();
        let unavailable = |why: &str| {
            FsError::new(
                ErrorCode::IoError,
                format!(
                    "the workspace root {} {why}; grant it to the runtime \
                     (wasmtime run --dir HOST_DIR::{})",
                    root.display(),
                    root.display()
                ),
            )
        };
        if !root.is_absolute() {
            return Err(FsError::new(
                ErrorCode::InvalidInput,
                format!("the workspace root {} is not absolute", root.display()),
            ));
        }
        match meta::stat_path(&root) {
            Ok(st) if st.kind == EntryKind::Directory => Ok(WasiProvider { root }),
            Ok(_) => Err(unavailable("is not a directory")),
            Err(e) => Err(unavailable(&format!("cannot be opened ({e})"))),
        }
    }

    /// Opens the root named by the environment variable [`crate::ROOT_ENV`],
    /// or [`crate::DEFAULT_ROOT`] when it is unset or empty.
    pub fn from_env() -> Result<Self, FsError> {
        match std::env::var(crate::ROOT_ENV) {
            Ok(root) if !root.is_empty() => Self::new(root),
            _ => Self::new(crate::DEFAULT_ROOT),
        }
    }

    /// The root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    fn path(&self, key: &str) -> PathBuf {
        if key.is_empty() {
            self.root.clone()
        } else {
            self.root.join(key)
        }
    }

    /// Turns a model path into a target. Relative paths are relative to the
    /// root; absolute paths must lie under it; `..` that climbs out and
    /// symlinks whose target leaves the root are `sandbox-denied`.
    pub fn resolve(&self, path: &str) -> Result<Target, FsError> {
        let rel = normalize(path, std::slice::from_ref(&self.root))?;
        let key = self.canonical(&rel, path)?;
        Ok(Target {
            display: display(&rel),
            key,
        })
    }

    /// The root-relative form of the normalized `rel` with symlinks inside
    /// the root resolved; components past the first missing one are kept as
    /// they are.
    fn canonical(&self, rel: &str, shown: &str) -> Result<String, FsError> {
        let mut todo: VecDeque<String> = rel.split('/').map(str::to_owned).collect();
        let mut done: Vec<String> = Vec::new();
        let mut links = 0;
        let mut missing = false;
        while let Some(part) = todo.pop_front() {
            match part.as_str() {
                "" | "." => continue,
                ".." => {
                    done.pop().ok_or_else(|| FsError::sandbox_denied(shown))?;
                    continue;
                }
                _ => done.push(part),
            }
            if missing {
                continue;
            }
            let here = self.path(&done.join("/"));
            match fs::symlink_metadata(&here) {
                Ok(m) if m.file_type().is_symlink() => {}
                Ok(_) => continue,
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    missing = true;
                    continue;
                }
                Err(e) => return Err(map_io(e, shown)),
            }
            links += 1;
            if links > MAX_LINKS {
                return Err(FsError::new(
                    ErrorCode::InvalidInput,
                    format!("{shown} goes through a symbolic link loop"),
                ));
            }
            let link = fs::read_link(&here).map_err(|e| map_io(e, shown))?;
            let link = link
                .to_str()
                .ok_or_else(|| FsError::sandbox_denied(shown))?;
            done.pop();
            let rest = if link.starts_with('/') {
                done.clear();
                Path::new(link)
                    .strip_prefix(&self.root)
                    .map_err(|_| FsError::sandbox_denied(shown))?
                    .to_str()
                    .expect("a suffix of a str is a str")
            } else {
                link
            };
            for part in rest.split('/').rev() {
                todo.push_front(part.to_owned());
            }
        }
        Ok(done.join("/"))
    }

    /// Metadata of the target, or `None` when it does not exist; like
    /// `std::fs::metadata`, but only under the root. Never reads content.
    pub fn stat(&self, target: &Target) -> Result<Option<FsInfo>, FsError> {
        match meta::stat_path(&self.path(&target.key)) {
            Ok(st) => Ok(Some(FsInfo {
                version: st.token,
                kind: st.kind,
                size: Some(st.size),
            })),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(map_io(e, &target.display)),
        }
    }

    /// The whole file decoded (BOM removed) with the version of exactly
    /// those bytes; like `std::fs::read_to_string`, but `too-large` beyond
    /// `max_bytes` (without reading), `not-text` for NUL bytes or invalid
    /// UTF-8, and `not-regular-file` for anything but a regular file.
    pub fn read_text(&self, target: &Target, max_bytes: u64) -> Result<TextContent, FsError> {
        let shown = &target.display;
        let (bytes, st, _) = read_stable(&self.path(&target.key), shown, max_bytes)?;
        let text = text::decode(&bytes).map_err(|e| FsError::not_text(shown, &e.to_string()))?;
        Ok(TextContent {
            text: text.to_owned(),
            version: version(&st.token, content_hash(&bytes)),
        })
    }

    /// Like [`WasiProvider::read_text`] in chunks, with memory bounded
    /// whatever the file size, from `start` bytes into the text (past any
    /// BOM); a stream that starts past 0 reports no version.
    pub fn stream_text(&self, target: &Target, start: u64) -> Result<Stream, FsError> {
        let shown = &target.display;
        let (mut file, st) = open_regular(&self.path(&target.key), shown)?;
        if start > 0 {
            // The text offset is past any BOM: skip it, then seek.
            let mut head = Vec::with_capacity(3);
            (&mut file)
                .take(3)
                .read_to_end(&mut head)
                .map_err(|e| map_io(e, shown))?;
            let skip = dsh_fs_core::text::bom_len(&head) as u64;
            io::Seek::seek(&mut file, io::SeekFrom::Start(skip + start))
                .map_err(|e| map_io(e, shown))?;
        }
        Ok(Stream {
            file,
            text: StreamText::new(st.token, shown, start),
        })
    }

    /// Replaces or creates the whole file atomically (same-directory temp
    /// file, fsync, rename), creating parent directories. `intent`:
    /// `CreateIfAbsent` on an existing file is `not-observed`;
    /// `ReplaceIfVersion` on a missing or changed file is `stale-version`;
    /// `None` writes unconditionally.
    pub fn write_text(
        &self,
        target: &Target,
        content: &str,
        intent: Option<WriteIntent>,
    ) -> Result<WriteOutcome, FsError> {
        let shown = &target.display;
        let path = self.path(&target.key);
        let (parent, name) = split(&path, &target.key, shown)?;
        let guarded = matches!(intent, Some(WriteIntent::ReplaceIfVersion(_)));
        match fs::symlink_metadata(parent) {
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                if guarded {
                    return Err(vanished(shown));
                }
                fs::create_dir_all(parent).map_err(|e| map_io(e, shown))?;
            }
            Err(e) => return Err(map_io(e, shown)),
        }

        let current = match open_regular(&path, shown) {
            Ok((mut file, st)) => {
                // The content hash is needed only to honour a version guard.
                let hash = if guarded {
                    hash_file(&mut file, shown)?
                } else {
                    0
                };
                Some((st.token, hash, permissions(&file)))
            }
            Err(e) if e.code == ErrorCode::NotFound => None,
            Err(e) => return Err(e),
        };
        check_write_intent(
            shown,
            intent.as_ref(),
            current
                .as_ref()
                .map(|(token, hash, _)| (token.as_str(), *hash)),
        )?;
        let perms = current.as_ref().and_then(|(_, _, p)| p.clone());
        let guard = match (&intent, &current) {
            (Some(WriteIntent::CreateIfAbsent), _) => Guard::Absent,
            (Some(WriteIntent::ReplaceIfVersion(_)), Some((token, _, _))) => {
                Guard::Unchanged(token)
            }
            _ => Guard::None,
        };
        let after = replace_atomically(parent, name, content.as_bytes(), perms, guard, shown)?;
        Ok(WriteOutcome {
            operation: if current.is_some() {
                WriteOperation::Updated
            } else {
                WriteOperation::Created
            },
            version: version(&after.token, content_hash(content.as_bytes())),
        })
    }

    /// A missing file is `stale-version`; with `expected`, a changed file is
    /// `stale-version` before any matching; then the byte-faithful splice of
    /// [`dsh_fs_core::splice`] and an atomic rewrite.
    pub fn edit_text(
        &self,
        target: &Target,
        edit: &EditRequest,
        expected: Option<&str>,
    ) -> Result<EditOutcome, FsError> {
        let shown = &target.display;
        let path = self.path(&target.key);
        let (parent, name) = split(&path, &target.key, shown)?;
        let (bytes, st, perms) = match read_stable(&path, shown, MAX_EDIT_BYTES) {
            Err(e) if e.code == ErrorCode::NotFound => return Err(vanished(shown)),
            other => other?,
        };
        if let Some(v) = expected
            && !still_fresh(v, &st.token, content_hash(&bytes))
        {
            return Err(FsError::stale(shown));
        }
        let spliced = splice::apply(&bytes, edit).map_err(|e| e.into_fs_error(shown))?;
        drop(bytes);
        let guard = Guard::Unchanged(&st.token);
        let after = replace_atomically(parent, name, &spliced.bytes, perms, guard, shown)?;
        Ok(EditOutcome {
            replacements: spliced.replacements,
            version: version(&after.token, content_hash(&spliced.bytes)),
            first_line: spliced.first_line,
        })
    }
}

/// A chunked reader over one open file, made by [`WasiProvider::stream_text`].
#[derive(Debug)]
pub struct Stream {
    file: File,
    text: StreamText,
}

impl Stream {
    /// The next chunk of at most `max_bytes` bytes of UTF-8 (never splitting
    /// a character), `None` at the end.
    pub fn next_chunk(&mut self, max_bytes: u32) -> Result<Option<String>, FsError> {
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

    /// The version of everything streamed, once [`Stream::next_chunk`] returned `None`.
    pub fn version(&self) -> Option<Version> {
        self.text.version()
    }
}

/// The parent directory and file name of a target's path; the root itself
/// is a directory, not a file.
fn split<'p>(path: &'p Path, key: &'p str, shown: &str) -> Result<(&'p Path, &'p str), FsError> {
    match (path.parent(), file_name(key)) {
        (Some(parent), Some(name)) => Ok((parent, name)),
        _ => Err(FsError::new(
            ErrorCode::NotRegularFile,
            format!("{shown} is the workspace root, a directory"),
        )),
    }
}

/// Opens a regular file for reading. The type is checked before opening, so
/// a FIFO or device is refused without an open that could block, and again
/// on the open file.
fn open_regular(path: &Path, shown: &str) -> Result<(File, Stat), FsError> {
    let before = meta::stat_path(path).map_err(|e| map_io(e, shown))?;
    not_regular(before.kind, shown)?;
    let file = File::open(path).map_err(|e| map_io(e, shown))?;
    let st = meta::stat_file(&file).map_err(|e| map_io(e, shown))?;
    not_regular(st.kind, shown)?;
    Ok((file, st))
}

fn not_regular(kind: EntryKind, shown: &str) -> Result<(), FsError> {
    let what = match kind {
        EntryKind::File => return Ok(()),
        EntryKind::Directory => "a directory",
        EntryKind::Other => "not a regular file (FIFO, socket or device)",
    };
    Err(FsError::new(
        ErrorCode::NotRegularFile,
        format!("{shown} is {what}"),
    ))
}

/// Reads a whole regular file of at most `max_bytes`, retrying (a few times)
/// when its metadata changed during the read so the bytes are one state.
/// Returns the bytes, the metadata after the read and the permissions.
fn read_stable(
    path: &Path,
    shown: &str,
    max_bytes: u64,
) -> Result<(Vec<u8>, Stat, Option<fs::Permissions>), FsError> {
    let too_large = |size: u64| {
        FsError::new(
            ErrorCode::TooLarge,
            format!("{shown} has {size} bytes, more than the {max_bytes} this call reads"),
        )
    };
    let mut attempt = 0;
    loop {
        let (file, before) = open_regular(path, shown)?;
        if before.size > max_bytes {
            return Err(too_large(before.size));
        }
        let mut bytes = Vec::with_capacity(before.size as usize + 1);
        (&file)
            .take(max_bytes.saturating_add(1))
            .read_to_end(&mut bytes)
            .map_err(|e| map_io(e, shown))?;
        if bytes.len() as u64 > max_bytes {
            return Err(too_large(bytes.len() as u64));
        }
        let after = meta::stat_path(path).map_err(|e| map_io(e, shown))?;
        attempt += 1;
        if before.token == after.token || attempt == 3 {
            return Ok((bytes, after, permissions(&file)));
        }
    }
}

/// The permissions a replacement keeps. WASI 0.2 has no file modes, so a
/// replaced file there gets the runtime's default mode.
#[cfg(unix)]
fn permissions(file: &File) -> Option<fs::Permissions> {
    file.metadata().ok().map(|m| m.permissions())
}

/// The permissions a replacement keeps. WASI 0.2 has no file modes, so a
/// replaced file there gets the runtime's default mode.
#[cfg(not(unix))]
fn permissions(_: &File) -> Option<fs::Permissions> {
    None
}

/// The xxh3 content hash of an open file, read in chunks.
fn hash_file(file: &mut File, shown: &str) -> Result<u128, FsError> {
    let mut hasher = text::HashingWriter::new(io::sink());
    io::copy(file, &mut hasher).map_err(|e| map_io(e, shown))?;
    Ok(hasher.finish().0)
}

/// What must still hold of the target when the new content takes its place.
enum Guard<'a> {
    /// Nothing is there: a file created meanwhile by another program is kept.
    Absent,
    /// The target still has this metadata token (no neighbour replaced or
    /// wrote it since it was checked).
    Unchanged(&'a str),
    /// Unconditional.
    None,
}

/// Replaces `name` in `dir` by `bytes` atomically: a new temp file in the
/// same directory, written, given `perms`, fsynced, then committed under
/// `guard` — a create is a hard link that fails when the name exists, a
/// guarded replacement stats the target again right before the rename — and
/// the directory fsynced where the runtime allows it. The temp file is
/// removed on any failure. Returns the new file's metadata.
fn replace_atomically(
    dir: &Path,
    name: &str,
    bytes: &[u8],
    perms: Option<fs::Permissions>,
    guard: Guard<'_>,
    shown: &str,
) -> Result<Stat, FsError> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let (tmp, mut file) = loop {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let tmp = dir.join(format!(".{name}.{stamp:x}.{n}.dsh-fs-tmp"));
        match OpenOptions::new().write(true).create_new(true).open(&tmp) {
            Ok(f) => break (tmp, f),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(map_io(e, shown)),
        }
    };
    let target = dir.join(name);
    let written = (|| {
        file.write_all(bytes)?;
        if let Some(perms) = perms {
            file.set_permissions(perms)?;
        }
        file.sync_all()
    })();
    drop(file);
    let committed = written
        .map_err(|e| map_io(e, shown))
        .and_then(|()| match guard {
            Guard::Absent => match fs::hard_link(&tmp, &target) {
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Err(FsError::new(
                    ErrorCode::NotObserved,
                    format!("{shown} was created by another program meanwhile; read it first"),
                )),
                other => other.map_err(|e| map_io(e, shown)),
            },
            Guard::Unchanged(token) => match meta::stat_path(&target) {
                Ok(now) if now.token == token => {
                    fs::rename(&tmp, &target).map_err(|e| map_io(e, shown))
                }
                Ok(_) => Err(FsError::stale(shown)),
                Err(e) if e.kind() == io::ErrorKind::NotFound => Err(vanished(shown)),
                Err(e) => Err(map_io(e, shown)),
            },
            Guard::None => fs::rename(&tmp, &target).map_err(|e| map_io(e, shown)),
        });
    // After a create the temp name is a second link to the new file.
    if committed.is_err() || matches!(guard, Guard::Absent) {
        let _ = fs::remove_file(&tmp);
    }
    committed?;
    // Durability of the rename; a runtime that cannot open or sync
    // directories still has the renamed, fsynced file.
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    meta::stat_path(&target).map_err(|e| map_io(e, shown))
}

/// Maps an I/O error to the seam's codes. A WASI runtime reports a path that
/// would leave its preopens (a symlink pointing out) as `EPERM`.
fn map_io(e: io::Error, shown: &str) -> FsError {
    match e.raw_os_error() {
        Some(libc::EPERM) => FsError::sandbox_denied(shown),
        Some(libc::ELOOP) => dsh_fs_core::seam::symlink_loop(shown),
        _ => dsh_fs_core::seam::from_io(&e, shown),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{PermissionsExt, symlink};

    struct Fixture {
        _tmp: tempfile::TempDir,
        root: PathBuf,
        outside: PathBuf,
        provider: WasiProvider,
    }

    fn fixture() -> Fixture {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("root");
        let outside = tmp.path().join("outside");
        fs::create_dir(&root).unwrap();
        fs::create_dir(&outside).unwrap();
        fs::write(outside.join("secret.txt"), "TOP SECRET\n").unwrap();
        let provider = WasiProvider::new(&root).unwrap();
        Fixture {
            _tmp: tmp,
            root,
            outside,
            provider,
        }
    }

    fn code<T: std::fmt::Debug>(r: Result<T, FsError>) -> ErrorCode {
        r.unwrap_err().code
    }

    fn leftovers(dir: &Path) -> Vec<String> {
        fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| n.ends_with(".dsh-fs-tmp"))
            .collect()
    }

    #[test]
    fn write_read_edit_keep_bytes_and_versions() {
        let f = fixture();
        let p = &f.provider;
        let t = p.resolve("sub/dir/a.txt").unwrap();
        assert_eq!(p.stat(&t).unwrap(), None);
        let w = p
            .write_text(
                &t,
                "\u{feff}one\r\ntwo\r\nthree",
                Some(WriteIntent::CreateIfAbsent),
            )
            .unwrap();
        assert_eq!(w.operation, WriteOperation::Created);
        let read = p.read_text(&t, 1 << 20).unwrap();
        assert_eq!(read.text, "one\r\ntwo\r\nthree");
        assert_eq!(read.version, w.version);
        let e = p
            .edit_text(
                &t,
                &EditRequest::new("two\nthree", "2\n3", false),
                Some(&read.version),
            )
            .unwrap();
        assert_eq!((e.replacements, e.first_line), (1, 2));
        assert_eq!(
            fs::read(f.root.join("sub/dir/a.txt")).unwrap(),
            b"\xEF\xBB\xBFone\r\n2\r\n3"
        );
        assert!(leftovers(&f.root.join("sub/dir")).is_empty());
    }

    #[test]
    fn guards_follow_content() {
        let f = fixture();
        let p = &f.provider;
        fs::write(f.root.join("a.txt"), "a\n").unwrap();
        fs::set_permissions(f.root.join("a.txt"), fs::Permissions::from_mode(0o750)).unwrap();
        let t = p.resolve("a.txt").unwrap();
        assert_eq!(
            code(p.write_text(&t, "x", Some(WriteIntent::CreateIfAbsent))),
            ErrorCode::NotObserved
        );
        let v = p.read_text(&t, 100).unwrap().version;
        // Same bytes rewritten: metadata changes, the version stays fresh.
        fs::write(f.root.join("a.txt"), "a\n").unwrap();
        let edit = EditRequest::new("a", "b", false);
        let v = p.edit_text(&t, &edit, Some(&v)).unwrap().version;
        let mode = fs::metadata(f.root.join("a.txt"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o7777, 0o750);
        fs::write(f.root.join("a.txt"), "c\n").unwrap();
        let edit = EditRequest::new("c", "d", false);
        assert_eq!(
            code(p.edit_text(&t, &edit, Some(&v))),
            ErrorCode::StaleVersion
        );
        assert_eq!(
            code(p.write_text(&t, "e", Some(WriteIntent::ReplaceIfVersion(v.clone())))),
            ErrorCode::StaleVersion
        );
        fs::remove_file(f.root.join("a.txt")).unwrap();
        assert_eq!(code(p.edit_text(&t, &edit, None)), ErrorCode::StaleVersion);
        assert_eq!(
            code(p.write_text(&t, "e", Some(WriteIntent::ReplaceIfVersion(v)))),
            ErrorCode::StaleVersion
        );
        assert!(leftovers(&f.root).is_empty());
    }

    #[test]
    fn symlinks_resolve_inside_and_are_denied_outside() {
        let f = fixture();
        let p = &f.provider;
        fs::create_dir(f.root.join("sub")).unwrap();
        fs::write(f.root.join("sub/real.txt"), "x\n").unwrap();
        symlink("sub/real.txt", f.root.join("alias.txt")).unwrap();
        symlink("../alias.txt", f.root.join("sub/back.txt")).unwrap();
        symlink(f.outside.join("secret.txt"), f.root.join("abs-out")).unwrap();
        symlink("../../outside", f.root.join("sub/rel-out")).unwrap();
        symlink("loop", f.root.join("loop")).unwrap();
        assert_eq!(p.resolve("alias.txt").unwrap().key(), "sub/real.txt");
        assert_eq!(p.resolve("sub/back.txt").unwrap().key(), "sub/real.txt");
        assert_eq!(p.resolve("alias.txt").unwrap().display_path(), "alias.txt");
        let root = f.root.to_str().unwrap();
        assert_eq!(
            p.resolve(&format!("{root}/sub/new")).unwrap().key(),
            "sub/new"
        );
        for path in [
            "abs-out",
            "sub/rel-out/secret.txt",
            "../outside/secret.txt",
            "/etc/passwd",
        ] {
            assert_eq!(code(p.resolve(path)), ErrorCode::SandboxDenied, "{path}");
        }
        assert_eq!(code(p.resolve("loop")), ErrorCode::InvalidInput);
        assert_eq!(
            fs::read(f.outside.join("secret.txt")).unwrap(),
            b"TOP SECRET\n"
        );
    }

    #[test]
    fn non_files_and_limits_are_refused() {
        let f = fixture();
        let p = &f.provider;
        fs::create_dir(f.root.join("d")).unwrap();
        fs::write(f.root.join("bin"), b"a\0b").unwrap();
        fs::write(f.root.join("big"), "0123456789").unwrap();
        let fifo = std::ffi::CString::new(f.root.join("fifo").to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
        let t = |path| p.resolve(path).unwrap();
        assert_eq!(code(p.read_text(&t("d"), 100)), ErrorCode::NotRegularFile);
        assert_eq!(
            code(p.read_text(&t("fifo"), 100)),
            ErrorCode::NotRegularFile
        );
        assert_eq!(
            code(p.stream_text(&t("fifo"), 0)),
            ErrorCode::NotRegularFile
        );
        assert_eq!(code(p.read_text(&t("."), 100)), ErrorCode::NotRegularFile);
        assert_eq!(
            code(p.write_text(&t("."), "x", None)),
            ErrorCode::NotRegularFile
        );
        assert_eq!(code(p.read_text(&t("bin"), 100)), ErrorCode::NotText);
        assert_eq!(code(p.read_text(&t("big"), 9)), ErrorCode::TooLarge);
        assert_eq!(code(p.read_text(&t("missing"), 9)), ErrorCode::NotFound);
        assert_eq!(code(p.resolve("big/x")), ErrorCode::NotDirectory);
    }

    #[test]
    fn streams_decode_and_version_like_whole_reads() {
        let f = fixture();
        let p = &f.provider;
        let text = "héllo ✓\r\n".repeat(1000);
        fs::write(f.root.join("s.txt"), &text).unwrap();
        let t = p.resolve("s.txt").unwrap();
        let mut s = p.stream_text(&t, 0).unwrap();
        let mut out = String::new();
        while let Some(chunk) = s.next_chunk(7).unwrap() {
            assert!(chunk.len() <= 7);
            out.push_str(&chunk);
        }
        assert_eq!(out, text);
        assert_eq!(
            s.version().unwrap(),
            p.read_text(&t, 1 << 20).unwrap().version
        );
    }
}

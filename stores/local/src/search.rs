//! The local disk's fast path for discovery: a parallel walk over held
//! directory descriptors feeding the rules, matchers and collectors of
//! `dsh-fs-search`, so it renders the same bytes as the portable walk.
//!
//! Confinement is `read`'s: every directory and file is opened relative to
//! the descriptor of the directory it was listed in, with `O_NOFOLLOW`, and
//! its type (and, for a file, its link count) is checked on the descriptor.
//! No path is resolved again by name, so a neighbour that swaps a directory
//! for a link mid-walk makes that entry fail to open, never leads outside.

use cap_std::fs::Dir;
use dsh_fs_core::{FsError, SearchQuery};
use dsh_fs_search::render::{GREP_LIMIT, GlobCollector, GrepCollector};
use dsh_fs_search::walk::{Filter, Rules, read_ignore, skipped};
use dsh_fs_search::{Budget, DirEntryKind, below, lines, pattern};
use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;
use std::fs::File;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::{Arc, Condvar, Mutex};

/// Runs `query` below `at` (root-relative, `""` for the root) of `root`,
/// refusing files with more than one hard link unless `hard_links`.
pub fn search(
    root: &Dir,
    at: &str,
    query: &SearchQuery,
    hard_links: bool,
    budget: &Budget,
) -> Result<String, FsError> {
    match query {
        SearchQuery::Glob(glob) => {
            let matcher = pattern::NameGlob::new(glob)?;
            let Start::Directory(dir) = start(root, at, "glob")? else {
                return Err(dsh_fs_search::not_a_directory(at, "glob"));
            };
            let found = Mutex::new(GlobCollector::default());
            walk(dir, at, Filter::All, budget, &|parent, path, name| {
                if !matcher.is_match(below(at, path)) {
                    return;
                }
                let modified = rustix::fs::statat(parent, name, AtFlags::SYMLINK_NOFOLLOW)
                    .ok()
                    .and_then(|st| modified_ns(&st));
                lock(&found).add(path, modified);
            });
            let found = found.into_inner().unwrap_or_else(|e| e.into_inner());
            Ok(found.render(budget))
        }
        SearchQuery::Grep { pattern, include } => {
            let regex = pattern::regex(pattern)?;
            let include = include.as_deref().map(pattern::NameGlob::new).transpose()?;
            let found = Mutex::new(GrepCollector::default());
            let search = |file: File, path: &str| {
                let m = SEARCHER.with_borrow_mut(|searcher| {
                    let searcher = searcher.get_or_insert_with(lines::searcher);
                    lines::search(searcher, &regex, file, GREP_LIMIT, budget)
                });
                if m.matches > 0 {
                    lock(&found).add(path, m.hits, m.matches);
                }
            };
            match start(root, at, "grep")? {
                Start::File(parent, name) => {
                    search(open_file(parent.as_fd(), name, at, hard_links)?, at);
                }
                Start::Directory(dir) => {
                    walk(dir, at, Filter::Standard, budget, &|parent, path, name| {
                        if include
                            .as_ref()
                            .is_some_and(|g| !g.is_match(below(at, path)))
                        {
                            return;
                        }
                        match open_file(parent, name, path, hard_links) {
                            Ok(file) => search(file, path),
                            Err(e) => budget.failed(e.code),
                        }
                    })
                }
            }
            let found = found.into_inner().unwrap_or_else(|e| e.into_inner());
            Ok(found.render(budget))
        }
    }
}

thread_local! {
    /// Each walking thread's line searcher and its buffers, made once.
    static SEARCHER: std::cell::RefCell<Option<lines::Searcher>> =
        const { std::cell::RefCell::new(None) };
}

/// Where a search starts: a directory, or a file given by its parent's
/// descriptor and its name.
enum Start<'a> {
    Directory(OwnedFd),
    File(OwnedFd, &'a str),
}

/// Opens `at` one component at a time from the root, each relative to the
/// last and never through a link; anything but a directory or a regular file
/// at the end gets the portable search's refusal for `tool`.
fn start<'a>(root: &Dir, at: &'a str, tool: &str) -> Result<Start<'a>, FsError> {
    let mut dir = open_dir(root.as_fd(), ".").map_err(|e| from_errno(e, at))?;
    let mut parts = at.split('/').filter(|p| !p.is_empty()).peekable();
    while let Some(part) = parts.next() {
        if part == "." || part == ".." {
            return Err(FsError::sandbox_denied(at));
        }
        let kind = match rustix::fs::statat(&dir, part, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => kind_of(FileType::from_raw_mode(st.st_mode)),
            Err(Errno::NOENT) => return Err(FsError::not_found(at)),
            Err(e) => return Err(from_errno(e, at)),
        };
        let last = parts.peek().is_none();
        match kind {
            DirEntryKind::Directory => {}
            DirEntryKind::File if last && tool == "grep" => return Ok(Start::File(dir, part)),
            _ if tool == "grep" => return Err(dsh_fs_search::not_searchable(at)),
            _ => return Err(dsh_fs_search::not_a_directory(at, tool)),
        }
        dir = match open_dir(dir.as_fd(), part) {
            Ok(next) => next,
            // Swapped for something else since the stat: as if it were.
            Err(Errno::NOENT) => return Err(FsError::not_found(at)),
            Err(_) if tool == "grep" => return Err(dsh_fs_search::not_searchable(at)),
            Err(_) => return Err(dsh_fs_search::not_a_directory(at, tool)),
        };
    }
    Ok(Start::Directory(dir))
}

/// A directory waiting to be listed: its parent's descriptor and its name
/// (or, for the start, its own descriptor), its path, and the ignore rules
/// of the directories it is in.
struct Job<'b> {
    at: Arc<OwnedFd>,
    name: Option<String>,
    path: String,
    rules: Option<Arc<Chain<'b>>>,
}

/// A directory's ignore rules, linked to its parent's.
struct Chain<'b> {
    rules: Rules<'b>,
    parent: Option<Arc<Chain<'b>>>,
}

impl<'b> Chain<'b> {
    /// The rules from `chain` up to the root, nearest first.
    fn levels<'c>(chain: &'c Option<Arc<Chain<'b>>>) -> impl Iterator<Item = &'c Rules<'b>> {
        std::iter::successors(chain.as_deref(), |c| c.parent.as_deref()).map(|c| &c.rules)
    }
}

/// The walk's shared queue: directories to list, and how many are being
/// listed (the walk ends when both are zero).
struct Queue<'b> {
    jobs: Vec<Job<'b>>,
    busy: usize,
}

/// Calls `visit(parent, path, name)` for every regular-file entry below
/// `dir` not skipped by `filter`, from as many threads as the machine has
/// cores, until the budget is spent. A directory is opened only when it is
/// listed, so open descriptors stay about the depth of the tree.
fn walk(
    dir: OwnedFd,
    path: &str,
    filter: Filter,
    budget: &Budget,
    visit: &(dyn Fn(BorrowedFd<'_>, &str, &str) + Sync),
) {
    let queue = Mutex::new(Queue {
        jobs: vec![Job {
            at: Arc::new(dir),
            name: None,
            path: path.to_owned(),
            rules: None,
        }],
        busy: 0,
    });
    let ready = Condvar::new();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(8));
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                while let Some(job) = next(&queue, &ready) {
                    let found = list(job, filter, budget, visit);
                    let mut q = lock(&queue);
                    q.jobs.extend(found);
                    q.busy -= 1;
                    ready.notify_all();
                }
            });
        }
    });
}

/// The next directory to list, or `None` when the walk is over.
fn next<'b>(queue: &Mutex<Queue<'b>>, ready: &Condvar) -> Option<Job<'b>> {
    let mut q = lock(queue);
    loop {
        if let Some(job) = q.jobs.pop() {
            q.busy += 1;
            return Some(job);
        }
        if q.busy == 0 {
            return None;
        }
        q = ready.wait(q).unwrap_or_else(|e| e.into_inner());
    }
}

/// Lists one directory: visits its files and returns its subdirectories.
fn list<'b>(
    job: Job<'b>,
    filter: Filter,
    budget: &'b Budget,
    visit: &(dyn Fn(BorrowedFd<'_>, &str, &str) + Sync),
) -> Vec<Job<'b>> {
    let failed = |e: Errno| budget.failed(from_errno(e, &job.path).code);
    let dir = match &job.name {
        None => job.at,
        Some(name) => match open_dir(job.at.as_fd(), name) {
            Ok(dir) => Arc::new(dir),
            Err(e) => {
                failed(e);
                return Vec::new();
            }
        },
    };
    let entries = match entries(dir.as_fd()) {
        Ok(entries) => entries,
        Err(e) => {
            failed(e);
            return Vec::new();
        }
    };
    let rules = match filter {
        Filter::All => job.rules,
        Filter::Standard => {
            let read = |name: &str| {
                let listed = entries
                    .iter()
                    .any(|(n, k)| n == name && *k == DirEntryKind::File);
                let file = listed.then(|| open_file(dir.as_fd(), name, name, true).ok())??;
                read_ignore(file)
            };
            let rules = Rules::new(&job.path, read(".ignore"), read(".gitignore"), budget);
            Some(Arc::new(Chain {
                rules,
                parent: job.rules,
            }))
        }
    };
    let mut subdirs = Vec::new();
    for (name, kind) in entries {
        if !budget.tick() {
            break;
        }
        let path = dsh_fs_search::tree::join(&job.path, &name);
        let is_dir = kind == DirEntryKind::Directory;
        if skipped(filter, Chain::levels(&rules), &path, &name, is_dir) {
            continue;
        }
        match kind {
            DirEntryKind::File => visit(dir.as_fd(), &path, &name),
            DirEntryKind::Directory => subdirs.push(Job {
                at: Arc::clone(&dir),
                name: Some(name),
                path,
                rules: rules.clone(),
            }),
            DirEntryKind::Symlink | DirEntryKind::Other => {}
        }
    }
    // Popped last first: the first subdirectory in name order is listed next.
    subdirs.reverse();
    subdirs
}

/// The entries of an open directory with their kinds, links not followed;
/// names that are not UTF-8 are left out.
fn entries(dir: BorrowedFd<'_>) -> Result<Vec<(String, DirEntryKind)>, Errno> {
    let mut out = Vec::new();
    for entry in rustix::fs::Dir::read_from(dir)? {
        let entry = entry?;
        let bytes = entry.file_name().to_bytes();
        if bytes == b"." || bytes == b".." {
            continue;
        }
        let Ok(name) = std::str::from_utf8(bytes) else {
            continue;
        };
        let kind = match entry.file_type() {
            FileType::Unknown => match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
                Ok(st) => kind_of(FileType::from_raw_mode(st.st_mode)),
                Err(_) => continue,
            },
            known => kind_of(known),
        };
        out.push((name.to_owned(), kind));
    }
    Ok(out)
}

fn kind_of(t: FileType) -> DirEntryKind {
    dsh_fs_core::listing::kind(
        t == FileType::Symlink,
        t == FileType::Directory,
        t == FileType::RegularFile,
    )
}

/// Opens directory `name` of `parent`, refusing a link.
fn open_dir(parent: BorrowedFd<'_>, name: &str) -> Result<OwnedFd, Errno> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    retry(|| rustix::fs::openat(parent, name, flags, Mode::empty()))
}

/// Opens file `name` of `parent` as `read` would: a link refused, a FIFO
/// never waited on, the type and the link count checked on the descriptor.
fn open_file(
    parent: BorrowedFd<'_>,
    name: &str,
    shown: &str,
    hard_links: bool,
) -> Result<File, FsError> {
    let flags =
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
    let fd = retry(|| rustix::fs::openat(parent, name, flags, Mode::empty()))
        .map_err(|e| from_errno(e, shown))?;
    let st = rustix::fs::fstat(&fd).map_err(|e| from_errno(e, shown))?;
    let kind = FileType::from_raw_mode(st.st_mode);
    crate::check_regular(
        kind == FileType::RegularFile,
        kind == FileType::Directory,
        st.st_nlink as u64,
        shown,
        hard_links,
    )?;
    Ok(File::from(fd))
}

fn retry<T>(mut f: impl FnMut() -> Result<T, Errno>) -> Result<T, Errno> {
    loop {
        match f() {
            Err(Errno::INTR) => continue,
            other => return other,
        }
    }
}

fn from_errno(e: Errno, shown: &str) -> FsError {
    crate::map_io(e.into(), shown)
}

/// Modification time in nanoseconds since the epoch, when after it.
#[allow(clippy::useless_conversion)] // the field types differ between targets
fn modified_ns(st: &rustix::fs::Stat) -> Option<u64> {
    let secs = u64::try_from(st.st_mtime).ok()?;
    let nanos = u64::try_from(st.st_mtime_nsec).ok()?;
    secs.checked_mul(1_000_000_000)?.checked_add(nanos)
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests;

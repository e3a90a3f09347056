//! The local disk's fast path for discovery: the `ignore` crate's parallel walk
//! and `grep-searcher` over real files, feeding the same collectors and rules
//! as the portable search of `dsh-fs-search`, so both render the same bytes.
//! Links are never followed; nothing outside `root` is listed or read.

use dsh_fs_core::FsError;
use dsh_fs_search::render::{GREP_LIMIT, GlobCollector, GrepCollector};
use dsh_fs_search::walk::VCS_DIRS;
use dsh_fs_search::{Budget, DirEntryKind, LocalTree, Tree, below, lines, modified_ns, pattern};
use ignore::{DirEntry, WalkBuilder, WalkState};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Like [`dsh_fs_search::glob`] over a [`LocalTree`] at `root`, walked in parallel.
pub fn glob(root: &Path, dir: &str, glob: &str, budget: &Budget) -> Result<String, FsError> {
    let matcher = pattern::NameGlob::new(glob)?;
    let tree = LocalTree::new(root);
    if tree.kind(dir)? != Some(DirEntryKind::Directory) {
        // The portable path words every refusal; the fast path only walks.
        return dsh_fs_search::glob(&tree, dir, glob, budget);
    }
    let done = Mutex::new(GlobCollector::default());
    walker(root, dir, false)
        .filter_entry(|e| {
            !e.file_name()
                .to_str()
                .is_some_and(|n| VCS_DIRS.contains(&n))
        })
        .build_parallel()
        .run(|| {
            let mut worker = Worker {
                local: GlobCollector::default(),
                done: &done,
                ticks: Ticks::default(),
            };
            let matcher = &matcher;
            Box::new(move |entry| {
                if !worker.ticks.tick(budget) {
                    return WalkState::Quit;
                }
                let Ok(entry) = entry else {
                    return WalkState::Continue;
                };
                if entry.file_type().is_some_and(|t| t.is_file())
                    && let Some(path) = relative(root, entry.path())
                    && matcher.is_match(below(dir, path))
                {
                    let modified = entry.metadata().ok().and_then(|m| modified_ns(&m));
                    worker.local.add(path, modified);
                }
                WalkState::Continue
            })
        });
    let found = done.into_inner().unwrap_or_else(|e| e.into_inner());
    Ok(found.render(budget.spent().then(|| budget.time())))
}

/// Like [`dsh_fs_search::grep`] over a [`LocalTree`] at `root`: directories are
/// walked in parallel with ripgrep's default filters, files searched on every
/// worker.
pub fn grep(
    root: &Path,
    path: &str,
    regex: &str,
    include_glob: Option<&str>,
    budget: &Budget,
) -> Result<String, FsError> {
    let matcher = pattern::regex(regex)?;
    let include = include_glob.map(pattern::NameGlob::new).transpose()?;
    let tree = LocalTree::new(root);
    if tree.kind(path)? != Some(DirEntryKind::Directory) {
        // One file (or a refusal): the portable path, which words them all.
        return dsh_fs_search::grep(&tree, path, regex, include_glob, budget);
    }
    let found = Mutex::new(GrepCollector::default());
    walker(root, path, true).build_parallel().run(|| {
        let mut searcher = lines::searcher();
        let mut ticks = Ticks::default();
        let (matcher, include, found) = (&matcher, &include, &found);
        Box::new(move |entry| {
            if !ticks.tick(budget) {
                return WalkState::Quit;
            }
            let Some((file, entry)) = file(root, entry) else {
                return WalkState::Continue;
            };
            if include
                .as_ref()
                .is_some_and(|g| !g.is_match(below(path, &file)))
            {
                return WalkState::Continue;
            }
            let Ok(reader) = dsh_fs_search::open_nofollow(entry.path()) else {
                return WalkState::Continue;
            };
            let m = lines::search(&mut searcher, matcher, reader, GREP_LIMIT, budget);
            if m.matches > 0 {
                let mut all = found.lock().unwrap_or_else(|e| e.into_inner());
                all.add(&file, m.hits, m.matches);
            }
            WalkState::Continue
        })
    });
    let found = found.into_inner().unwrap_or_else(|e| e.into_inner());
    Ok(found.render(budget.spent().then(|| budget.time())))
}

/// The walk below `dir`: links not followed, and for grep (`standard`)
/// ripgrep's default filters without the rules of directories above `dir`,
/// global excludes or `.git/info/exclude`.
fn walker(root: &Path, dir: &str, standard: bool) -> WalkBuilder {
    let start: PathBuf = if dir.is_empty() {
        root.to_path_buf()
    } else {
        root.join(dir)
    };
    let mut builder = WalkBuilder::new(start);
    builder
        .follow_links(false)
        .hidden(standard)
        .ignore(standard)
        .git_ignore(standard)
        .parents(false)
        .git_global(false)
        .git_exclude(false)
        .require_git(false);
    builder
}

/// A walked regular file and its root-relative path, when it is one and its
/// path is UTF-8.
fn file(root: &Path, entry: Result<DirEntry, ignore::Error>) -> Option<(String, DirEntry)> {
    let entry = entry.ok()?;
    if !entry.file_type()?.is_file() {
        return None;
    }
    let path = relative(root, entry.path())?.to_owned();
    Some((path, entry))
}

/// `path` relative to `root`, when it is below it and UTF-8.
fn relative<'p>(root: &Path, path: &'p Path) -> Option<&'p str> {
    path.strip_prefix(root).ok()?.to_str()
}

/// Entries a walking thread visits between charges to the shared budget, so
/// the threads do not contend on it for every entry.
const TICK_BATCH: u64 = 64;

/// One walking thread's uncharged entries.
#[derive(Default)]
struct Ticks(u64);

impl Ticks {
    /// Counts one entry; false once the budget is spent.
    fn tick(&mut self, budget: &Budget) -> bool {
        self.0 += 1;
        if self.0 < TICK_BATCH {
            return !budget.spent();
        }
        self.0 = 0;
        budget.charge(TICK_BATCH)
    }
}

/// One walking thread's glob matches, merged when the walk drops it.
struct Worker<'a> {
    local: GlobCollector,
    done: &'a Mutex<GlobCollector>,
    ticks: Ticks,
}

impl Drop for Worker<'_> {
    fn drop(&mut self) {
        let local = std::mem::take(&mut self.local);
        self.done
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .merge(local);
    }
}

#[cfg(test)]
mod tests;

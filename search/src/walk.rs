//! The portable walk: depth first, each directory's entries in name order, so
//! files come out in path order. Symlinks are never followed; grep's walk skips
//! hidden and ignored entries the way ripgrep does by default (`.ignore` before
//! `.gitignore`, the nearest directory first, whitelists winning over hiding).

use crate::budget::Budget;
use crate::tree::{DirEntry, DirEntryKind, Tree, join};
use dsh_fs_core::FsError;
use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use std::io::Read;
use std::ops::ControlFlow;

/// Directory names that hold version-control metadata; never listed by glob.
pub const VCS_DIRS: [&str; 4] = [".git", ".hg", ".svn", ".jj"];

/// Ignore files larger than this are not read (their rules do not apply),
/// on every walk, native or portable: the rules of a larger one could take
/// more memory to compile than a whole search may use.
pub const MAX_IGNORE_FILE: u64 = 32 << 10;

/// Which entries a walk skips.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Filter {
    /// glob: everything but VCS metadata directories.
    All,
    /// grep: hidden entries and those matched by `.gitignore`/`.ignore`.
    Standard,
}

/// One directory's ignore rules, their bytes held against the budget's
/// [`crate::budget::MAX_LIVE_IGNORE_BYTES`] while they live.
#[derive(Default)]
pub struct Rules<'b> {
    ignore: Option<Gitignore>,
    gitignore: Option<Gitignore>,
    held: Option<(&'b Budget, u64)>,
}

impl<'b> Rules<'b> {
    /// The rules of directory `dir` (root-relative) from the bytes of its
    /// `.ignore` and `.gitignore` files, each as [`read_ignore`] returned it.
    /// When the rules of the directories being walked would exceed the
    /// budget's bound, none are compiled and the budget is spent: the search
    /// stops early and says so.
    pub fn new(
        dir: &str,
        ignore: Option<Vec<u8>>,
        gitignore: Option<Vec<u8>>,
        budget: &'b Budget,
    ) -> Rules<'b> {
        let bytes = [&ignore, &gitignore]
            .iter()
            .map(|f| f.as_ref().map_or(0, |b| b.len() as u64))
            .sum();
        if bytes == 0 || !budget.hold_ignore(bytes) {
            return Rules::default();
        }
        Rules {
            ignore: ignore.and_then(|bytes| parse(dir, &bytes)),
            gitignore: gitignore.and_then(|bytes| parse(dir, &bytes)),
            held: Some((budget, bytes)),
        }
    }
}

impl Drop for Rules<'_> {
    fn drop(&mut self) {
        if let Some((budget, bytes)) = self.held {
            budget.release_ignore(bytes);
        }
    }
}

/// The bytes of an ignore file, or `None` when it cannot be read or is
/// larger than [`MAX_IGNORE_FILE`].
pub fn read_ignore(reader: impl Read) -> Option<Vec<u8>> {
    let mut bytes = Vec::new();
    reader
        .take(MAX_IGNORE_FILE + 1)
        .read_to_end(&mut bytes)
        .ok()?;
    (bytes.len() as u64 <= MAX_IGNORE_FILE).then_some(bytes)
}

/// Calls `visit(path, entry)` for every file below `dir` in path order until
/// it breaks or the budget runs out. A subdirectory that cannot be listed is
/// left out and told to the budget ([`Budget::failed`]); `dir` itself
/// failing is the error.
pub fn walk(
    tree: &dyn Tree,
    dir: &str,
    filter: Filter,
    budget: &Budget,
    visit: &mut dyn FnMut(&str, &DirEntry) -> ControlFlow<()>,
) -> Result<(), FsError> {
    let first = tree.list(dir)?;
    let mut rules = vec![rules_for(tree, dir, &first, filter, budget)];
    let mut stack = vec![(dir.to_owned(), first.into_iter())];
    while let Some((parent, entries)) = stack.last_mut() {
        let Some(entry) = entries.next() else {
            stack.pop();
            rules.pop();
            continue;
        };
        if !budget.tick() {
            return Ok(());
        }
        let path = join(parent, &entry.name);
        let is_dir = entry.kind == DirEntryKind::Directory;
        if skipped(filter, rules.iter().rev(), &path, &entry.name, is_dir) {
            continue;
        }
        match entry.kind {
            DirEntryKind::File => {
                if visit(&path, &entry).is_break() {
                    return Ok(());
                }
            }
            DirEntryKind::Directory => match tree.list(&path) {
                Ok(listed) => {
                    rules.push(rules_for(tree, &path, &listed, filter, budget));
                    stack.push((path, listed.into_iter()));
                }
                Err(e) => budget.failed(e.code),
            },
            DirEntryKind::Symlink | DirEntryKind::Other => {}
        }
    }
    Ok(())
}

/// Whether the walk skips entry `name` at `path` under `rules`, the rules of
/// the directories it is in, nearest first.
pub fn skipped<'r, 'b: 'r>(
    filter: Filter,
    rules: impl Iterator<Item = &'r Rules<'b>>,
    path: &str,
    name: &str,
    is_dir: bool,
) -> bool {
    match filter {
        Filter::All => VCS_DIRS.contains(&name),
        Filter::Standard => match ignored(rules, path, is_dir) {
            Match::Ignore(()) => true,
            Match::Whitelist(()) => false,
            Match::None => name.starts_with('.'),
        },
    }
}

/// The ignore crate's precedence: the nearest `.ignore` rule, else the nearest
/// `.gitignore` rule. Like ripgrep with `--no-require-git`, a nested `.git` does
/// not cut off the rules of the directories above it.
fn ignored<'r, 'b: 'r>(
    rules: impl Iterator<Item = &'r Rules<'b>>,
    path: &str,
    is_dir: bool,
) -> Match<()> {
    let absolute = format!("/{path}");
    let (mut by_ignore, mut by_git) = (Match::None, Match::None);
    for level in rules {
        if by_ignore.is_none()
            && let Some(m) = &level.ignore
        {
            by_ignore = m.matched(&absolute, is_dir).map(|_| ());
        }
        if by_git.is_none()
            && let Some(m) = &level.gitignore
        {
            by_git = m.matched(&absolute, is_dir).map(|_| ());
        }
    }
    if by_ignore.is_none() {
        by_git
    } else {
        by_ignore
    }
}

fn rules_for<'b>(
    tree: &dyn Tree,
    dir: &str,
    entries: &[DirEntry],
    filter: Filter,
    budget: &'b Budget,
) -> Rules<'b> {
    if filter == Filter::All {
        return Rules::default();
    }
    let read = |name: &str| {
        let entry = entries
            .iter()
            .find(|e| e.name == name && e.kind == DirEntryKind::File)?;
        if entry.size > MAX_IGNORE_FILE {
            return None;
        }
        read_ignore(tree.open(&join(dir, name)).ok()?)
    };
    Rules::new(dir, read(".ignore"), read(".gitignore"), budget)
}

/// Parses one ignore file like the `ignore` crate does: line by line, a BOM
/// dropped, reading stopped at the first line that is not UTF-8, bad globs
/// skipped.
fn parse(dir: &str, bytes: &[u8]) -> Option<Gitignore> {
    let mut builder = GitignoreBuilder::new(format!("/{dir}"));
    for (i, line) in bytes.split(|&b| b == b'\n').enumerate() {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let Ok(mut line) = std::str::from_utf8(line) else {
            break;
        };
        if i == 0 {
            line = line.trim_start_matches('\u{feff}');
        }
        let _ = builder.add_line(None, line);
    }
    builder.build().ok().filter(|g| !g.is_empty())
}

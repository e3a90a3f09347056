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

/// Ignore files larger than this are not read (their rules do not apply).
const MAX_IGNORE_FILE: u64 = 1 << 20;

/// Which entries a walk skips.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Filter {
    /// glob: everything but VCS metadata directories.
    All,
    /// grep: hidden entries and those matched by `.gitignore`/`.ignore`.
    Standard,
}

/// One directory's ignore rules.
struct Rules {
    ignore: Option<Gitignore>,
    gitignore: Option<Gitignore>,
}

/// Calls `visit(path, entry)` for every file below `dir` in path order until
/// it breaks or the budget runs out. A subdirectory that cannot be listed is
/// skipped; `dir` itself failing is the error.
pub fn walk(
    tree: &dyn Tree,
    dir: &str,
    filter: Filter,
    budget: &Budget,
    visit: &mut dyn FnMut(&str, &DirEntry) -> ControlFlow<()>,
) -> Result<(), FsError> {
    let first = tree.list(dir)?;
    let mut rules = vec![rules_for(tree, dir, &first, filter)];
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
        if skipped(filter, &rules, &path, &entry.name, is_dir) {
            continue;
        }
        match entry.kind {
            DirEntryKind::File => {
                if visit(&path, &entry).is_break() {
                    return Ok(());
                }
            }
            DirEntryKind::Directory => {
                if let Ok(listed) = tree.list(&path) {
                    rules.push(rules_for(tree, &path, &listed, filter));
                    stack.push((path, listed.into_iter()));
                }
            }
            DirEntryKind::Symlink | DirEntryKind::Other => {}
        }
    }
    Ok(())
}

fn skipped(filter: Filter, rules: &[Rules], path: &str, name: &str, is_dir: bool) -> bool {
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
fn ignored(rules: &[Rules], path: &str, is_dir: bool) -> Match<()> {
    let absolute = format!("/{path}");
    let (mut by_ignore, mut by_git) = (Match::None, Match::None);
    for level in rules.iter().rev() {
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

fn rules_for(tree: &dyn Tree, dir: &str, entries: &[DirEntry], filter: Filter) -> Rules {
    let mut rules = Rules {
        ignore: None,
        gitignore: None,
    };
    if filter == Filter::All {
        return rules;
    }
    for entry in entries {
        match entry.name.as_str() {
            ".ignore" if entry.kind == DirEntryKind::File => {
                rules.ignore = load(tree, dir, entry);
            }
            ".gitignore" if entry.kind == DirEntryKind::File => {
                rules.gitignore = load(tree, dir, entry);
            }
            _ => {}
        }
    }
    rules
}

/// Reads one ignore file like the `ignore` crate does: line by line, a BOM
/// dropped, reading stopped at the first line that is not UTF-8, bad globs
/// skipped.
fn load(tree: &dyn Tree, dir: &str, entry: &DirEntry) -> Option<Gitignore> {
    if entry.size > MAX_IGNORE_FILE {
        return None;
    }
    let mut bytes = Vec::new();
    tree.open(&join(dir, &entry.name))
        .ok()?
        .take(MAX_IGNORE_FILE)
        .read_to_end(&mut bytes)
        .ok()?;
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

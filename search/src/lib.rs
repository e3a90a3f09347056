//! Discovery for dsh-fs: `glob` and `grep` written once over a [`Tree`] — one
//! directory listed at a time in name order, and a file's bytes as a reader —
//! so every backend with a directory listing and reads can be searched.
//!
//! The rules are ripgrep's, from the crates ripgrep is built from: `globset`
//! for globs, the `ignore` crate's gitignore matcher for `.gitignore`/`.ignore`,
//! `grep-regex` and `grep-searcher` for line search and binary detection. The
//! [`render`] collectors keep only what is shown (the 100 newest paths, the
//! first 250 matching lines in path order) and write the model-facing text, so
//! a native fast path that feeds them the same files renders the same bytes.
//!
//! ```
//! use dsh_fs_search::{Budget, MemTree, glob, grep};
//!
//! let mut tree = MemTree::default();
//! tree.file("src/main.rs", "fn main() {}\n", 2);
//! tree.file("src/lib.rs", "pub fn lib() {}\n", 1);
//! let found = glob(&tree, "", "*.rs", &Budget::default()).unwrap();
//! assert_eq!(found, "src/main.rs\nsrc/lib.rs");
//! let hits = grep(&tree, "", "fn main", None, &Budget::default()).unwrap();
//! assert_eq!(hits, "Found 1 match in 1 file\n\nsrc/main.rs:\n  Line 1: fn main() {}");
//! ```
#![deny(missing_docs)]

pub mod budget;
pub mod lines;
mod local;
mod memory;
pub mod pattern;
pub mod render;
pub mod tree;
pub mod walk;

#[cfg(test)]
mod tests;

pub use budget::Budget;
pub use dsh_fs_core::listing::{kind_of, modified_ns};
pub use local::LocalTree;
pub use memory::MemTree;
pub use tree::{DirEntry, DirEntryKind, Tree};

use dsh_fs_core::{ErrorCode, FsError, SearchQuery};
use render::{GlobCollector, GrepCollector};
use std::ops::ControlFlow;
use walk::{Filter, walk};

/// Files below directory `dir` (root-relative, `""` for the root) whose path
/// below `dir` matches `pattern`, newest first, hidden and ignored files
/// included, VCS metadata directories excluded, at most 100 shown.
pub fn glob(tree: &dyn Tree, dir: &str, pattern: &str, budget: &Budget) -> Result<String, FsError> {
    let glob = pattern::NameGlob::new(pattern)?;
    directory(tree, dir, "glob")?;
    let mut found = GlobCollector::default();
    walk(tree, dir, Filter::All, budget, &mut |path, entry| {
        if glob.is_match(below(dir, path)) {
            found.add(path, entry.modified);
        }
        ControlFlow::Continue(())
    })?;
    Ok(found.render(budget))
}

/// Lines matching regular expression `pattern` in file `path`, or in the files
/// below directory `path` that are neither hidden, ignored nor binary and whose
/// name matches `include`; grouped by file in path order, at most 250 shown.
pub fn grep(
    tree: &dyn Tree,
    path: &str,
    pattern: &str,
    include: Option<&str>,
    budget: &Budget,
) -> Result<String, FsError> {
    let regex = pattern::regex(pattern)?;
    let include = include.map(pattern::NameGlob::new).transpose()?;
    let mut searcher = lines::searcher();
    let mut found = GrepCollector::default();
    let mut one = |file: &str| match tree.open(file) {
        Ok(reader) => {
            let m = lines::search(&mut searcher, &regex, reader, found.room(), budget);
            found.add(file, m.hits, m.matches);
        }
        Err(e) => budget.failed(e.code),
    };
    match tree.kind(path)? {
        None => return Err(FsError::not_found(shown(path))),
        Some(DirEntryKind::File) => one(path),
        Some(DirEntryKind::Directory) => {
            walk(tree, path, Filter::Standard, budget, &mut |file, _| {
                if include
                    .as_ref()
                    .is_none_or(|g| g.is_match(below(path, file)))
                {
                    one(file);
                }
                ControlFlow::Continue(())
            })?;
        }
        Some(_) => return Err(not_searchable(path)),
    }
    Ok(found.render(budget))
}

/// Runs `query` below `path` (root-relative, `""` for the root): [`glob`] or
/// [`grep`].
pub fn search(
    tree: &dyn Tree,
    path: &str,
    query: &SearchQuery,
    budget: &Budget,
) -> Result<String, FsError> {
    match query {
        SearchQuery::Glob(pattern) => glob(tree, path, pattern, budget),
        SearchQuery::Grep { pattern, include } => {
            grep(tree, path, pattern, include.as_deref(), budget)
        }
    }
}

/// `path` relative to `dir`.
pub fn below<'p>(dir: &str, path: &'p str) -> &'p str {
    if dir.is_empty() {
        path
    } else {
        path.strip_prefix(dir)
            .map_or(path, |p| p.trim_start_matches('/'))
    }
}

fn directory(tree: &dyn Tree, dir: &str, tool: &str) -> Result<(), FsError> {
    match tree.kind(dir)? {
        Some(DirEntryKind::Directory) => Ok(()),
        None => Err(FsError::not_found(shown(dir))),
        Some(_) => Err(not_a_directory(dir, tool)),
    }
}

/// The refusal of `tool` (`glob`) for a start path that is not a directory.
#[cold]
pub fn not_a_directory(path: &str, tool: &str) -> FsError {
    FsError::new(
        ErrorCode::NotDirectory,
        format!(
            "{} is not a directory; give {tool} the directory that holds it",
            shown(path)
        ),
    )
}

/// The refusal of grep for a start path that is neither a file nor a
/// directory.
#[cold]
pub fn not_searchable(path: &str) -> FsError {
    FsError::new(
        ErrorCode::NotRegularFile,
        format!(
            "{} is neither a file nor a directory (a link or a device); search the directory \
             it is in, or the file it points to",
            shown(path)
        ),
    )
}

fn shown(path: &str) -> &str {
    if path.is_empty() { "." } else { path }
}

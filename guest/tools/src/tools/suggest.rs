//! What a missing path or a directory answers with: up to three close
//! existing paths (a case difference, a missing or extra extension, the same
//! name in a nearby directory, `path:N` for `path` at line N), found with a
//! fixed budget of listings, and a directory's first entries. A path spelt
//! one normalisation away ([`super::spelling`]) is named with its cause first.

use super::{plural, spelling};
use crate::error::{Tool, ToolError};
use dsh_fs_core::provider::{Listing, Provider};
use dsh_fs_core::{DirEntry, DirEntryKind, EntryKind, ErrorCode, FsError};

/// Most directories listed while looking for similar paths.
const MAX_LISTINGS: u32 = 16;
/// Most entries read across those listings (only the best few are kept).
const MAX_ENTRIES: usize = 65_536;
/// Entries asked for per listing page.
const PAGE: u32 = 512;
/// Most similar paths suggested.
const MAX_SUGGESTIONS: usize = 3;
/// Entries a directory read shows.
const SHOWN_ENTRIES: usize = 50;

/// FS_NOT_FOUND for `display` (a root-relative path; `asked` is the model's
/// spelling of it): the existing path it is one normalisation away from,
/// with the cause, or else the similar existing files; for `edit`, also how
/// to create it.
#[cold]
pub(super) fn not_found<P: Provider>(
    provider: &P,
    tool: Tool,
    asked: &str,
    display: &str,
) -> ToolError {
    let plain = || ToolError::from_fs(tool, FsError::not_found(display));
    let field = match tool {
        Tool::Glob | Tool::Grep => "path",
        _ => "file_path",
    };
    let dirs_too = matches!(tool, Tool::Glob | Tool::Grep);
    let mut finder = Finder::new(provider);
    if let Some((path, slips)) = spelling::respell(&mut finder, asked, dirs_too) {
        // A URI's `//` is gone from the display path: quote it as sent.
        let display = if slips.contains(&spelling::Slip::Uri) {
            asked
        } else {
            display
        };
        return ToolError {
            message: crate::error::one_line(format!(
                "{display} does not exist: {}. Use {field} {}.",
                spelling::causes(&slips),
                spelling::shown(&path, &slips)
            )),
            ..plain()
        };
    }
    if let Some((base, line)) = split_line_suffix(display)
        && is_file(provider, base)
    {
        let offset = match tool {
            Tool::Read => format!(" with offset={line}"),
            _ => format!(" (line {line} is where to look)"),
        };
        return found(plain(), format!("Use {field} {base}{offset}."), Vec::new());
    }
    let similar = finder.similar(display, dirs_too);
    let create = if tool == Tool::Edit {
        ", or use write to create a new file"
    } else {
        ""
    };
    match similar.as_slice() {
        [] => plain(),
        [one] => {
            let otherwise = if tool == Tool::Edit {
                " Otherwise, use write to create a new file."
            } else {
                ""
            };
            found(
                plain(),
                format!("Did you mean {one}?{otherwise}"),
                Vec::new(),
            )
        }
        more => {
            let list = more
                .iter()
                .map(|p| format!("  {}", dsh_fs_core::text::one_line(p)))
                .collect();
            let hint = format!("Similar existing paths are below; use one as {field}{create}.");
            found(plain(), hint, list)
        }
    }
}

/// The answer to a read of something that is not a regular file: for a
/// directory, its first entries and how to read one.
#[cold]
pub(super) fn not_a_file<P: Provider>(
    provider: &P,
    target: &P::Target,
    display: &str,
    err: FsError,
) -> ToolError {
    let is_dir = matches!(provider.stat(target), Ok(Some(i)) if i.kind == EntryKind::Directory);
    let listing = is_dir
        .then(|| provider.list_dir(target))
        .and_then(Result::ok);
    let Some(mut listing) = listing else {
        return ToolError::from_fs(Tool::Read, err);
    };
    let mut shown: Vec<DirEntry> = Vec::new();
    let mut total = 0u64;
    let mut capped = false;
    loop {
        match listing.next_entries(4096) {
            Ok(page) if page.is_empty() => break,
            Ok(page) => {
                total += page.len() as u64;
                let room = SHOWN_ENTRIES.saturating_sub(shown.len());
                shown.extend(page.into_iter().take(room));
            }
            Err(_) => {
                capped = true;
                break;
            }
        }
    }
    let prefix = if display == "." {
        String::new()
    } else {
        format!("{display}/")
    };
    let example = shown
        .iter()
        .find(|e| e.kind == DirEntryKind::File)
        .map_or_else(
            || format!("{prefix}NAME"),
            |e| format!("{prefix}{}", e.name),
        );
    let count = if capped {
        format!("at least {total} entries")
    } else {
        plural(total, "entry", "entries")
    };
    let which = if shown.len() as u64 == total {
        "listed below".to_owned()
    } else {
        format!("the first {} listed below", shown.len())
    };
    let message = format!(
        "{display} is a directory, not a file: {count}, {which} (directories end with /). \
Read a file in it with file_path {example}."
    );
    let detail = shown
        .iter()
        .map(|e| {
            let mark = if e.kind == DirEntryKind::Directory {
                "/"
            } else {
                ""
            };
            format!("  {}{mark}", crate::error::one_line(e.name.clone()))
        })
        .collect::<Vec<_>>()
        .join("\n");
    ToolError {
        code: ErrorCode::NotRegularFile.as_str().into(),
        message: crate::error::one_line(message),
        detail,
    }
}

/// `plain` with `hint` after its first sentence and `list` under the line.
fn found(plain: ToolError, hint: String, list: Vec<String>) -> ToolError {
    let cut = plain
        .message
        .find(". ")
        .map_or(plain.message.len(), |i| i + 1);
    ToolError {
        message: crate::error::one_line(format!("{} {hint}", &plain.message[..cut])),
        detail: list.join("\n"),
        ..plain
    }
}

/// `src/a.rs:99` (or `src/a.rs:99:5`) as `("src/a.rs", 99)`.
fn split_line_suffix(path: &str) -> Option<(&str, u64)> {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let (base, last) = path.rsplit_once(':')?;
    if !digits(last) {
        return None;
    }
    // A `:column` after the line is dropped.
    let (base, line) = match base.rsplit_once(':') {
        Some((b, l)) if digits(l) => (b, l),
        _ => (base, last),
    };
    let line = line.parse().ok().filter(|n| *n > 0)?;
    (!base.is_empty()).then_some((base, line))
}

fn is_file<P: Provider>(provider: &P, path: &str) -> bool {
    let target = provider.resolve(path);
    matches!(target.and_then(|t| provider.stat(&t)), Ok(Some(i)) if i.kind == EntryKind::File)
}

/// How close an entry's name is to the wanted one; lower is closer: the
/// same name, a case difference, an extension added, dropped or changed, a
/// typo (not a different number: `f10.rs` is not `f11.rs` misspelt).
fn closeness(wanted: &str, name: &str) -> Option<u8> {
    if name == wanted {
        return Some(0);
    }
    let (w, n) = (wanted.to_lowercase(), name.to_lowercase());
    if w == n {
        return Some(1);
    }
    let stem = |s: &str| s.rsplit_once('.').map_or(s.len(), |(b, _)| b.len());
    let (ws, ns) = (&w[..stem(&w)], &n[..stem(&n)]);
    if ns == w || ws == n || (!ws.is_empty() && ws == ns) {
        return Some(2);
    }
    let letters = |s: &str| s.replace(|c: char| c.is_ascii_digit(), "");
    let budget = (w.chars().count() / 5).clamp(1, 2);
    (ws.chars().count() >= 4 && letters(&w) != letters(&n) && strsim::levenshtein(&w, &n) <= budget)
        .then_some(3)
}

/// Looks for existing files close to a missing path within a fixed budget
/// of listings and entries, holding only the best candidates.
pub(super) struct Finder<'p, P> {
    provider: &'p P,
    listings: u32,
    entries: usize,
    /// (closeness, distance in directories, path), best first once sorted.
    found: Vec<(u8, u8, String)>,
}

impl<'p, P: Provider> Finder<'p, P> {
    pub(super) fn new(provider: &'p P) -> Self {
        Finder {
            provider,
            listings: 0,
            entries: 0,
            found: Vec::new(),
        }
    }

    /// The provider it lists.
    pub(super) fn provider(&self) -> &'p P {
        self.provider
    }

    /// Calls `each` on the entries of `dir` ("" for the root) until the
    /// budget is spent; false when it cannot be listed or no budget is left.
    pub(super) fn visit(&mut self, dir: &str, mut each: impl FnMut(&DirEntry)) -> bool {
        if self.listings >= MAX_LISTINGS || self.entries >= MAX_ENTRIES {
            return false;
        }
        self.listings += 1;
        let shown = if dir.is_empty() { "." } else { dir };
        let Ok(target) = self.provider.resolve(shown) else {
            return false;
        };
        let Ok(mut listing) = self.provider.list_dir(&target) else {
            return false;
        };
        while self.entries < MAX_ENTRIES {
            match listing.next_entries(PAGE) {
                Ok(page) if !page.is_empty() => {
                    self.entries += page.len();
                    page.iter().for_each(&mut each);
                }
                _ => break,
            }
        }
        true
    }

    fn keep(&mut self, candidate: (u8, u8, String)) {
        self.found.push(candidate);
        if self.found.len() > 64 {
            self.found.sort();
            self.found.truncate(MAX_SUGGESTIONS);
        }
    }

    /// Up to [`MAX_SUGGESTIONS`] existing files close to `path`, closest
    /// first; with `dirs_too`, directories beside it count as well.
    fn similar(mut self, path: &str, dirs_too: bool) -> Vec<String> {
        let (wanted_dir, name) = path.rsplit_once('/').unwrap_or(("", path));
        if name.is_empty() || name == "." {
            return Vec::new();
        }
        let dir = self.find_dir(wanted_dir);
        // In a corrected directory the very name is a suggestion too.
        let least = u8::from(dir == wanted_dir);
        let mut hits = Vec::new();
        let mut subdirs = Vec::new();
        let listed = self.visit(&dir, |e| {
            if e.kind == DirEntryKind::Directory {
                if subdirs.len() < MAX_LISTINGS as usize {
                    subdirs.push(join(&dir, &e.name));
                }
                if dirs_too && let Some(c) = closeness(name, &e.name).filter(|c| *c >= least) {
                    hits.push((c, 0, join(&dir, &e.name)));
                }
            } else if e.kind == DirEntryKind::File
                && let Some(c) = closeness(name, &e.name).filter(|c| *c >= least)
            {
                hits.push((c, 0, join(&dir, &e.name)));
                if hits.len() > 64 {
                    hits.sort();
                    hits.truncate(MAX_SUGGESTIONS);
                }
            }
        });
        if !listed {
            return Vec::new();
        }
        hits.into_iter().for_each(|h| self.keep(h));
        // The same name in a nearby directory: below, then above.
        let mut nearby = subdirs;
        if let Some((up, _)) = dir
            .rsplit_once('/')
            .or((!dir.is_empty()).then_some(("", "")))
        {
            nearby.push(up.to_owned());
        }
        for near in nearby {
            let mut hits = Vec::new();
            self.visit(&near, |e| {
                if e.kind == DirEntryKind::File
                    && let Some(c) = closeness(name, &e.name).filter(|c| *c <= 2)
                {
                    hits.push((c, 1, join(&near, &e.name)));
                    hits.truncate(MAX_SUGGESTIONS);
                }
            });
            hits.into_iter().for_each(|h| self.keep(h));
        }
        let mut found = self.found;
        found.sort();
        found.dedup_by(|a, b| a.2 == b.2);
        // A typo is only worth naming when nothing closer exists.
        if found.first().is_some_and(|f| f.0 < 3) {
            found.retain(|f| f.0 < 3);
        }
        found
            .into_iter()
            .take(MAX_SUGGESTIONS)
            .map(|(_, _, p)| p)
            .collect()
    }

    /// The directory `dir` names if it exists; else the path with each
    /// misspelt or wrongly cased component replaced by the closest existing
    /// directory, as deep as one is found.
    fn find_dir(&mut self, dir: &str) -> String {
        let is_dir = |p: &P, d: &str| {
            let d = if d.is_empty() { "." } else { d };
            matches!(p.resolve(d).and_then(|t| p.stat(&t)), Ok(Some(i)) if i.kind == EntryKind::Directory)
        };
        if is_dir(self.provider, dir) {
            return dir.to_owned();
        }
        let mut at = String::new();
        for part in dir.split('/').filter(|p| !p.is_empty() && *p != ".") {
            let mut closest: Option<(u8, String)> = None;
            self.visit(&at, |e| {
                if e.kind == DirEntryKind::Directory
                    && let Some(c) = closeness(part, &e.name)
                    && closest.as_ref().is_none_or(|(b, _)| c < *b)
                {
                    closest = Some((c, e.name.clone()));
                }
            });
            let Some((_, next)) = closest else { break };
            at = join(&at, &next);
        }
        at
    }
}

/// `dir/name`, or `name` in the root.
pub(super) fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() || dir == "." {
        name.to_owned()
    } else {
        format!("{dir}/{name}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_suffixes() {
        assert_eq!(split_line_suffix("src/a.rs:99"), Some(("src/a.rs", 99)));
        assert_eq!(split_line_suffix("src/a.rs:99:5"), Some(("src/a.rs", 99)));
        assert_eq!(split_line_suffix("src/a.rs"), None);
        assert_eq!(split_line_suffix("a:b"), None);
        assert_eq!(split_line_suffix("a.rs:0"), None);
    }

    #[test]
    fn closeness_ranks_case_then_extension_then_typos() {
        assert_eq!(closeness("Context.rs", "context.rs"), Some(1));
        assert_eq!(closeness("context", "context.rs"), Some(2));
        assert_eq!(closeness("context.rs.bak", "context.rs"), Some(2));
        assert_eq!(closeness("context.ts", "context.rs"), Some(2));
        assert_eq!(closeness("contxt.rs", "context.rs"), Some(3));
        assert_eq!(closeness("main.rs", "context.rs"), None);
        assert_eq!(closeness("a.rs", "b.rs"), None);
        assert_eq!(closeness("file10.rs", "file11.rs"), None);
    }
}

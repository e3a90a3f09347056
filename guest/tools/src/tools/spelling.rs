//! Paths spelt one normalisation away from an existing one: a `file://` URI,
//! spaces around the path, `\` separators, another letter case or Unicode
//! normal form of a name. Looked for within the [`Finder`]'s budget and named
//! as the cause with the exact path to use: a call never goes to the other
//! file silently. A `write` that would create such a twin is refused.

use super::suggest::{Finder, join};
use crate::error::ToolError;
use dsh_fs_core::provider::{Provider, Resolved};
use dsh_fs_core::{DirEntryKind, EntryKind};
use unicode_normalization::UnicodeNormalization;

/// One way a model's path differs from the path that exists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Slip {
    /// `file:///abs/path` for a path.
    Uri,
    /// Leading or trailing whitespace.
    Spaces,
    /// `\` as the separator.
    Backslash,
    /// A name in another letter case.
    Case,
    /// A name stored decomposed (NFD), written composed.
    StoredDecomposed,
    /// A name stored composed (NFC), written decomposed.
    StoredComposed,
}

impl Slip {
    /// The cause, as a clause.
    pub(super) fn cause(self) -> &'static str {
        match self {
            Slip::Uri => "a `file://` URI is not a path",
            Slip::Spaces => "the path has spaces around it",
            Slip::Backslash => "paths use `/`, not `\\`",
            Slip::Case => "names are case-sensitive",
            Slip::StoredDecomposed => {
                "the name on disk is in decomposed Unicode (NFD), the path in composed (NFC)"
            }
            Slip::StoredComposed => {
                "the name on disk is in composed Unicode (NFC), the path in decomposed (NFD)"
            }
        }
    }

    fn unicode(self) -> bool {
        matches!(self, Slip::StoredDecomposed | Slip::StoredComposed)
    }
}

/// The causes of `slips`, joined for one sentence.
pub(super) fn causes(slips: &[Slip]) -> String {
    slips
        .iter()
        .map(|s| s.cause())
        .collect::<Vec<_>>()
        .join("; ")
}

/// `path` as the model should write it: plain when it is ASCII or its
/// Unicode form is not the point, else as a JSON string with every
/// non-ASCII character escaped, since the two forms look the same.
pub(super) fn shown(path: &str, slips: &[Slip]) -> String {
    if path.is_ascii() || !slips.iter().any(|s| s.unicode()) {
        return crate::error::one_line(path.to_owned());
    }
    let mut out = String::from("\"");
    for c in path.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_ascii() && !c.is_ascii_control() => out.push(c),
            c => {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{u:04x}"));
                }
            }
        }
    }
    out.push_str("\" (JSON escapes as written)");
    out
}

/// The slips a path shows by itself, and the path without them (still as
/// the model's path: an absolute one from a URI stays absolute).
pub(super) fn lexical(asked: &str) -> (String, Vec<Slip>) {
    let mut slips = Vec::new();
    let mut path = asked.trim();
    if path.len() != asked.len() {
        slips.push(Slip::Spaces);
    }
    let mut fixed = path.to_owned();
    if path.len() > 5
        && path
            .get(..5)
            .is_some_and(|s| s.eq_ignore_ascii_case("file:"))
    {
        slips.push(Slip::Uri);
        path = &path[5..];
        if let Some(rest) = path.strip_prefix("//") {
            path = rest.strip_prefix("localhost").unwrap_or(rest);
        }
        fixed = percent_encoding::percent_decode_str(path)
            .decode_utf8()
            .map_or_else(|_| path.to_owned(), |p| p.into_owned());
    }
    if fixed.contains('\\') {
        slips.push(Slip::Backslash);
        fixed = fixed.replace('\\', "/");
    }
    (fixed, slips)
}

/// The existing path `asked` spells with slips, and what they are; `None`
/// when there is none (or more than one it could be). With `dirs_too`, a
/// directory counts as well as a file.
pub(super) fn respell<P: Provider>(
    finder: &mut Finder<'_, P>,
    asked: &str,
    dirs_too: bool,
) -> Option<(String, Vec<Slip>)> {
    let (fixed, mut slips) = lexical(asked);
    let relative = root_relative(finder.provider(), &fixed)?;
    let parts: Vec<&str> = relative.split('/').filter(|p| !p.is_empty()).collect();
    let mut at = String::new();
    for (i, part) in parts.iter().enumerate() {
        let last = i + 1 == parts.len();
        let exact = join(&at, part);
        match kind(finder.provider(), &exact) {
            Some(EntryKind::Directory) if !last || dirs_too => {
                at = exact;
                continue;
            }
            Some(EntryKind::File) if last => {
                at = exact;
                continue;
            }
            _ => {}
        }
        let (name, found) = twin(finder, &at, part, !last || dirs_too, last)?;
        for slip in found {
            if !slips.contains(&slip) {
                slips.push(slip);
            }
        }
        at = join(&at, &name);
    }
    (!slips.is_empty() && !at.is_empty()).then_some((at, slips))
}

/// Why a `write` creating `asked` is refused: a URI, spaces around it or
/// `\` separators would make a name no one meant. `None` to go ahead.
pub(super) fn refuse_slips<P: Provider>(provider: &P, asked: &str) -> Option<ToolError> {
    let (fixed, slips) = lexical(asked);
    if slips.is_empty() {
        return None;
    }
    let use_path = root_relative(provider, &fixed).unwrap_or(fixed);
    Some(ToolError::refused(format!(
        "write: file_path {}: {}; nothing was written. Use file_path {}.",
        crate::error::one_line(asked.to_owned()),
        causes(&slips),
        crate::error::one_line(use_path)
    )))
}

/// Why a `write` creating `display` is refused: it would put a name beside
/// an existing one that differs from it only in case or Unicode form, as a
/// file or as a directory on the way. `None` to go ahead.
pub(super) fn refuse_twin<P: Provider>(provider: &P, display: &str) -> Option<ToolError> {
    let mut finder = Finder::new(provider);
    let parts: Vec<&str> = display.split('/').collect();
    // Most writes create a file in an existing directory: one listing.
    let (mut at, start) = match display.rsplit_once('/') {
        Some((dir, _)) if kind(provider, dir) == Some(EntryKind::Directory) => {
            (dir.to_owned(), parts.len() - 1)
        }
        None => (String::new(), 0),
        Some(_) => (String::new(), 0),
    };
    for (i, part) in parts.iter().enumerate().skip(start) {
        let exact = join(&at, part);
        if i + 1 < parts.len() && kind(provider, &exact) == Some(EntryKind::Directory) {
            at = exact;
            continue;
        }
        let (name, slips) = twin(&mut finder, &at, part, true, i + 1 == parts.len())?;
        let existing = join(&at, &name);
        let rest: Vec<&str> = parts[i + 1..].to_vec();
        let meant = if rest.is_empty() {
            existing.clone()
        } else {
            join(&existing, &rest.join("/"))
        };
        let differs = if slips.iter().any(|s| s.unicode()) {
            "in Unicode form (NFC/NFD) only (one name on macOS)"
        } else {
            "in case only (one name on macOS and Windows)"
        };
        return Some(ToolError::refused(format!(
            "write: nothing was written: {display} would add a name beside {}, differing from it \
{differs}. To write that file, use file_path {}; to create {display} anyway, send the same \
call again.",
            crate::error::one_line(existing),
            shown(&meant, &slips),
        )));
    }
    None
}

/// `path` as the provider names it (root-relative, normalized); an absolute
/// path outside the root is tried as relative too, as a URI's often is.
fn root_relative<P: Provider>(provider: &P, path: &str) -> Option<String> {
    let target = provider
        .resolve(path)
        .or_else(|e| match path.trim_start_matches('/') {
            rel if rel.len() < path.len() && !rel.is_empty() => provider.resolve(rel),
            _ => Err(e),
        })
        .ok()?;
    let shown = target.display_path();
    (shown != ".").then_some(shown)
}

fn kind<P: Provider>(provider: &P, path: &str) -> Option<EntryKind> {
    let path = if path.is_empty() { "." } else { path };
    let target = provider.resolve(path).ok()?;
    provider.stat(&target).ok().flatten().map(|i| i.kind)
}

/// The one entry of `dir` named `name` up to case or Unicode form (a
/// directory, or with `files` a file too) and how it differs; `None` when
/// there is none, or several that differ in case alone.
fn twin<P: Provider>(
    finder: &mut Finder<'_, P>,
    dir: &str,
    name: &str,
    dirs: bool,
    files: bool,
) -> Option<(String, Vec<Slip>)> {
    let wanted = Key::of(name);
    let mut same_form: Option<String> = None;
    let mut other_case: Vec<String> = Vec::new();
    finder.visit(dir, |e| {
        let fits = match e.kind {
            DirEntryKind::Directory => dirs,
            DirEntryKind::File => files,
            _ => false,
        };
        if !fits || e.name == name {
            return;
        }
        let key = Key::of(&e.name);
        if key.nfd == wanted.nfd {
            same_form = Some(e.name.clone());
        } else if key.folded == wanted.folded && other_case.len() < 2 {
            other_case.push(e.name.clone());
        }
    });
    let (found, case) = match (same_form, other_case.as_slice()) {
        (Some(n), _) => (n, false),
        (None, [one]) => (one.clone(), true),
        _ => return None,
    };
    let mut slips = Vec::new();
    if case {
        slips.push(Slip::Case);
    }
    let stored_nfd = Key::of(&found).nfd == found;
    let asked_nfd = wanted.nfd == name;
    if stored_nfd != asked_nfd {
        slips.push(if stored_nfd {
            Slip::StoredDecomposed
        } else {
            Slip::StoredComposed
        });
    }
    Some((found, slips))
}

/// A name compared up to Unicode form (`nfd`) and up to case as well (`folded`).
struct Key {
    nfd: String,
    folded: String,
}

impl Key {
    fn of(name: &str) -> Key {
        if name.is_ascii() {
            return Key {
                nfd: name.to_owned(),
                folded: name.to_ascii_lowercase(),
            };
        }
        let nfd: String = name.nfd().collect();
        let folded = nfd.to_lowercase().nfd().collect();
        Key { nfd, folded }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lexical_slips() {
        assert_eq!(
            lexical("src\\context.rs"),
            ("src/context.rs".into(), vec![Slip::Backslash])
        );
        assert_eq!(
            lexical(" src/a.rs\n"),
            ("src/a.rs".into(), vec![Slip::Spaces])
        );
        assert_eq!(
            lexical("file:///work/my%20dir/a.rs"),
            ("/work/my dir/a.rs".into(), vec![Slip::Uri])
        );
        assert_eq!(
            lexical("file://localhost/a.rs"),
            ("/a.rs".into(), vec![Slip::Uri])
        );
        assert_eq!(lexical("src/a.rs"), ("src/a.rs".into(), vec![]));
        assert_eq!(lexical("file:"), ("file:".into(), vec![]));
        // Not a character boundary at byte 5.
        assert_eq!(lexical("cafe\u{301}"), ("cafe\u{301}".into(), vec![]));
    }

    #[test]
    fn names_compare_up_to_form_and_case() {
        let (nfc, nfd) = ("caf\u{e9}.txt", "cafe\u{301}.txt");
        assert_eq!(Key::of(nfc).nfd, Key::of(nfd).nfd);
        assert_eq!(Key::of("README.md").folded, Key::of("readme.md").folded);
        assert_eq!(Key::of("CAF\u{c9}.txt").folded, Key::of(nfd).folded);
        assert_ne!(Key::of("a.rs").nfd, Key::of("A.rs").nfd);
    }

    #[test]
    fn a_unicode_slip_shows_the_path_escaped() {
        let s = shown("d/cafe\u{301}.txt", &[Slip::StoredDecomposed]);
        assert_eq!(s, "\"d/cafe\\u0301.txt\" (JSON escapes as written)");
        assert_eq!(shown("d/caf\u{e9}.txt", &[Slip::Case]), "d/caf\u{e9}.txt");
    }
}

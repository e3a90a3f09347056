//! The lines an edit changed, whole, as they read before and after it, with
//! one unchanged line on each side: what an edit's answer shows, so a model
//! checking its work sees the lines as they now read, not only the fragment
//! it sent. Both texts are taken after any BOM; line endings stay as in the
//! file (the answer folds CRLF).

use crate::text::fold_crlf;
use crate::{EditExcerpt, EditRequest, splice};
use memchr::{memchr_iter, memrchr};

/// Largest side of an excerpt in bytes; past it there is none, and the
/// answer shows the replaced fragments instead.
pub const MAX_EXCERPT_BYTES: usize = 64 * 1024;

/// The excerpt of the first replacement of `edit` in `text` (the file after
/// its BOM), which starts on line `first_line`: the old lines are taken from
/// `text`, the new ones made by the same splice applied to them alone.
pub fn of_edit(text: &[u8], first_line: u64, edit: &EditRequest) -> Option<EditExcerpt> {
    let from = first_line.saturating_sub(1).max(1);
    let spanned = memchr_iter(b'\n', fold_crlf(&edit.old_string).as_bytes()).count() as u64;
    // The replaced lines, then one more.
    let before = lines(text, from, first_line + spanned + 1)?;
    // The one occurrence (or, with replace_all, every one) these lines hold
    // is where the file's was: nothing before it in the file matches.
    let after = splice::apply(before, edit).ok()?.bytes;
    excerpt(from, before, &after)
}

/// [`of_edit`] for a file too large to hold: `window` is a stretch of it
/// (starting at the file's start when `head`, reaching its end when `tail`)
/// in which the first replacement's old bytes start at `at`, on line
/// `first_line`. `None` when the window does not hold the lines around it
/// whole.
pub fn in_window(
    window: &[u8],
    at: usize,
    first_line: u64,
    (head, tail): (bool, bool),
    edit: &EditRequest,
) -> Option<EditExcerpt> {
    let base = if head {
        crate::text::bom_len(window)
    } else {
        0
    };
    let (window, at) = (&window[base..], at.checked_sub(base)?);
    // The start of the match's line, then of the line before it.
    let start_of = |end: usize| match memrchr(b'\n', &window[..end]) {
        Some(n) => Some(n + 1),
        None if head => Some(0),
        None => None,
    };
    let line = start_of(at)?;
    let (from, line_no) = match line {
        0 => (0, first_line),
        n => (start_of(n - 1)?, first_line - 1),
    };
    // The window must hold the replaced lines and the one after them whole.
    let end = at + edit.old_string.len();
    if !tail && memchr_iter(b'\n', window.get(end..)?).count() < 2 {
        return None;
    }
    let mut excerpt = of_edit(&window[from..], first_line - line_no + 1, edit)?;
    excerpt.first_line = line_no;
    Some(excerpt)
}

/// The excerpt of everything that differs between `old` and `new` (two
/// versions of one file, after any BOM): from the line before the first
/// changed byte to the line after the last.
pub fn between(old: &[u8], new: &[u8]) -> Option<EditExcerpt> {
    let prefix = old.iter().zip(new).take_while(|(a, b)| a == b).count();
    let room = old.len().min(new.len()) - prefix;
    let suffix = old
        .iter()
        .rev()
        .zip(new.iter().rev())
        .take(room)
        .take_while(|(a, b)| a == b)
        .count();
    // The start of the line before the one the change starts on.
    let line_start = |at: usize| memrchr(b'\n', &old[..at]).map_or(0, |n| n + 1);
    let changed = line_start(prefix);
    let start = if changed == 0 {
        0
    } else {
        line_start(changed - 1)
    };
    let first_line = memchr_iter(b'\n', &old[..start]).count() as u64 + 1;
    // The common tail up to the end of the second line it completes: the
    // rest of the changed line and one more (one too many when the change
    // ends a line; the answer keeps one line of context).
    let tail = &old[old.len() - suffix..];
    let keep = memchr_iter(b'\n', tail)
        .nth(1)
        .map_or(tail.len(), |n| n + 1);
    let before = &old[start..old.len() - suffix + keep];
    let after = &new[start..new.len() - suffix + keep];
    excerpt(first_line, before, after)
}

/// Lines `from..=to` (1-based) of `text`: as many as it has, at most
/// [`MAX_EXCERPT_BYTES`].
fn lines(text: &[u8], from: u64, to: u64) -> Option<&[u8]> {
    let mut ends = memchr_iter(b'\n', text).map(|n| n + 1);
    let start = match from {
        1 => 0,
        n => ends.nth(usize::try_from(n - 2).ok()?)?,
    };
    let end = ends
        .nth(usize::try_from(to - from).ok()?)
        .unwrap_or(text.len());
    let end = end.min(start.saturating_add(MAX_EXCERPT_BYTES + 1));
    Some(&text[start..end])
}

fn excerpt(first_line: u64, before: &[u8], after: &[u8]) -> Option<EditExcerpt> {
    if before.len() > MAX_EXCERPT_BYTES || after.len() > MAX_EXCERPT_BYTES {
        return None;
    }
    Some(EditExcerpt {
        first_line,
        before: std::str::from_utf8(before).ok()?.to_owned(),
        after: std::str::from_utf8(after).ok()?.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(e: Option<EditExcerpt>) -> (u64, String, String) {
        let e = e.expect("an excerpt");
        (e.first_line, e.before, e.after)
    }

    #[test]
    fn an_edit_shows_its_lines_whole_with_one_neighbour_each_side() {
        let text = b"one\ntwo\nthree compute(1, 2);\nfour\nfive\n";
        let edit = EditRequest::new("compute(1, 2)", "compute(1, 3)", false);
        assert_eq!(
            shown(of_edit(text, 3, &edit)),
            (
                2,
                "two\nthree compute(1, 2);\nfour\n".into(),
                "two\nthree compute(1, 3);\nfour\n".into()
            )
        );
    }

    #[test]
    fn the_first_and_last_lines_have_one_neighbour_and_crlf_stays() {
        let text = b"a\r\nb\r\n";
        let edit = EditRequest::new("a\nb", "x\ny\nz", false);
        assert_eq!(
            shown(of_edit(text, 1, &edit)),
            (1, "a\r\nb\r\n".into(), "x\r\ny\r\nz\r\n".into())
        );
        let edit = EditRequest::new("b", "c", false);
        assert_eq!(
            shown(of_edit(b"a\nb", 2, &edit)),
            (1, "a\nb".into(), "a\nc".into())
        );
    }

    #[test]
    fn a_window_of_a_large_file_gives_the_same_lines() {
        let text = b"one\ntwo\nthree compute(1, 2);\nfour\nfive\n";
        let edit = EditRequest::new("compute(1, 2)", "compute(1, 3)", false);
        let whole = of_edit(text, 3, &edit);
        let at = 14;
        assert_eq!(in_window(text, at, 3, (true, true), &edit), whole);
        // A window starting mid-file and ending mid-file, around the lines.
        assert_eq!(
            in_window(&text[2..], at - 2, 3, (false, false), &edit),
            whole
        );
        // Too narrow a window: no excerpt rather than a cut line.
        assert_eq!(
            in_window(&text[6..], at - 6, 3, (false, false), &edit),
            None
        );
        assert_eq!(in_window(&text[..30], at, 3, (true, false), &edit), None);
        // On the first line, after a BOM.
        let bom = b"\xef\xbb\xbfa = 1\nb\n";
        let first = EditRequest::new("a = 1", "a = 2", false);
        assert_eq!(
            shown(in_window(bom, 3, 1, (true, true), &first)),
            (1, "a = 1\nb\n".into(), "a = 2\nb\n".into())
        );
    }

    #[test]
    fn a_huge_replacement_has_no_excerpt() {
        let big = "x\n".repeat(MAX_EXCERPT_BYTES);
        let edit = EditRequest::new("b", big, false);
        assert_eq!(of_edit(b"a\nb\nc\n", 2, &edit), None);
    }

    #[test]
    fn between_two_versions_spans_every_change() {
        let old = b"1\n2\n3\n4\n5\n6\n7\n";
        let new = b"1\n2\nthree\n4\n5\nsix\n7\n";
        assert_eq!(
            shown(between(old, new)),
            (
                2,
                "2\n3\n4\n5\n6\n7\n".into(),
                "2\nthree\n4\n5\nsix\n7\n".into()
            )
        );
        // Lines inserted at a line boundary, and at the very start.
        assert_eq!(
            shown(between(b"a\nb\n", b"a\nx\nb\n")),
            (1, "a\nb\n".into(), "a\nx\nb\n".into())
        );
        assert_eq!(
            shown(between(b"a\nb\n", b"z\na\nb\n")),
            (1, "a\nb\n".into(), "z\na\nb\n".into())
        );
    }
}

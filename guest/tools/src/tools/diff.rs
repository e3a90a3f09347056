//! What a write or an edit changed, as compact unified-diff hunks with the
//! file's line numbers: one line of context, long lines shortened, at most
//! [`MAX_SHOWN`] lines in all and a count of the changed lines left out.
//! The line diff is `similar`'s heuristic Myers, bounded in time, and in
//! depth by [`MAX_ALIGNED_LINES`]; callers bound the input size
//! ([`MAX_DIFF_BYTES`]).

use super::plural;
use dsh_fs_core::text::fold_crlf;
use similar::{Algorithm, DiffOp, DiffTag, capture_diff_slices_deadline, group_diff_ops};
use std::time::{Duration, Instant};

/// Lines of hunks shown (headers included) before the rest is counted.
pub const MAX_SHOWN: usize = 40;
/// Largest old text compared; above it only a summary is given.
pub const MAX_DIFF_BYTES: u64 = 4 << 20;
/// Unchanged lines shown around each change.
const CONTEXT: usize = 1;
/// Characters of a line shown.
const LINE_CHARS: usize = 200;

/// The change from one text to another.
#[derive(Debug, PartialEq, Eq)]
pub struct Diff {
    /// Lines only in the new text.
    pub added: u64,
    /// Lines only in the old text.
    pub removed: u64,
    /// The hunks, bounded; empty when nothing changed.
    pub hunks: String,
}

impl Diff {
    /// `2 lines added, 1 removed`.
    pub fn counts(&self) -> String {
        format!(
            "{} added, {} removed",
            plural(self.added, "line", "lines"),
            self.removed
        )
    }
}

/// Changed lines aligned line by line at most, on either side once the
/// common head and tail are set aside; past it the changed block is shown as
/// removed, then added. Myers' divide and conquer can recurse about once a
/// changed line on reordered text, and a component's stack is small.
pub const MAX_ALIGNED_LINES: usize = 2_000;

/// Longest the alignment may take; past it `similar` settles for a coarser
/// script.
const ALIGN_TIME: Duration = Duration::from_millis(500);

/// The hunks from `old` to `new`, both starting on line `first_line` of the
/// file. CRLF is compared and shown as LF.
pub fn diff(old: &str, new: &str, first_line: u64) -> Diff {
    let (old, new) = (fold_crlf(old), fold_crlf(new));
    let old: Vec<&str> = old.split_inclusive('\n').collect();
    let new: Vec<&str> = new.split_inclusive('\n').collect();
    let ops = align(&old, &new);
    let (mut added, mut removed) = (0u64, 0u64);
    for op in &ops {
        if !matches!(op, DiffOp::Equal { .. }) {
            added += op.new_range().len() as u64;
            removed += op.old_range().len() as u64;
        }
    }
    let mut out = String::new();
    let (mut shown, mut left_out) = (0usize, 0u64);
    // Lines past the first MAX_SHOWN are only counted, never formatted.
    let mut emit = |sign: char, text: &str| {
        if shown < MAX_SHOWN {
            if !out.is_empty() {
                out.push('\n');
            }
            if sign == '@' {
                out.push_str(text);
            } else {
                out.push_str(&line(sign, text));
            }
            shown += 1;
        } else if sign != ' ' && sign != '@' {
            left_out += 1;
        }
    };
    for group in group_diff_ops(ops, CONTEXT) {
        let (Some(head), Some(tail)) = (group.first(), group.last()) else {
            continue;
        };
        let olds = head.old_range().start..tail.old_range().end;
        let news = head.new_range().start..tail.new_range().end;
        let header = format!(
            "@@ -{} +{} @@",
            span(first_line, olds.start, olds.len()),
            span(first_line, news.start, news.len())
        );
        emit('@', &header);
        for op in &group {
            let (tag, olds, news) = op.as_tag_tuple();
            let (gone, came) = (&old[olds], &new[news]);
            let sign = match tag {
                DiffTag::Equal => ' ',
                DiffTag::Insert => '+',
                DiffTag::Delete | DiffTag::Replace => '-',
            };
            if tag != DiffTag::Insert {
                gone.iter().for_each(|l| emit(sign, l));
            }
            if matches!(tag, DiffTag::Insert | DiffTag::Replace) {
                came.iter().for_each(|l| emit('+', l));
            }
        }
    }
    if left_out > 0 {
        out.push_str(&format!(
            "\n… {}",
            plural(left_out, "more changed line", "more changed lines")
        ));
    }
    Diff {
        added,
        removed,
        hunks: out,
    }
}

/// The edit script from `old` to `new` lines: `similar`'s Myers when the
/// changed block is at most [`MAX_ALIGNED_LINES`] on each side, else that
/// block as one replacement between the common head and tail.
fn align(old: &[&str], new: &[&str]) -> Vec<DiffOp> {
    let head = old.iter().zip(new).take_while(|(a, b)| a == b).count();
    let tail = old[head..]
        .iter()
        .rev()
        .zip(new[head..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let (gone, came) = (old.len() - head - tail, new.len() - head - tail);
    if gone.max(came) <= MAX_ALIGNED_LINES {
        let deadline = Instant::now().checked_add(ALIGN_TIME);
        return capture_diff_slices_deadline(Algorithm::Myers, old, new, deadline);
    }
    let mut ops = Vec::with_capacity(3);
    if head > 0 {
        ops.push(DiffOp::Equal {
            old_index: 0,
            new_index: 0,
            len: head,
        });
    }
    ops.push(match (gone, came) {
        (_, 0) => DiffOp::Delete {
            old_index: head,
            old_len: gone,
            new_index: head,
        },
        (0, _) => DiffOp::Insert {
            old_index: head,
            new_index: head,
            new_len: came,
        },
        _ => DiffOp::Replace {
            old_index: head,
            old_len: gone,
            new_index: head,
            new_len: came,
        },
    });
    if tail > 0 {
        ops.push(DiffOp::Equal {
            old_index: head + gone,
            new_index: head + came,
            len: tail,
        });
    }
    ops
}

/// A hunk side as unified diffs write it: `7`, `7,3`, or `6,0` (empty, after line 6).
fn span(first_line: u64, start: usize, len: usize) -> String {
    let at = first_line + start as u64;
    match len {
        0 => format!("{},0", at - 1),
        1 => at.to_string(),
        n => format!("{at},{n}"),
    }
}

/// One diff line: the sign and the text without its line break, shortened.
fn line(sign: char, text: &str) -> String {
    let text = text.strip_suffix('\n').unwrap_or(text);
    let mut out = String::with_capacity(text.len().min(LINE_CHARS * 4) + 4);
    out.push(sign);
    out.extend(text.chars().take(LINE_CHARS));
    if text.chars().nth(LINE_CHARS).is_some() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hunks_carry_the_file_line_numbers() {
        let old = "a\nb\nc\nd\ne\nf\ng\nh\n";
        let new = "a\nb\nC\nd\ne\nf\ng\nh\ni\n";
        let d = diff(old, new, 1);
        assert_eq!(
            d.hunks,
            "@@ -2,3 +2,3 @@\n b\n-c\n+C\n d\n@@ -8 +8,2 @@\n h\n+i"
        );
        assert_eq!((d.added, d.removed), (2, 1));
        assert_eq!(d.counts(), "2 lines added, 1 removed");
        // An edit's region starts where the match was.
        let d = diff("x\r\ny", "x\r\nz\r\ny", 40);
        assert_eq!(d.hunks, "@@ -40,2 +40,3 @@\n x\n+z\n y");
        let d = diff("x", "", 5);
        assert_eq!(d.hunks, "@@ -5 +4,0 @@\n-x");
    }

    #[test]
    fn big_changes_are_cut_and_counted() {
        let old: String = (0..100).map(|i| format!("line {i}\n")).collect();
        let new: String = (0..100).map(|i| format!("LINE {i}\n")).collect();
        let d = diff(&old, &new, 1);
        assert_eq!(d.hunks.lines().count(), MAX_SHOWN + 1);
        assert!(
            d.hunks.ends_with("\n… 161 more changed lines"),
            "{}",
            d.hunks
        );
        assert_eq!(diff("same\n", "same\n", 1).hunks, "");
        let long = "é".repeat(500);
        assert!(diff(&long, "", 1).hunks.ends_with('…'));
    }
}

//! `checkpoint`, `changes` and `revert`: the session's change journal
//! ([`super::journal`]) as tools a host turns on. A revert puts each file
//! back with one guarded, atomic write — guarded by the version this session
//! last wrote, so a file someone else changed since is left alone and
//! reported, never overwritten — and is journaled itself: the checkpoint it
//! sets first is where a second revert redoes what it undid.

use super::Hints;
use super::args::{Args, Field, Kind, Spec};
use super::diff::{Diff, MAX_DIFF_BYTES, diff};
use super::journal::{Before, Change, Journal, MAX_KEPT, own_run};
use super::write::line_count;
use super::{Session, plural};
use crate::error::ToolError;
use dsh_fs_core::provider::{Provider, Resolved, TextStream};
use dsh_fs_core::{ErrorCode, FsError, WriteIntent};
use std::fmt::Write as _;
use std::time::{Duration, Instant};

pub(super) static CHECKPOINT: Spec = Spec {
    name: "checkpoint",
    title: "Set a checkpoint",
    hints: Hints {
        read_only: true,
        destructive: false,
        idempotent: false,
    },
    description: "Name this point in the session's changes to files; changes lists what \
changed since a checkpoint, revert puts the files back to it. Answers its number.",
    guidance: "Set one before a risky series of changes.",
    fields: &[Field {
        name: "label",
        kind: Kind::String { non_empty: false },
        required: false,
        description: "A short name for it",
        hint: None,
    }],
};

pub(super) static CHANGES: Spec = Spec {
    name: "changes",
    title: "List changes",
    hints: Hints::READS,
    description: "What this session changed since a checkpoint: each file created or updated, \
with a unified diff against the file at the checkpoint.",
    guidance: "Check it before a revert.",
    fields: &[Field {
        name: "since",
        kind: Kind::Positive { maximum: None },
        required: false,
        description: "Checkpoint number (default: the latest)",
        hint: None,
    }],
};

pub(super) static REVERT: Spec = Spec {
    name: "revert",
    title: "Revert to a checkpoint",
    hints: Hints {
        read_only: false,
        destructive: true,
        idempotent: false,
    },
    description: "Put every file this session changed since a checkpoint back as it was there, \
one atomic write per file. A file someone else changed since is left alone and reported. Answers \
file by file, and the checkpoint that redoes the revert.",
    guidance: "Restored files count as read.",
    fields: &[Field {
        name: "to",
        kind: Kind::Positive { maximum: None },
        required: false,
        description: "Checkpoint number (default: the latest)",
        hint: None,
    }],
};

pub(super) fn checkpoint<P: Provider>(
    session: &mut Session<P>,
    json: &str,
) -> Result<String, ToolError> {
    let mut args = Args::parse(&CHECKPOINT, json)?;
    let label = args.optional_string("label")?.unwrap_or_default();
    let label: String = label.chars().take(80).collect();
    let budget = session.journal_budget;
    if budget == 0 {
        return Err(ToolError::invalid_args(
            "checkpoint",
            "this session keeps no change journal: its host turned it off",
        ));
    }
    let journal = session.journal.get_or_insert_with(|| Journal::new(budget));
    let id = journal.checkpoint(label);
    journal.trim();
    let changes = journal.changes.len();
    Ok(format!(
        "Checkpoint {id}{} set after {}. changes lists what changes from here; revert with to={id} \
puts the files back.",
        named(journal, id),
        plural(changes as u64, "change", "changes")
    ))
}

pub(super) fn changes<P: Provider>(
    session: &mut Session<P>,
    json: &str,
) -> Result<String, ToolError> {
    let mut args = Args::parse(&CHANGES, json)?;
    let since = args.positive("since")?;
    let (_, from, _) = point(session, since, "changes")?;
    session.load_journal_texts(from);
    let (journal, from, id) = point(session, since, "changes")?;
    let files = journal.since(from);
    let mut out = format!(
        "Changes since checkpoint {id}{}: {}.",
        named(journal, id),
        plural(files.len() as u64, "file", "files")
    );
    let listed = files.len();
    let mut shown = 0;
    for chain in files {
        if shown == SHOWN_FILES || out.len() >= REPORT_BYTES {
            break;
        }
        shown += 1;
        let first = chain[0];
        let last = chain[chain.len() - 1];
        let path = &first.path;
        let now = current(&session.provider, path, MAX_DIFF_BYTES);
        let outside = match (&now, &last.after) {
            (Now::Text { version, .. } | Now::Large { version }, Some(after))
                if version == after =>
            {
                ""
            }
            (Now::Absent, None) => "",
            (Now::Absent, Some(_)) => " Someone else deleted it since.",
            _ => " Someone else changed it since this session's last change.",
        };
        let _ = match (&first.before, &now) {
            (Before::Absent, Now::Text { text, .. }) => {
                let d = bounded_diff("", text, 1);
                write!(
                    out,
                    "\nCreated {path}: {}.{outside}\n{}",
                    d.counts(),
                    d.hunks
                )
            }
            (Before::Text { text: old, .. }, Now::Text { text, .. }) => {
                let d = bounded_diff(old, text, 1);
                write!(out, "\nUpdated {path}: {}.{outside}", d.counts()).and_then(|()| {
                    match d.hunks.is_empty() {
                        true => Ok(()),
                        false => write!(out, "\n{}", d.hunks),
                    }
                })
            }
            (Before::Text { text: old, .. }, Now::Absent) => {
                let d = bounded_diff(old, "", 1);
                write!(out, "\nRemoved {path}: {}.{outside}", d.counts())
            }
            (Before::Absent, Now::Absent) => {
                write!(out, "\n{path}: created and removed again.{outside}")
            }
            (Before::Unknown { why, .. }, _) => {
                write!(out, "\nUpdated {path}; no diff: {why}.{outside}")
            }
            (Before::Kept { .. }, _) => {
                write!(
                    out,
                    "\nUpdated {path}; no diff: its old text was not loaded.{outside}"
                )
            }
            (_, Now::Unknown(why)) => {
                write!(out, "\nUpdated {path}; no diff: {why}.{outside}")
            }
            (_, Now::Large { .. }) => {
                write!(out, "\nUpdated {path}; no diff: {LARGE}.{outside}")
            }
        };
    }
    if listed > shown {
        let more = plural((listed - shown) as u64, "more file", "more files");
        let _ = write!(out, "\n… {more} changed (a revert puts every one back).");
    }
    Ok(out)
}

/// Files `changes` lists, and `revert` shows, at most; past them a count.
const SHOWN_FILES: usize = 50;

/// Bytes of an answer past which `changes` and `revert` list no more files
/// (one file's diff is bounded on its own): whatever the number of files,
/// the answer fits and arrives.
const REPORT_BYTES: usize = 32 << 10;

/// Longest a revert starts files for (less when the call has less left):
/// well inside a host's default 30-second deadline.
const REVERT_TIME: Duration = Duration::from_secs(20);

/// Why a file's diff is not shown: what [`current`] does not read whole.
const LARGE: &str = "it is larger than 4 MiB now";

pub(super) fn revert<P: Provider>(
    session: &mut Session<P>,
    json: &str,
) -> Result<String, ToolError> {
    let mut args = Args::parse(&REVERT, json)?;
    let to = args.positive("to")?;
    let (_, from, _) = point(session, to, "revert")?;
    session.load_journal_texts(from);
    let (journal, from, id) = point(session, to, "revert")?;
    let label = named(journal, id);
    let journal = session.journal.as_mut().expect("a checkpoint exists");
    // The point to come back to: a revert of this revert redoes it.
    let redo = journal.checkpoint(format!("before revert to {id}"));
    let (mut restored, mut kept) = (0u64, 0u64);
    // Files done but not listed in the answer.
    let (mut unlisted_restored, mut unlisted_kept) = (0u64, 0u64);
    let mut report = String::new();
    // Each file's chain by index: its texts stay in the journal, uncopied.
    let files: Vec<Vec<usize>> = journal.since_indices(from);
    let total = files.len();
    // Past its time, the revert starts no other file, and says so: the
    // answer arrives before the host's deadline, whatever the file count.
    let time = dsh_fs_core::deadline::remaining()
        .map_or(REVERT_TIME, |left| (left * 3 / 4).min(REVERT_TIME));
    let stop = Instant::now().checked_add(time);
    let mut started = 0;
    for chain in files {
        if stop.is_some_and(|stop| Instant::now() >= stop) {
            break;
        }
        started += 1;
        let listed = (restored + kept - unlisted_restored - unlisted_kept) as usize;
        let detail = listed < SHOWN_FILES && report.len() < REPORT_BYTES;
        let journal = session.journal.as_ref().expect("a checkpoint exists");
        let changes: Vec<&Change> = chain.iter().map(|&i| &journal.changes[i]).collect();
        let path = changes[0].path.clone();
        match revert_file(&session.provider, &changes, detail) {
            Ok((done, record)) => {
                restored += 1;
                match detail {
                    true => _ = write!(report, "\n{done}"),
                    false => unlisted_restored += 1,
                }
                if let Some(version) = &record.after {
                    session.policy.observe(record.key.clone(), version.clone());
                }
                // Past the budget, no text this revert still needs is dropped.
                let journal = session.journal.as_mut().expect("a checkpoint exists");
                journal.record_keeping(record, from);
            }
            Err(why) => {
                kept += 1;
                match detail {
                    true => _ = write!(report, "\nLeft alone {path}: {why}"),
                    false => unlisted_kept += 1,
                }
            }
        }
    }
    if unlisted_restored + unlisted_kept > 0 {
        let _ = write!(
            report,
            "\n… and {} more restored, {unlisted_kept} more left alone, not listed here \
(changes since={redo} lists what the revert changed).",
            plural(unlisted_restored, "file", "files"),
        );
    }
    if started < total {
        let left = plural((total - started) as u64, "file", "files");
        let _ = write!(
            report,
            "\nStopped after {} s: {left} not reverted yet; revert with to={id} again to go on \
(the files already restored stay as they are).",
            time.as_secs()
        );
    }
    // The revert held indexes into the journal: only now may it forget.
    session
        .journal
        .as_mut()
        .expect("a checkpoint exists")
        .trim();
    Ok(format!(
        "Reverted to checkpoint {id}{label}: {} restored, {} left alone.{report}\nTo redo: revert \
with to={redo}.",
        plural(restored, "file", "files"),
        kept
    ))
}

/// Puts one file back as it was before `chain`, this session's changes to
/// it since the checkpoint: what changed, or why it was left alone; with
/// `detail`, the hunks of either.
fn revert_file<P: Provider>(
    provider: &P,
    chain: &[&Change],
    detail: bool,
) -> Result<(String, Change), String> {
    let start = own_run(chain);
    let last = &chain[chain.len() - 1];
    let path = &last.path;
    let back = &chain[start].before;
    if let Before::Unknown { why, .. } = back {
        return Err(format!("not undoable: {why}."));
    }
    // What is there now, which must be what the session left.
    let now = match (current(provider, path, MAX_KEPT), &last.after) {
        (Now::Unknown(why), _) => return Err(format!("{why}.")),
        (Now::Absent, None) => None,
        (Now::Text { text, version, bom }, Some(after)) if version == *after => {
            Some((Some(text), version, bom))
        }
        (Now::Large { version }, Some(after)) if version == *after => Some((None, version, false)),
        (Now::Absent, Some(_)) => return Err("someone else deleted it since.".into()),
        (Now::Text { text, .. }, _) => {
            let mut why = "someone else changed it since this session last wrote it".to_owned();
            match back {
                Before::Text { text: old, .. } if detail => {
                    let d = bounded_diff(&text, old, 1);
                    let _ = write!(why, "; reverting it now would change:\n{}", d.hunks);
                }
                _ => why.push('.'),
            }
            return Err(why);
        }
        (Now::Large { .. }, _) => {
            return Err("someone else changed it since this session last wrote it.".into());
        }
    };
    let target = match provider.resolve(path) {
        Ok(target) if target.key() == last.key => target,
        _ => return Err("its path no longer names the file this session changed.".into()),
    };
    let (before, after, shown) = match (back, &now) {
        (Before::Unknown { why, .. }, _) => return Err(format!("not undoable: {why}.")),
        (Before::Kept { .. }, _) => return Err("not undoable: its old text was not loaded.".into()),
        (Before::Absent, None) => {
            let record = Change {
                key: last.key.clone(),
                path: path.clone(),
                before: Before::Absent,
                after: None,
            };
            return Ok((format!("Kept {path} absent, as it was."), record));
        }
        (Before::Absent, Some((text, version, bom))) => {
            match provider.remove_file(&target, version) {
                Ok(()) => {}
                Err(e) if e.code == ErrorCode::StaleVersion => {
                    return Err("someone else changed it a moment ago.".into());
                }
                Err(e) => return Err(format!("{} ({}).", e.message, e.code.as_str())),
            }
            let before = kept_before(text.as_ref(), version, *bom);
            let shown = match text {
                Some(text) => {
                    let lines = plural(line_count(text), "line", "lines");
                    format!("Removed {path} ({lines}): this session created it.")
                }
                None => format!("Removed {path}: this session created it."),
            };
            (before, None, shown)
        }
        (Before::Text { text, bom, .. }, now) => {
            let with_bom;
            let content = if *bom {
                with_bom = format!("\u{feff}{text}");
                &with_bom
            } else {
                text
            };
            let intent = Some(match now {
                Some((_, version, _)) => WriteIntent::ReplaceIfVersion(version.clone()),
                None => WriteIntent::CreateIfAbsent,
            });
            let outcome = match provider.write_text(&target, content, intent) {
                Ok(outcome) => outcome,
                Err(e) if matches!(e.code, ErrorCode::StaleVersion | ErrorCode::NotObserved) => {
                    return Err("someone else changed it a moment ago.".into());
                }
                Err(e) => return Err(format!("{} ({}).", e.message, e.code.as_str())),
            };
            let (before, old) = match now {
                Some((old, version, bom)) => {
                    (kept_before(old.as_ref(), version, *bom), old.as_deref())
                }
                None => (Before::Absent, Some("")),
            };
            let shown = match old {
                Some(old) if detail => {
                    let d = bounded_diff(old, text, 1);
                    let mut shown = format!("Restored {path}: {}.", d.counts());
                    if !d.hunks.is_empty() {
                        let _ = write!(shown, "\n{}", d.hunks);
                    }
                    shown
                }
                _ => format!("Restored {path}."),
            };
            (before, Some(outcome.version), shown)
        }
    };
    let mut done = shown;
    if start > 0 {
        let _ = write!(
            done,
            "\n(Someone else changed {path} between this session's changes: it is back as it was \
before the session's next change, their change kept.)"
        );
    }
    let record = Change {
        key: last.key.clone(),
        path: path.clone(),
        before,
        after,
    };
    Ok((done, record))
}

/// What a file the revert replaces was: its text when [`current`] read it,
/// else (it was larger than the journal keeps) only its version.
fn kept_before(text: Option<&String>, version: &str, bom: bool) -> Before {
    match text {
        Some(text) => Before::Text {
            version: version.to_owned(),
            text: text.clone(),
            bom,
        },
        None => Before::Unknown {
            version: Some(version.to_owned()),
            why: "it was larger than the journal keeps (10 MiB)".into(),
        },
    }
}

/// [`diff`] of texts up to [`MAX_DIFF_BYTES`], as `write` bounds it; past
/// that (a line diff of two large texts would cost the instance several
/// times their size) the lines between the common head and tail are counted
/// and no hunk is shown.
fn bounded_diff(old: &str, new: &str, first_line: u64) -> Diff {
    if old.len() as u64 <= MAX_DIFF_BYTES && new.len() as u64 <= MAX_DIFF_BYTES {
        return diff(old, new, first_line);
    }
    let (a, b) = (old.as_bytes(), new.as_bytes());
    let head = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let head = memchr::memrchr(b'\n', &a[..head]).map_or(0, |n| n + 1);
    let room = a.len().min(b.len()) - head;
    let tail = a
        .iter()
        .rev()
        .zip(b.iter().rev())
        .take(room)
        .take_while(|(x, y)| x == y)
        .count();
    let tail = memchr::memchr(b'\n', &a[a.len() - tail..]).map_or(0, |n| tail - n - 1);
    let middle = |t: &str| line_count(&t[head..t.len() - tail]);
    Diff {
        added: middle(new),
        removed: middle(old),
        hunks: format!("(over {} MiB: no line diff shown)", MAX_DIFF_BYTES >> 20),
    }
}

/// The journal and the index of checkpoint `id` (the latest when `None`).
fn point<'s, P: Provider>(
    session: &'s Session<P>,
    id: Option<u64>,
    tool: &str,
) -> Result<(&'s Journal, usize, u32), ToolError> {
    let forgotten = |journal: &Journal| {
        let which = match journal.forgotten {
            1 => "checkpoint 1 was".to_owned(),
            n => format!("checkpoints 1 to {n} were"),
        };
        format!(
            "{which} forgotten to keep the change journal within its budget (the oldest changes \
go first)"
        )
    };
    let journal = match session.journal.as_ref() {
        Some(journal) if !journal.checkpoints.is_empty() => journal,
        Some(journal) if journal.forgotten > 0 => {
            return Err(ToolError::invalid_args(
                tool,
                format_args!("{}: set a new one with checkpoint", forgotten(journal)),
            ));
        }
        _ => {
            return Err(ToolError::invalid_args(
                tool,
                "this session has no checkpoint yet: call checkpoint first (changes made before \
the first checkpoint are not kept)",
            ));
        }
    };
    let found = match id {
        None => journal.checkpoints.last(),
        Some(id) => u32::try_from(id).ok().and_then(|id| journal.find(id)),
    };
    let Some(checkpoint) = found else {
        let first = journal.checkpoints.first().map_or(0, |c| c.id);
        let last = journal.checkpoints.last().map_or(0, |c| c.id);
        let id = id.unwrap_or(0);
        if id <= u64::from(journal.forgotten) {
            return Err(ToolError::invalid_args(
                tool,
                format_args!(
                    "there is no checkpoint {id} any more: {}; the checkpoints are {first} to \
{last}",
                    forgotten(journal)
                ),
            ));
        }
        return Err(ToolError::invalid_args(
            tool,
            format_args!("there is no checkpoint {id}; the checkpoints are {first} to {last}"),
        ));
    };
    Ok((journal, checkpoint.at, checkpoint.id))
}

/// ` (label)` of checkpoint `id`, or nothing.
fn named(journal: &Journal, id: u32) -> String {
    match journal.find(id) {
        Some(c) if !c.label.is_empty() => format!(" ({})", c.label),
        _ => String::new(),
    }
}

/// What a file is now, as far as a revert or a listing needs it.
enum Now {
    Text {
        text: String,
        version: String,
        bom: bool,
    },
    /// Larger than the caller reads whole: only its version, streamed.
    Large {
        version: String,
    },
    Absent,
    Unknown(String),
}

/// What the file at `path` is now, its text read whole up to `limit` bytes.
fn current<P: Provider>(provider: &P, path: &str, limit: u64) -> Now {
    let target = match provider.resolve(path) {
        Ok(target) => target,
        Err(e) => return Now::Unknown(e.message),
    };
    let size = match provider.stat(&target) {
        Ok(None) => return Now::Absent,
        Err(e) => return Now::Unknown(e.message),
        Ok(Some(info)) => info.size.unwrap_or(0),
    };
    if size > limit {
        return match streamed_version(provider, &target) {
            Ok(version) => Now::Large { version },
            Err(e) => Now::Unknown(e.message),
        };
    }
    match provider.read_text(&target, limit) {
        Ok(content) => Now::Text {
            bom: size == content.text.len() as u64 + 3,
            text: content.text,
            version: content.version,
        },
        Err(e) => Now::Unknown(e.message),
    }
}

/// The version of the whole text of `target`, read through in bounded
/// memory: nothing of it crosses into the caller.
fn streamed_version<P: Provider>(provider: &P, target: &P::Target) -> Result<String, FsError> {
    let mut stream = provider.stream_text(target, 0)?;
    while stream.skip(1 << 20, u64::MAX)?.is_some() {}
    stream.version().ok_or_else(|| {
        FsError::new(
            ErrorCode::IoError,
            "its version could not be read to the end",
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_large_change_is_counted_between_its_common_head_and_tail() {
        let body = "x\n".repeat(3 << 20);
        let old = format!("a\n{body}b\nc\n{body}");
        let new = format!("a\n{body}B\nB2\nc\n{body}");
        let d = bounded_diff(&old, &new, 1);
        assert_eq!((d.added, d.removed), (2, 1));
        assert_eq!(d.hunks, "(over 4 MiB: no line diff shown)");
        let d = bounded_diff(&old, &old, 1);
        assert_eq!((d.added, d.removed), (0, 0));
    }
}

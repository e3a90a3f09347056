//! The byte-store contract as an executable suite: every store — the local
//! disk, memory, an object store, `wasi:filesystem`, a JavaScript store
//! across `wit/since_v0.1.0/store.wit` — must pass it, and an out-of-tree store can run it
//! by enabling this crate's `contract` feature:
//!
//! ```ignore
//! dsh_fs_core::store::contract::run(|| MyStore::new(fresh_root()))?;
//! ```
//!
//! The suite uses nothing but the [`ByteStore`] seam, so it also runs inside
//! a component against an imported store. Each check gets a fresh, empty
//! store from the caller's factory. Checks report failures as text instead
//! of panicking, for the same reason.

use super::{ByteStore, Guard, Listing, Object, Replace, Target};
use crate::seam::{display, normalize};
use crate::{DirEntryKind, EntryKind, ErrorCode, FsError};

/// One named check of the contract.
pub struct Check<S> {
    /// What it checks, as a sentence fragment.
    pub name: &'static str,
    run: fn(&S) -> Outcome,
}

impl<S> Check<S> {
    /// Runs the check against a fresh store.
    pub fn run(&self, store: &S) -> Result<(), String> {
        (self.run)(store)
    }
}

type Outcome = Result<(), String>;

/// Every check of the contract.
pub fn checks<S: ByteStore>() -> Vec<Check<S>> {
    macro_rules! checks {
        ($($f:ident),* $(,)?) => { vec![$(Check { name: stringify!($f), run: $f::<S> }),*] };
    }
    checks![
        absent_entries_are_none_and_not_found,
        written_bytes_read_back_exactly,
        ranged_reads_return_the_asked_range,
        an_empty_file_is_a_file,
        tokens_change_with_the_content,
        parents_are_created_and_listed_in_byte_order,
        listing_pages_and_errors,
        a_missing_parent_is_not_found_without_create_parents,
        files_and_directories_are_not_each_other,
        guard_absent_lets_only_the_first_create_win,
        guard_unchanged_lets_only_the_first_replace_win,
        guard_none_replaces_unconditionally,
        a_dropped_replacement_leaves_nothing,
        a_guarded_remove_takes_only_the_version_named,
        copy_appends_ranges_of_the_current_file,
        an_open_reader_never_mixes_two_versions,
        identity_is_stable,
    ]
}

/// Runs every check, each on a store from `fresh`; the number of checks
/// passed, or every failure, one per line.
pub fn run<S: ByteStore>(mut fresh: impl FnMut() -> S) -> Result<usize, String> {
    let checks = checks::<S>();
    let failures: Vec<String> = checks
        .iter()
        .filter_map(|c| c.run(&fresh()).err().map(|e| format!("{}: {e}", c.name)))
        .collect();
    if failures.is_empty() {
        Ok(checks.len())
    } else {
        Err(failures.join("\n"))
    }
}

/// The target of a root-relative path, as the text layer resolves it.
fn at<S: ByteStore>(store: &S, path: &str) -> Result<Target, String> {
    let rel = normalize(path, store.roots()).map_err(show)?;
    let key = store.identity(&rel, path).map_err(show)?;
    Ok(Target::new(display(&rel), key))
}

fn show(e: FsError) -> String {
    format!("{:?}: {}", e.code, e.message)
}

/// Writes `bytes` at `path` unconditionally, creating parents; the new token.
fn put<S: ByteStore>(store: &S, path: &str, bytes: &[u8]) -> Result<String, String> {
    let t = at(store, path)?;
    let (mut r, _) = store.replace(&t, true).map_err(show)?;
    r.write(bytes).map_err(show)?;
    r.commit(Guard::None).map_err(show)
}

/// The whole content of the file at `path`, `None` when absent.
fn get<S: ByteStore>(store: &S, path: &str) -> Result<Option<Vec<u8>>, String> {
    let t = at(store, path)?;
    match store.open(&t) {
        Ok(mut o) => read_all(&mut o).map(Some),
        Err(e) if e.code == ErrorCode::NotFound => Ok(None),
        Err(e) => Err(show(e)),
    }
}

fn read_all(o: &mut impl Object) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let mut buf = vec![0; 64 << 10];
    loop {
        match o.read_at(out.len() as u64, &mut buf).map_err(show)? {
            0 => return Ok(out),
            n => out.extend_from_slice(&buf[..n]),
        }
    }
}

fn expect(cond: bool, what: impl FnOnce() -> String) -> Outcome {
    if cond { Ok(()) } else { Err(what()) }
}

fn expect_code<T>(r: Result<T, FsError>, want: ErrorCode, what: &str) -> Outcome {
    match r {
        Err(e) if e.code == want => Ok(()),
        Err(e) => Err(format!("{what}: expected {want:?}, got {}", show(e))),
        Ok(_) => Err(format!("{what}: expected {want:?}, got success")),
    }
}

fn names(list: &mut impl Listing) -> Result<Vec<(String, DirEntryKind)>, String> {
    let mut out = Vec::new();
    loop {
        let page = list.next_entries(2).map_err(show)?;
        if page.is_empty() {
            // A store lists in any order; the layer sorts.
            out.sort_by(|a: &(String, DirEntryKind), b| a.0.cmp(&b.0));
            return Ok(out);
        }
        out.extend(page.into_iter().map(|e| (e.name, e.kind)));
    }
}

/// Bytes no text rule would accept: the store must not care.
fn sample(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 131 % 251) as u8).collect()
}

fn absent_entries_are_none_and_not_found<S: ByteStore>(s: &S) -> Outcome {
    let t = at(s, "missing.txt")?;
    expect(s.stat(&t).map_err(show)?.is_none(), || {
        "stat of a missing file is not none".into()
    })?;
    expect_code(s.open(&t), ErrorCode::NotFound, "open of a missing file")?;
    let root = s.stat(&at(s, ".")?).map_err(show)?;
    expect(root.is_some_and(|m| m.kind == EntryKind::Directory), || {
        "the root is not a directory".into()
    })
}

fn written_bytes_read_back_exactly<S: ByteStore>(s: &S) -> Outcome {
    let bytes = sample(300_000);
    put(s, "bin.dat", &bytes)?;
    expect(get(s, "bin.dat")? == Some(bytes.clone()), || {
        "the bytes read differ from the bytes written".into()
    })?;
    let meta = s.stat(&at(s, "bin.dat")?).map_err(show)?.ok_or("no stat")?;
    expect(
        meta.kind == EntryKind::File && meta.size == Some(bytes.len() as u64),
        || format!("stat says {meta:?}"),
    )?;
    let opened = s.open(&at(s, "bin.dat")?).map_err(show)?;
    expect(opened.meta().token == meta.token, || {
        "open and stat disagree on the token of an unchanged file".into()
    })
}

fn ranged_reads_return_the_asked_range<S: ByteStore>(s: &S) -> Outcome {
    let bytes = sample(3 << 20);
    put(s, "big.dat", &bytes)?;
    let mut o = s.open(&at(s, "big.dat")?).map_err(show)?;
    for (offset, len) in [
        (0, 10),
        (1, 1),
        (1 << 20, 4096),
        ((3 << 20) - 5, 100),
        (5 << 20, 10),
    ] {
        let mut buf = vec![0; len];
        let mut n = 0;
        while n < len {
            match o.read_at(offset + n as u64, &mut buf[n..]).map_err(show)? {
                0 => break,
                k => n += k,
            }
        }
        let from = (offset as usize).min(bytes.len());
        let want = &bytes[from..(from + len).min(bytes.len())];
        expect(&buf[..n] == want, || {
            format!(
                "read_at({offset}, {len}) gave {n} bytes, not the {} asked",
                want.len()
            )
        })?;
        // The same range appended after bytes already held, never past the
        // spare capacity.
        let mut appended = Vec::with_capacity(3 + len);
        appended.extend_from_slice(b"abc");
        while appended.len() < 3 + len {
            let before = appended.len();
            let at = offset + (before - 3) as u64;
            let k = o.read_append(at, &mut appended).map_err(show)?;
            expect(appended.len() == before + k, || {
                format!(
                    "read_append({at}) said {k} bytes but appended {}",
                    appended.len() - before
                )
            })?;
            if k == 0 {
                break;
            }
        }
        expect(&appended[..3] == b"abc" && &appended[3..] == want, || {
            format!(
                "read_append({offset}) into room for {len} gave {} bytes, not the {} asked",
                appended.len() - 3,
                want.len()
            )
        })?;
    }
    Ok(())
}

fn an_empty_file_is_a_file<S: ByteStore>(s: &S) -> Outcome {
    put(s, "empty", b"")?;
    let meta = s.stat(&at(s, "empty")?).map_err(show)?.ok_or("no stat")?;
    expect(meta.kind == EntryKind::File && meta.size == Some(0), || {
        format!("stat of an empty file says {meta:?}")
    })?;
    expect(get(s, "empty")? == Some(Vec::new()), || {
        "an empty file read back as something else".into()
    })
}

fn tokens_change_with_the_content<S: ByteStore>(s: &S) -> Outcome {
    let first = put(s, "f.txt", b"one")?;
    let second = put(s, "f.txt", b"two")?;
    let third = put(s, "f.txt", b"three, longer")?;
    expect(first != second && second != third, || {
        format!("tokens {first:?}, {second:?}, {third:?} do not all differ")
    })?;
    let now = s.stat(&at(s, "f.txt")?).map_err(show)?.ok_or("no stat")?;
    expect(now.token == third, || {
        format!("commit said {third:?} but stat says {:?}", now.token)
    })
}

fn parents_are_created_and_listed_in_byte_order<S: ByteStore>(s: &S) -> Outcome {
    put(s, "a/b/c.txt", b"c")?;
    for name in ["B.txt", "a.txt", "_x", "é.txt"] {
        put(s, name, b"x")?;
    }
    let dir = s.stat(&at(s, "a/b")?).map_err(show)?;
    expect(dir.is_some_and(|m| m.kind == EntryKind::Directory), || {
        "a/b was not created as a directory".into()
    })?;
    let listed = names(&mut s.list_dir(&at(s, ".")?).map_err(show)?)?;
    let want = [
        ("B.txt", DirEntryKind::File),
        ("_x", DirEntryKind::File),
        ("a", DirEntryKind::Directory),
        ("a.txt", DirEntryKind::File),
        ("é.txt", DirEntryKind::File),
    ];
    let got: Vec<(&str, DirEntryKind)> = listed.iter().map(|(n, k)| (n.as_str(), *k)).collect();
    expect(got == want, || format!("the root lists as {got:?}"))?;
    let inner = names(&mut s.list_dir(&at(s, "a")?).map_err(show)?)?;
    expect(inner == [("b".to_owned(), DirEntryKind::Directory)], || {
        format!("a lists as {inner:?}")
    })
}

fn listing_pages_and_errors<S: ByteStore>(s: &S) -> Outcome {
    for i in 0..7 {
        put(s, &format!("d/f{i}"), b"")?;
    }
    let mut list = s.list_dir(&at(s, "d")?).map_err(show)?;
    let mut seen = 0;
    loop {
        let page = list.next_entries(3).map_err(show)?;
        expect(page.len() <= 3, || {
            format!("a page of 3 had {}", page.len())
        })?;
        if page.is_empty() {
            break;
        }
        seen += page.len();
    }
    expect(seen == 7, || format!("listed {seen} of 7 entries"))?;
    expect(list.skipped() == 0, || "skipped UTF-8 names".into())?;
    expect_code(
        s.list_dir(&at(s, "d/f0")?),
        ErrorCode::NotDirectory,
        "list of a file",
    )?;
    expect_code(
        s.list_dir(&at(s, "nope")?),
        ErrorCode::NotFound,
        "list of nothing",
    )
}

fn a_missing_parent_is_not_found_without_create_parents<S: ByteStore>(s: &S) -> Outcome {
    let t = at(s, "no/such/dir/f.txt")?;
    expect_code(
        s.replace(&t, false),
        ErrorCode::NotFound,
        "replace in a missing directory",
    )?;
    expect(s.stat(&at(s, "no")?).map_err(show)?.is_none(), || {
        "a refused replace created directories".into()
    })
}

fn files_and_directories_are_not_each_other<S: ByteStore>(s: &S) -> Outcome {
    put(s, "dir/f.txt", b"x")?;
    expect_code(
        s.open(&at(s, "dir")?),
        ErrorCode::NotRegularFile,
        "open of a directory",
    )?;
    expect_code(
        s.open(&at(s, "dir/f.txt/g")?),
        ErrorCode::NotDirectory,
        "open below a file",
    )?;
    expect_code(
        s.stat(&at(s, "dir/f.txt/g")?),
        ErrorCode::NotDirectory,
        "stat below a file",
    )?;
    expect_code(
        s.replace(&at(s, "dir/f.txt/g")?, true),
        ErrorCode::NotDirectory,
        "replace below a file",
    )
}

fn guard_absent_lets_only_the_first_create_win<S: ByteStore>(s: &S) -> Outcome {
    let t = at(s, "new.txt")?;
    let (mut first, current) = s.replace(&t, false).map_err(show)?;
    expect(current.is_none(), || "a new name has a current file".into())?;
    first.write(b"first").map_err(show)?;
    first.commit(Guard::Absent).map_err(show)?;
    let (mut second, current) = s.replace(&t, false).map_err(show)?;
    expect(current.is_some(), || {
        "the created file is not current".into()
    })?;
    second.write(b"second").map_err(show)?;
    expect_code(
        second.commit(Guard::Absent),
        ErrorCode::NotObserved,
        "a second create",
    )?;
    expect(get(s, "new.txt")? == Some(b"first".to_vec()), || {
        "a refused create changed the file".into()
    })
}

fn guard_unchanged_lets_only_the_first_replace_win<S: ByteStore>(s: &S) -> Outcome {
    let token = put(s, "f.txt", b"base")?;
    let t = at(s, "f.txt")?;
    let (mut winner, current) = s.replace(&t, false).map_err(show)?;
    let current = current.ok_or("the file is not current")?;
    expect(current.meta().token == token, || {
        "replace opened another token than the last commit's".into()
    })?;
    drop(current);
    winner.write(b"winner").map_err(show)?;
    winner.commit(Guard::Unchanged(&token)).map_err(show)?;
    let (mut loser, _) = s.replace(&t, false).map_err(show)?;
    loser.write(b"loser").map_err(show)?;
    expect_code(
        loser.commit(Guard::Unchanged(&token)),
        ErrorCode::StaleVersion,
        "a replace guarded by an old token",
    )?;
    expect(get(s, "f.txt")? == Some(b"winner".to_vec()), || {
        "a refused replace changed the file".into()
    })
}

fn guard_none_replaces_unconditionally<S: ByteStore>(s: &S) -> Outcome {
    put(s, "f.txt", b"old")?;
    let (mut r, current) = s.replace(&at(s, "f.txt")?, false).map_err(show)?;
    drop(current);
    r.write(b"new").map_err(show)?;
    r.commit(Guard::None).map_err(show)?;
    expect(get(s, "f.txt")? == Some(b"new".to_vec()), || {
        "an unguarded replace did not take".into()
    })
}

fn a_dropped_replacement_leaves_nothing<S: ByteStore>(s: &S) -> Outcome {
    put(s, "d/keep.txt", b"keep")?;
    for path in ["d/keep.txt", "d/new.txt"] {
        let (mut r, current) = s.replace(&at(s, path)?, false).map_err(show)?;
        drop(current);
        r.write(b"never committed").map_err(show)?;
        drop(r);
    }
    expect(get(s, "d/keep.txt")? == Some(b"keep".to_vec()), || {
        "a dropped replacement changed the file".into()
    })?;
    expect(get(s, "d/new.txt")?.is_none(), || {
        "a dropped replacement created the file".into()
    })?;
    let listed = names(&mut s.list_dir(&at(s, "d")?).map_err(show)?)?;
    expect(
        listed == [("keep.txt".to_owned(), DirEntryKind::File)],
        || format!("a dropped replacement left entries behind: {listed:?}"),
    )
}

fn a_guarded_remove_takes_only_the_version_named<S: ByteStore>(s: &S) -> Outcome {
    let old = put(s, "d/f.txt", b"old")?;
    let new = put(s, "d/f.txt", b"new")?;
    put(s, "d/keep.txt", b"keep")?;
    let t = at(s, "d/f.txt")?;
    let (r, current) = s.replace(&t, false).map_err(show)?;
    drop(current);
    expect_code(
        r.remove(Guard::Unchanged(&old), "d/f.txt"),
        ErrorCode::StaleVersion,
        "a remove guarded by an old token",
    )?;
    expect(get(s, "d/f.txt")? == Some(b"new".to_vec()), || {
        "a refused remove changed the file".into()
    })?;
    let (r, current) = s.replace(&t, false).map_err(show)?;
    drop(current);
    r.remove(Guard::Unchanged(&new), "d/f.txt").map_err(show)?;
    expect(s.stat(&t).map_err(show)?.is_none(), || {
        "a removed file is still there".into()
    })?;
    expect_code(
        s.open(&t).map(drop),
        ErrorCode::NotFound,
        "an open of a removed file",
    )?;
    expect(get(s, "d/keep.txt")? == Some(b"keep".to_vec()), || {
        "a remove touched its neighbour".into()
    })?;
    let (r, current) = s.replace(&t, false).map_err(show)?;
    expect(current.is_none(), || "a removed file is current".into())?;
    expect_code(
        r.remove(Guard::Unchanged(&new), "d/f.txt"),
        ErrorCode::StaleVersion,
        "a remove of a removed file",
    )
}

fn copy_appends_ranges_of_the_current_file<S: ByteStore>(s: &S) -> Outcome {
    let bytes = sample(2 << 20);
    let token = put(s, "f.dat", &bytes)?;
    let (mut r, current) = s.replace(&at(s, "f.dat")?, false).map_err(show)?;
    let mut current = current.ok_or("the file is not current")?;
    r.copy(&mut current, 0, 1000).map_err(show)?;
    r.write(b"<new>").map_err(show)?;
    r.copy(&mut current, 5000, (1 << 20) + 7).map_err(show)?;
    let tail = bytes.len() as u64 - 10;
    r.copy(&mut current, tail, 10).map_err(show)?;
    drop(current);
    r.commit(Guard::Unchanged(&token)).map_err(show)?;
    let mut want = bytes[..1000].to_vec();
    want.extend_from_slice(b"<new>");
    want.extend_from_slice(&bytes[5000..5000 + (1 << 20) + 7]);
    want.extend_from_slice(&bytes[bytes.len() - 10..]);
    expect(get(s, "f.dat")? == Some(want), || {
        "copied ranges did not land where they were asked".into()
    })
}

fn an_open_reader_never_mixes_two_versions<S: ByteStore>(s: &S) -> Outcome {
    let old = vec![b'o'; 1 << 20];
    put(s, "f.dat", &old)?;
    let mut reader = s.open(&at(s, "f.dat")?).map_err(show)?;
    let mut head = vec![0; 1000];
    let n = reader.read_at(0, &mut head).map_err(show)?;
    expect(head[..n].iter().all(|&b| b == b'o'), || {
        "a bad first read".into()
    })?;
    put(s, "f.dat", &vec![b'n'; 1 << 20])?;
    // Either the old bytes to the end (a snapshot, an open descriptor) or an
    // error (a read pinned to what was opened); never the new bytes.
    match read_all(&mut reader) {
        Ok(bytes) => expect(bytes == old, || {
            "a reader opened before a replace read the new bytes".into()
        }),
        Err(_) => Ok(()),
    }
}

fn identity_is_stable<S: ByteStore>(s: &S) -> Outcome {
    put(s, "x/y.txt", b"y")?;
    let a = at(s, "x/y.txt")?;
    let b = at(s, "x/../x/./y.txt")?;
    expect(a.key() == b.key(), || {
        format!("two spellings have keys {:?} and {:?}", a.key(), b.key())
    })?;
    expect(at(s, ".")?.key().is_empty(), || {
        "the root's key is not empty".into()
    })
}

#[cfg(test)]
mod tests {
    use crate::store::memory::MemoryStore;

    #[test]
    fn the_memory_store_keeps_the_contract() {
        let passed = super::run(MemoryStore::default).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(passed, super::checks::<MemoryStore>().len());
    }
}

//! The directory-listing contract of the provider seam, checked directly on
//! every backend with the contract suite's fixtures, plus what only some
//! backends have: symlinks and non-UTF-8 names on a disk, keys that are both
//! an object and a prefix in a store.

use crate::contract::{AdaptedBucket, AdaptedLocal, AdaptedMemory, Fixture, Local, Memory, Store};
use crate::jco::{JcoMemory, JcoNode};
use dsh_fs::{DirEntry, DirEntryKind, DynProvider, ErrorCode, FsError, Listing};

type Row = (String, DirEntryKind, u64);

/// Every entry of `path`, read `page` at a time; checks each page's bound.
fn list(p: &DynProvider, path: &str, page: u32) -> Result<Vec<DirEntry>, FsError> {
    let mut listing = p.list_dir(&p.resolve(path)?)?;
    drain(&mut *listing, page)
}

fn drain(listing: &mut dyn Listing, page: u32) -> Result<Vec<DirEntry>, FsError> {
    let mut all = Vec::new();
    loop {
        let got = listing.next_entries(page)?;
        if got.is_empty() {
            // The end stays the end.
            assert!(listing.next_entries(page)?.is_empty());
            return Ok(all);
        }
        assert!(
            got.len() <= page.max(1) as usize,
            "page {page}: {}",
            got.len()
        );
        all.extend(got);
    }
}

fn rows(entries: Vec<DirEntry>) -> Vec<Row> {
    entries
        .into_iter()
        .map(|e| (e.name, e.kind, e.size))
        .collect()
}

fn want(rows: &[(&str, DirEntryKind, u64)]) -> Vec<Row> {
    rows.iter()
        .map(|(n, k, s)| (n.to_string(), *k, *s))
        .collect()
}

#[track_caller]
fn code(f: &dyn Fixture, path: &str) -> ErrorCode {
    let p = f.provider();
    match list(&*p, path, 10) {
        Ok(found) => panic!("listing {path} gave {found:?}"),
        Err(e) => e.code,
    }
}

fn lists_names_in_byte_order_with_kinds_and_sizes(f: &dyn Fixture) {
    use DirEntryKind::{Directory, File};
    f.put("b.txt", b"bb");
    f.put("B.txt", b"B");
    f.put("a/x.txt", b"xyz");
    f.put("a/deeper/y.txt", b"y");
    f.put("é.md", b"e\n");
    f.put("a.rs", b"");
    let p = f.provider();
    let root = want(&[
        ("B.txt", File, 1),
        ("a", Directory, 0),
        ("a.rs", File, 0),
        ("b.txt", File, 2),
        ("é.md", File, 2),
    ]);
    assert_eq!(rows(list(&*p, ".", 100).unwrap()), root);
    for spelling in ["", "./", "a/..", &f.root()] {
        let spelling = if spelling.is_empty() { "." } else { spelling };
        assert_eq!(rows(list(&*p, spelling, 100).unwrap()), root, "{spelling}");
    }
    assert_eq!(
        rows(list(&*p, "a", 100).unwrap()),
        want(&[("deeper", Directory, 0), ("x.txt", File, 3)])
    );
    let listing = p.list_dir(&p.resolve("a").unwrap()).unwrap();
    assert_eq!(listing.skipped(), 0);
}

fn pages_of_any_size_give_the_same_entries(f: &dyn Fixture) {
    for i in 0..25 {
        f.put(&format!("many/f{i:02}.txt"), format!("{i}").as_bytes());
    }
    let p = f.provider();
    let whole = list(&*p, "many", 1000).unwrap();
    assert_eq!(whole.len(), 25);
    assert_eq!(whole[0].name, "f00.txt");
    assert_eq!(whole[24].name, "f24.txt");
    for page in [0, 1, 2, 7, 24, 25] {
        assert_eq!(list(&*p, "many", page).unwrap(), whole, "page {page}");
    }
}

fn missing_and_non_directories_are_refused(f: &dyn Fixture) {
    f.put("file.txt", b"text");
    f.put("dir/inner.txt", b"x");
    assert_eq!(code(f, "missing"), ErrorCode::NotFound);
    assert_eq!(code(f, "dir/missing"), ErrorCode::NotFound);
    assert_eq!(code(f, "file.txt"), ErrorCode::NotDirectory);
    assert_eq!(code(f, "dir/inner.txt"), ErrorCode::NotDirectory);
    assert_eq!(code(f, "file.txt/below"), ErrorCode::NotDirectory);
    assert_eq!(f.get("file.txt").unwrap(), b"text");
}

fn listing_never_leaves_the_root(f: &dyn Fixture) {
    f.put("inside.txt", b"in");
    let p = f.provider();
    for escape in ["..", "../..", "/", "/etc", &format!("{}/..", f.root())] {
        let refused = p.resolve(escape).and_then(|t| p.list_dir(&t).map(drop));
        assert_eq!(
            refused.unwrap_err().code,
            ErrorCode::SandboxDenied,
            "{escape}"
        );
    }
}

// Stamped per fixture, as the provider contract is.
crate::contract::contract_suite!(
    lists_names_in_byte_order_with_kinds_and_sizes,
    pages_of_any_size_give_the_same_entries,
    missing_and_non_directories_are_refused,
    listing_never_leaves_the_root,
);

#[cfg(unix)]
#[test]
fn local_symlinks_are_listed_never_followed_and_fifos_are_other() {
    use std::os::unix::fs::symlink;
    let f = Local::new();
    let ws = &f.0;
    ws.write("real/inside.txt", "x");
    symlink(ws.outside.join("secret.txt"), ws.path("out")).unwrap();
    symlink(&ws.outside, ws.path("outdir")).unwrap();
    symlink("loop", ws.path("loop")).unwrap();
    symlink("real", ws.path("alias")).unwrap();
    let fifo = std::ffi::CString::new(ws.path("pipe").to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    let p = f.provider();
    use DirEntryKind::{Directory, Other, Symlink};
    assert_eq!(
        rows(list(&*p, ".", 2).unwrap()),
        want(&[
            ("alias", Symlink, 0),
            ("loop", Symlink, 0),
            ("out", Symlink, 0),
            ("outdir", Symlink, 0),
            ("pipe", Other, 0),
            ("real", Directory, 0),
        ])
    );
    assert_eq!(code(&f, "outdir"), ErrorCode::SandboxDenied);
    assert_eq!(code(&f, "out"), ErrorCode::SandboxDenied);
    assert_ne!(code(&f, "loop"), ErrorCode::NotFound);
    // A link inside the root resolves like any path to its directory.
    assert_eq!(list(&*p, "alias", 10).unwrap()[0].name, "inside.txt");
    let modified = list(&*p, "real", 10).unwrap()[0].modified;
    assert!(modified.is_some_and(|ns| ns > 1_500_000_000 * 1_000_000_000));
}

#[cfg(target_os = "linux")]
#[test]
fn local_names_that_are_not_utf8_are_skipped_and_counted() {
    use std::os::unix::ffi::OsStrExt;
    let f = Local::new();
    f.0.write("ok.txt", "ok");
    std::fs::write(f.0.root.join(std::ffi::OsStr::from_bytes(b"caf\xe9")), "x").unwrap();
    let p = f.provider();
    let mut listing = p.list_dir(&p.resolve(".").unwrap()).unwrap();
    let entries = drain(&mut *listing, 10).unwrap();
    assert_eq!(rows(entries), want(&[("ok.txt", DirEntryKind::File, 2)]));
    assert_eq!(listing.skipped(), 1);
}

#[test]
fn store_keys_outside_the_prefix_are_never_listed() {
    let f = Store::new();
    f.put("mine.txt", b"1");
    f.0.put("wsother/secret.txt", b"2");
    f.0.put("other/secret.txt", b"3");
    f.0.put("ws.txt", b"4");
    let p = f.provider();
    let entries = list(&*p, ".", 10).unwrap();
    // S3 reports when each object was last written.
    assert!(entries[0].modified.is_some(), "{entries:?}");
    assert_eq!(rows(entries), want(&[("mine.txt", DirEntryKind::File, 1)]));
}

#[test]
fn a_store_key_that_is_object_and_prefix_lists_once_as_a_directory() {
    let f = Store::new();
    f.put("both", b"object");
    f.put("both/child.txt", b"c");
    let p = f.provider();
    assert_eq!(
        rows(list(&*p, ".", 10).unwrap()),
        want(&[("both", DirEntryKind::Directory, 0)])
    );
    assert_eq!(list(&*p, "both", 10).unwrap()[0].name, "child.txt");
}

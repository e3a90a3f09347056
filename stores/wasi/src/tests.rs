//! The provider contract as the text layer serves it over [`WasiStore`] on
//! a real directory: bytes, versions and guards, symlink confinement, the
//! refusals of non-files, streams. They run natively and, built for
//! `wasm32-wasip2`, under `wasmtime run` (`scripts/wasi-test-runner`).

use crate::{TEMP_SUFFIX, WasiProvider, WasiStore};
use dsh_fs_core::Provider;
use dsh_fs_core::store::TextStream;
use dsh_fs_core::{EditRequest, ErrorCode, FsError, WriteIntent, WriteOperation};
use std::fs;
use std::path::{Path, PathBuf};

/// A fresh scratch directory. WASI has no `std::env::temp_dir`: there the
/// runner grants one and names it in `TMPDIR`.
pub(crate) fn scratch() -> tempfile::TempDir {
    match std::env::var_os("TMPDIR") {
        Some(dir) if cfg!(target_os = "wasi") => tempfile::tempdir_in(dir).unwrap(),
        _ => tempfile::tempdir().unwrap(),
    }
}

/// Makes `link` a symbolic link to `to`; like `std::os::unix::fs::symlink`,
/// on WASI too.
pub(crate) fn symlink(to: impl AsRef<Path>, link: impl AsRef<Path>) -> std::io::Result<()> {
    #[cfg(unix)]
    return std::os::unix::fs::symlink(to, link);
    #[cfg(target_os = "wasi")]
    {
        let c = |p: &Path| std::ffi::CString::new(p.to_str().unwrap()).unwrap();
        let (to, link) = (c(to.as_ref()), c(link.as_ref()));
        // SAFETY: two NUL-terminated paths.
        match unsafe { libc::symlink(to.as_ptr(), link.as_ptr()) } {
            0 => Ok(()),
            _ => Err(std::io::Error::last_os_error()),
        }
    }
}

struct Fixture {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    outside: PathBuf,
    provider: WasiProvider,
}

fn fixture() -> Fixture {
    let tmp = scratch();
    let root = tmp.path().join("root");
    let outside = tmp.path().join("outside");
    fs::create_dir(&root).unwrap();
    fs::create_dir(&outside).unwrap();
    fs::write(outside.join("secret.txt"), "TOP SECRET\n").unwrap();
    let provider = WasiProvider::new(WasiStore::new(&root).unwrap());
    Fixture {
        _tmp: tmp,
        root,
        outside,
        provider,
    }
}

fn code<T>(r: Result<T, FsError>) -> ErrorCode {
    match r {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.code,
    }
}

fn leftovers(dir: &Path) -> Vec<String> {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(TEMP_SUFFIX))
        .collect()
}

#[test]
fn write_read_edit_keep_bytes_and_versions() {
    let f = fixture();
    let p = &f.provider;
    let t = p.resolve("sub/dir/a.txt").unwrap();
    assert_eq!(p.stat(&t).unwrap(), None);
    let w = p
        .write_text(
            &t,
            "\u{feff}one\r\ntwo\r\nthree",
            Some(WriteIntent::CreateIfAbsent),
        )
        .unwrap();
    assert_eq!(w.operation, WriteOperation::Created);
    let read = p.read_text(&t, 1 << 20).unwrap();
    assert_eq!(read.text, "one\r\ntwo\r\nthree");
    assert_eq!(read.version, w.version);
    let e = p
        .edit_text(
            &t,
            &EditRequest::new("two\nthree", "2\n3", false),
            Some(&read.version),
        )
        .unwrap();
    assert_eq!((e.replacements, e.first_line), (1, 2));
    assert_eq!(
        fs::read(f.root.join("sub/dir/a.txt")).unwrap(),
        b"\xEF\xBB\xBFone\r\n2\r\n3"
    );
    assert!(leftovers(&f.root.join("sub/dir")).is_empty());
}

#[test]
fn guards_follow_content() {
    let f = fixture();
    let p = &f.provider;
    fs::write(f.root.join("a.txt"), "a\n").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(f.root.join("a.txt"), fs::Permissions::from_mode(0o750)).unwrap();
    }
    let t = p.resolve("a.txt").unwrap();
    assert_eq!(
        code(p.write_text(&t, "x", Some(WriteIntent::CreateIfAbsent))),
        ErrorCode::NotObserved
    );
    let v = p.read_text(&t, 100).unwrap().version;
    // Same bytes rewritten: metadata changes, the version stays fresh.
    fs::write(f.root.join("a.txt"), "a\n").unwrap();
    let edit = EditRequest::new("a", "b", false);
    let v = p.edit_text(&t, &edit, Some(&v)).unwrap().version;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = fs::metadata(f.root.join("a.txt")).unwrap().permissions();
        assert_eq!(mode.mode() & 0o7777, 0o750);
    }
    fs::write(f.root.join("a.txt"), "c\n").unwrap();
    let edit = EditRequest::new("c", "d", false);
    assert_eq!(
        code(p.edit_text(&t, &edit, Some(&v))),
        ErrorCode::StaleVersion
    );
    assert_eq!(
        code(p.write_text(&t, "e", Some(WriteIntent::ReplaceIfVersion(v.clone())))),
        ErrorCode::StaleVersion
    );
    fs::remove_file(f.root.join("a.txt")).unwrap();
    assert_eq!(code(p.edit_text(&t, &edit, None)), ErrorCode::StaleVersion);
    assert_eq!(
        code(p.write_text(&t, "e", Some(WriteIntent::ReplaceIfVersion(v)))),
        ErrorCode::StaleVersion
    );
    assert!(leftovers(&f.root).is_empty());
}

#[test]
fn symlinks_resolve_inside_and_are_denied_outside() {
    let f = fixture();
    let p = &f.provider;
    fs::create_dir(f.root.join("sub")).unwrap();
    fs::write(f.root.join("sub/real.txt"), "x\n").unwrap();
    symlink("sub/real.txt", f.root.join("alias.txt")).unwrap();
    symlink("../alias.txt", f.root.join("sub/back.txt")).unwrap();
    symlink("../../outside", f.root.join("sub/rel-out")).unwrap();
    symlink("loop", f.root.join("loop")).unwrap();
    assert_eq!(p.resolve("alias.txt").unwrap().key(), "sub/real.txt");
    assert_eq!(p.resolve("sub/back.txt").unwrap().key(), "sub/real.txt");
    assert_eq!(p.resolve("alias.txt").unwrap().display_path(), "alias.txt");
    let root = f.root.to_str().unwrap();
    assert_eq!(
        p.resolve(&format!("{root}/sub/new")).unwrap().key(),
        "sub/new"
    );
    let mut denied = vec![
        "sub/rel-out/secret.txt",
        "../outside/secret.txt",
        "/etc/passwd",
    ];
    // WASI makes relative links only; the runtime can only hand an absolute one over.
    if cfg!(unix) {
        symlink(f.outside.join("secret.txt"), f.root.join("abs-out")).unwrap();
        denied.push("abs-out");
    }
    for path in denied {
        assert_eq!(code(p.resolve(path)), ErrorCode::SandboxDenied, "{path}");
    }
    assert_eq!(code(p.resolve("loop")), ErrorCode::InvalidInput);
    assert_eq!(
        fs::read(f.outside.join("secret.txt")).unwrap(),
        b"TOP SECRET\n"
    );
}

#[test]
fn non_files_and_limits_are_refused() {
    let f = fixture();
    let p = &f.provider;
    fs::create_dir(f.root.join("d")).unwrap();
    fs::write(f.root.join("bin"), b"a\0b").unwrap();
    fs::write(f.root.join("big"), "0123456789").unwrap();
    let t = |path| p.resolve(path).unwrap();
    // WASI cannot make a FIFO; the runtime can only hand one over.
    #[cfg(unix)]
    {
        let fifo = std::ffi::CString::new(f.root.join("fifo").to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
        let fifo = t("fifo");
        assert_eq!(code(p.read_text(&fifo, 100)), ErrorCode::NotRegularFile);
        assert_eq!(code(p.stream_text(&fifo, 0)), ErrorCode::NotRegularFile);
    }
    assert_eq!(code(p.read_text(&t("d"), 100)), ErrorCode::NotRegularFile);
    assert_eq!(code(p.read_text(&t("."), 100)), ErrorCode::NotRegularFile);
    assert_eq!(
        code(p.write_text(&t("."), "x", None)),
        ErrorCode::NotRegularFile
    );
    assert_eq!(code(p.read_text(&t("bin"), 100)), ErrorCode::NotText);
    assert_eq!(code(p.read_text(&t("big"), 9)), ErrorCode::TooLarge);
    assert_eq!(code(p.read_text(&t("missing"), 9)), ErrorCode::NotFound);
    assert_eq!(code(p.read_text(&t("big/x"), 9)), ErrorCode::NotDirectory);
    assert_eq!(
        code(p.write_text(&t("big/x"), "x", None)),
        ErrorCode::NotDirectory
    );
}

#[test]
fn streams_decode_and_version_like_whole_reads() {
    let f = fixture();
    let p = &f.provider;
    let text = "héllo ✓\r\n".repeat(1000);
    fs::write(f.root.join("s.txt"), &text).unwrap();
    let t = p.resolve("s.txt").unwrap();
    let mut s = p.stream_text(&t, 0).unwrap();
    let mut out = String::new();
    while let Some(chunk) = s.next_chunk(7).unwrap() {
        assert!(chunk.len() <= 7);
        out.push_str(&chunk);
    }
    assert_eq!(out, text);
    assert_eq!(
        s.version().unwrap(),
        p.read_text(&t, 1 << 20).unwrap().version
    );
}

//! The provider contract, checked directly on every backend and host path
//! (native, the adapter under wasmtime, the adapter under jco): one suite,
//! stamped per fixture by `contract_suite!`.

use crate::Workspace;
use crate::jco::{JcoMemory, JcoNode};
use crate::object_store::Bucket;
use dsh_fs::{BoxListing, BoxStream, BucketStore, DynProvider, MemoryStore};
use dsh_fs::{
    EditRequest, EntryKind, ErrorCode, FsError, LocalProvider, LocalStore, MemoryProvider,
    ObjectStoreProvider, Provider, WriteIntent, WriteOperation,
};
use dsh_fs_test_support::{Adapter, AdapterProvider};
use std::sync::{Arc, OnceLock};

/// A backend under test plus a side door to its storage.
pub(crate) trait Fixture {
    fn provider(&self) -> Arc<DynProvider>;
    fn put(&self, path: &str, bytes: &[u8]);
    fn get(&self, path: &str) -> Option<Vec<u8>>;
    fn mkdir(&self, path: &str);
    /// Rewrites `path` with identical bytes so that only metadata changes.
    fn touch(&self, path: &str);
    /// The absolute spelling of the root.
    fn root(&self) -> String;
}

pub(crate) struct Local(pub(crate) Workspace, Arc<LocalProvider>);

impl Local {
    pub(crate) fn new() -> Self {
        let ws = Workspace::new();
        let p = Arc::new(LocalProvider::new(LocalStore::new(&ws.root).unwrap()));
        Local(ws, p)
    }
}

impl Fixture for Local {
    fn provider(&self) -> Arc<DynProvider> {
        self.1.clone()
    }
    fn put(&self, path: &str, bytes: &[u8]) {
        self.0.write(path, bytes)
    }
    fn get(&self, path: &str) -> Option<Vec<u8>> {
        std::fs::read(self.0.path(path)).ok()
    }
    fn mkdir(&self, path: &str) {
        std::fs::create_dir_all(self.0.path(path)).unwrap()
    }
    fn touch(&self, path: &str) {
        // Same bytes through a new inode, new mtime and new ctime.
        std::thread::sleep(std::time::Duration::from_millis(10));
        let bytes = std::fs::read(self.0.path(path)).unwrap();
        let tmp = self.0.path("touch.tmp");
        std::fs::write(&tmp, bytes).unwrap();
        std::fs::rename(tmp, self.0.path(path)).unwrap();
    }
    fn root(&self) -> String {
        self.1.store().root().to_str().unwrap().to_owned()
    }
}

pub(crate) struct Memory(Arc<MemoryProvider>);

impl Memory {
    pub(crate) fn new() -> Self {
        Memory(Arc::new(MemoryProvider::default()))
    }
}

impl Fixture for Memory {
    fn provider(&self) -> Arc<DynProvider> {
        self.0.clone()
    }
    fn put(&self, path: &str, bytes: &[u8]) {
        self.0.store().insert(path, bytes)
    }
    fn get(&self, path: &str) -> Option<Vec<u8>> {
        self.0.store().get(path)
    }
    fn mkdir(&self, path: &str) {
        self.0.store().create_dir(path)
    }
    fn touch(&self, path: &str) {
        let bytes = self.0.store().get(path).unwrap();
        self.0.store().insert(path, bytes)
    }
    fn root(&self) -> String {
        "/workspace".into()
    }
}

/// The text adapter component under wasmtime over a native [`MemoryStore`]:
/// the Rust text layer compiled to wasm, every store call crossing back to
/// the host.
pub(crate) struct AdaptedMemory(Arc<MemoryStore>, Arc<AdapterProvider<MemoryStore>>);

impl AdaptedMemory {
    pub(crate) fn new() -> Self {
        let store = Arc::new(MemoryStore::default());
        let p = adapter().provider(store.clone()).unwrap();
        AdaptedMemory(store, Arc::new(p))
    }
}

/// The adapter component, compiled once for the whole test binary.
pub(crate) fn adapter() -> &'static Adapter {
    static ADAPTER: OnceLock<Adapter> = OnceLock::new();
    ADAPTER.get_or_init(|| {
        Adapter::from_file(std::path::Path::new(crate::ADAPTER_PATH))
            .expect("loading the adapter component")
    })
}

impl Fixture for AdaptedMemory {
    fn provider(&self) -> Arc<DynProvider> {
        self.1.clone()
    }
    fn put(&self, path: &str, bytes: &[u8]) {
        self.0.insert(path, bytes)
    }
    fn get(&self, path: &str) -> Option<Vec<u8>> {
        self.0.get(path)
    }
    fn mkdir(&self, path: &str) {
        self.0.create_dir(path)
    }
    fn touch(&self, path: &str) {
        let bytes = self.0.get(path).unwrap();
        self.0.insert(path, bytes)
    }
    fn root(&self) -> String {
        "/workspace".into()
    }
}

/// A provider over the storage another fixture's side door reaches: the
/// side door is `D`'s.
pub(crate) struct Beside<D, P>(D, Arc<P>);

impl<D, P> Fixture for Beside<D, P>
where
    D: Fixture,
    P: Provider<Target = dsh_fs::Target, Stream = BoxStream, Listing = BoxListing>
        + Send
        + Sync
        + 'static,
{
    fn provider(&self) -> Arc<DynProvider> {
        self.1.clone()
    }
    fn put(&self, path: &str, bytes: &[u8]) {
        self.0.put(path, bytes)
    }
    fn get(&self, path: &str) -> Option<Vec<u8>> {
        self.0.get(path)
    }
    fn mkdir(&self, path: &str) {
        self.0.mkdir(path)
    }
    fn touch(&self, path: &str) {
        self.0.touch(path)
    }
    fn root(&self) -> String {
        self.0.root()
    }
}

impl<D, P> Beside<D, P> {
    pub(crate) fn over(side_door: D, provider: P) -> Self {
        Beside(side_door, Arc::new(provider))
    }
}

/// The text adapter component under wasmtime over a native [`LocalStore`]
/// on a scratch directory; the side door is [`Local`]'s.
pub(crate) type AdaptedLocal = Beside<Local, AdapterProvider<LocalStore>>;

impl AdaptedLocal {
    pub(crate) fn new() -> Self {
        let local = Local::new();
        let store = Arc::new(LocalStore::new(&local.0.root).unwrap());
        let p = adapter().provider(store).unwrap();
        Beside::over(local, p)
    }
}

/// The prefix `ws` of a bucket of its own on the test S3 server; a directory
/// is a key with objects under it.
pub(crate) struct Store(pub(crate) Bucket, Arc<ObjectStoreProvider>);

impl Store {
    pub(crate) fn new() -> Self {
        let bucket = Bucket::new();
        let p = bucket.provider("ws");
        Store(bucket, p)
    }
}

impl Fixture for Store {
    fn provider(&self) -> Arc<DynProvider> {
        self.1.clone()
    }
    fn put(&self, path: &str, bytes: &[u8]) {
        self.0.put(&format!("ws/{path}"), bytes)
    }
    fn get(&self, path: &str) -> Option<Vec<u8>> {
        self.0.get(&format!("ws/{path}"))
    }
    fn mkdir(&self, path: &str) {
        self.0.put(&format!("ws/{path}/.keep"), b"")
    }
    fn touch(&self, path: &str) {
        self.0.rewrite(&format!("ws/{path}"))
    }
    fn root(&self) -> String {
        "/workspace".into()
    }
}

/// The text adapter component under wasmtime over a native [`BucketStore`]
/// on the prefix `ws` of a bucket of its own; the side door is [`Store`]'s.
pub(crate) type AdaptedBucket = Beside<Store, AdapterProvider<BucketStore>>;

impl AdaptedBucket {
    pub(crate) fn new() -> Self {
        let store = Store::new();
        let p = adapter()
            .provider(Arc::new(store.0.byte_store("ws")))
            .unwrap();
        Beside::over(store, p)
    }
}

#[track_caller]
fn code<T>(r: Result<T, FsError>) -> ErrorCode {
    match r {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.code,
    }
}

fn edit(old: &str, new: &str) -> EditRequest {
    EditRequest::new(old, new, false)
}

fn resolve_normalizes_and_confines(f: &dyn Fixture) {
    let p = f.provider();
    f.put("dir/a.txt", b"a\n");
    let a = p.resolve("dir/a.txt").unwrap();
    for spelling in [
        "./dir/a.txt",
        "dir//a.txt",
        "dir/x/../a.txt",
        &format!("{}/dir/a.txt", f.root()),
    ] {
        let t = p.resolve(spelling).unwrap();
        assert_eq!(t.key(), a.key(), "{spelling}");
        assert_eq!(t.display_path(), "dir/a.txt", "{spelling}");
    }
    for escape in [
        "../a.txt",
        "dir/../../a.txt",
        "/etc/passwd",
        &format!("{}/../x", f.root()),
    ] {
        assert_eq!(
            code(p.resolve(escape)),
            ErrorCode::SandboxDenied,
            "{escape}"
        );
    }
    assert_eq!(code(p.resolve("")), ErrorCode::InvalidInput);
    assert_eq!(code(p.resolve("a\0b")), ErrorCode::InvalidInput);
}

fn stat_reports_kind_and_absence(f: &dyn Fixture) {
    let p = f.provider();
    f.put("a.txt", b"hello");
    f.mkdir("d");
    let file = p.stat(&p.resolve("a.txt").unwrap()).unwrap().unwrap();
    assert_eq!((file.kind, file.size), (EntryKind::File, Some(5)));
    let dir = p.stat(&p.resolve("d").unwrap()).unwrap().unwrap();
    assert_eq!(dir.kind, EntryKind::Directory);
    assert_eq!(p.stat(&p.resolve("missing").unwrap()).unwrap(), None);
}

fn read_decodes_and_rejects_non_text(f: &dyn Fixture) {
    let p = f.provider();
    f.put("bom.txt", b"\xEF\xBB\xBFx\r\n");
    f.put("nul.bin", b"ab\0cd");
    f.put("latin1.txt", b"caf\xE9\n");
    f.mkdir("d");
    let t = |path| p.resolve(path).unwrap();
    assert_eq!(p.read_text(&t("bom.txt"), 1 << 20).unwrap().text, "x\r\n");
    assert_eq!(
        code(p.read_text(&t("nul.bin"), 1 << 20)),
        ErrorCode::NotText
    );
    assert_eq!(
        code(p.read_text(&t("latin1.txt"), 1 << 20)),
        ErrorCode::NotText
    );
    assert_eq!(
        code(p.read_text(&t("d"), 1 << 20)),
        ErrorCode::NotRegularFile
    );
    assert_eq!(
        code(p.read_text(&t("missing"), 1 << 20)),
        ErrorCode::NotFound
    );
    assert_eq!(code(p.read_text(&t("bom.txt"), 4)), ErrorCode::TooLarge);
    assert_eq!(code(p.stream_text(&t("missing"), 0)), ErrorCode::NotFound);
    assert_eq!(code(p.stream_text(&t("d"), 0)), ErrorCode::NotRegularFile);
}

fn stream_matches_read(f: &dyn Fixture) {
    let p = f.provider();
    let text: String = (0..2000).map(|i| format!("{i} ✓ ünïcode\r\n")).collect();
    f.put("s.txt", format!("\u{feff}{text}").as_bytes());
    let t = p.resolve("s.txt").unwrap();
    let whole = p.read_text(&t, u64::MAX).unwrap();
    for chunk in [4, 5, 7, 1000, 1 << 20] {
        let mut s = p.stream_text(&t, 0).unwrap();
        let mut got = String::new();
        while let Some(piece) = s.next_chunk(chunk).unwrap() {
            assert!(
                piece.len() <= chunk.max(4) as usize,
                "chunk {chunk} gave {}",
                piece.len()
            );
            assert!(s.version().is_none(), "version before the end");
            got.push_str(&piece);
        }
        assert_eq!(got, whole.text, "chunk {chunk}");
        assert_eq!(s.version().as_ref(), Some(&whole.version), "chunk {chunk}");
    }
    f.put("bad.txt", b"fine\nthen \xC3");
    let mut s = p.stream_text(&p.resolve("bad.txt").unwrap(), 0).unwrap();
    let mut err = None;
    while err.is_none() {
        match s.next_chunk(4) {
            Ok(Some(_)) => {}
            Ok(None) => panic!("a truncated character must fail the stream"),
            Err(e) => err = Some(e.code),
        }
    }
    assert_eq!(err, Some(ErrorCode::NotText));
}

fn stream_resumes_from_a_text_offset(f: &dyn Fixture) {
    let p = f.provider();
    let text: String = (0..500).map(|i| format!("{i} é\n")).collect();
    f.put("bom.txt", format!("\u{feff}{text}").as_bytes());
    f.put("plain.txt", text.as_bytes());
    for name in ["bom.txt", "plain.txt"] {
        let t = p.resolve(name).unwrap();
        // Offsets are into the text (past any BOM), at character boundaries.
        for start in [1, 7, 1000, text.len() - 3, text.len()] {
            let mut s = p.stream_text(&t, start as u64).unwrap();
            let mut got = String::new();
            while let Some(piece) = s.next_chunk(64).unwrap() {
                got.push_str(&piece);
            }
            assert_eq!(got, text[start..], "{name} from {start}");
            assert_eq!(s.version(), None, "a partial stream has no version");
        }
    }
}

/// `skip` passes over what `next` would hand out, interleaved with it in any
/// order: its counts match the text, it stops just after the line feed asked
/// for or at its byte budget (between characters), and the version at the
/// end is the whole file's.
fn stream_skips_what_next_would_hand_out(f: &dyn Fixture) {
    let p = f.provider();
    let text: String = (0..3000)
        .map(|i| match i % 5 {
            0 => format!("{i} ✓ ünïcode\r\n"),
            1 => "\n".to_owned(),
            2 => format!("{}\n", "x".repeat(i % 700)),
            3 => format!("{i} 𝄞 no line feed for a while "),
            _ => format!("{i}\n"),
        })
        .collect();
    f.put("s.txt", format!("\u{feff}{text}").as_bytes());
    let t = p.resolve("s.txt").unwrap();
    let whole = p.read_text(&t, u64::MAX).unwrap();
    assert_eq!(whole.text, text);
    let feeds = |s: &str| s.bytes().filter(|&b| b == b'\n').count() as u64;
    // (max-bytes, max-lines) of each skip, and the chunk size of the `next`
    // between two skips (0: none); each schedule is repeated to the end.
    let schedules: [&[(u32, u64, u32)]; 5] = [
        &[(1 << 20, u64::MAX, 0)],
        &[(5, 1, 0)],
        &[(64, 3, 7), (1000, 1, 0)],
        &[(4, u64::MAX, 4), (300_000, 250, 1 << 20)],
        &[(1, 2, 0), (6, 0, 5)],
    ];
    for schedule in schedules {
        let mut s = p.stream_text(&t, 0).unwrap();
        let mut at = 0;
        'stream: for step in 0.. {
            let (max_bytes, max_lines, chunk) = schedule[step % schedule.len()];
            let what = format!("{schedule:?}, step {step} at {at}");
            match s.skip(max_bytes, max_lines).unwrap() {
                Some(k) => {
                    let end = at + k.bytes as usize;
                    assert!(text.is_char_boundary(end), "{what}: cut a character");
                    let passed = &text[at..end];
                    assert!(k.bytes <= u64::from(max_bytes.max(4)), "{what}: {k:?}");
                    assert_eq!(k.lines, feeds(passed), "{what}: {k:?}");
                    assert!(k.lines <= max_lines, "{what}: {k:?}");
                    if max_lines == 0 {
                        assert_eq!(k.bytes, 0, "{what}");
                    } else {
                        assert_eq!(k.mid_line, !passed.ends_with('\n'), "{what}: {k:?}");
                        // It went on as far as both limits let it.
                        let next = text[end..].chars().next();
                        let stopped = k.lines == max_lines
                            || next.is_none_or(|c| {
                                k.bytes + c.len_utf8() as u64 > u64::from(max_bytes.max(4))
                            });
                        assert!(stopped, "{what}: stopped early, {k:?}");
                    }
                    at = end;
                }
                None => {
                    assert_eq!(at, text.len(), "{what}: ended early");
                    break 'stream;
                }
            }
            assert!(
                s.version().is_none() || at == text.len(),
                "{what}: version before the end"
            );
            if chunk > 0 {
                match s.next_chunk(chunk).unwrap() {
                    Some(piece) => {
                        assert!(piece.len() <= chunk.max(4) as usize, "{what}");
                        assert_eq!(piece, text[at..at + piece.len()], "{what}");
                        at += piece.len();
                    }
                    None => {
                        assert_eq!(at, text.len(), "{what}: ended early");
                        break 'stream;
                    }
                }
            }
        }
        assert_eq!(s.next_chunk(64).unwrap(), None);
        assert_eq!(s.skip(64, 1).unwrap(), None);
        assert_eq!(s.version().as_ref(), Some(&whole.version), "{schedule:?}");
    }
    // A skip checks what it passes over, as `next` does.
    f.put("bad.txt", b"fine\nthen \xC3\nmore\n");
    let mut s = p.stream_text(&p.resolve("bad.txt").unwrap(), 0).unwrap();
    let err = loop {
        match s.skip(1 << 20, u64::MAX) {
            Ok(Some(_)) => {}
            Ok(None) => panic!("a truncated character must fail the stream"),
            Err(e) => break e.code,
        }
    };
    assert_eq!(err, ErrorCode::NotText);
    // A stream resumed where a skip began reads on from there.
    let mut s = p.stream_text(&t, 0).unwrap();
    let first = s.skip(100, 2).unwrap().unwrap();
    let second = s.skip(1 << 20, 40).unwrap().unwrap();
    assert_eq!(second.lines, 40);
    let mut resumed = p.stream_text(&t, first.bytes).unwrap();
    let again = resumed.skip(1 << 20, 40).unwrap().unwrap();
    assert_eq!(again, second);
    assert_eq!(
        resumed.next_chunk(64).unwrap().unwrap(),
        s.next_chunk(64).unwrap().unwrap()
    );
}

fn write_honours_intents(f: &dyn Fixture) {
    let p = f.provider();
    let t = p.resolve("new/deep/file.txt").unwrap();
    let created = p
        .write_text(&t, "one\n", Some(WriteIntent::CreateIfAbsent))
        .unwrap();
    assert_eq!(created.operation, WriteOperation::Created);
    assert_eq!(f.get("new/deep/file.txt").unwrap(), b"one\n");
    // The version a write returns is the one a read would return.
    assert_eq!(p.read_text(&t, 1 << 20).unwrap().version, created.version);

    assert_eq!(
        code(p.write_text(&t, "x", Some(WriteIntent::CreateIfAbsent))),
        ErrorCode::NotObserved
    );
    let updated = p
        .write_text(
            &t,
            "two\n",
            Some(WriteIntent::ReplaceIfVersion(created.version.clone())),
        )
        .unwrap();
    assert_eq!(updated.operation, WriteOperation::Updated);
    assert_ne!(updated.version, created.version);
    assert_eq!(
        code(p.write_text(
            &t,
            "three\n",
            Some(WriteIntent::ReplaceIfVersion(created.version))
        )),
        ErrorCode::StaleVersion
    );
    assert_eq!(f.get("new/deep/file.txt").unwrap(), b"two\n");
    let gone = p.resolve("gone/file.txt").unwrap();
    assert_eq!(
        code(p.write_text(
            &gone,
            "x",
            Some(WriteIntent::ReplaceIfVersion(updated.version))
        )),
        ErrorCode::StaleVersion
    );
    assert_eq!(f.get("gone/file.txt"), None);
    p.write_text(&t, "four\n", None).unwrap();
    assert_eq!(f.get("new/deep/file.txt").unwrap(), b"four\n");
    f.mkdir("adir");
    assert_eq!(
        code(p.write_text(&p.resolve("adir").unwrap(), "x", None)),
        ErrorCode::NotRegularFile
    );
    f.put("plain", b"file");
    // Refused at resolve or at write, but never written.
    let under_file = p
        .resolve("plain/child")
        .and_then(|t| p.write_text(&t, "x", None));
    assert_eq!(code(under_file), ErrorCode::NotDirectory);
}

fn edit_checks_version_before_matching(f: &dyn Fixture) {
    let p = f.provider();
    f.put("e.txt", b"alpha\nbeta\n");
    let t = p.resolve("e.txt").unwrap();
    let seen = p.read_text(&t, 1 << 20).unwrap().version;
    f.put("e.txt", b"gamma\n");
    // "beta" is gone too, but staleness is what must be reported.
    assert_eq!(
        code(p.edit_text(&t, &edit("beta", "B"), Some(&seen))),
        ErrorCode::StaleVersion
    );
    assert_eq!(f.get("e.txt").unwrap(), b"gamma\n");
    assert_eq!(
        code(p.edit_text(&p.resolve("nope.txt").unwrap(), &edit("a", "b"), None)),
        ErrorCode::StaleVersion
    );
}

fn edit_matches_literally_and_reports_outcomes(f: &dyn Fixture) {
    let p = f.provider();
    f.put("e.txt", b"x = 1\ny = 1\nx = 1\n");
    let t = p.resolve("e.txt").unwrap();
    let v0 = p.read_text(&t, 1 << 20).unwrap().version;
    let e = p
        .edit_text(&t, &edit("x = 1", "x = 2"), Some(&v0))
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::AmbiguousEdit);
    assert!(e.message.contains("lines 1, 3"), "{}", e.message);
    assert_eq!(
        code(p.edit_text(&t, &edit("z = 1", "z"), Some(&v0))),
        ErrorCode::EditNotFound
    );
    assert_eq!(
        code(p.edit_text(&t, &edit("", "z"), Some(&v0))),
        ErrorCode::InvalidInput
    );
    assert_eq!(f.get("e.txt").unwrap(), b"x = 1\ny = 1\nx = 1\n");
    let one = p.edit_text(&t, &edit("y = 1", "y = 2"), Some(&v0)).unwrap();
    assert_eq!((one.replacements, one.first_line), (1, 2));
    let all = p
        .edit_text(
            &t,
            &EditRequest::new("x = 1", "x = 3", true),
            Some(&one.version),
        )
        .unwrap();
    assert_eq!((all.replacements, all.first_line), (2, 1));
    assert_eq!(f.get("e.txt").unwrap(), b"x = 3\ny = 2\nx = 3\n");
    assert_eq!(p.read_text(&t, 1 << 20).unwrap().version, all.version);
    f.put("bin", b"a\0b");
    assert_eq!(
        code(p.edit_text(&p.resolve("bin").unwrap(), &edit("a", "c"), None)),
        ErrorCode::NotText
    );
}

fn identical_content_is_not_stale(f: &dyn Fixture) {
    let p = f.provider();
    f.put("t.txt", b"same\n");
    let t = p.resolve("t.txt").unwrap();
    let seen = p.read_text(&t, 1 << 20).unwrap().version;
    let before = p.stat(&t).unwrap().unwrap().version;
    f.touch("t.txt");
    assert_ne!(
        p.stat(&t).unwrap().unwrap().version,
        before,
        "the touch must change metadata"
    );
    p.edit_text(&t, &edit("same", "changed"), Some(&seen))
        .unwrap();
    let seen = p.read_text(&t, 1 << 20).unwrap().version;
    f.touch("t.txt");
    p.write_text(&t, "rewritten\n", Some(WriteIntent::ReplaceIfVersion(seen)))
        .unwrap();
}

fn edits_are_byte_faithful(f: &dyn Fixture) {
    let p = f.provider();
    let file = b"\xEF\xBB\xBFone\r\ntwo\nthree\r\nfour";
    f.put("m.txt", file);
    let t = p.resolve("m.txt").unwrap();
    p.edit_text(&t, &edit("three\nfour", "3\nfour"), None)
        .unwrap();
    assert_eq!(
        f.get("m.txt").unwrap(),
        b"\xEF\xBB\xBFone\r\ntwo\n3\r\nfour"
    );
}

fn concurrent_guarded_edits_have_one_winner(f: &dyn Fixture) {
    let p = f.provider();
    f.put("race.txt", b"counter = 0\n");
    let t = p.resolve("race.txt").unwrap();
    let seen = p.read_text(&t, 1 << 20).unwrap().version;
    let barrier = Arc::new(std::sync::Barrier::new(8));
    let handles: Vec<_> = (0..8)
        .map(|i| {
            let (p, t, seen, barrier) = (p.clone(), t.clone(), seen.clone(), barrier.clone());
            std::thread::spawn(move || {
                barrier.wait();
                p.edit_text(
                    &t,
                    &edit("counter = 0", &format!("counter = {}", i + 1)),
                    Some(&seen),
                )
            })
        })
        .collect();
    let results: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    let winners = results.iter().filter(|r| r.is_ok()).count();
    assert_eq!(winners, 1, "{results:?}");
    for r in results.iter().filter_map(|r| r.as_ref().err()) {
        assert_eq!(r.code, ErrorCode::StaleVersion);
    }
}

/// An LF file past the streaming threshold: the edit is made of the store's
/// copies of the unchanged ranges and the new strings, and must give the
/// bytes and the version a read of the result gives. Matches at the very
/// start and end, and across where 1 MiB chunks meet.
fn streamed_edits_equal_the_in_memory_splice(f: &dyn Fixture) {
    let p = f.provider();
    let mut text: String = (0..120_000).map(|i| format!("{i:>79}\n")).collect();
    for at in [0, (1 << 20) - 3, 5 << 20, text.len() - 7] {
        text.replace_range(at..at + 6, "MARKER");
    }
    f.put("big.txt", text.as_bytes());
    let t = p.resolve("big.txt").unwrap();
    let seen = p.stat(&t).unwrap().unwrap().version;
    let out = p
        .edit_text(&t, &EditRequest::new("MARKER", "m\nm", true), Some(&seen))
        .unwrap();
    assert_eq!((out.replacements, out.first_line), (4, 1));
    let expected = text.replace("MARKER", "m\nm");
    assert!(
        f.get("big.txt").unwrap() == expected.as_bytes(),
        "streamed edit differs"
    );
    assert_eq!(p.read_text(&t, 64 << 20).unwrap().version, out.version);
    // One occurrence, the old string longer than the new.
    let one = p
        .edit_text(
            &t,
            &EditRequest::new(" 60000\n", "", false),
            Some(&out.version),
        )
        .unwrap();
    assert_eq!(one.replacements, 1);
    let expected = expected.replacen(" 60000\n", "", 1);
    assert!(
        f.get("big.txt").unwrap() == expected.as_bytes(),
        "streamed edit differs"
    );
    assert_eq!(p.read_text(&t, 64 << 20).unwrap().version, one.version);
}

/// Stamps each named test (a `fn(&dyn Fixture)`) once per backend, one
/// module per fixture.
macro_rules! contract_suite {
    ($($test:ident),* $(,)?) => {
        mod local {
            $( #[test] fn $test() { super::$test(&super::Local::new()) } )*
        }
        mod memory {
            $( #[test] fn $test() { super::$test(&super::Memory::new()) } )*
        }
        mod object_store {
            $( #[test] fn $test() { super::$test(&super::Store::new()) } )*
        }
        mod adapter_memory {
            $( #[test] fn $test() { super::$test(&super::AdaptedMemory::new()) } )*
        }
        mod adapter_local {
            $( #[test] fn $test() { super::$test(&super::AdaptedLocal::new()) } )*
        }
        mod adapter_bucket {
            $( #[test] fn $test() { super::$test(&super::AdaptedBucket::new()) } )*
        }
        mod jco_memory {
            $( #[test] fn $test() { super::$test(&super::JcoMemory::new()) } )*
        }
        mod jco_node {
            $( #[test] fn $test() { super::$test(&super::JcoNode::new()) } )*
        }
    };
}
// The listing suite is stamped over the same fixtures.
pub(crate) use contract_suite;

contract_suite!(
    resolve_normalizes_and_confines,
    stat_reports_kind_and_absence,
    read_decodes_and_rejects_non_text,
    stream_matches_read,
    stream_resumes_from_a_text_offset,
    stream_skips_what_next_would_hand_out,
    write_honours_intents,
    edit_checks_version_before_matching,
    edit_matches_literally_and_reports_outcomes,
    identical_content_is_not_stale,
    edits_are_byte_faithful,
    concurrent_guarded_edits_have_one_winner,
    streamed_edits_equal_the_in_memory_splice,
);

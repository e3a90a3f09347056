//! Fault injection at every call of the byte-store seam, and at every HTTP
//! request of the object store. [`Faulty`] wraps any [`ByteStore`] and fails
//! the k-th call of one tool call (a store method, an object's read, a
//! replacement's write, copy or commit) with one fault: an error, a short
//! read, a read that ends early, a commit refused after the bytes were
//! written, or the call's deadline passing. [`proxy`] stands between the
//! object store and moto and spoils the k-th HTTP request: a 5xx, a reset
//! connection (before the request is sent on, or after it was carried out),
//! or an answer held past the call's deadline.
//! Every scenario (reads, paged reads, writes, creates, in-memory, streamed
//! and CRLF edits, glob, grep) runs once per k and fault through the real
//! component, over the memory store, the local disk and a bucket. After each
//! run: the file holds exactly its old or its new bytes; the answer says
//! which (an error never follows a commit that landed, a success never
//! follows none, a successful read or search answers what a clean run
//! answers); no temp file or open multipart upload is left, visible to a
//! listing or to `glob`; and the same session edits on without reading again
//! (its observations survived) and then reads and edits once more.
//!
//! Over the bucket every request costs a round trip to moto, so by default
//! only a fixed subset of the k runs (see [`ks`], [`sampled_out`]);
//! `DSH_FS_FAULTS_FULL=1` runs every k.

pub(crate) mod proxy;

use self::proxy::{HTTP_FAULTS, HttpFault};
use crate::{call, code, runtime};
use dsh_fs::{BucketStore, Runtime, TextLayer, ToolResult};
use dsh_fs::{
    ByteStore, Listing, LocalShortcuts, LocalStore, MemoryStore, Session, SessionOptions, Target,
};
use dsh_fs::{Deadline, Seam, Shortcuts};
use dsh_fs_core::store::{Guard, Object, ObjectMeta, Replace};
use dsh_fs_core::{DirEntry, DirEntryKind, EditRequest, ErrorCode, FsError, SearchQuery, deadline};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant, SystemTime};

// ---------------------------------------------------------------------------
// The wrapper

/// What the k-th call does instead of its work.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Fault {
    /// Returns an `io-error` (an `open_direct` answers `None`, its failure).
    Error,
    /// A read gets at most half of what it asked for (at least one byte;
    /// a listing page gets one entry): what the seam allows.
    ShortRead,
    /// A read returns 0 before the end of the object.
    EarlyEnd,
    /// The commit is refused after every byte was written: the store's own
    /// commit runs under a guard that cannot hold, and must leave the old file.
    CommitRefused,
    /// The call's deadline passes: this call answers what `deadline::check`
    /// reports (`aborted`), and every later one runs past the deadline
    /// (the store's own checks see it; `progress` reports it).
    Deadline,
}

const FAULTS: [Fault; 5] = [
    Fault::Error,
    Fault::ShortRead,
    Fault::EarlyEnd,
    Fault::CommitRefused,
    Fault::Deadline,
];

/// The calls of the seam that can fail.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Call {
    Identity,
    OpenDirect,
    Stat,
    Open,
    List,
    Replace,
    Progress,
    Search,
    ReadAt,
    TokenNow,
    NextEntries,
    CheckWritable,
    Write,
    Copy,
    Commit,
}

impl Fault {
    /// Whether the fault can hit `call`: k counts only these calls.
    fn hits(self, call: Call) -> bool {
        match self {
            Fault::Error | Fault::Deadline => true,
            // A listing has no size to check an early end against: an empty
            // page is the end, whatever the store meant by it.
            Fault::EarlyEnd => call == Call::ReadAt,
            Fault::ShortRead => matches!(call, Call::ReadAt | Call::NextEntries),
            Fault::CommitRefused => call == Call::Commit,
        }
    }
}

/// Guard token no store ever makes.
const NEVER: &str = "fault-injection: a token no store makes";

#[derive(Debug, Default)]
struct Plan {
    armed: bool,
    /// The fault and the k (1-based, among the calls it hits); none: count only.
    fault: Option<(Fault, usize)>,
    /// Calls seen while armed, per fault (the calls each one hits).
    seen: [usize; FAULTS.len()],
    /// The call the fault fired at, and whether it took effect.
    fired: Option<(Call, bool)>,
    /// Whether the deadline passed.
    expired: bool,
    /// What the wrapper itself saw go wrong in a store.
    broken: Vec<String>,
}

/// The shared state of one wrapper: armed only during the call under test.
#[derive(Debug, Default)]
struct Injector(Mutex<Plan>);

impl Injector {
    fn plan(&self) -> std::sync::MutexGuard<'_, Plan> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn arm(&self, fault: Option<(Fault, usize)>) {
        *self.plan() = Plan {
            armed: true,
            fault,
            ..Plan::default()
        };
    }

    /// Stops injecting; what the armed call saw.
    fn disarm(&self) -> Plan {
        std::mem::take(&mut *self.plan())
    }

    /// Counts `call` and says what to do with it.
    fn on(&self, call: Call) -> Step {
        let mut p = self.plan();
        if !p.armed {
            return Step::default();
        }
        let mut fire = None;
        for (i, f) in FAULTS.iter().enumerate() {
            if f.hits(call) {
                p.seen[i] += 1;
                if p.fault == Some((*f, p.seen[i])) {
                    fire = Some(*f);
                }
            }
        }
        if let Some(f) = fire {
            p.fired = Some((call, true));
            if f == Fault::Deadline {
                p.expired = true;
            }
        }
        Step {
            fire,
            expired: p.expired,
        }
    }

    /// The fault that fired could not apply to this call's arguments.
    fn no_effect(&self) {
        if let Some((_, took)) = &mut self.plan().fired {
            *took = false;
        }
    }

    fn broken(&self, what: String) {
        self.plan().broken.push(what);
    }
}

#[derive(Debug, Default)]
struct Step {
    fire: Option<Fault>,
    expired: bool,
}

impl Step {
    /// The error this call answers for the faults every call can have.
    fn fail(&self, call: Call, shown: &str) -> Result<(), FsError> {
        match self.fire {
            Some(Fault::Error) => Err(FsError::new(
                ErrorCode::IoError,
                format!("injected fault at {call:?} of {shown}"),
            )),
            Some(Fault::Deadline) => Err(past_deadline(shown)),
            _ => Ok(()),
        }
    }

    /// Runs the wrapped store's work, past the deadline once it passed.
    fn run<R>(&self, f: impl FnOnce() -> R) -> R {
        if self.expired {
            deadline::scope(Instant::now(), f)
        } else {
            f()
        }
    }
}

/// What the deadline check reports once the call's deadline passed.
fn past_deadline(shown: &str) -> FsError {
    deadline::scope(Instant::now(), || deadline::check(shown))
        .expect_err("a deadline of now has passed")
}

/// A byte store whose calls fail on demand.
#[derive(Debug)]
struct Faulty<S> {
    inner: S,
    faults: Arc<Injector>,
    /// Whether the store's native search is offered (else glob and grep
    /// walk the listing and read files through the seam).
    native_search: bool,
}

impl<S: ByteStore> ByteStore for Faulty<S> {
    type Object = FaultyObject<S::Object>;
    type Replace<'s>
        = FaultyReplace<S::Replace<'s>>
    where
        Self: 's;
    type Listing = FaultyListing<S::Listing>;

    fn roots(&self) -> &[PathBuf] {
        self.inner.roots()
    }

    fn identity(&self, rel: &str, shown: &str) -> Result<String, FsError> {
        let step = self.faults.on(Call::Identity);
        step.fail(Call::Identity, shown)?;
        step.run(|| self.inner.identity(rel, shown))
    }

    fn stat(&self, target: &Target) -> Result<Option<ObjectMeta>, FsError> {
        let step = self.faults.on(Call::Stat);
        step.fail(Call::Stat, target.display_path())?;
        step.run(|| self.inner.stat(target))
    }

    fn open(&self, target: &Target) -> Result<Self::Object, FsError> {
        let step = self.faults.on(Call::Open);
        step.fail(Call::Open, target.display_path())?;
        let inner = step.run(|| self.inner.open(target))?;
        Ok(self.object(inner, target.display_path()))
    }

    fn list_dir(&self, target: &Target) -> Result<Self::Listing, FsError> {
        let step = self.faults.on(Call::List);
        step.fail(Call::List, target.display_path())?;
        let inner = step.run(|| self.inner.list_dir(target))?;
        Ok(FaultyListing {
            inner,
            faults: self.faults.clone(),
            shown: target.display_path().to_owned(),
        })
    }

    fn replace(
        &self,
        target: &Target,
        create_parents: bool,
    ) -> Result<(Self::Replace<'_>, Option<Self::Object>), FsError> {
        let shown = target.display_path();
        let step = self.faults.on(Call::Replace);
        step.fail(Call::Replace, shown)?;
        let (inner, current) = step.run(|| self.inner.replace(target, create_parents))?;
        let replace = FaultyReplace {
            inner,
            faults: self.faults.clone(),
            shown: shown.to_owned(),
        };
        Ok((replace, current.map(|o| self.object(o, shown))))
    }

    fn max_object_bytes(&self) -> u64 {
        self.inner.max_object_bytes()
    }
}

/// The wrapped store's shortcuts, each call failing on demand like the
/// store's own.
#[derive(Debug, Default)]
struct FaultyShortcuts<N>(N);

impl<S: ByteStore, N: Shortcuts<S>> Shortcuts<Faulty<S>> for FaultyShortcuts<N> {
    fn open_direct(&self, store: &Faulty<S>, rel: &str) -> Option<FaultyObject<S::Object>> {
        let step = store.faults.on(Call::OpenDirect);
        if step.fail(Call::OpenDirect, rel).is_err() {
            return None;
        }
        let inner = step.run(|| self.0.open_direct(&store.inner, rel))?;
        Some(store.object(inner, rel))
    }

    fn progress(&self, store: &Faulty<S>, target: &Target) -> Result<(), FsError> {
        let shown = target.display_path();
        let step = store.faults.on(Call::Progress);
        step.fail(Call::Progress, shown)?;
        if step.expired {
            return Err(past_deadline(shown));
        }
        self.0.progress(&store.inner, target)
    }

    fn search(
        &self,
        store: &Faulty<S>,
        target: &Target,
        query: &SearchQuery,
    ) -> Result<Option<String>, FsError> {
        if !store.native_search {
            return Ok(None);
        }
        let step = store.faults.on(Call::Search);
        step.fail(Call::Search, target.display_path())?;
        step.run(|| self.0.search(&store.inner, target, query))
    }
}

impl<S> Faulty<S> {
    fn object<O>(&self, inner: O, shown: &str) -> FaultyObject<O> {
        FaultyObject {
            inner,
            faults: self.faults.clone(),
            shown: shown.to_owned(),
        }
    }
}

#[derive(Debug)]
struct FaultyObject<O> {
    inner: O,
    faults: Arc<Injector>,
    shown: String,
}

impl<O: Object> Object for FaultyObject<O> {
    fn meta(&self) -> &ObjectMeta {
        self.inner.meta()
    }

    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> Result<usize, FsError> {
        let step = self.faults.on(Call::ReadAt);
        step.fail(Call::ReadAt, &self.shown)?;
        let size = self.inner.meta().size;
        match step.fire {
            Some(Fault::EarlyEnd) if !buf.is_empty() && size.is_none_or(|s| offset < s) => {
                return Ok(0);
            }
            Some(Fault::ShortRead) if buf.len() > 1 && size.is_none_or(|s| offset + 1 < s) => {
                let half = buf.len() / 2;
                return step.run(|| self.inner.read_at(offset, &mut buf[..half]));
            }
            Some(Fault::EarlyEnd | Fault::ShortRead) => self.faults.no_effect(),
            _ => {}
        }
        step.run(|| self.inner.read_at(offset, buf))
    }

    fn token_now(&mut self) -> Result<String, FsError> {
        let step = self.faults.on(Call::TokenNow);
        step.fail(Call::TokenNow, &self.shown)?;
        step.run(|| self.inner.token_now())
    }
}

#[derive(Debug)]
struct FaultyListing<L> {
    inner: L,
    faults: Arc<Injector>,
    shown: String,
}

impl<L: Listing> Listing for FaultyListing<L> {
    fn next_entries(&mut self, max: u32) -> Result<Vec<DirEntry>, FsError> {
        let step = self.faults.on(Call::NextEntries);
        step.fail(Call::NextEntries, &self.shown)?;
        let max = match step.fire {
            Some(Fault::ShortRead) if max > 1 => 1,
            Some(Fault::ShortRead) => {
                self.faults.no_effect();
                max
            }
            _ => max,
        };
        step.run(|| self.inner.next_entries(max))
    }

    fn skipped(&self) -> u64 {
        self.inner.skipped()
    }
}

#[derive(Debug)]
struct FaultyReplace<R> {
    inner: R,
    faults: Arc<Injector>,
    shown: String,
}

impl<R: Replace> Replace for FaultyReplace<R> {
    type Object = FaultyObject<R::Object>;

    fn check_writable(&mut self) -> Result<(), FsError> {
        let step = self.faults.on(Call::CheckWritable);
        step.fail(Call::CheckWritable, &self.shown)?;
        step.run(|| self.inner.check_writable())
    }

    fn write(&mut self, bytes: &[u8]) -> Result<(), FsError> {
        let step = self.faults.on(Call::Write);
        step.fail(Call::Write, &self.shown)?;
        step.run(|| self.inner.write(bytes))
    }

    fn copy(&mut self, from: &mut Self::Object, offset: u64, len: u64) -> Result<(), FsError> {
        let step = self.faults.on(Call::Copy);
        step.fail(Call::Copy, &self.shown)?;
        step.run(|| self.inner.copy(&mut from.inner, offset, len))
    }

    fn commit(self, guard: Guard<'_>) -> Result<String, FsError> {
        let step = self.faults.on(Call::Commit);
        step.fail(Call::Commit, &self.shown)?;
        if step.fire == Some(Fault::CommitRefused) {
            let (faults, shown) = (self.faults.clone(), self.shown.clone());
            return match step.run(|| self.inner.commit(Guard::Unchanged(NEVER))) {
                Err(e) => Err(e),
                Ok(token) => {
                    faults.broken(format!(
                        "the store committed {shown} under a guard that cannot hold ({token})"
                    ));
                    Err(FsError::new(ErrorCode::IoError, "commit refused"))
                }
            };
        }
        step.run(|| self.inner.commit(guard))
    }
}

// ---------------------------------------------------------------------------
// The stores under the wrapper

/// A fresh store of one kind, with its files seeded and inspected from outside.
trait Backend {
    type Store: ByteStore<Object: Send + 'static, Listing: Send + 'static> + Send + Sync + 'static;
    /// What the store does beyond the seam, as its provider uses it.
    type Shortcuts: Shortcuts<Self::Store> + Default + Send + Sync + 'static;
    const NAME: &'static str;
    /// An empty store (and what keeps it alive).
    /// What a fresh store needs kept alive or known beside it.
    type Ctx;
    /// Whether the scenarios of the 10.5 MiB file run on it.
    const BIG_FILES: bool = true;
    /// Whether a run costs enough that by default only some k run ([`ks`]).
    const SAMPLED: bool = false;
    /// Whether files get the times [`Backend::seed`] gives them (or none),
    /// so that every setup lists them newest first in one order.
    const SEEDED_TIMES: bool = true;
    fn fresh() -> (Self::Store, Self::Ctx);
    /// Puts `bytes` at `path`, with the modification time `mtime`.
    fn seed(store: &Self::Store, ctx: &Self::Ctx, path: &str, bytes: &[u8], mtime: SystemTime);
    /// The bytes at `path`, `None` when there is no file.
    fn bytes(store: &Self::Store, ctx: &Self::Ctx, path: &str) -> Option<Vec<u8>>;
    /// Every name in the store, `/`-separated below the root; directories end in `/`.
    fn names(store: &Self::Store, ctx: &Self::Ctx) -> Vec<String>;
}

struct Memory;

impl Backend for Memory {
    type Store = MemoryStore;
    type Shortcuts = Seam;
    const NAME: &'static str = "memory";

    type Ctx = ();

    fn fresh() -> (MemoryStore, ()) {
        (MemoryStore::default(), ())
    }

    fn seed(store: &MemoryStore, _: &(), path: &str, bytes: &[u8], _: SystemTime) {
        store.insert(path, bytes.to_vec());
    }

    fn bytes(store: &MemoryStore, _: &(), path: &str) -> Option<Vec<u8>> {
        store.get(path)
    }

    fn names(store: &MemoryStore, _: &()) -> Vec<String> {
        let mut out = Vec::new();
        let mut dirs = vec![String::new()];
        while let Some(dir) = dirs.pop() {
            let shown = if dir.is_empty() {
                ".".to_owned()
            } else {
                dir.clone()
            };
            let mut listing = store.list_dir(&Target::new(shown, dir.clone())).unwrap();
            loop {
                let page = Listing::next_entries(&mut listing, 64).unwrap();
                if page.is_empty() {
                    break;
                }
                for e in page {
                    let path = if dir.is_empty() {
                        e.name
                    } else {
                        format!("{dir}/{}", e.name)
                    };
                    if e.kind == DirEntryKind::Directory {
                        out.push(format!("{path}/"));
                        dirs.push(path);
                    } else {
                        out.push(path);
                    }
                }
            }
        }
        out.sort();
        out
    }
}

struct Local;

impl Backend for Local {
    type Store = LocalStore;
    type Shortcuts = LocalShortcuts;
    const NAME: &'static str = "local";

    type Ctx = tempfile::TempDir;

    fn fresh() -> (LocalStore, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        (LocalStore::new(dir.path()).unwrap(), dir)
    }

    fn seed(
        store: &LocalStore,
        _: &tempfile::TempDir,
        path: &str,
        bytes: &[u8],
        mtime: SystemTime,
    ) {
        let p = store.root().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, bytes).unwrap();
        std::fs::File::options()
            .write(true)
            .open(&p)
            .unwrap()
            .set_modified(mtime)
            .unwrap();
    }

    fn bytes(store: &LocalStore, _: &tempfile::TempDir, path: &str) -> Option<Vec<u8>> {
        let p = store.root().join(path);
        p.is_file().then(|| std::fs::read(p).unwrap())
    }

    fn names(store: &LocalStore, _: &tempfile::TempDir) -> Vec<String> {
        fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
            for e in std::fs::read_dir(dir).unwrap() {
                let e = e.unwrap();
                let rel = e
                    .path()
                    .strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                if e.file_type().unwrap().is_dir() {
                    out.push(format!("{rel}/"));
                    walk(root, &e.path(), out);
                } else {
                    out.push(rel);
                }
            }
        }
        let mut out = Vec::new();
        walk(store.root(), store.root(), &mut out);
        out.sort();
        out
    }
}

/// A bucket of its own on the shared moto server (`object_store.rs`) for
/// each run, reached directly, the store serving the key prefix [`PREFIX`]:
/// moto lists a prefix by scanning its whole bucket, so a bucket shared by
/// every run made each run slower than the last.
struct Bucket;

/// The key prefix the stores over a bucket serve.
const PREFIX: &str = "ws";

impl Backend for Bucket {
    type Store = BucketStore;
    type Shortcuts = Deadline;
    const NAME: &'static str = "object";
    type Ctx = crate::object_store::Bucket;
    /// moto serves one request at a time: the 10.5 MiB file is left to the
    /// other stores, which run the same layer code for it.
    const BIG_FILES: bool = false;
    const SAMPLED: bool = true;
    const SEEDED_TIMES: bool = false;

    fn fresh() -> (BucketStore, Self::Ctx) {
        let bucket = crate::object_store::Bucket::new();
        (bucket.byte_store(PREFIX), bucket)
    }

    fn seed(_: &BucketStore, bucket: &Self::Ctx, path: &str, bytes: &[u8], _: SystemTime) {
        bucket.put(&format!("{PREFIX}/{path}"), bytes);
    }

    fn bytes(_: &BucketStore, bucket: &Self::Ctx, path: &str) -> Option<Vec<u8>> {
        bucket.get(&format!("{PREFIX}/{path}"))
    }

    /// The keys under the prefix (and any other key, as is), and an upload
    /// begun and never completed nor aborted as a temp name.
    fn names(_: &BucketStore, bucket: &Self::Ctx) -> Vec<String> {
        let under = format!("{PREFIX}/");
        let mut out: Vec<String> = bucket
            .keys()
            .into_iter()
            .map(|k| k.strip_prefix(&under).map_or(k.clone(), str::to_owned))
            .collect();
        let open = bucket.open_uploads();
        if open > 0 {
            out.push(format!("({open} open multipart uploads).tmp"));
        }
        out.sort();
        out
    }
}

/// [`Bucket`] reached through the fault-injecting [`proxy::Proxy`], by a
/// client with the retries `BucketStore::from_url` configures (at most 3,
/// within 15 s), so what it retries by itself is what a user's would.
struct Proxied;

impl Backend for Proxied {
    type Store = BucketStore;
    type Shortcuts = Deadline;
    const NAME: &'static str = "object (through the proxy)";
    type Ctx = crate::object_store::Bucket;
    const BIG_FILES: bool = false;
    const SAMPLED: bool = true;
    const SEEDED_TIMES: bool = false;

    fn fresh() -> (BucketStore, Self::Ctx) {
        use dsh_fs::object_store::aws::AmazonS3Builder;
        use dsh_fs::object_store::{BackoffConfig, RetryConfig};
        let bucket = crate::object_store::Bucket::new();
        dsh_fs::provider::install_crypto();
        let client = AmazonS3Builder::new()
            .with_endpoint(proxy::Proxy::shared().endpoint())
            .with_allow_http(true)
            .with_region("us-east-1")
            .with_bucket_name(&bucket.name)
            .with_access_key_id("test")
            .with_secret_access_key("test")
            .with_retry(RetryConfig {
                backoff: BackoffConfig::default(),
                max_retries: 3,
                retry_timeout: Duration::from_secs(15),
            })
            .build()
            .unwrap();
        (BucketStore::s3(client, PREFIX).unwrap(), bucket)
    }

    fn seed(store: &BucketStore, bucket: &Self::Ctx, path: &str, bytes: &[u8], t: SystemTime) {
        Bucket::seed(store, bucket, path, bytes, t)
    }

    fn bytes(store: &BucketStore, bucket: &Self::Ctx, path: &str) -> Option<Vec<u8>> {
        Bucket::bytes(store, bucket, path)
    }

    fn names(store: &BucketStore, bucket: &Self::Ctx) -> Vec<String> {
        Bucket::names(store, bucket)
    }
}

// ---------------------------------------------------------------------------
// The scenarios

/// One tool call under test, the unfaulted calls that prepare it, and the
/// file whose bytes it may change.
struct Scenario {
    name: &'static str,
    /// Calls before the one under test (a read that observes the file, a
    /// first read that indexes a large file).
    before: Vec<(&'static str, Value)>,
    call: (&'static str, Value),
    /// The file checked afterwards; every version of it has one `check: 0` line.
    path: &'static str,
    /// Its bytes before (`None`: absent) and after a successful call;
    /// `new == None` for calls that change nothing.
    old: Option<Vec<u8>>,
    new: Option<Vec<u8>>,
}

impl Scenario {
    fn mutates(&self) -> bool {
        self.new.is_some()
    }
}

/// A small LF file with multi-byte text, so a short read can split a character.
fn small() -> String {
    let mut s = String::from("check: 0\n");
    for i in 2..=40 {
        s.push_str(&format!(
            "line {i}: ünïcödé 😀 žluťoučký kůň {}\n",
            "é".repeat(i % 7)
        ));
    }
    s.push_str("the needle is here\nlast line\n");
    s
}

/// An LF file above both the streamed-edit size (8 MiB, fixed in the
/// layer) and the tool's streaming threshold (10 MiB), so it is edited by
/// the streamed splice and read in pages through a line index.
fn big() -> String {
    let line = format!("{} ü\n", "x".repeat(69));
    let body = line.repeat(((10 << 20) + (1 << 19)) / line.len());
    let half = body.len() / 2;
    let cut = body[..half].rfind('\n').unwrap() + 1;
    format!(
        "check: 0\n{}the unique middle line\n{}",
        &body[..cut],
        &body[cut..]
    )
}

fn crlf() -> String {
    "check: 0\r\none\r\ntwo\r\nthree\r\nfour ü\r\n".to_owned()
}

fn spliced(old: &str, old_string: &str, new_string: &str) -> Vec<u8> {
    let edit = EditRequest::new(old_string, new_string, false);
    dsh_fs_core::splice::apply(old.as_bytes(), &edit)
        .unwrap()
        .bytes
}

/// The files every scenario starts with (a tree for the searches), and the
/// big file for those that need it.
fn seed<B: Backend>(store: &B::Store, ctx: &B::Ctx, with_big: bool) {
    let t = |s: u64| SystemTime::UNIX_EPOCH + Duration::from_secs(1_600_000_000 + s);
    B::seed(store, ctx, "f.txt", small().as_bytes(), t(1));
    B::seed(store, ctx, "crlf.txt", crlf().as_bytes(), t(2));
    B::seed(store, ctx, "src/a.rs", b"fn a() {} // needle\n", t(3));
    B::seed(
        store,
        ctx,
        "src/deep/b.rs",
        "fn b() { \"ü\" }\n".as_bytes(),
        t(4),
    );
    B::seed(store, ctx, "docs/c.md", "# C\nneedle ü\n".as_bytes(), t(5));
    if with_big {
        B::seed(store, ctx, "big.txt", big().as_bytes(), t(6));
    }
}

fn scenarios() -> Vec<Scenario> {
    let small = small();
    let big = big();
    let observe = |p: &'static str| ("read", json!({"file_path": p, "limit": 1}));
    let new_small = format!("check: 0\nrewritten ü\n{}", "new line\n".repeat(20));
    vec![
        Scenario {
            name: "read",
            before: vec![observe("f.txt")],
            call: ("read", json!({"file_path": "f.txt"})),
            path: "f.txt",
            old: Some(small.clone().into_bytes()),
            new: None,
        },
        Scenario {
            name: "paged read",
            before: vec![observe("f.txt")],
            call: (
                "read",
                json!({"file_path": "f.txt", "offset": 7, "limit": 5}),
            ),
            path: "f.txt",
            old: Some(small.clone().into_bytes()),
            new: None,
        },
        Scenario {
            name: "paged read of a large file",
            before: vec![("read", json!({"file_path": "big.txt", "limit": 5}))],
            call: (
                "read",
                json!({"file_path": "big.txt", "offset": 100_000, "limit": 20}),
            ),
            path: "big.txt",
            old: Some(big.clone().into_bytes()),
            new: None,
        },
        Scenario {
            name: "write",
            before: vec![observe("f.txt")],
            call: ("write", json!({"file_path": "f.txt", "content": new_small})),
            path: "f.txt",
            old: Some(small.clone().into_bytes()),
            new: Some(new_small.clone().into_bytes()),
        },
        Scenario {
            name: "create with parent directories",
            before: vec![],
            call: (
                "write",
                json!({"file_path": "new/deeper/g.txt", "content": new_small}),
            ),
            path: "new/deeper/g.txt",
            old: None,
            new: Some(new_small.clone().into_bytes()),
        },
        Scenario {
            name: "in-memory edit",
            before: vec![observe("f.txt")],
            call: (
                "edit",
                json!({"file_path": "f.txt", "old_string": "line 7:", "new_string": "LINE SEVEN ž:"}),
            ),
            path: "f.txt",
            old: Some(small.clone().into_bytes()),
            new: Some(spliced(&small, "line 7:", "LINE SEVEN ž:")),
        },
        Scenario {
            name: "streamed edit",
            before: vec![observe("big.txt")],
            call: (
                "edit",
                json!({"file_path": "big.txt", "old_string": "the unique middle line", "new_string": "the edited middle line ž"}),
            ),
            path: "big.txt",
            old: Some(big.clone().into_bytes()),
            new: Some(spliced(
                &big,
                "the unique middle line",
                "the edited middle line ž",
            )),
        },
        Scenario {
            name: "CRLF edit",
            before: vec![observe("crlf.txt")],
            call: (
                "edit",
                json!({"file_path": "crlf.txt", "old_string": "two\nthree", "new_string": "2\n3\nthree and a half"}),
            ),
            path: "crlf.txt",
            old: Some(crlf().into_bytes()),
            new: Some(spliced(&crlf(), "two\nthree", "2\n3\nthree and a half")),
        },
        Scenario {
            name: "glob",
            before: vec![observe("f.txt")],
            call: ("glob", json!({"pattern": "**/*.rs"})),
            path: "f.txt",
            old: Some(small.clone().into_bytes()),
            new: None,
        },
        Scenario {
            name: "grep",
            before: vec![observe("f.txt")],
            call: ("grep", json!({"pattern": "needle"})),
            path: "f.txt",
            old: Some(small.into_bytes()),
            new: None,
        },
    ]
}

// ---------------------------------------------------------------------------
// The sweep

/// Runs and violations of one sweep.
#[derive(Default)]
struct Tally {
    /// Runs per fault (the fault fired and took effect).
    runs: BTreeMap<String, u32>,
    /// Answer codes per fault, for the report.
    codes: BTreeMap<(String, String), u32>,
    violations: Vec<String>,
    /// Searches that answered with less than a clean run, the store having
    /// failed on a directory or file they skipped without a word.
    omissions: Vec<String>,
    /// Failed creates that left the parent directories they made.
    parents_left: u32,
    /// The longest a faulted call took, and which.
    slowest: Option<(Duration, String)>,
}

/// The text layer over a backend's store and shortcuts, both failing on demand.
type FaultyLayer<B> =
    TextLayer<Faulty<<B as Backend>::Store>, FaultyShortcuts<<B as Backend>::Shortcuts>>;

/// One fresh store with the scenario's files, its wrapper and a session on it.
struct Setup<B: Backend> {
    layer: Arc<FaultyLayer<B>>,
    faults: Arc<Injector>,
    session: Session,
    ctx: B::Ctx,
}

impl<B: Backend> Setup<B> {
    fn new(sc: &Scenario, mode: Mode, runtime: &Runtime) -> Self {
        let (store, ctx) = B::fresh();
        seed::<B>(&store, &ctx, sc.path == "big.txt");
        let faults = Arc::new(Injector::default());
        let layer = Arc::new(FaultyLayer::<B>::new(Faulty {
            inner: store,
            faults: faults.clone(),
            native_search: mode.native_search,
        }));
        let options = SessionOptions {
            observation_policy: mode.policy,
            ..Default::default()
        };
        let mut session = runtime.session(layer.clone(), options).unwrap();
        for (tool, args) in &sc.before {
            let r = call(&mut session, tool, args.clone());
            assert!(!r.is_error, "{}: preparing: {}", sc.name, r.text);
        }
        Setup {
            layer,
            faults,
            session,
            ctx,
        }
    }

    fn store(&self) -> &B::Store {
        &self.layer.store().inner
    }

    /// Runs the call under test with `fault`; the result and what the wrapper saw.
    fn run(&mut self, sc: &Scenario, fault: Option<(Fault, usize)>) -> (ToolResult, Plan) {
        self.faults.arm(fault);
        let r = call(&mut self.session, sc.call.0, sc.call.1.clone());
        (r, self.faults.disarm())
    }
}

/// How a sweep's sessions and store are set up.
#[derive(Clone, Copy, Debug)]
struct Mode {
    /// Offer the store's native search (the local disk's).
    native_search: bool,
    /// Sessions keep the read-before-edit policy (off: writes and edits
    /// are unconditional, so the store's reads alone decide what is written).
    policy: bool,
}

impl Mode {
    const PLAIN: Mode = Mode {
        native_search: false,
        policy: true,
    };

    /// Whether the sweep in this mode runs `sc` over `B`.
    fn runs<B: Backend>(self, sc: &Scenario) -> bool {
        let searches = matches!(sc.call.0, "glob" | "grep");
        !((self.native_search && !searches)
            || (!self.policy && !sc.mutates())
            || (!B::BIG_FILES && sc.path == "big.txt"))
    }
}

/// Whether every k runs over the stores where a run is costly.
fn full() -> bool {
    std::env::var_os("DSH_FS_FAULTS_FULL").is_some_and(|v| v == "1")
}

/// The k (1-based) a sweep runs of the `n` calls a fault can hit: every one
/// over a store where a run is cheap, or with `DSH_FS_FAULTS_FULL=1`. Else,
/// by default, one that moves with `turn` (the fault's place in its list, so
/// the faults of one scenario hit different calls), and for a change the
/// last one too (its commit, or what follows it), the moving one then
/// always an earlier call.
fn ks<B: Backend>(n: usize, turn: usize, sc: &Scenario) -> Vec<usize> {
    if !B::SAMPLED || full() || n == 0 {
        return (1..=n).collect();
    }
    if !sc.mutates() || n == 1 {
        return vec![1 + turn % n];
    }
    vec![1 + turn % (n - 1), n]
}

/// Without the policy, only `write` sends another request than with it (a
/// PUT with no condition, which `object_store` sends again whatever broke):
/// by default the HTTP sweep runs no other scenario in that mode.
fn sampled_out(mode: Mode, sc: &Scenario) -> bool {
    !full() && !mode.policy && sc.name != "write"
}

/// One faulted run, to judge.
struct Run {
    /// The fault, as reported.
    fault: String,
    k: usize,
    /// Where the fault fired.
    at: String,
    /// The names in the store before the run.
    names_before: Vec<String>,
    result: ToolResult,
    /// What the injector saw go wrong in a store.
    broken: Vec<String>,
    elapsed: Duration,
}

/// What one scenario's clean run answered and left.
struct Clean {
    baseline: ToolResult,
    names: Vec<String>,
}

impl Clean {
    /// The clean run of `sc` on `s`, checked like every faulted one.
    fn of<B: Backend>(sc: &Scenario, s: &mut Setup<B>, baseline: ToolResult) -> Clean {
        assert!(
            !baseline.is_error,
            "{}: clean run: {}",
            sc.name, baseline.text
        );
        let names = B::names(s.store(), &s.ctx);
        if let Err(why) = check::<B>(sc, s, &baseline, &baseline, &[], false) {
            panic!("{}: clean run fails its own checks: {why}", sc.name);
        }
        Clean { baseline, names }
    }
}

impl Tally {
    /// Checks a faulted run of `sc` and counts it; a `TIMEOUT` answer is
    /// allowed (when true) only if `timeouts` (the call really ran past its
    /// deadline).
    fn judge<B: Backend>(
        &mut self,
        sc: &Scenario,
        mode: Mode,
        s: &mut Setup<B>,
        clean: &Clean,
        run: Run,
        timeouts: bool,
    ) {
        let Run {
            fault,
            k,
            at,
            names_before,
            result,
            broken,
            elapsed,
        } = run;
        *self.runs.entry(fault.clone()).or_default() += 1;
        if self.slowest.as_ref().is_none_or(|(d, _)| elapsed > *d) {
            self.slowest = Some((
                elapsed,
                format!("{}, {fault} at request {k} ({at})", sc.name),
            ));
        }
        let mut broken = broken;
        if result.is_error {
            let new: Vec<String> = B::names(s.store(), &s.ctx)
                .into_iter()
                .filter(|n| !names_before.contains(n))
                .collect();
            if !new.is_empty() {
                self.parents_left += 1;
                broken.push(format!("a failed call left new names behind: {new:?}"));
            }
        }
        *self
            .codes
            .entry((fault.clone(), code(&result).to_owned()))
            .or_default() += 1;
        // The names a run may leave: what was there and what a clean run makes.
        let allowed: Vec<String> = names_before.iter().chain(&clean.names).cloned().collect();
        let mut why = broken.join("; ");
        match check::<B>(sc, s, &result, &clean.baseline, &allowed, timeouts) {
            Ok(false) => {}
            Ok(true) => self.omissions.push(format!(
                "{}, {fault} at call {k} ({at}): {:?}",
                sc.name,
                first_line(&result.text)
            )),
            Err(e) if why.is_empty() => why = e,
            Err(e) => why = format!("{why}; {e}"),
        }
        if !why.is_empty() {
            self.violations.push(format!(
                "{} store {mode:?}, {}, {fault} at call {k} ({at}): {why}; the answer was: {:?}; \
                 a clean run's: {:?}",
                B::NAME,
                sc.name,
                &result.text[..result.text.floor_char_boundary(2000)],
                &clean.baseline.text[..clean.baseline.text.floor_char_boundary(2000)],
            ));
        }
    }
}

/// Every fault of the wrapper at every k (or those [`ks`] picks) of every
/// scenario over the store `B`.
fn sweep<B: Backend>(mode: Mode) -> Tally {
    let mut tally = Tally::default();
    for sc in scenarios() {
        if !mode.runs::<B>(&sc) {
            continue;
        }
        // A clean run: the answer to compare with, and how many calls each fault can hit.
        let mut s = Setup::<B>::new(&sc, mode, runtime());
        let (baseline, counted) = s.run(&sc, None);
        eprintln!(
            "{} store, {mode:?}, {}: calls each fault can hit: {:?}",
            B::NAME,
            sc.name,
            FAULTS.iter().zip(counted.seen).collect::<Vec<_>>()
        );
        let clean = Clean::of(&sc, &mut s, baseline);
        for (i, fault) in FAULTS.iter().enumerate() {
            for k in ks::<B>(counted.seen[i], i, &sc) {
                let mut s = Setup::<B>::new(&sc, mode, runtime());
                let names_before = B::names(s.store(), &s.ctx);
                let started = Instant::now();
                let (result, plan) = s.run(&sc, Some((*fault, k)));
                let Some((at, true)) = plan.fired else {
                    continue;
                };
                let run = Run {
                    fault: format!("{fault:?}"),
                    k,
                    at: format!("{at:?}"),
                    names_before,
                    result,
                    broken: plan.broken,
                    elapsed: started.elapsed(),
                };
                tally.judge(&sc, mode, &mut s, &clean, run, false);
            }
        }
    }
    tally
}

/// The call timeout of the sessions whose answers the proxy holds: long
/// enough for any clean call here, short enough to wait out often.
const SHORT_TIMEOUT: Duration = Duration::from_secs(1);

/// How long past the call's deadline a held answer is relayed.
const HOLD_PAST_DEADLINE: Duration = Duration::from_millis(300);

/// A runtime whose calls end after [`SHORT_TIMEOUT`].
fn short_runtime() -> &'static Runtime {
    static RUNTIME: OnceLock<Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| crate::runtime_with_timeout(SHORT_TIMEOUT))
}

/// Every fault of the proxy at every HTTP request (or those [`ks`] picks)
/// of every scenario over the bucket behind it.
fn http_sweep(mode: Mode) -> Tally {
    type B = Proxied;
    let proxy = proxy::Proxy::shared();
    let mut tally = Tally::default();
    for sc in scenarios() {
        if !mode.runs::<B>(&sc) || sampled_out(mode, &sc) {
            continue;
        }
        // A clean run: the answer to compare with, and the requests it sends.
        let mut s = Setup::<B>::new(&sc, mode, runtime());
        proxy.arm(None, None);
        let (baseline, _) = s.run(&sc, None);
        let counted = proxy.disarm();
        assert!(counted.broken.is_empty(), "the proxy: {:?}", counted.broken);
        let n = counted.requests.len();
        eprintln!(
            "{} store, {mode:?}, {}: {n} requests: {:?}",
            B::NAME,
            sc.name,
            counted.requests
        );
        let clean = Clean::of(&sc, &mut s, baseline);
        for (turn, fault) in HTTP_FAULTS.into_iter().enumerate() {
            let (runtime, hold) = match fault {
                HttpFault::Delay => (short_runtime(), SHORT_TIMEOUT + HOLD_PAST_DEADLINE),
                _ => (runtime(), Duration::ZERO),
            };
            for k in ks::<B>(n, turn, &sc) {
                let mut s = Setup::<B>::new(&sc, mode, runtime);
                let names_before = B::names(s.store(), &s.ctx);
                let started = Instant::now();
                proxy.arm(Some((fault, k)), Some(started + hold));
                let (result, plan) = s.run(&sc, None);
                let elapsed = started.elapsed();
                let seen = proxy.disarm();
                let Some(at) = seen.fired else {
                    continue;
                };
                let run = Run {
                    fault: format!("{fault:?}"),
                    k,
                    at,
                    names_before,
                    result,
                    broken: plan.broken.into_iter().chain(seen.broken).collect(),
                    elapsed,
                };
                tally.judge(&sc, mode, &mut s, &clean, run, fault == HttpFault::Delay);
            }
        }
    }
    tally
}

/// Whether `a` and `b` hold the same lines, in any order.
fn same_lines(a: &str, b: &str) -> bool {
    fn sorted(s: &str) -> Vec<&str> {
        let mut lines: Vec<&str> = s.lines().collect();
        lines.sort_unstable();
        lines
    }
    sorted(a) == sorted(b)
}

fn first_line(s: &str) -> &str {
    let line = s.lines().next().unwrap_or("");
    &line[..line.floor_char_boundary(300)]
}

/// The checks after one run; `Err` names what broke. A `TIMEOUT` answer
/// is a failure unless `timeouts`; then it must be true (it says the
/// change was saved exactly when it was), and the session it restarted
/// goes on after reading again, as it told the model to.
fn check<B: Backend>(
    sc: &Scenario,
    s: &mut Setup<B>,
    result: &ToolResult,
    baseline: &ToolResult,
    allowed: &[String],
    timeouts: bool,
) -> Result<Omitted, String> {
    let mut omitted = false;
    let now = B::bytes(s.store(), &s.ctx, sc.path);
    let ok = !result.is_error;
    let stopped = code(result) == "TIMEOUT";
    let says_saved = stopped && result.text.contains(" was saved, but ");
    // The file: exactly old or new; the answer: true.
    if sc.mutates() {
        let (is_old, is_new) = (now == sc.old, now == sc.new);
        if !is_old && !is_new {
            return Err(format!(
                "{} holds neither its old nor its new bytes ({:?} bytes)",
                sc.path,
                now.as_ref().map(Vec::len)
            ));
        }
        if ok && !is_new {
            return Err("success, but nothing was committed".to_owned());
        }
        if !ok && is_new && !says_saved {
            return Err("an error, but the change was committed".to_owned());
        }
        if says_saved && !is_new {
            return Err("the answer says the change was saved, but it was not".to_owned());
        }
    } else {
        if now != sc.old {
            return Err(format!("{} changed during a {}", sc.path, sc.call.0));
        }
        // glob lists newest first: on a bucket, whose objects take their
        // times from the uploads (to the second on moto), two files seeded
        // one after the other tie in one setup and not in the next, so the
        // same files may come in another order there.
        let reordered =
            !B::SEEDED_TIMES && sc.call.0 == "glob" && same_lines(&result.text, &baseline.text);
        if ok && result.text != baseline.text && !reordered {
            if !matches!(sc.call.0, "glob" | "grep") {
                return Err(format!(
                    "success with another answer than a clean run's: {:?}",
                    first_line(&result.text)
                ));
            }
            // Less than a clean run found is true only when the answer says
            // what it left out: entries that could not be read, or an early
            // stop (a deadline).
            let says = result.text.contains("could not be read and w")
                || result.text.contains("(Stopped early");
            if !says {
                return Err(format!(
                    "a search answered less than a clean run without saying so: {:?}",
                    first_line(&result.text)
                ));
            }
            omitted = true;
        }
    }
    for other in ["f.txt", "crlf.txt", "src/a.rs", "docs/c.md"] {
        if other != sc.path && B::bytes(s.store(), &s.ctx, other).is_none() {
            return Err(format!("{other} is gone"));
        }
    }
    if code(result) == "INTERNAL_ERROR" || (stopped && !timeouts) {
        return Err(format!(
            "the component stopped: {}",
            first_line(&result.text)
        ));
    }
    // No temp file, no name a clean run does not leave.
    let names = B::names(s.store(), &s.ctx);
    let temps: Vec<&String> = names
        .iter()
        .filter(|n| n.contains("dsh-fs") || n.ends_with(".tmp"))
        .collect();
    if !temps.is_empty() {
        return Err(format!("temp files left: {temps:?}"));
    }
    if !allowed.is_empty() {
        let stray: Vec<&String> = names.iter().filter(|n| !allowed.contains(n)).collect();
        if !stray.is_empty() {
            return Err(format!("names a clean run does not leave: {stray:?}"));
        }
    }
    let globbed = call(&mut s.session, "glob", json!({"pattern": "**/*"}));
    if globbed.is_error || globbed.text.contains("dsh-fs") || globbed.text.contains(".tmp") {
        return Err(format!("glob after the run: {}", globbed.text));
    }
    // The session goes on: an edit without reading again (the observation
    // of the read before, or of the change, survived), then a read and an edit.
    let edit = |s: &mut Setup<B>, from: &str, to: &str| {
        call(
            &mut s.session,
            "edit",
            json!({"file_path": sc.path, "old_string": from, "new_string": to}),
        )
    };
    let restarted = stopped && result.text.contains("The session was restarted");
    let observed = !restarted && (!sc.before.is_empty() || (ok && sc.mutates()));
    let mut at = 0;
    if now.is_none() {
        let r = call(
            &mut s.session,
            "write",
            json!({"file_path": sc.path, "content": "check: 0\n"}),
        );
        if r.is_error {
            return Err(format!("the session cannot create {}: {}", sc.path, r.text));
        }
    } else if observed {
        let r = edit(s, "check: 0", "check: 1");
        if r.is_error {
            return Err(format!(
                "the session lost its observation: an edit without reading again: {}",
                first_line(&r.text)
            ));
        }
        at = 1;
    }
    let r = call(
        &mut s.session,
        "read",
        json!({"file_path": sc.path, "limit": 3}),
    );
    if r.is_error || !r.text.contains(&format!("check: {at}")) {
        return Err(format!(
            "the session cannot read on: {}",
            first_line(&r.text)
        ));
    }
    let r = edit(s, &format!("check: {at}"), "check: 9");
    if r.is_error {
        return Err(format!(
            "the session cannot edit on: {}",
            first_line(&r.text)
        ));
    }
    let after = B::bytes(s.store(), &s.ctx, sc.path).unwrap_or_default();
    if !after.starts_with(b"check: 9") {
        return Err("the session's last edit did not land".to_owned());
    }
    Ok(omitted)
}

/// Whether a search answered with less than a clean run (and nothing else broke).
type Omitted = bool;

fn report(store: &str, tally: &Tally) {
    let total: u32 = tally.runs.values().sum();
    eprintln!(
        "fault injection over the {store} store: {total} runs, {} violations; runs per fault: {:?}",
        tally.violations.len(),
        tally.runs
    );
    eprintln!("  answers per fault: {:?}", tally.codes);
    eprintln!(
        "  failed creates that left the parent directories they made: {}",
        tally.parents_left
    );
    eprintln!(
        "  searches that answered less than a clean run and said what they left out: {}",
        tally.omissions.len()
    );
    for o in tally.omissions.iter().take(3) {
        eprintln!("    e.g. {o}");
    }
    if let Some((took, what)) = &tally.slowest {
        eprintln!("  the slowest faulted call took {took:.1?}: {what}");
    }
    for v in tally.violations.iter().take(40) {
        eprintln!("  VIOLATION {v}");
    }
}

impl Tally {
    fn add(&mut self, other: Tally) {
        for (f, n) in other.runs {
            *self.runs.entry(f).or_default() += n;
        }
        for (c, n) in other.codes {
            *self.codes.entry(c).or_default() += n;
        }
        self.violations.extend(other.violations);
        self.omissions.extend(other.omissions);
        self.parents_left += other.parents_left;
        if let Some((d, what)) = other.slowest
            && self.slowest.as_ref().is_none_or(|(mine, _)| d > *mine)
        {
            self.slowest = Some((d, what));
        }
    }
}

/// The modes a store sweeps in: every scenario with the policy, the
/// changes without it, and the searches through the native path where
/// there is one.
fn modes(native_search: bool) -> Vec<Mode> {
    let mut modes = vec![
        Mode::PLAIN,
        Mode {
            policy: false,
            ..Mode::PLAIN
        },
    ];
    if native_search {
        modes.push(Mode {
            native_search: true,
            ..Mode::PLAIN
        });
    }
    modes
}

/// Every sweep of one store, reported.
fn sweeps<B: Backend>(native_search: bool, sweep: fn(Mode) -> Tally) -> Tally {
    let started = Instant::now();
    let mut tally = Tally::default();
    for mode in modes(native_search) {
        tally.add(sweep(mode));
    }
    report(B::NAME, &tally);
    eprintln!(
        "  ({:.1?}{})",
        started.elapsed(),
        if B::SAMPLED && !full() {
            ", a subset of k: DSH_FS_FAULTS_FULL=1 runs every k"
        } else {
            ""
        }
    );
    tally
}

/// The sweeps that talk to moto, one at a time: moto serves one request at
/// a time anyway, and the calls of the HTTP sweep's short-deadline sessions
/// must not wait behind another sweep's requests.
fn one_bucket_sweep_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static TURN: Mutex<()> = Mutex::new(());
    TURN.lock().unwrap_or_else(|p| p.into_inner())
}

#[test]
fn faults_at_every_call_of_the_memory_store() {
    let tally = sweeps::<Memory>(false, sweep::<Memory>);
    assert!(
        tally.violations.is_empty(),
        "{} violations",
        tally.violations.len()
    );
}

#[test]
fn faults_at_every_call_of_the_local_store() {
    let tally = sweeps::<Local>(true, sweep::<Local>);
    assert!(
        tally.violations.is_empty(),
        "{} violations",
        tally.violations.len()
    );
}

#[test]
fn faults_at_every_call_of_the_object_store() {
    let _turn = one_bucket_sweep_at_a_time();
    let tally = sweeps::<Bucket>(false, sweep::<Bucket>);
    assert!(
        tally.violations.is_empty(),
        "{} violations",
        tally.violations.len()
    );
}

#[test]
fn faults_at_every_http_request_of_the_object_store() {
    let _turn = one_bucket_sweep_at_a_time();
    let tally = sweeps::<Proxied>(false, http_sweep);
    assert!(
        tally.violations.is_empty(),
        "{} violations",
        tally.violations.len()
    );
}

/// A conditional PUT that S3 carried out is a change that landed, whatever
/// its sender heard: a connection broken before the answer (reported as
/// `io-error`), or a 500 that `object_store` answered by sending the PUT
/// again, which its own `If-Match` then refused (reported as
/// `stale-version`). Both now answer success, and the file is the new one.
#[test]
fn a_put_that_landed_is_a_success_whatever_its_sender_heard() {
    let _turn = one_bucket_sweep_at_a_time();
    let proxy = proxy::Proxy::shared();
    let sc = scenarios()
        .into_iter()
        .find(|sc| sc.name == "in-memory edit")
        .unwrap();
    let mut clean = Setup::<Proxied>::new(&sc, Mode::PLAIN, runtime());
    proxy.arm(None, None);
    clean.run(&sc, None);
    let sent = proxy.disarm().requests;
    let put = 1 + sent.iter().position(|r| r.starts_with("PUT ")).unwrap();
    for fault in [HttpFault::ResetAfter, HttpFault::Internal500After] {
        let mut s = Setup::<Proxied>::new(&sc, Mode::PLAIN, runtime());
        proxy.arm(Some((fault, put)), None);
        let (result, _) = s.run(&sc, None);
        let seen = proxy.disarm();
        assert!(
            seen.fired.as_ref().is_some_and(|r| r.starts_with("PUT ")),
            "{fault:?}: {seen:?}"
        );
        assert!(!result.is_error, "{fault:?}: {}", result.text);
        assert_eq!(
            Proxied::bytes(s.store(), &s.ctx, sc.path),
            sc.new,
            "{fault:?}"
        );
    }
}

//! [`ObjectStoreProvider`]: the provider contract over an object store (S3 and
//! S3-compatible servers such as MinIO, or any [`ObjectStore`]), where every
//! guarded mutation is a compare-and-swap on the object's ETag.
//!
//! Keys live under one prefix of one bucket; `/`-separated keys stand for
//! directories. The provider is synchronous, like the trait: it owns a small
//! tokio runtime and blocks on it for each request.

mod list;

use super::{
    Provider, Target, TextStream, check_write_intent, display, normalize, splice_checked, vanished,
    version,
};
use ::object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
use ::object_store::path::Path as ObjectPath;
use ::object_store::{
    BackoffConfig, GetOptions, GetRange, ObjectMeta, ObjectStore, ObjectStoreExt, PutMode,
    PutOptions, PutPayload, PutResult, RetryConfig, UpdateVersion,
};
use anyhow::{Context, bail};
use bytes::Bytes;
use dsh_fs_core::seam::StreamText;
use dsh_fs_core::text::{ContentHasher, content_hash};
use dsh_fs_core::{
    EditOutcome, EditRequest, EntryKind, ErrorCode, FsError, FsInfo, TextContent, Version,
    WriteIntent, WriteOperation, WriteOutcome, text,
};
use futures_util::StreamExt;
use futures_util::future::try_join_all;
use std::fmt;
use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use super::s3_error::readable;

type StoreError = ::object_store::Error;

/// Bytes fetched per ranged GET while streaming or hashing a large object:
/// the bound on what a stream holds in memory.
const RANGE_BYTES: u64 = 8 << 20;

/// How many times a guarded write or edit re-reads the object after losing a
/// compare-and-swap before it reports `stale-version`.
const CAS_ATTEMPTS: usize = 5;

/// Where and how to reach an S3-compatible store. Fields left `None` come
/// from the usual AWS environment variables (`AWS_ENDPOINT_URL` or
/// `AWS_ENDPOINT`, `AWS_REGION` or `AWS_DEFAULT_REGION`), as do the
/// credentials (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`,
/// `AWS_SESSION_TOKEN`, or the instance and container credential sources).
#[derive(Clone, Debug, Default)]
pub struct S3Options {
    /// The endpoint URL, e.g. `http://127.0.0.1:9000` for MinIO; plain
    /// `http://` is allowed when the endpoint says so. Requests use path-style
    /// addressing (`ENDPOINT/BUCKET/KEY`).
    pub endpoint: Option<String>,
    /// The region the bucket lives in (default `us-east-1`).
    pub region: Option<String>,
}

/// A workspace that is one prefix of an object store.
///
/// | local disk ([`LocalProvider`](super::LocalProvider)) | here |
/// |---|---|
/// | the root directory | the prefix (`s3://BUCKET/PREFIX`); absolute paths live under `/workspace` |
/// | a regular file | an object |
/// | a directory | a key that is a prefix of other objects (`d` when `d/x` exists) |
/// | metadata token: inode, size, mtime, ctime | the ETag (and object version when the bucket keeps versions) |
/// | `flock` + rename | conditional PUT: `If-None-Match: *` to create, `If-Match: ETAG` to replace |
///
/// Versions carry the xxh3 content hash as everywhere else, so a rewrite with
/// identical bytes is not a conflict. Parent "directories" need not exist:
/// writing `a/b/c.txt` creates no marker objects.
///
/// Every operation blocks the calling thread on the provider's own runtime:
/// from async code, call it (or [`Session::execute`](crate::Session::execute))
/// inside `tokio::task::spawn_blocking`, as `dsh-fs mcp` does.
pub struct ObjectStoreProvider {
    shared: Arc<Shared>,
    prefix: ObjectPath,
    roots: Vec<PathBuf>,
}

impl fmt::Debug for ObjectStoreProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ObjectStoreProvider")
            .field("store", &format_args!("{}", self.shared.store))
            .field("prefix", &self.prefix.as_ref())
            .field("roots", &self.roots)
            .finish()
    }
}

/// What the provider and its streams share.
struct Shared {
    store: Arc<dyn ObjectStore>,
    runtime: Blocking,
}

/// The provider's own tokio runtime. Dropping it never blocks, so a provider
/// may be dropped anywhere, including inside another runtime's task.
struct Blocking(Option<tokio::runtime::Runtime>);

impl Blocking {
    fn new() -> std::io::Result<Self> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("dsh-fs-store")
            .enable_all()
            .build()?;
        Ok(Blocking(Some(runtime)))
    }

    /// Runs `future` to completion from synchronous code. Must not be called
    /// from an async task (a `spawn_blocking` thread is fine).
    fn on<F: Future>(&self, future: F) -> F::Output {
        self.0
            .as_ref()
            .expect("the runtime lives as long as the provider")
            .block_on(future)
    }
}

impl Drop for Blocking {
    fn drop(&mut self) {
        if let Some(runtime) = self.0.take() {
            runtime.shutdown_background();
        }
    }
}

impl ObjectStoreProvider {
    /// Serves the objects of `store` under `prefix` (`""` for the whole
    /// store). The store must support conditional puts ([`PutMode::Create`]
    /// and [`PutMode::Update`]) for guarded writes and edits: S3, MinIO, GCS,
    /// Azure and `object_store`'s in-memory store do; a store that does not
    /// fails those calls with `io-error`, never overwriting blindly.
    pub fn new(store: Arc<dyn ObjectStore>, prefix: &str) -> anyhow::Result<Self> {
        let prefix = ObjectPath::parse(prefix.trim_matches('/'))
            .with_context(|| format!("invalid key prefix {prefix:?}"))?;
        Ok(ObjectStoreProvider {
            shared: Arc::new(Shared {
                store,
                runtime: Blocking::new().context("starting the object store runtime")?,
            }),
            prefix,
            roots: vec![PathBuf::from("/workspace")],
        })
    }

    /// Opens `s3://BUCKET/PREFIX` (or `s3a://`) with `options`, the rest of
    /// the configuration coming from the AWS environment variables. Nothing is
    /// requested until the first operation, so a wrong endpoint or credential
    /// shows up as that operation's error.
    pub fn from_url(url: &str, options: &S3Options) -> anyhow::Result<Self> {
        let Some((scheme, rest)) = url.split_once("://") else {
            bail!("{url:?} is not a store URL; expected s3://BUCKET/PREFIX");
        };
        if !matches!(scheme, "s3" | "s3a") {
            bail!("unsupported store scheme {scheme}://; expected s3://BUCKET/PREFIX");
        }
        let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        if bucket.is_empty() {
            bail!("{url:?} names no bucket; expected s3://BUCKET/PREFIX");
        }
        let mut builder = AmazonS3Builder::from_env()
            .with_bucket_name(bucket)
            .with_retry(RetryConfig {
                backoff: BackoffConfig::default(),
                max_retries: 3,
                retry_timeout: Duration::from_secs(15),
            });
        if let Some(endpoint) = &options.endpoint {
            builder = builder.with_endpoint(endpoint);
        }
        if let Some(region) = &options.region {
            builder = builder.with_region(region);
        }
        let endpoint = builder.get_config_value(&AmazonS3ConfigKey::Endpoint);
        if endpoint.is_some_and(|e| e.starts_with("http://")) {
            builder = builder.with_allow_http(true);
        }
        let store = builder
            .build()
            .with_context(|| format!("configuring the S3 client for {url}"))?;
        Self::new(Arc::new(store), prefix)
    }

    /// Accepts absolute model paths under `root` instead of `/workspace`.
    pub fn with_root(mut self, root: impl Into<PathBuf>) -> Self {
        self.roots = vec![root.into()];
        self
    }

    /// The object key of a root-relative key (the prefix itself for `""`).
    fn location(&self, key: &str, shown: &str) -> Result<ObjectPath, FsError> {
        let prefix = self.prefix.as_ref();
        let full = if key.is_empty() || prefix.is_empty() {
            format!("{prefix}{key}")
        } else {
            format!("{prefix}/{key}")
        };
        ObjectPath::parse(&full).map_err(|e| {
            FsError::new(
                ErrorCode::InvalidInput,
                format!("{shown} is not a valid object key: {e}"),
            )
        })
    }

    fn on<F: Future>(&self, future: F) -> F::Output {
        self.shared.runtime.on(future)
    }

    fn store_ref(&self) -> &dyn ObjectStore {
        self.shared.store.as_ref()
    }

    /// Whether `loc` is a directory: some object lies under `loc/`.
    async fn is_dir(&self, loc: &ObjectPath, shown: &str) -> Result<bool, FsError> {
        let mut listing = self.store_ref().list(Some(loc));
        match listing.next().await {
            None => Ok(false),
            Some(Ok(_)) => Ok(true),
            Some(Err(e)) => Err(map_store(e, shown)),
        }
    }

    /// `not-directory` when a proper ancestor of `key` is an object.
    async fn check_parents(&self, key: &str, shown: &str) -> Result<(), FsError> {
        let ancestors: Vec<ObjectPath> = key
            .match_indices('/')
            .map(|(i, _)| self.location(&key[..i], shown))
            .collect::<Result<_, _>>()?;
        let heads = ancestors.iter().map(|loc| async move {
            match self.store_ref().head(loc).await {
                Ok(_) => Err(FsError::new(
                    ErrorCode::NotDirectory,
                    format!("a parent of {shown} is not a directory"),
                )),
                Err(StoreError::NotFound { .. }) => Ok(()),
                Err(e) => Err(map_store(e, shown)),
            }
        });
        try_join_all(heads).await.map(drop)
    }

    /// Why there is no object at `key`: `not-regular-file` for a directory,
    /// `not-directory` under an object, else `Ok` (it is simply absent).
    async fn explain_missing(
        &self,
        key: &str,
        loc: &ObjectPath,
        shown: &str,
    ) -> Result<(), FsError> {
        let (is_dir, ()) =
            tokio::try_join!(self.is_dir(loc, shown), self.check_parents(key, shown))?;
        if is_dir {
            return Err(is_a_directory(shown));
        }
        Ok(())
    }

    /// The whole object, or `None` when it is absent; `too-large` beyond
    /// `max_bytes` without reading the body.
    async fn load(
        &self,
        target: &Target,
        loc: &ObjectPath,
        max_bytes: u64,
    ) -> Result<Option<(Bytes, ObjectMeta)>, FsError> {
        let shown = target.display_path();
        if target.key().is_empty() {
            return Err(root_is_a_directory(shown));
        }
        let got = match self.store_ref().get_opts(loc, GetOptions::default()).await {
            Ok(got) => got,
            Err(StoreError::NotFound { .. }) => {
                self.explain_missing(target.key(), loc, shown).await?;
                return Ok(None);
            }
            Err(e) => return Err(map_store(e, shown)),
        };
        if got.meta.size > max_bytes {
            return Err(too_large(shown, got.meta.size, max_bytes));
        }
        let meta = got.meta.clone();
        let bytes = got.bytes().await.map_err(|e| map_store(e, shown))?;
        Ok(Some((bytes, meta)))
    }

    /// The current object's metadata and content hash, or `None` when it is
    /// absent; hashed with ranged GETs pinned to one ETag when large. `Err`
    /// of `stale-version` when it changed while being hashed.
    async fn current_hash(
        &self,
        target: &Target,
        loc: &ObjectPath,
    ) -> Result<Option<(ObjectMeta, u128)>, FsError> {
        let shown = target.display_path();
        if target.key().is_empty() {
            return Err(root_is_a_directory(shown));
        }
        let got = match self.store_ref().get_opts(loc, GetOptions::default()).await {
            Ok(got) => got,
            Err(StoreError::NotFound { .. }) => {
                self.explain_missing(target.key(), loc, shown).await?;
                return Ok(None);
            }
            Err(e) => return Err(map_store(e, shown)),
        };
        let meta = got.meta.clone();
        if meta.size <= RANGE_BYTES {
            let bytes = got.bytes().await.map_err(|e| map_store(e, shown))?;
            return Ok(Some((meta, content_hash(&bytes))));
        }
        drop(got);
        let mut ranges = Ranges::new(self.shared.clone(), loc.clone(), &meta);
        let mut hasher = ContentHasher::new();
        while let Some(bytes) = ranges.next(shown).await? {
            hasher.update(&bytes);
        }
        Ok(Some((meta, hasher.finish())))
    }

    /// PUTs `bytes` under `mode`; the store's answer untouched.
    async fn put(
        &self,
        loc: &ObjectPath,
        bytes: impl Into<PutPayload>,
        mode: PutMode,
    ) -> Result<PutResult, StoreError> {
        self.store_ref()
            .put_opts(loc, bytes.into(), PutOptions::from(mode))
            .await
    }

    async fn write(
        &self,
        target: &Target,
        loc: &ObjectPath,
        content: &str,
        intent: Option<WriteIntent>,
    ) -> Result<WriteOutcome, FsError> {
        let shown = target.display_path();
        if target.key().is_empty() {
            return Err(root_is_a_directory(shown));
        }
        let hash = content_hash(content.as_bytes());
        let payload = Bytes::copy_from_slice(content.as_bytes());
        if let Some(WriteIntent::ReplaceIfVersion(_)) = &intent {
            for _ in 0..CAS_ATTEMPTS {
                let Some((meta, current)) = self.current_hash(target, loc).await? else {
                    return Err(vanished(shown));
                };
                let token = meta_token_of(&meta);
                check_write_intent(shown, intent.as_ref(), Some((token.as_str(), current)))?;
                crate::deadline::check(shown)?;
                match self
                    .put(loc, payload.clone(), update_of(&meta, shown)?)
                    .await
                {
                    Ok(put) => return Ok(written(WriteOperation::Updated, &put, hash)),
                    Err(StoreError::Precondition { .. }) => continue,
                    Err(e) => return Err(map_put(e, shown)),
                }
            }
            return Err(FsError::stale(shown));
        }
        let exists = match self.store_ref().head(loc).await {
            Ok(_) => true,
            Err(StoreError::NotFound { .. }) => {
                self.explain_missing(target.key(), loc, shown).await?;
                false
            }
            Err(e) => return Err(map_store(e, shown)),
        };
        crate::deadline::check(shown)?;
        if !exists {
            match self.put(loc, payload.clone(), PutMode::Create).await {
                Ok(put) => return Ok(written(WriteOperation::Created, &put, hash)),
                Err(StoreError::AlreadyExists { .. }) => {}
                Err(e) => return Err(map_put(e, shown)),
            }
        }
        if intent.is_some() {
            return Err(not_observed(shown));
        }
        let put = self
            .put(loc, payload, PutMode::Overwrite)
            .await
            .map_err(|e| map_put(e, shown))?;
        Ok(written(WriteOperation::Updated, &put, hash))
    }

    async fn edit(
        &self,
        target: &Target,
        loc: &ObjectPath,
        edit: &EditRequest,
        expected: Option<&str>,
    ) -> Result<EditOutcome, FsError> {
        let shown = target.display_path();
        for _ in 0..CAS_ATTEMPTS {
            // Edits are spliced in memory: bounded like every in-memory result.
            let limit = dsh_fs_core::MAX_IN_MEMORY_BYTES;
            let Some((bytes, meta)) = self.load(target, loc, limit).await? else {
                return Err(vanished(shown));
            };
            let spliced = splice_checked(shown, &bytes, &meta_token_of(&meta), edit, expected)?;
            drop(bytes);
            let hash = content_hash(&spliced.bytes);
            crate::deadline::check(shown)?;
            match self.put(loc, spliced.bytes, update_of(&meta, shown)?).await {
                Ok(put) => {
                    return Ok(EditOutcome {
                        replacements: spliced.replacements,
                        version: version(
                            &meta_token(put.e_tag.as_deref(), put.version.as_deref()),
                            hash,
                        ),
                        first_line: spliced.first_line,
                    });
                }
                Err(StoreError::Precondition { .. }) => continue,
                Err(e) => return Err(map_put(e, shown)),
            }
        }
        Err(FsError::stale(shown))
    }
}

impl Provider for ObjectStoreProvider {
    /// Like [`LocalProvider`](super::LocalProvider)'s, purely lexically: there
    /// are no symlinks. Relative paths are relative to the prefix, absolute
    /// ones must lie under the virtual root (`/workspace` unless
    /// [`ObjectStoreProvider::with_root`] says otherwise), `..` may not leave
    /// it, and a path that is no valid object key (a control character) is
    /// `invalid-input`.
    fn resolve(&self, path: &str) -> Result<Target, FsError> {
        let key = normalize(path, &self.roots)?;
        self.location(&key, path)?;
        Ok(Target::new(display(&key), key))
    }

    /// Like the local `stat`: a HEAD of the object, then a one-key listing to
    /// tell a directory from an absent key. The version is the ETag (and
    /// object version) only; the size is the object's.
    fn stat(&self, target: &Target) -> Result<Option<FsInfo>, FsError> {
        let shown = target.display_path();
        if target.key().is_empty() {
            return Ok(Some(directory_info()));
        }
        let loc = self.location(target.key(), shown)?;
        self.on(async {
            match self.store_ref().head(&loc).await {
                Ok(meta) => Ok(Some(FsInfo {
                    version: meta_token_of(&meta),
                    kind: EntryKind::File,
                    size: Some(meta.size),
                })),
                Err(StoreError::NotFound { .. }) => {
                    Ok(self.is_dir(&loc, shown).await?.then(directory_info))
                }
                Err(e) => Err(map_store(e, shown)),
            }
        })
    }

    /// Like the local `read_text`, in one GET: the size in its headers decides
    /// `too-large` before any of the body is read.
    fn read_text(&self, target: &Target, max_bytes: u64) -> Result<TextContent, FsError> {
        let shown = target.display_path();
        let loc = self.location(target.key(), shown)?;
        let (bytes, meta) = self
            .on(self.load(target, &loc, max_bytes))?
            .ok_or_else(|| FsError::not_found(shown))?;
        let text = text::decode(&bytes).map_err(|e| FsError::not_text(shown, &e.to_string()))?;
        Ok(TextContent {
            text: text.to_owned(),
            version: version(&meta_token_of(&meta), content_hash(&bytes)),
        })
    }

    /// Like the local `stream_text`: a HEAD, then ranged GETs of at most
    /// 8 MiB, each pinned to the ETag seen first (`If-Match`), so every chunk
    /// comes from one object version; a replacement mid-stream is
    /// `stale-version`.
    fn stream_text(&self, target: &Target, start: u64) -> Result<super::BoxStream, FsError> {
        let shown = target.display_path();
        if target.key().is_empty() {
            return Err(root_is_a_directory(shown));
        }
        let loc = self.location(target.key(), shown)?;
        let meta = self.on(async {
            match self.store_ref().head(&loc).await {
                Ok(meta) => Ok(meta),
                Err(StoreError::NotFound { .. }) => {
                    self.explain_missing(target.key(), &loc, shown).await?;
                    Err(FsError::not_found(shown))
                }
                Err(e) => Err(map_store(e, shown)),
            }
        })?;
        let mut ranges = Ranges::new(self.shared.clone(), loc, &meta);
        if start > 0 {
            // The text offset is past any BOM: look at the first bytes (of
            // the same ETag), then start the ranges there.
            let mut head = Ranges::new(self.shared.clone(), ranges.loc.clone(), &meta);
            head.size = head.size.min(3);
            let first = self.on(head.next(shown))?.unwrap_or_default();
            ranges.at = (dsh_fs_core::text::bom_len(&first) as u64 + start).min(meta.size);
        }
        Ok(Box::new(ObjectStream {
            text: StreamText::new(meta_token_of(&meta), shown, start),
            ranges,
            buf: Bytes::new(),
        }))
    }

    /// Like the local `write_text`, with a conditional PUT in place of the
    /// lock and rename (an object store replaces objects atomically):
    /// no intent → create (`If-None-Match: *`) or else overwrite;
    /// `create-if-absent` → create, an existing object is `not-observed`;
    /// `replace-if-version` → GET and hash the object, then PUT with
    /// `If-Match` on the ETag just read, re-checking from the GET when another
    /// writer got in between. No marker objects are made for parents.
    fn write_text(
        &self,
        target: &Target,
        content: &str,
        intent: Option<WriteIntent>,
    ) -> Result<WriteOutcome, FsError> {
        let loc = self.location(target.key(), target.display_path())?;
        self.on(self.write(target, &loc, content, intent))
    }

    /// Like the local `edit_text`, with compare-and-swap in place of the
    /// lock: GET (a missing object is `stale-version`), the version check
    /// against `expected` (before matching), the splice, and a PUT with
    /// `If-Match` on the ETag the GET returned. When another writer got in
    /// between, the edit starts over from a new GET, where an `expected`
    /// version no longer matches and the edit is `stale-version`; an edit
    /// never overwrites a change it did not see.
    fn edit_text(
        &self,
        target: &Target,
        edit: &EditRequest,
        expected: Option<&str>,
    ) -> Result<EditOutcome, FsError> {
        let loc = self.location(target.key(), target.display_path())?;
        self.on(self.edit(target, &loc, edit, expected))
    }

    /// Like the local `list_dir`, by one list-with-delimiter under the key:
    /// objects are files, common prefixes directories.
    fn list_dir(&self, target: &Target) -> Result<super::BoxListing, FsError> {
        let listing = self.on(self.list(target.key(), target.display_path()))?;
        Ok(Box::new(listing))
    }
}

/// Successive ranged GETs over one object version.
struct Ranges {
    shared: Arc<Shared>,
    loc: ObjectPath,
    e_tag: Option<String>,
    size: u64,
    at: u64,
}

impl Ranges {
    fn new(shared: Arc<Shared>, loc: ObjectPath, meta: &ObjectMeta) -> Self {
        Ranges {
            shared,
            loc,
            e_tag: meta.e_tag.clone(),
            size: meta.size,
            at: 0,
        }
    }

    /// The next range, `None` past the end.
    async fn next(&mut self, shown: &str) -> Result<Option<Bytes>, FsError> {
        if self.at >= self.size {
            return Ok(None);
        }
        let end = self.size.min(self.at + RANGE_BYTES);
        let options = GetOptions::default()
            .with_if_match(self.e_tag.clone())
            .with_range(Some(GetRange::Bounded(self.at..end)));
        let got = async {
            let got = self.shared.store.get_opts(&self.loc, options).await?;
            got.bytes().await
        };
        let bytes = match got.await {
            Ok(bytes) => bytes,
            Err(StoreError::Precondition { .. }) => return Err(changed_while_read(shown)),
            Err(StoreError::NotFound { .. }) => return Err(vanished(shown)),
            Err(e) => return Err(map_store(e, shown)),
        };
        if bytes.len() as u64 != end - self.at {
            return Err(changed_while_read(shown));
        }
        self.at = end;
        Ok(Some(bytes))
    }
}

/// Streams one object version through bounded ranged GETs.
struct ObjectStream {
    ranges: Ranges,
    /// The part of the last range not handed out yet.
    buf: Bytes,
    text: StreamText,
}

impl TextStream for ObjectStream {
    fn next_chunk(&mut self, max_bytes: u32) -> Result<Option<String>, FsError> {
        if self.text.ended() {
            return Ok(None);
        }
        let want = self.text.want(max_bytes);
        loop {
            if self.buf.is_empty() {
                let shared = self.ranges.shared.clone();
                match shared.runtime.on(self.ranges.next(self.text.shown()))? {
                    Some(bytes) => self.buf = bytes,
                    None => {
                        let carried = self.text.buffer(0);
                        self.text.end(carried)?;
                        return Ok(None);
                    }
                }
            }
            let piece = self.buf.split_to(want.min(self.buf.len()));
            let mut buf = self.text.buffer(piece.len());
            let from = buf.len();
            buf.extend_from_slice(&piece);
            let text = self.text.feed(buf, from)?;
            if !text.is_empty() {
                return Ok(Some(text));
            }
        }
    }

    fn version(&self) -> Option<Version> {
        self.text.version()
    }
}

/// The metadata part of a version: the ETag, and the object version when
/// the store keeps versions. `:` and `%` are escaped, so the token never
/// looks like it carries a content hash.
fn meta_token(e_tag: Option<&str>, object_version: Option<&str>) -> String {
    let escape = |s: &str| s.replace('%', "%25").replace(':', "%3A");
    let mut token = format!("e{}", escape(e_tag.unwrap_or("").trim_matches('"')));
    if let Some(v) = object_version {
        token.push_str(".v");
        token.push_str(&escape(v));
    }
    token
}

fn meta_token_of(meta: &ObjectMeta) -> String {
    meta_token(meta.e_tag.as_deref(), meta.version.as_deref())
}

fn directory_info() -> FsInfo {
    FsInfo {
        version: "dir".into(),
        kind: EntryKind::Directory,
        size: None,
    }
}

fn written(operation: WriteOperation, put: &PutResult, hash: u128) -> WriteOutcome {
    WriteOutcome {
        operation,
        version: version(
            &meta_token(put.e_tag.as_deref(), put.version.as_deref()),
            hash,
        ),
    }
}

/// The conditional-update mode for replacing exactly the object `meta` describes.
fn update_of(meta: &ObjectMeta, shown: &str) -> Result<PutMode, FsError> {
    if meta.e_tag.is_none() && meta.version.is_none() {
        return Err(FsError::new(
            ErrorCode::IoError,
            format!("the store gave no ETag for {shown}, so it cannot be replaced safely"),
        ));
    }
    Ok(PutMode::Update(UpdateVersion {
        e_tag: meta.e_tag.clone(),
        version: meta.version.clone(),
    }))
}

#[cold]
fn is_a_directory(shown: &str) -> FsError {
    FsError::new(
        ErrorCode::NotRegularFile,
        format!("{shown} is a directory (other objects lie under it)"),
    )
}

#[cold]
fn root_is_a_directory(shown: &str) -> FsError {
    FsError::new(
        ErrorCode::NotRegularFile,
        format!("{shown} is the workspace root, a directory"),
    )
}

#[cold]
fn too_large(shown: &str, size: u64, max_bytes: u64) -> FsError {
    FsError::new(
        ErrorCode::TooLarge,
        format!("{shown} has {size} bytes, more than the {max_bytes} this call reads"),
    )
}

#[cold]
fn not_observed(shown: &str) -> FsError {
    FsError::new(
        ErrorCode::NotObserved,
        format!("{shown} already exists and has not been read in this session"),
    )
}

#[cold]
fn changed_while_read(shown: &str) -> FsError {
    FsError::new(
        ErrorCode::StaleVersion,
        format!("{shown} was replaced while it was being read"),
    )
}

/// [`map_store`] for a PUT, where a store without conditional puts must say
/// so rather than pass for an I/O hiccup.
fn map_put(e: StoreError, shown: &str) -> FsError {
    match e {
        StoreError::NotImplemented { .. } | StoreError::NotSupported { .. } => FsError::new(
            ErrorCode::IoError,
            format!(
                "the store cannot write {shown} conditionally, so it is not written: {}",
                readable(&e)
            ),
        ),
        e => map_store(e, shown),
    }
}

/// Maps a store error to the seam's codes.
fn map_store(e: StoreError, shown: &str) -> FsError {
    match e {
        StoreError::NotFound { .. } => FsError::not_found(shown),
        StoreError::Precondition { .. } => FsError::stale(shown),
        StoreError::AlreadyExists { .. } => not_observed(shown),
        StoreError::PermissionDenied { .. } => FsError::new(
            ErrorCode::PermissionDenied,
            format!("the store denied access to {shown}: {}", readable(&e)),
        ),
        StoreError::Unauthenticated { .. } => FsError::new(
            ErrorCode::PermissionDenied,
            format!(
                "the store refused the credentials for {shown}: {}",
                readable(&e)
            ),
        ),
        StoreError::InvalidPath { .. } => FsError::new(
            ErrorCode::InvalidInput,
            format!("{shown} is not a valid object key: {}", readable(&e)),
        ),
        e => FsError::new(ErrorCode::IoError, format!("{shown}: {}", readable(&e))),
    }
}

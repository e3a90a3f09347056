//! [`BucketStore`]: a byte store over an object store (S3 and S3-compatible
//! servers such as MinIO, or any [`ObjectStore`]), where the one atomic step
//! of a replacement is a conditional PUT (or multipart completion) on the
//! object's ETag. [`ObjectStoreProvider`] is the text layer over it.
//!
//! Keys live under one prefix of one bucket; `/`-separated keys stand for
//! directories. The store is synchronous, like the seam: it owns a small
//! tokio runtime and blocks on it for each request.

mod list;
mod object;
mod replace;
mod s3_error;
mod signed;

use self::object::BucketObject;
use self::replace::BucketReplace;
use self::s3_error::map_store;
use ::object_store::aws::{AmazonS3, AmazonS3Builder, AmazonS3ConfigKey};
use ::object_store::path::Path as ObjectPath;
use ::object_store::{BackoffConfig, ObjectStore, ObjectStoreExt, RetryConfig};
use anyhow::{Context, bail};
use dsh_fs_core::deadline;
use dsh_fs_core::layer::{TextLayer, directory_meta};
use dsh_fs_core::listing::Entries;
use dsh_fs_core::store::{ByteStore, Deadline, ObjectMeta, Target};
use dsh_fs_core::{EntryKind, ErrorCode, FsError};
use futures_util::StreamExt;
use futures_util::future::try_join_all;
use std::fmt;
use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

type StoreError = ::object_store::Error;

/// A workspace that is one prefix of an object store: the provider contract
/// of [`TextLayer`] over a [`BucketStore`].
///
/// | local disk ([`LocalProvider`](super::LocalProvider)) | here |
/// |---|---|
/// | the root directory | the prefix (`s3://BUCKET/PREFIX`); absolute paths live under `/workspace` |
/// | a regular file | an object |
/// | a directory | a key that is a prefix of other objects (`d` when `d/x` exists) |
/// | metadata token: inode, size, mtime, ctime | the ETag (and object version when the bucket keeps versions) |
/// | `flock` + rename | conditional PUT: `If-None-Match: *` to create, `If-Match: ETAG` to replace |
///
/// Every operation blocks the calling thread on the store's own runtime:
/// from async code, call it (or [`Session::execute`](crate::Session::execute))
/// inside `tokio::task::spawn_blocking`, as `dsh-fs mcp` does.
pub type ObjectStoreProvider = TextLayer<BucketStore, Deadline>;

/// Installs ring as this process's rustls crypto provider, unless one is
/// installed already: the HTTP client of S3 requests (reqwest over rustls)
/// uses it for TLS. [`BucketStore::from_url`] calls it; call it before
/// building an `AmazonS3` of your own for [`BucketStore::s3`] (without a
/// provider, building the client panics).
pub fn install_crypto() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

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

/// The objects under one prefix of an object store, as a byte store.
///
/// Parent "directories" need not exist: writing `a/b/c.txt` creates no
/// marker objects. Reads are ranged GETs pinned to the ETag the object was
/// opened with; a replacement is one conditional PUT, or for content larger
/// than one part a multipart upload completed conditionally (and aborted
/// when it is not completed).
pub struct BucketStore {
    shared: Arc<Shared>,
    prefix: ObjectPath,
    roots: Vec<PathBuf>,
}

impl fmt::Debug for BucketStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BucketStore")
            .field("store", &format_args!("{}", self.shared.store))
            .field("prefix", &self.prefix.as_ref())
            .field("roots", &self.roots)
            .finish()
    }
}

/// What the store and its open objects share.
struct Shared {
    store: Arc<dyn ObjectStore>,
    /// The same store as an S3 client, for the requests the generic trait
    /// has no words for (a conditional multipart completion).
    s3: Option<Arc<AmazonS3>>,
    /// The bucket's name, for server-side copies (`None`: not S3).
    bucket: Option<String>,
    runtime: Blocking,
}

impl Shared {
    fn on<F: Future>(&self, future: F) -> F::Output {
        self.runtime.on(future)
    }

    /// Runs a request that changes nothing, giving up at the call's
    /// deadline ([`deadline::remaining`]) with `aborted`: a server that
    /// hangs holds the call no longer than its time. (A commit is waited
    /// for: whether it landed must be known.)
    fn read<T>(
        &self,
        shown: &str,
        future: impl Future<Output = Result<T, FsError>>,
    ) -> Result<T, FsError> {
        match deadline::remaining() {
            None => self.on(future),
            // Refused before it is sent: tokio's timer fires up to a
            // millisecond late and polls the request first, so a deadline
            // already past would let a quick answer through, or not.
            Some(left) if left.is_zero() => Err(deadline::expired(shown)),
            Some(left) => self
                .on(async { tokio::time::timeout(left, future).await })
                .unwrap_or_else(|_| Err(deadline::expired(shown))),
        }
    }
}

/// The store's own tokio runtime. Dropping it never blocks, so a store may
/// be dropped anywhere, including inside another runtime's task.
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
            .expect("the runtime lives as long as the store")
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

impl BucketStore {
    /// Serves the objects of `store` under `prefix` (`""` for the whole
    /// store). The store must support conditional puts for guarded writes
    /// and edits: S3, MinIO, GCS, Azure and `object_store`'s in-memory store
    /// do; a store that does not fails those calls with `io-error`, never
    /// overwriting blindly. Content larger than one part is uploaded in parts
    /// only through [`BucketStore::s3`]; here it is sent in one PUT.
    pub fn new(store: Arc<dyn ObjectStore>, prefix: &str) -> anyhow::Result<Self> {
        Self::build(store, None, prefix)
    }

    /// Serves the objects of an S3 bucket under `prefix`, uploading large
    /// replacements in parts (with a conditional completion). A client built
    /// by the caller needs a rustls provider installed first:
    /// [`install_crypto`] before `AmazonS3Builder::build`.
    pub fn s3(store: AmazonS3, prefix: &str) -> anyhow::Result<Self> {
        let s3 = Arc::new(store);
        Self::build(s3.clone(), Some(s3), prefix)
    }

    fn build(
        store: Arc<dyn ObjectStore>,
        s3: Option<Arc<AmazonS3>>,
        prefix: &str,
    ) -> anyhow::Result<Self> {
        let prefix = ObjectPath::parse(prefix.trim_matches('/'))
            .with_context(|| format!("invalid key prefix {prefix:?}"))?;
        // `AmazonS3` names its bucket only in its `Display`.
        let bucket = s3.as_ref().and_then(|s3| {
            let shown = s3.to_string();
            let name = shown.strip_prefix("AmazonS3(")?.strip_suffix(')')?;
            Some(name.to_owned())
        });
        Ok(BucketStore {
            shared: Arc::new(Shared {
                store,
                s3,
                bucket,
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
        install_crypto();
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
        Self::s3(store, prefix)
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

    /// The object at the target, `None` when it is absent (after ruling
    /// out a directory or a parent that is an object).
    fn head(&self, target: &Target) -> Result<Option<BucketObject>, FsError> {
        let (shown, key) = (target.display_path(), target.key());
        if key.is_empty() {
            return Err(root_is_a_directory(shown));
        }
        let loc = self.location(key, shown)?;
        self.shared
            .read(shown, async {
                match self.store_ref().head(&loc).await {
                    Ok(meta) => Ok(Some(meta)),
                    Err(StoreError::NotFound { .. }) => {
                        self.explain_missing(key, &loc, shown).await?;
                        Ok(None)
                    }
                    Err(e) => Err(map_store(e, shown)),
                }
            })
            .map(|meta| meta.map(|m| BucketObject::new(self.shared.clone(), loc, shown, &m)))
    }
}

impl ByteStore for BucketStore {
    type Object = BucketObject;
    type Replace<'s> = BucketReplace;
    type Listing = Entries;

    fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    /// The normalized path itself (there are no symlinks), once it is known
    /// to be a valid object key: a control character is `invalid-input`.
    fn identity(&self, rel: &str, shown: &str) -> Result<String, FsError> {
        self.location(rel, shown)?;
        Ok(rel.to_owned())
    }

    /// A HEAD of the object, then a one-key listing to tell a directory from
    /// an absent key. The token is the ETag (and object version).
    fn stat(&self, target: &Target) -> Result<Option<ObjectMeta>, FsError> {
        let (shown, key) = (target.display_path(), target.key());
        if key.is_empty() {
            return Ok(Some(directory_meta()));
        }
        let loc = self.location(key, shown)?;
        self.shared.read(shown, async {
            match self.store_ref().head(&loc).await {
                Ok(meta) => Ok(Some(ObjectMeta {
                    kind: EntryKind::File,
                    size: Some(meta.size),
                    token: meta_token(meta.e_tag.as_deref(), meta.version.as_deref()),
                })),
                Err(StoreError::NotFound { .. }) => {
                    let (is_dir, ()) =
                        tokio::try_join!(self.is_dir(&loc, shown), self.check_parents(key, shown))?;
                    Ok(is_dir.then(directory_meta))
                }
                Err(e) => Err(map_store(e, shown)),
            }
        })
    }

    /// A HEAD; the bytes come later by ranged GETs pinned to its ETag.
    fn open(&self, target: &Target) -> Result<BucketObject, FsError> {
        self.head(target)?
            .ok_or_else(|| FsError::not_found(target.display_path()))
    }

    fn list_dir(&self, target: &Target) -> Result<Entries, FsError> {
        let shown = target.display_path();
        self.shared
            .read(shown, self.list_prefix(target.key(), shown))
    }

    /// Nothing is locked: the commit is a conditional request that fails
    /// when another writer got in first. Parents are never created (there
    /// is nothing to create), and a missing one is no error.
    fn replace(
        &self,
        target: &Target,
        create_parents: bool,
    ) -> Result<(BucketReplace, Option<BucketObject>), FsError> {
        let current = self.head(target)?;
        let (key, shown) = (target.key(), target.display_path());
        // Directories are prefixes: a parent exists while something lies under it.
        if let (None, false, Some((parent, _))) = (&current, create_parents, key.rsplit_once('/')) {
            let parent = self.location(parent, shown)?;
            if !self.shared.read(shown, self.is_dir(&parent, shown))? {
                return Err(FsError::not_found(shown));
            }
        }
        let loc = self.location(key, shown)?;
        let replace = BucketReplace::new(
            self.shared.clone(),
            loc,
            target.display_path(),
            current.as_ref(),
        );
        Ok((replace, current))
    }

    /// S3 takes a replacement in parts, one in memory at a time; any other
    /// store in one PUT, held whole.
    fn max_object_bytes(&self) -> u64 {
        if self.shared.s3.is_some() {
            dsh_fs_core::MAX_FILE_BYTES
        } else {
            dsh_fs_core::MAX_IN_MEMORY_BYTES
        }
    }
}

/// The metadata token of an object: the ETag, and the object version when
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

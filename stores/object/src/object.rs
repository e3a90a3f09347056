//! An open object: GETs pinned (`If-Match`) to the ETag it was opened with,
//! so every byte read comes from one version; a replacement mid-read is
//! `stale-version`. A read where the last one ended is served from one GET
//! of the rest of the object, streamed: a sequential pass over a large
//! object (the freshness hash, a streamed edit) costs two requests, not one
//! per range.

use super::{Shared, StoreError, meta_token, s3_error::map_store};
use ::object_store::path::Path as ObjectPath;
use ::object_store::{GetOptions, GetRange};
use bytes::Bytes;
use dsh_fs_core::seam::vanished;
use dsh_fs_core::store::{Object, ObjectMeta};
use dsh_fs_core::{EntryKind, ErrorCode, FsError};
use futures_util::StreamExt;
use futures_util::stream::BoxStream;
use std::sync::Arc;

/// Bytes fetched per ranged GET when the reader asks for less: the bound on
/// what an open object holds in memory.
const RANGE_BYTES: u64 = 8 << 20;

/// One object version, read by ranges.
pub struct BucketObject {
    shared: Arc<Shared>,
    pub(super) loc: ObjectPath,
    shown: String,
    meta: ObjectMeta,
    pub(super) e_tag: Option<String>,
    pub(super) version: Option<String>,
    /// The last bytes fetched, and where they start.
    ahead: Bytes,
    ahead_at: u64,
    /// The body of a GET of the rest, when reads have gone on in order.
    rest: Option<Rest>,
}

/// A streamed GET of bytes `at..` of the object.
struct Rest {
    at: u64,
    body: BoxStream<'static, ::object_store::Result<Bytes>>,
}

impl std::fmt::Debug for BucketObject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BucketObject")
            .field("loc", &self.loc.as_ref())
            .field("meta", &self.meta)
            .finish()
    }
}

impl BucketObject {
    pub(super) fn new(
        shared: Arc<Shared>,
        loc: ObjectPath,
        shown: &str,
        meta: &::object_store::ObjectMeta,
    ) -> Self {
        BucketObject {
            shared,
            loc,
            shown: shown.to_owned(),
            meta: ObjectMeta {
                kind: EntryKind::File,
                size: Some(meta.size),
                token: meta_token(meta.e_tag.as_deref(), meta.version.as_deref()),
            },
            e_tag: meta.e_tag.clone(),
            version: meta.version.clone(),
            ahead: Bytes::new(),
            ahead_at: 0,
            rest: None,
        }
    }

    /// Another reader of this same version, with nothing fetched yet.
    pub(super) fn reopen(&self) -> BucketObject {
        BucketObject {
            shared: self.shared.clone(),
            loc: self.loc.clone(),
            shown: self.shown.clone(),
            meta: self.meta.clone(),
            e_tag: self.e_tag.clone(),
            version: self.version.clone(),
            ahead: Bytes::new(),
            ahead_at: 0,
            rest: None,
        }
    }

    /// Whether `other` reads the same version of the same object.
    pub(super) fn same_version(&self, other: &BucketObject) -> bool {
        self.loc == other.loc && self.e_tag == other.e_tag && self.version == other.version
    }

    pub(super) fn size(&self) -> u64 {
        self.meta.size.unwrap_or(0)
    }

    /// Bytes `start..end` of this version: one GET.
    fn get(&self, start: u64, end: u64) -> Result<Bytes, FsError> {
        let shown = self.shown.as_str();
        let bytes = self.shared.read(shown, async {
            let got = async {
                let got = self
                    .shared
                    .store
                    .get_opts(&self.loc, self.range(start, end))
                    .await?;
                got.bytes().await
            };
            got.await.map_err(|e| read_error(e, shown))
        })?;
        if bytes.len() as u64 != end - start {
            return Err(changed_while_read(shown));
        }
        Ok(bytes)
    }

    fn range(&self, start: u64, end: u64) -> GetOptions {
        GetOptions::default()
            .with_if_match(self.e_tag.clone())
            .with_range(Some(GetRange::Bounded(start..end)))
    }

    /// At least `want` bytes from `offset` on (fewer only at the end) into
    /// `ahead`, from the streamed GET of the rest, begun here when there is
    /// none at `offset`. `None` when the stream broke: the caller falls
    /// back to a ranged GET, which the client retries.
    fn pull(&mut self, offset: u64, want: usize) -> Option<Result<(), FsError>> {
        let size = self.size();
        let (shared, shown) = (self.shared.clone(), self.shown.as_str());
        if self.rest.as_ref().is_none_or(|r| r.at != offset) {
            self.rest = None;
            let options = self.range(offset, size);
            let opened = shared.read(shown, async {
                match shared.store.get_opts(&self.loc, options).await {
                    Ok(got) => Ok(Some(got.into_stream())),
                    Err(e @ (StoreError::Precondition { .. } | StoreError::NotFound { .. })) => {
                        Err(read_error(e, shown))
                    }
                    Err(_) => Ok(None),
                }
            });
            match opened {
                Ok(Some(body)) => self.rest = Some(Rest { at: offset, body }),
                Ok(None) => return None,
                Err(e) => return Some(Err(e)),
            }
        }
        let rest = self.rest.as_mut().expect("opened above");
        let want = (want as u64).min(size - offset) as usize;
        let pulled = shared.read(shown, async {
            // The first chunk as it came; joined with the next ones only
            // when it is short of `want`.
            let mut first = Bytes::new();
            let mut joined = Vec::new();
            while first.len().max(joined.len()) < want {
                match rest.body.next().await {
                    Some(Ok(chunk)) if first.is_empty() => first = chunk,
                    Some(Ok(chunk)) => {
                        if joined.is_empty() {
                            joined.reserve_exact(want.max(first.len() + chunk.len()));
                            joined.extend_from_slice(&first);
                        }
                        joined.extend_from_slice(&chunk);
                    }
                    Some(Err(_)) => return Ok(None),
                    None => break,
                }
            }
            Ok(Some(if joined.is_empty() {
                first
            } else {
                Bytes::from(joined)
            }))
        });
        let bytes = match pulled {
            Ok(Some(bytes)) => bytes,
            Ok(None) => {
                self.rest = None;
                return None;
            }
            Err(e) => {
                self.rest = None;
                return Some(Err(e));
            }
        };
        // The version is pinned: a body shorter or longer than the object
        // it was opened as is another object.
        let at = offset + bytes.len() as u64;
        if bytes.len() < want || at > size {
            self.rest = None;
            return Some(Err(changed_while_read(shown)));
        }
        rest.at = at;
        if at == size {
            self.rest = None;
        }
        self.ahead = bytes;
        self.ahead_at = offset;
        Some(Ok(()))
    }
}

impl Object for BucketObject {
    fn meta(&self) -> &ObjectMeta {
        &self.meta
    }

    /// From the bytes fetched last when they hold `offset`; else, where
    /// the last read ended, from the streamed GET of the rest; else one GET
    /// of the rest when `buf` can take it all, or of the next 8 MiB (at
    /// least `buf.len()`) kept for the reads that follow.
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> Result<usize, FsError> {
        let size = self.size();
        if offset >= size || buf.is_empty() {
            return Ok(0);
        }
        let held = offset
            .checked_sub(self.ahead_at)
            .filter(|&skip| skip < self.ahead.len() as u64);
        if let Some(skip) = held {
            let from = &self.ahead[skip as usize..];
            let n = from.len().min(buf.len());
            buf[..n].copy_from_slice(&from[..n]);
            return Ok(n);
        }
        let follows = self.ahead_at + self.ahead.len() as u64 == offset && !self.ahead.is_empty();
        if follows || self.rest.as_ref().is_some_and(|r| r.at == offset) {
            match self.pull(offset, buf.len()) {
                Some(Ok(())) => {
                    let n = buf.len().min(self.ahead.len());
                    buf[..n].copy_from_slice(&self.ahead[..n]);
                    return Ok(n);
                }
                Some(Err(e)) => return Err(e),
                None => {}
            }
        }
        self.rest = None;
        let rest = size - offset;
        if buf.len() as u64 >= rest {
            let bytes = self.get(offset, size)?;
            buf[..bytes.len()].copy_from_slice(&bytes);
            return Ok(bytes.len());
        }
        let end = size.min(offset + RANGE_BYTES.max(buf.len() as u64));
        self.ahead = Bytes::new();
        self.ahead = self.get(offset, end)?;
        self.ahead_at = offset;
        let n = buf.len().min(self.ahead.len());
        buf[..n].copy_from_slice(&self.ahead[..n]);
        Ok(n)
    }
}

/// A failed GET of this version, as the reader sees it.
fn read_error(e: StoreError, shown: &str) -> FsError {
    match e {
        StoreError::Precondition { .. } => changed_while_read(shown),
        StoreError::NotFound { .. } => vanished(shown),
        e => map_store(e, shown),
    }
}

#[cold]
fn changed_while_read(shown: &str) -> FsError {
    FsError::new(
        ErrorCode::StaleVersion,
        format!("{shown} was replaced while it was being read"),
    )
}

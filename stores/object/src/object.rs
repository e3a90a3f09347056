//! An open object: ranged GETs pinned (`If-Match`) to the ETag it was opened
//! with, so every byte read comes from one version; a replacement mid-read
//! is `stale-version`.

use super::{Shared, StoreError, meta_token, s3_error::map_store};
use ::object_store::path::Path as ObjectPath;
use ::object_store::{GetOptions, GetRange};
use bytes::Bytes;
use dsh_fs_core::seam::vanished;
use dsh_fs_core::store::{Object, ObjectMeta};
use dsh_fs_core::{EntryKind, ErrorCode, FsError};
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
    /// The last range fetched, and where it starts.
    ahead: Bytes,
    ahead_at: u64,
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
        }
    }

    pub(super) fn size(&self) -> u64 {
        self.meta.size.unwrap_or(0)
    }

    /// Bytes `start..end` of this version: one GET.
    fn get(&self, start: u64, end: u64) -> Result<Bytes, FsError> {
        let shown = self.shown.as_str();
        let options = GetOptions::default()
            .with_if_match(self.e_tag.clone())
            .with_range(Some(GetRange::Bounded(start..end)));
        let bytes = self.shared.read(shown, async {
            let got = async {
                let got = self.shared.store.get_opts(&self.loc, options).await?;
                got.bytes().await
            };
            match got.await {
                Ok(bytes) => Ok(bytes),
                Err(StoreError::Precondition { .. }) => Err(changed_while_read(shown)),
                Err(StoreError::NotFound { .. }) => Err(vanished(shown)),
                Err(e) => Err(map_store(e, shown)),
            }
        })?;
        if bytes.len() as u64 != end - start {
            return Err(changed_while_read(shown));
        }
        Ok(bytes)
    }
}

impl Object for BucketObject {
    fn meta(&self) -> &ObjectMeta {
        &self.meta
    }

    /// From the range fetched last when it holds `offset`; else one GET of
    /// the rest when `buf` can take it all, or of the next 8 MiB (at least
    /// `buf.len()`) kept for the reads that follow.
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

#[cold]
fn changed_while_read(shown: &str) -> FsError {
    FsError::new(
        ErrorCode::StaleVersion,
        format!("{shown} was replaced while it was being read"),
    )
}

//! A replacement of one object, committed by one conditional request.
//!
//! Content up to one part ([`PART_BYTES`]) is buffered and sent in one PUT
//! with `If-Match` (replace exactly the version read) or `If-None-Match: *`
//! (create). Larger content goes to S3 as a multipart upload to the same key,
//! one part buffered at a time, so memory stays at one part whatever the
//! size; nothing is visible until `CompleteMultipartUpload`, which carries
//! the same condition, and an upload that is not completed is aborted.

use super::s3_error::{Answer, map_put, map_store};
use super::signed::{Completion, Condition, complete, encode_key, signed};
use super::{Shared, StoreError, meta_token, object::BucketObject};
use ::object_store::aws::AmazonS3;
use ::object_store::multipart::{MultipartStore, PartId};
use ::object_store::path::Path as ObjectPath;
use ::object_store::signer::Method;
use ::object_store::{
    GetOptions, MultipartId, ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload,
    PutResult, UpdateVersion,
};
use bytes::Bytes;
use dsh_fs_core::seam::vanished;
use dsh_fs_core::store::{Guard, Replace, copy_through};
use dsh_fs_core::{ErrorCode, FsError, MAX_IN_MEMORY_BYTES};
use std::sync::Arc;

/// The size of one uploaded part, and the most a replacement buffers; S3
/// wants at least 5 MiB for every part but the last.
pub(crate) const PART_BYTES: usize = 8 << 20;

/// The smallest part S3 takes, but for the last.
const MIN_PART_BYTES: u64 = 5 << 20;

/// The largest part S3 copies.
const MAX_COPY_PART_BYTES: u64 = 5 << 30;

/// The version a replacement was begun over: what `If-Match` names.
#[derive(Debug)]
struct Current {
    token: String,
    e_tag: Option<String>,
    version: Option<String>,
}

/// New content for one key; dropped without a commit, it leaves nothing.
pub struct BucketReplace {
    shared: Arc<Shared>,
    loc: ObjectPath,
    shown: String,
    current: Option<Current>,
    /// Bytes not uploaded yet: at most one part.
    buf: Vec<u8>,
    /// A range of the current object to copy after `buf`, not copied yet:
    /// ranges asked for one after another (an edit copies the rest of the
    /// file chunk by chunk as it scans it) join into one, which the server
    /// can copy, instead of chunks each too short for a part copy.
    pending: Option<Pending>,
    upload: Option<Upload>,
}

/// Bytes `start..end` of `from`, to be copied.
struct Pending {
    from: BucketObject,
    start: u64,
    end: u64,
}

impl std::fmt::Debug for BucketReplace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BucketReplace")
            .field("loc", &self.loc.as_ref())
            .field("current", &self.current)
            .finish()
    }
}

/// A multipart upload in progress.
pub(super) struct Upload {
    pub(super) s3: Arc<AmazonS3>,
    pub(super) id: MultipartId,
    pub(super) parts: Vec<PartId>,
}

impl BucketReplace {
    pub(super) fn new(
        shared: Arc<Shared>,
        loc: ObjectPath,
        shown: &str,
        current: Option<&BucketObject>,
    ) -> Self {
        BucketReplace {
            shared,
            loc,
            shown: shown.to_owned(),
            current: current.map(|o| Current {
                token: dsh_fs_core::store::Object::meta(o).token.clone(),
                e_tag: o.e_tag.clone(),
                version: o.version.clone(),
            }),
            buf: Vec::new(),
            pending: None,
            upload: None,
        }
    }

    /// Copies the pending range, if any, after what is buffered, through a
    /// reader of its own (the scan's streamed GET is left as it is).
    fn copy_pending(&mut self) -> Result<(), FsError> {
        match self.pending.take() {
            Some(mut p) => self.copy_now(&mut p.from, p.start, p.end - p.start),
            None => Ok(()),
        }
    }

    /// Ranges of at least 5 MiB are copied by the server into parts of the
    /// upload (after the pending bytes are topped up from the range to a
    /// whole part); shorter ones are read and written.
    fn copy_now(&mut self, from: &mut BucketObject, offset: u64, len: u64) -> Result<(), FsError> {
        let Some(bucket) = self.shared.bucket.clone() else {
            return copy_through(self, from, offset, len);
        };
        let (mut at, end) = (offset, offset + len);
        if !self.buf.is_empty() {
            let fill = (PART_BYTES - self.buf.len()) as u64;
            if end - at < fill + MIN_PART_BYTES {
                return copy_through(self, from, at, end - at);
            }
            copy_through(self, from, at, fill)?;
            at += fill;
            self.flush_part()?;
        } else if len < MIN_PART_BYTES {
            return copy_through(self, from, at, len);
        }
        while at < end {
            let rest = end - at;
            let take = if rest > MAX_COPY_PART_BYTES {
                MAX_COPY_PART_BYTES.min(rest - MIN_PART_BYTES)
            } else {
                rest
            };
            self.copy_part(&bucket, from, at, at + take)?;
            at += take;
        }
        Ok(())
    }

    /// The multipart upload, begun on first use.
    fn upload(&mut self) -> Result<&mut Upload, FsError> {
        if self.upload.is_none() {
            let s3 = self
                .shared
                .s3
                .clone()
                .expect("parts only with an S3 client");
            let id = self
                .shared
                .on(s3.create_multipart(&self.loc))
                .map_err(|e| map_put(e, &self.shown))?;
            self.upload = Some(Upload {
                s3,
                id,
                parts: Vec::new(),
            });
        }
        Ok(self.upload.as_mut().expect("begun above"))
    }

    /// Sends the buffer as the next part.
    fn flush_part(&mut self) -> Result<(), FsError> {
        let payload = PutPayload::from(std::mem::take(&mut self.buf));
        let (shared, loc, shown) = (self.shared.clone(), self.loc.clone(), self.shown.clone());
        let upload = self.upload()?;
        let index = upload.parts.len();
        let part = shared
            .on(upload.s3.put_part(&loc, &upload.id, index, payload))
            .map_err(|e| map_put(e, &shown))?;
        upload.parts.push(part);
        Ok(())
    }

    /// Bytes `start..end` of `from` as the next part, copied by the server
    /// (`UploadPartCopy`, pinned to the ETag `from` was opened with).
    fn copy_part(
        &mut self,
        bucket: &str,
        from: &BucketObject,
        start: u64,
        end: u64,
    ) -> Result<(), FsError> {
        let (shared, loc, shown) = (self.shared.clone(), self.loc.clone(), self.shown.clone());
        let upload = self.upload()?;
        let number = (upload.parts.len() + 1).to_string();
        let source = format!("{bucket}/{}", encode_key(from.loc.as_ref()));
        let range = format!("bytes={start}-{}", end - 1);
        let mut headers = vec![
            ("x-amz-copy-source", source),
            ("x-amz-copy-source-range", range),
        ];
        if let Some(e_tag) = &from.e_tag {
            headers.push(("x-amz-copy-source-if-match", e_tag.clone()));
        }
        let query = [
            ("partNumber", number.as_str()),
            ("uploadId", upload.id.as_str()),
        ];
        let answer = shared.on(signed(
            &upload.s3,
            Method::PUT,
            &loc,
            &query,
            &headers,
            String::new(),
        ));
        let (status, text, _) = answer.map_err(|e| map_put(e, &shown))?;
        let answer = Answer::parse(&text).unwrap_or_default();
        match (status, answer.code.as_deref(), answer.e_tag) {
            (200, None, Some(content_id)) => {
                upload.parts.push(PartId { content_id });
                Ok(())
            }
            (412, ..) | (_, Some("PreconditionFailed"), _) => Err(FsError::stale(&shown)),
            _ => Err(map_put(
                StoreError::Generic {
                    store: "S3",
                    source: format!("Error copying a part of {loc} - {status}: {text}").into(),
                },
                &shown,
            )),
        }
    }

    /// The one-PUT commit of buffered content. An answer that does not say
    /// the PUT was refused before it ran ([`unknown_outcome`]) is checked
    /// against the object: when it now holds exactly these bytes, the PUT
    /// landed (see [`BucketReplace::landed`]).
    fn put(&mut self, mode: PutMode) -> Result<PutResult, StoreError> {
        let sent = Bytes::from(std::mem::take(&mut self.buf));
        let payload = PutPayload::from_bytes(sent.clone());
        let put =
            self.shared.on(self
                .shared
                .store
                .put_opts(&self.loc, payload, PutOptions::from(mode)));
        match put {
            Err(e) if unknown_outcome(&e) => self.landed(&sent).ok_or(e),
            put => put,
        }
    }

    /// The version of the object if it holds exactly `sent`, read in one
    /// GET (so the bytes compared and the version named are one version).
    ///
    /// A PUT can land and still fail for its sender: the connection breaks
    /// after S3 stored the object, or S3 answers 5xx after storing it and
    /// `object_store` sends it again, when the retry's own condition
    /// (`If-Match` the version it just replaced, `If-None-Match: *` on the
    /// object it just created) refuses it. Answering that error would say
    /// nothing changed when the file changed.
    fn landed(&self, sent: &Bytes) -> Option<PutResult> {
        self.shared.on(async {
            let got = self
                .shared
                .store
                .get_opts(&self.loc, GetOptions::default())
                .await
                .ok()?;
            if got.meta.size != sent.len() as u64 {
                return None;
            }
            let meta = got.meta.clone();
            let bytes = got.bytes().await.ok()?;
            (bytes == *sent).then(|| PutResult {
                e_tag: meta.e_tag,
                version: meta.version,
                extensions: Default::default(),
            })
        })
    }

    /// The commit of a multipart upload: `CompleteMultipartUpload` under the
    /// guard's condition, sent as a signed request because `object_store`
    /// completes only unconditionally (and within its 30 s request timeout).
    fn complete(&mut self, condition: Condition) -> Result<PutResult, Refused> {
        let shown = self.shown.clone();
        if !self.buf.is_empty() {
            self.flush_part().map_err(Refused::Error)?;
        }
        let upload = self.upload.take().expect("a multipart commit");
        let result = self.shared.on(complete(&upload, &self.loc, condition));
        if result.is_err() {
            self.upload = Some(upload);
        }
        result.map_err(|e| match e {
            Completion::Refused(code) => Refused::Condition(code),
            Completion::Failed(e) => Refused::Error(map_put(e, &shown)),
        })
    }

    /// `put` with the object version a HEAD pinned to its ETag reports.
    fn described(&self, put: PutResult) -> PutResult {
        let head = GetOptions::default()
            .with_head(true)
            .with_if_match(put.e_tag.clone());
        match self.shared.on(self.shared.store.get_opts(&self.loc, head)) {
            Ok(got) => PutResult {
                e_tag: got.meta.e_tag,
                version: got.meta.version,
                extensions: put.extensions,
            },
            Err(_) => put,
        }
    }

    fn checked_current(&self, token: &str) -> Result<&Current, FsError> {
        match &self.current {
            Some(current) if current.token == token => Ok(current),
            _ => Err(FsError::stale(&self.shown)),
        }
    }
}

impl Replace for BucketReplace {
    type Object = BucketObject;

    /// Held as pending while the ranges asked for follow one another (see
    /// [`BucketReplace::copy_now`] for how a range is copied), so that the
    /// rest of a file copied chunk by chunk is one copy on the server.
    fn copy(&mut self, from: &mut BucketObject, offset: u64, len: u64) -> Result<(), FsError> {
        if len == 0 {
            return Ok(());
        }
        if self.shared.bucket.is_none() {
            return copy_through(self, from, offset, len);
        }
        if let Some(p) = &mut self.pending
            && p.end == offset
            && p.from.same_version(from)
        {
            p.end += len;
            return Ok(());
        }
        self.copy_pending()?;
        self.pending = Some(Pending {
            from: from.reopen(),
            start: offset,
            end: offset + len,
        });
        Ok(())
    }

    /// Buffers up to one part; past it, uploads parts. A store other than
    /// S3 is written in one PUT, so there the content is bounded like every
    /// in-memory result.
    fn write(&mut self, mut bytes: &[u8]) -> Result<(), FsError> {
        self.copy_pending()?;
        if self.shared.s3.is_none() {
            let size = (self.buf.len() + bytes.len()) as u64;
            if size > MAX_IN_MEMORY_BYTES {
                return Err(FsError::new(
                    ErrorCode::TooLarge,
                    format!(
                        "{} would have more than {MAX_IN_MEMORY_BYTES} bytes, more than this store takes in one request; nothing was changed",
                        self.shown
                    ),
                ));
            }
            self.buf.extend_from_slice(bytes);
            return Ok(());
        }
        while !bytes.is_empty() {
            if self.buf.len() == PART_BYTES {
                self.flush_part()?;
            }
            if self.buf.capacity() == 0 {
                self.buf.reserve_exact(PART_BYTES);
            }
            let n = bytes.len().min(PART_BYTES - self.buf.len());
            self.buf.extend_from_slice(&bytes[..n]);
            bytes = &bytes[n..];
        }
        Ok(())
    }

    /// A conditional PUT, or the conditional completion of the upload:
    /// `If-Match` on the ETag read for [`Guard::Unchanged`], `If-None-Match:
    /// *` for [`Guard::Absent`]. The token names this version: the ETag (and
    /// object version) the store answered with.
    fn commit(mut self, guard: Guard<'_>) -> Result<String, FsError> {
        let shown = self.shown.clone();
        dsh_fs_core::deadline::check(&shown)?;
        self.copy_pending()?;
        let put = if self.upload.is_none() {
            let mode = match guard {
                Guard::None => PutMode::Overwrite,
                Guard::Absent => PutMode::Create,
                Guard::Unchanged(token) => {
                    let current = self.checked_current(token)?;
                    if current.e_tag.is_none() && current.version.is_none() {
                        return Err(no_e_tag(&shown));
                    }
                    PutMode::Update(UpdateVersion {
                        e_tag: current.e_tag.clone(),
                        version: current.version.clone(),
                    })
                }
            };
            match self.put(mode) {
                Ok(put) => put,
                Err(StoreError::AlreadyExists { .. }) => return Err(created_meanwhile(&shown)),
                Err(StoreError::Precondition { .. }) => return Err(FsError::stale(&shown)),
                Err(StoreError::NotFound { .. }) if matches!(guard, Guard::Unchanged(_)) => {
                    return Err(vanished(&shown));
                }
                Err(e) => return Err(map_put(e, &shown)),
            }
        } else {
            let condition = match guard {
                Guard::None => Condition::None,
                Guard::Absent => Condition::Absent,
                Guard::Unchanged(token) => {
                    let e_tag = self.checked_current(token)?.e_tag.clone();
                    Condition::Match(e_tag.ok_or_else(|| no_e_tag(&shown))?)
                }
            };
            match self.complete(condition) {
                // The completion's answer may lack the object version a
                // HEAD reports: the token is the HEAD's, if still this object.
                Ok(put) => self.described(put),
                Err(Refused::Error(e)) => return Err(e),
                Err(Refused::Condition(404)) => return Err(vanished(&shown)),
                Err(Refused::Condition(_)) if guard == Guard::Absent => {
                    return Err(created_meanwhile(&shown));
                }
                Err(Refused::Condition(_)) => return Err(FsError::stale(&shown)),
            }
        };
        Ok(meta_token(put.e_tag.as_deref(), put.version.as_deref()))
    }

    /// A HEAD that finds the version read still there, then a DELETE. S3's
    /// DELETE takes no condition here, so a PUT landing between the two is
    /// removed with it: the window is one round trip.
    fn remove(self, guard: Guard<'_>, shown: &str) -> Result<(), FsError> {
        dsh_fs_core::deadline::check(shown)?;
        let Guard::Unchanged(token) = guard else {
            return Err(FsError::new(
                ErrorCode::InvalidInput,
                format!("{shown} is removed only while it is a version named; nothing was changed"),
            ));
        };
        let current = self.checked_current(token)?;
        match self.shared.on(self.shared.store.head(&self.loc)) {
            Ok(meta) if meta.e_tag == current.e_tag && meta.version == current.version => {}
            Ok(_) => return Err(FsError::stale(shown)),
            Err(StoreError::NotFound { .. }) => return Err(vanished(shown)),
            Err(e) => return Err(map_store(e, shown)),
        }
        match self.shared.on(self.shared.store.delete(&self.loc)) {
            Ok(()) | Err(StoreError::NotFound { .. }) => Ok(()),
            Err(e) => Err(map_put(e, shown)),
        }
    }
}

impl Drop for BucketReplace {
    /// Aborts an upload that was not completed, so no parts are left behind.
    fn drop(&mut self) {
        if let Some(upload) = self.upload.take() {
            let _ = self
                .shared
                .on(upload.s3.abort_multipart(&self.loc, &upload.id));
        }
    }
}

/// Why a commit did not happen.
enum Refused {
    /// The condition failed, with the HTTP status (412, 409, or 404 when
    /// the object to replace is gone).
    Condition(u16),
    Error(FsError),
}

/// Whether a PUT that failed with `e` may have landed: a transport error
/// or a 5xx after the request was sent, or a refusal by the condition that
/// may have been a retry's, after the first attempt landed. An answer that
/// the request itself was wrong or not allowed is final.
fn unknown_outcome(e: &StoreError) -> bool {
    matches!(
        e,
        StoreError::Generic { .. }
            | StoreError::Precondition { .. }
            | StoreError::AlreadyExists { .. }
    )
}

#[cold]
fn no_e_tag(shown: &str) -> FsError {
    FsError::new(
        ErrorCode::IoError,
        format!("the store gave no ETag for {shown}, so it cannot be replaced safely"),
    )
}

#[cold]
fn created_meanwhile(shown: &str) -> FsError {
    FsError::new(
        ErrorCode::NotObserved,
        format!("{shown} was created by another process during this write; nothing was changed"),
    )
}

//! The provider contract over any [`ByteStore`], written once: decoding and
//! BOMs, content hashes and versions, freshness by content (a `touch` is not
//! a change), write intents and the order of their checks, the in-memory and
//! streamed splices. A backend implements [`ByteStore`] and gets every rule
//! of `wit/since_v0.1.0/provider.wit` from [`TextLayer`]; the provider adapter component
//! serves the same layer over `wit/since_v0.1.0/store.wit` for stores outside Rust.

mod edit;

use crate::provider::{BoxListing, BoxStream, Provider};
use crate::seam::{StreamText, check_write_intent, display, normalize, vanished, version};
use crate::store::{
    ByteStore, Guard, Object, ObjectMeta, Replace, Seam, Shortcuts, Target, TextStream,
};
use crate::text::{self, ContentHasher, content_hash};
use crate::{
    EditOutcome, EditRequest, EditsError, ErrorCode, FsError, FsInfo, PathText, SearchQuery,
    Skipped, TextContent, Version, WriteIntent, WriteOperation, WriteOutcome,
};

/// Read buffer of the chunked passes (hashing, streamed edits).
pub(crate) const CHUNK: usize = 1 << 20;

/// How often a whole read is retried when the file changed in place during it.
const READ_ATTEMPTS: u32 = 3;

/// The provider contract over the byte store `S`, taking the store's
/// [`Shortcuts`] `N` where it offers them (none by default).
#[derive(Debug)]
pub struct TextLayer<S, N = Seam> {
    store: S,
    shortcuts: N,
}

impl<S: ByteStore, N: Shortcuts<S> + Default> TextLayer<S, N> {
    /// Serves the provider contract over `store`.
    pub fn new(store: S) -> Self {
        TextLayer::with_shortcuts(store, N::default())
    }
}

impl<S: ByteStore, N: Shortcuts<S>> TextLayer<S, N> {
    /// Serves the provider contract over `store`, with `shortcuts`.
    pub fn with_shortcuts(store: S, shortcuts: N) -> Self {
        TextLayer { store, shortcuts }
    }

    /// The store underneath.
    pub fn store(&self) -> &S {
        &self.store
    }

    /// The target at the normalized root-relative `rel` (`path` as the model
    /// wrote it), with the identity the store gives it.
    fn identified(&self, rel: String, path: &str) -> Result<Target, FsError> {
        let key = self.store.identity(&rel, path)?;
        Ok(Target::new(display(&rel), key))
    }

    /// [`Provider::read_text`] from `object`, the target opened once already;
    /// a retry opens it again.
    fn read_opened(
        &self,
        target: &Target,
        mut object: S::Object,
        max_bytes: u64,
    ) -> Result<TextContent, FsError> {
        let shown = target.display_path();
        let mut attempt = 1;
        let (bytes, token) = loop {
            let bytes = read_all(&mut object, shown, max_bytes, |size| {
                FsError::new(
                    ErrorCode::TooLarge,
                    format!("{shown} has {size} bytes, more than the {max_bytes} this call reads"),
                )
            })?;
            // Bytes and token of one state: a writer working in place during
            // the read shows in the token, and the read is done again.
            let now = object.token_now()?;
            if now == object.meta().token || attempt == READ_ATTEMPTS {
                break (bytes, now);
            }
            attempt += 1;
            object = self.store.open(target)?;
        };
        let version = version(&token, content_hash(&bytes));
        let text =
            text::decode_owned(bytes).map_err(|e| FsError::not_text(shown, &e.to_string()))?;
        Ok(TextContent { text, version })
    }
}

/// Every byte store is a provider through the layer.
impl<S, N> Provider for TextLayer<S, N>
where
    S: ByteStore,
    S::Object: Send + 'static,
    N: Shortcuts<S>,
{
    type Target = Target;
    type Stream = BoxStream;
    type Listing = BoxListing;

    /// Turns a model path into a target: normalized lexically and confined
    /// to the store's roots here, then given its identity by the store.
    fn resolve(&self, path: &str) -> Result<Target, FsError> {
        self.identified(normalize(path, self.store.roots())?, path)
    }

    /// Metadata, `None` when absent; the version is the metadata token alone.
    fn stat(&self, target: &Target) -> Result<Option<FsInfo>, FsError> {
        Ok(self.store.stat(target)?.map(|meta| FsInfo {
            version: meta.token,
            kind: meta.kind,
            size: meta.size,
        }))
    }

    /// The whole file decoded, with the version of exactly those bytes.
    fn read_text(&self, target: &Target, max_bytes: u64) -> Result<TextContent, FsError> {
        let object = self.store.open(target)?;
        self.read_opened(target, object, max_bytes)
    }

    /// [`Provider::resolve`], then [`Provider::read_text`] of the target: what a
    /// caller that wants only the text needs, in one step. A store that
    /// resolves and opens in one step ([`Shortcuts::open_direct`]) does so
    /// here; otherwise, and when that step fails, it is resolve, then open.
    fn read_path(&self, path: &str, max_bytes: u64) -> Result<PathText, FsError> {
        let rel = normalize(path, self.store.roots())?;
        if let Some(object) = self.shortcuts.open_direct(&self.store, &rel) {
            let target = Target::new(display(&rel), rel);
            let content = self.read_opened(&target, object, max_bytes);
            return Ok(PathText::new(target, content));
        }
        let target = self.identified(rel, path)?;
        let content = self.read_text(&target, max_bytes);
        Ok(PathText::new(target, content))
    }

    /// The decoded text in chunks, from text offset `start` (after any BOM).
    fn stream_text(&self, target: &Target, start: u64) -> Result<BoxStream, FsError> {
        let shown = target.display_path();
        let mut object = self.store.open(target)?;
        let at = if start > 0 {
            let mut head = [0u8; 3];
            let n = read_full(&mut object, 0, &mut head, shown)?;
            text::bom_len(&head[..n]) as u64 + start
        } else {
            0
        };
        let text = StreamText::new(object.meta().token.clone(), shown, start);
        Ok(Box::new(Stream {
            object,
            at,
            text,
            shown: shown.to_owned(),
        }))
    }

    /// Creates or replaces the whole file atomically under `intent`.
    fn write_text(
        &self,
        target: &Target,
        content: &str,
        intent: Option<WriteIntent>,
    ) -> Result<WriteOutcome, FsError> {
        let shown = target.display_path();
        let limit = self.store.max_object_bytes().min(crate::MAX_FILE_BYTES);
        if content.len() as u64 > limit {
            return Err(FsError::new(
                ErrorCode::TooLarge,
                format!(
                    "{shown} would have {} bytes, more than the {limit} this store holds; nothing was changed",
                    content.len()
                ),
            ));
        }
        let guarded = matches!(intent, Some(WriteIntent::ReplaceIfVersion(_)));
        let (mut replace, mut current) = match self.store.replace(target, !guarded) {
            Err(e) if guarded && e.code == ErrorCode::NotFound => return Err(vanished(shown)),
            other => other?,
        };
        // The content hash is needed only to honour a version guard; it is
        // computed in chunks, so a large old file is never loaded.
        let hash = match (&intent, &mut current) {
            (Some(WriteIntent::ReplaceIfVersion(_)), Some(object)) => {
                hash_object(&self.store, &self.shortcuts, target, object)?
            }
            _ => 0,
        };
        let token = current.as_ref().map(|o| o.meta().token.clone());
        check_write_intent(shown, intent.as_ref(), token.as_deref().map(|t| (t, hash)))?;
        if current.is_some() {
            replace.check_writable()?;
        }
        let guard = match (&intent, &token) {
            (None, _) => Guard::None,
            (Some(_), Some(token)) => Guard::Unchanged(token),
            (Some(_), None) => Guard::Absent,
        };
        replace.write(content.as_bytes())?;
        let after = replace.commit(guard)?;
        Ok(WriteOutcome {
            operation: if current.is_some() {
                WriteOperation::Updated
            } else {
                WriteOperation::Created
            },
            version: version(&after, content_hash(content.as_bytes())),
        })
    }

    /// The guarded, byte-faithful literal edit: existence (missing is
    /// `stale-version`), freshness before matching, the splice, an atomic commit.
    fn edit_text(
        &self,
        target: &Target,
        edit: &EditRequest,
        expected: Option<&str>,
    ) -> Result<EditOutcome, FsError> {
        let shown = target.display_path();
        let (replace, current) = match self.store.replace(target, false) {
            Err(e) if e.code == ErrorCode::NotFound => return Err(vanished(shown)),
            other => other?,
        };
        let object = current.ok_or_else(|| vanished(shown))?;
        edit::apply(edit::Edit {
            store: &self.store,
            shortcuts: &self.shortcuts,
            target,
            replace,
            object,
            edit,
            expected,
        })
    }

    /// Several edits in one commit, in memory (see `provider.wit`).
    fn edit_texts(
        &self,
        target: &Target,
        edits: &[EditRequest],
        expected: Option<&str>,
    ) -> Result<EditOutcome, EditsError> {
        let shown = target.display_path();
        if edits.is_empty() {
            return Err(FsError::new(ErrorCode::InvalidInput, "no edits to apply").into());
        }
        let (replace, current) = match self.store.replace(target, false) {
            Err(e) if e.code == ErrorCode::NotFound => return Err(vanished(shown).into()),
            other => other?,
        };
        let object = current.ok_or_else(|| vanished(shown))?;
        edit::apply_all(&self.store, target, replace, object, edits, expected)
    }

    /// Removes the file under the store's lock, if its content is still the
    /// one at `expected` (hashed only when the store's token moved).
    fn remove_file(&self, target: &Target, expected: &str) -> Result<(), FsError> {
        let shown = target.display_path();
        let (replace, current) = match self.store.replace(target, false) {
            Err(e) if e.code == ErrorCode::NotFound => return Err(vanished(shown)),
            other => other?,
        };
        let mut object = current.ok_or_else(|| vanished(shown))?;
        let token = object.meta().token.clone();
        let same_token = expected.rsplit_once(':').map_or(expected, |(meta, _)| meta) == token;
        if !same_token {
            let hash = hash_object(&self.store, &self.shortcuts, target, &mut object)?;
            if !crate::seam::still_fresh(expected, &token, hash) {
                return Err(FsError::stale(shown));
            }
        }
        drop(object);
        replace.remove(Guard::Unchanged(&token), shown)
    }

    /// The directory's entries, one level deep, in byte order of their names.
    fn list_dir(&self, target: &Target) -> Result<BoxListing, FsError> {
        let mut listing = self.store.list_dir(target)?;
        Ok(Box::new(crate::listing::sorted(
            &mut listing,
            target.display_path(),
        )?))
    }

    /// The store's native search, when it has one.
    fn search(&self, target: &Target, query: &SearchQuery) -> Result<Option<String>, FsError> {
        self.shortcuts.search(&self.store, target, query)
    }
}

impl<S: ByteStore + Default, N: Shortcuts<S> + Default> Default for TextLayer<S, N> {
    fn default() -> Self {
        TextLayer::new(S::default())
    }
}

/// A chunked reader of one open object.
#[derive(Debug)]
pub struct Stream<O> {
    object: O,
    /// Byte offset of the next read.
    at: u64,
    text: StreamText,
    /// The display path, for errors.
    shown: String,
}

impl<O: Object> TextStream for Stream<O> {
    fn next_chunk(&mut self, max_bytes: u32) -> Result<Option<String>, FsError> {
        let (object, at, shown) = (&mut self.object, &mut self.at, &self.shown);
        self.text.next_from(max_bytes, |buf| {
            let n = read_append(object, *at, buf, shown)?;
            *at += n as u64;
            Ok(n)
        })
    }

    fn skip(&mut self, max_bytes: u32, max_lines: u64) -> Result<Option<Skipped>, FsError> {
        let (object, at, shown) = (&mut self.object, &mut self.at, &self.shown);
        self.text.skip_from(max_bytes, max_lines, |buf| {
            let n = read_append(object, *at, buf, shown)?;
            *at += n as u64;
            Ok(n)
        })
    }

    fn version(&self) -> Option<Version> {
        self.text.version()
    }
}

/// [`Object::read_at`] of the file `shown`, refusing a read that ends
/// (returns 0) before the size the object was opened at while its token is
/// unchanged: a store that cut the read short, whose bytes would otherwise
/// pass for the whole file, be hashed as it and be written back as it. A
/// change in place shows in the token instead, which callers check.
pub(crate) fn read_at(
    object: &mut impl Object,
    offset: u64,
    buf: &mut [u8],
    shown: &str,
) -> Result<usize, FsError> {
    let n = object.read_at(offset, buf)?;
    not_cut_short(object, offset, buf.len(), n, shown)
}

/// [`read_at`] into `buf`'s spare capacity ([`Object::read_append`]).
fn read_append(
    object: &mut impl Object,
    offset: u64,
    buf: &mut Vec<u8>,
    shown: &str,
) -> Result<usize, FsError> {
    let asked = buf.capacity() - buf.len();
    let n = object.read_append(offset, buf)?;
    not_cut_short(object, offset, asked, n, shown)
}

/// `n`, the bytes a read of `asked` at `offset` gave, unless it is a 0
/// before the size the object was opened at with its token unchanged.
fn not_cut_short(
    object: &mut impl Object,
    offset: u64,
    asked: usize,
    n: usize,
    shown: &str,
) -> Result<usize, FsError> {
    if n == 0
        && asked > 0
        && let Some(size) = object.meta().size.filter(|&size| offset < size)
        && object.token_now()? == object.meta().token
    {
        return Err(ended_early(shown, offset, size));
    }
    Ok(n)
}

#[cold]
fn ended_early(shown: &str, at: u64, size: u64) -> FsError {
    FsError::new(
        ErrorCode::IoError,
        format!(
            "the store stopped reading {shown} at byte {at} of its {size}, though the file did not change"
        ),
    )
}

/// Reads from `offset` until `buf` is full or the object ends.
pub(crate) fn read_full(
    object: &mut impl Object,
    offset: u64,
    buf: &mut [u8],
    shown: &str,
) -> Result<usize, FsError> {
    let mut n = 0;
    while n < buf.len() {
        match read_at(object, offset + n as u64, &mut buf[n..], shown)? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

/// The whole object as opened, refused with `too_large(size)` past `limit`
/// bytes before anything is read. Callers compare [`Object::token_now`]
/// afterwards: a change during the read shows there, not here.
pub(crate) fn read_all(
    object: &mut impl Object,
    shown: &str,
    limit: u64,
    too_large: impl Fn(u64) -> FsError,
) -> Result<Vec<u8>, FsError> {
    let known = object.meta().size;
    let size = known.unwrap_or(0);
    if size > limit {
        return Err(too_large(size));
    }
    let mut bytes = Vec::new();
    if known.is_some() {
        // The size it was opened at: no read past it to find the end. A file
        // that grew or shrank meanwhile has another token, which every caller
        // checks after the read. Read into the spare capacity: zeroing the
        // buffer first cost a 1 MiB edit a tenth of its time.
        // A store may hand over a buffer of its own for the first read
        // (`wit_byte_store!`): room for the rest is made again when short.
        while bytes.len() < size as usize {
            let left = size as usize - bytes.len();
            if bytes.capacity() - bytes.len() < left {
                bytes.try_reserve_exact(left).map_err(|_| too_large(size))?;
            }
            if read_append(object, bytes.len() as u64, &mut bytes, shown)? == 0 {
                break;
            }
        }
        return Ok(bytes);
    }
    bytes
        .try_reserve_exact(size as usize + 1)
        .map_err(|_| too_large(size))?;
    bytes.resize(1, 0);
    let mut n = read_full(object, 0, &mut bytes, shown)?;
    // No size known: read on to the end, up to the limit.
    while n == bytes.len() && (n as u64) <= limit {
        let more = bytes.len().clamp(1, CHUNK);
        bytes.resize(bytes.len() + more, 0);
        n += read_full(object, n as u64, &mut bytes[n..], shown)?;
    }
    bytes.truncate(n);
    if n as u64 > limit {
        return Err(too_large(n as u64));
    }
    Ok(bytes)
}

/// The content hash of an open object, read in chunks.
fn hash_object<S: ByteStore, N: Shortcuts<S>>(
    store: &S,
    shortcuts: &N,
    target: &Target,
    object: &mut S::Object,
) -> Result<u128, FsError> {
    let mut hasher = ContentHasher::new();
    let mut buf = vec![0u8; CHUNK];
    let mut at = 0;
    loop {
        match read_at(object, at, &mut buf, target.display_path())? {
            0 => return Ok(hasher.finish()),
            n => {
                hasher.update(&buf[..n]);
                at += n as u64;
            }
        }
        shortcuts.progress(store, target)?;
    }
}

/// The metadata of a directory entry for stores that have no better token.
pub fn directory_meta() -> ObjectMeta {
    ObjectMeta {
        kind: crate::EntryKind::Directory,
        size: None,
        token: "dir".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file read the way `wit_byte_store!` reads a store over WIT that
    /// gives at most `most` bytes a read: each read's bytes in a buffer of
    /// their own, which becomes the caller's when it holds nothing yet.
    struct HandsOver {
        meta: ObjectMeta,
        bytes: Vec<u8>,
        most: usize,
    }

    impl Object for HandsOver {
        fn meta(&self) -> &ObjectMeta {
            &self.meta
        }

        fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> Result<usize, FsError> {
            let mut got = Vec::with_capacity(buf.len());
            let n = self.read_append(offset, &mut got)?;
            buf[..n].copy_from_slice(&got);
            Ok(n)
        }

        fn read_append(&mut self, offset: u64, buf: &mut Vec<u8>) -> Result<usize, FsError> {
            let from = (offset as usize).min(self.bytes.len());
            let want = (buf.capacity() - buf.len()).min(self.most);
            let got = self.bytes[from..(from + want).min(self.bytes.len())].to_vec();
            let n = got.len();
            if buf.is_empty() {
                *buf = got;
            } else {
                buf.extend_from_slice(&got);
            }
            Ok(n)
        }
    }

    #[test]
    fn a_whole_read_goes_on_when_the_store_hands_over_a_short_buffer() {
        let bytes: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
        for most in [1, 4096, 65_536, 299_999, 300_000] {
            let mut object = HandsOver {
                meta: ObjectMeta {
                    kind: crate::EntryKind::File,
                    size: Some(bytes.len() as u64),
                    token: "t".to_owned(),
                },
                bytes: bytes.clone(),
                most,
            };
            let read = read_all(&mut object, "f", u64::MAX, |_| {
                FsError::new(ErrorCode::TooLarge, "too large")
            });
            assert!(read.unwrap() == bytes, "{most} bytes a read");
        }
    }
}

//! The discovery engine's [`Tree`] over the provider seam: `list` pages
//! through `list-dir`, `kind` reads the parent's listing (so a link is seen as
//! a link, never followed), and `open` streams the decoded text. A file that
//! is not UTF-8 text fails to stream and is skipped, as ripgrep skips binaries.

use super::read::STREAM_CHUNK;
use dsh_fs_core::provider::{Listing, Provider, TextStream};
use dsh_fs_core::{DirEntry, DirEntryKind, FsError};
use dsh_fs_search::Tree;
use dsh_fs_search::tree::io_error;
use std::io::Read;

/// Entries asked for per listing page.
const PAGE: u32 = 4096;

/// The files behind a provider, by root-relative path (`""` is the root).
pub(super) struct ProviderTree<'p, P> {
    pub(super) provider: &'p P,
}

impl<P: Provider> ProviderTree<'_, P> {
    fn target(&self, path: &str) -> Result<P::Target, FsError> {
        self.provider
            .resolve(if path.is_empty() { "." } else { path })
    }
}

impl<P: Provider> Tree for ProviderTree<'_, P> {
    fn list(&self, dir: &str) -> Result<Vec<DirEntry>, FsError> {
        let mut listing = self.provider.list_dir(&self.target(dir)?)?;
        let mut entries = Vec::new();
        loop {
            let page = listing.next_entries(PAGE)?;
            if page.is_empty() {
                return Ok(entries);
            }
            entries.extend(page);
        }
    }

    fn kind(&self, path: &str) -> Result<Option<DirEntryKind>, FsError> {
        if path.is_empty() {
            return Ok(Some(DirEntryKind::Directory));
        }
        let (parent, name) = path.rsplit_once('/').unwrap_or(("", path));
        match self.kind(parent)? {
            Some(DirEntryKind::Directory) => {}
            Some(_) => return Ok(Some(DirEntryKind::Other)),
            None => return Ok(None),
        }
        let mut listing = self.provider.list_dir(&self.target(parent)?)?;
        loop {
            let page = listing.next_entries(PAGE)?;
            if page.is_empty() {
                return Ok(None);
            }
            if let Some(entry) = page.into_iter().find(|e| e.name == name) {
                return Ok(Some(entry.kind));
            }
        }
    }

    fn open(&self, path: &str) -> Result<Box<dyn Read + '_>, FsError> {
        let stream = self.provider.stream_text(&self.target(path)?, 0)?;
        Ok(Box::new(TextReader {
            stream,
            chunk: Vec::new(),
            at: 0,
        }))
    }
}

/// A file's decoded text as bytes, one streamed chunk at a time.
struct TextReader<S> {
    stream: S,
    chunk: Vec<u8>,
    at: usize,
}

impl<S: TextStream> Read for TextReader<S> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while self.at == self.chunk.len() {
            match self.stream.next_chunk(STREAM_CHUNK).map_err(io_error)? {
                Some(text) => {
                    self.chunk = text.into_bytes();
                    self.at = 0;
                }
                None => return Ok(0),
            }
        }
        let n = buf.len().min(self.chunk.len() - self.at);
        buf[..n].copy_from_slice(&self.chunk[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

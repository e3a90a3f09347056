//! The one `bindgen!` of the host, and the glue that serves the component's
//! `dsh:fs/provider` import from a [`Provider`](crate::provider::Provider): resources live in the
//! store's `ResourceTable`, and every value crosses through one exhaustive
//! conversion.

use crate::provider::{Listing, Target, TextStream};
use crate::state::HostState;
use dsh_fs_core as core;
use wasmtime::component::Resource;

wasmtime::component::bindgen!({
    world: "fs-tools",
    path: "wit",
    imports: { default: trappable },
    with: {
        "dsh:fs/provider.target": crate::provider::Target,
        "dsh:fs/provider.text-stream": crate::bindings::StreamHandle,
        "dsh:fs/provider.listing": crate::bindings::ListingHandle,
    },
});

use dsh::fs::provider as seam;
pub use dsh::fs::types as wit;

dsh_fs_core::wit_types!(wit);

/// A provider's stream as a resource of the store.
pub struct StreamHandle(pub crate::provider::BoxStream);

/// A provider's directory listing as a resource of the store.
pub struct ListingHandle(pub crate::provider::BoxListing);

type Res<T> = wasmtime::Result<Result<T, wit::FsError>>;

fn lift<T, U>(r: Result<T, core::FsError>, f: impl FnOnce(T) -> U) -> Result<U, wit::FsError> {
    r.map(f).map_err(Into::into)
}

impl seam::Host for HostState {
    fn resolve(&mut self, path: String) -> Res<Resource<Target>> {
        match self.provider.resolve(&path) {
            Ok(target) => Ok(Ok(self.hand_out(target)?)),
            Err(e) => Ok(Err(e.into())),
        }
    }

    fn stat(&mut self, t: Resource<Target>) -> Res<Option<wit::FsInfo>> {
        let target = self.table.get(&t)?;
        Ok(lift(self.provider.stat(target), |info| {
            info.map(Into::into)
        }))
    }

    fn read_text(&mut self, t: Resource<Target>, max_bytes: u64) -> Res<wit::TextContent> {
        let target = self.table.get(&t)?;
        Ok(lift(self.provider.read_text(target, max_bytes), Into::into))
    }

    fn read_path(&mut self, path: String, max_bytes: u64) -> Res<wit::PathText> {
        Ok(lift(self.provider.read_path(&path, max_bytes), Into::into))
    }

    fn stream_text(&mut self, t: Resource<Target>, start: u64) -> Res<Resource<StreamHandle>> {
        let target = self.table.get(&t)?;
        match self.provider.stream_text(target, start) {
            Ok(stream) => Ok(Ok(self.hand_out(StreamHandle(stream))?)),
            Err(e) => Ok(Err(e.into())),
        }
    }

    fn write_text(
        &mut self,
        t: Resource<Target>,
        content: String,
        intent: Option<wit::WriteIntent>,
    ) -> Res<wit::WriteOutcome> {
        let target = self.table.get(&t)?;
        let done = self
            .provider
            .write_text(target, &content, intent.map(Into::into));
        let shown = target.display_path().to_owned();
        self.note_mutation(&shown, &done);
        Ok(lift(done, Into::into))
    }

    fn edit_text(
        &mut self,
        t: Resource<Target>,
        edit: wit::EditRequest,
        expected: Option<String>,
    ) -> Res<wit::EditOutcome> {
        let target = self.table.get(&t)?;
        let request = edit.into();
        let done = self
            .provider
            .edit_text(target, &request, expected.as_deref());
        let shown = target.display_path().to_owned();
        self.note_mutation(&shown, &done);
        Ok(lift(done, Into::into))
    }

    fn edit_texts(
        &mut self,
        t: Resource<Target>,
        edits: Vec<wit::EditRequest>,
        expected: Option<String>,
    ) -> wasmtime::Result<Result<wit::EditOutcome, wit::EditsError>> {
        let target = self.table.get(&t)?;
        let requests: Vec<core::EditRequest> = edits.into_iter().map(Into::into).collect();
        let done = self
            .provider
            .edit_texts(target, &requests, expected.as_deref());
        let shown = target.display_path().to_owned();
        self.note_mutation(&shown, &done.as_ref().map_err(|e| e.error.clone()));
        Ok(done.map(Into::into).map_err(Into::into))
    }

    fn remove_file(&mut self, t: Resource<Target>, expected: String) -> Res<()> {
        let target = self.table.get(&t)?;
        let done = self.provider.remove_file(target, &expected);
        let shown = target.display_path().to_owned();
        self.note_mutation(&shown, &done);
        Ok(lift(done, |()| ()))
    }

    fn list_dir(&mut self, t: Resource<Target>) -> Res<Resource<ListingHandle>> {
        let target = self.table.get(&t)?;
        match self.provider.list_dir(target) {
            Ok(listing) => Ok(Ok(self.hand_out(ListingHandle(listing))?)),
            Err(e) => Ok(Err(e.into())),
        }
    }

    /// A native search runs the model's patterns in host code: should it
    /// panic, the call fails and the instance, with the session's
    /// observations, carries on (a search changes nothing it could leave
    /// half done).
    fn search(&mut self, t: Resource<Target>, query: wit::SearchQuery) -> Res<Option<String>> {
        let target = self.table.get(&t)?;
        let provider = &self.provider;
        let query = query.into();
        let found = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            provider.search(target, &query)
        }))
        .unwrap_or_else(|_| {
            Err(core::FsError::new(
                core::ErrorCode::IoError,
                "the search failed inside the host; narrow the pattern or path and retry",
            ))
        });
        Ok(found.map_err(Into::into))
    }
}

impl seam::HostTarget for HostState {
    fn display_path(&mut self, t: Resource<Target>) -> wasmtime::Result<String> {
        Ok(self.table.get(&t)?.display_path().to_owned())
    }

    fn key(&mut self, t: Resource<Target>) -> wasmtime::Result<String> {
        Ok(self.table.get(&t)?.key().to_owned())
    }

    fn drop(&mut self, t: Resource<Target>) -> wasmtime::Result<()> {
        self.take_back(t)
    }
}

impl seam::HostTextStream for HostState {
    fn next(&mut self, s: Resource<StreamHandle>, max_bytes: u32) -> Res<Option<String>> {
        Ok(self
            .table
            .get_mut(&s)?
            .0
            .next_chunk(max_bytes)
            .map_err(Into::into))
    }

    fn skip(
        &mut self,
        s: Resource<StreamHandle>,
        max_bytes: u32,
        max_lines: u64,
    ) -> Res<Option<wit::Skipped>> {
        let skipped = self.table.get_mut(&s)?.0.skip(max_bytes, max_lines);
        Ok(lift(skipped, |s| s.map(Into::into)))
    }

    fn version(&mut self, s: Resource<StreamHandle>) -> wasmtime::Result<Option<String>> {
        Ok(self.table.get(&s)?.0.version())
    }

    fn drop(&mut self, s: Resource<StreamHandle>) -> wasmtime::Result<()> {
        self.take_back(s)
    }
}

impl seam::HostListing for HostState {
    fn next(&mut self, l: Resource<ListingHandle>, max: u32) -> Res<Vec<wit::DirEntry>> {
        let page = self.table.get_mut(&l)?.0.next_entries(max);
        Ok(lift(page, |entries| {
            entries.into_iter().map(Into::into).collect()
        }))
    }

    fn skipped(&mut self, l: Resource<ListingHandle>) -> wasmtime::Result<u64> {
        Ok(self.table.get(&l)?.0.skipped())
    }

    fn drop(&mut self, l: Resource<ListingHandle>) -> wasmtime::Result<()> {
        self.take_back(l)
    }
}

impl dsh::fs::types::Host for HostState {}

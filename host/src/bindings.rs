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
    path: "../wit",
    imports: { default: trappable },
    with: {
        "dsh:fs/provider.target": crate::provider::Target,
        "dsh:fs/provider.text-stream": crate::bindings::StreamHandle,
        "dsh:fs/provider.listing": crate::bindings::ListingHandle,
    },
});

use dsh::fs::provider as seam;
pub use dsh::fs::types as wit;

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
            info.map(|i| wit::FsInfo {
                version: i.version,
                kind: match i.kind {
                    core::EntryKind::File => wit::EntryKind::File,
                    core::EntryKind::Directory => wit::EntryKind::Directory,
                    core::EntryKind::Other => wit::EntryKind::Other,
                },
                size: i.size,
            })
        }))
    }

    fn read_text(&mut self, t: Resource<Target>, max_bytes: u64) -> Res<wit::TextContent> {
        let target = self.table.get(&t)?;
        Ok(lift(
            self.provider.read_text(target, max_bytes),
            text_content,
        ))
    }

    fn read_path(&mut self, path: String, max_bytes: u64) -> Res<wit::PathText> {
        Ok(lift(self.provider.read_path(&path, max_bytes), |p| {
            wit::PathText {
                display_path: p.display_path,
                key: p.key,
                content: lift(p.content, text_content),
            }
        }))
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
        let intent = intent.map(|i| match i {
            wit::WriteIntent::CreateIfAbsent => core::WriteIntent::CreateIfAbsent,
            wit::WriteIntent::ReplaceIfVersion(v) => core::WriteIntent::ReplaceIfVersion(v),
        });
        let done = self.provider.write_text(target, &content, intent);
        let shown = target.display_path().to_owned();
        self.note_mutation(&shown, &done);
        Ok(lift(done, |o| wit::WriteOutcome {
            operation: match o.operation {
                core::WriteOperation::Created => wit::WriteOperation::Created,
                core::WriteOperation::Updated => wit::WriteOperation::Updated,
            },
            version: o.version,
        }))
    }

    fn edit_text(
        &mut self,
        t: Resource<Target>,
        edit: wit::EditRequest,
        expected: Option<String>,
    ) -> Res<wit::EditOutcome> {
        let target = self.table.get(&t)?;
        let request = core::EditRequest {
            old_string: edit.old_string,
            new_string: edit.new_string,
            replace_all: edit.replace_all,
        };
        let done = self
            .provider
            .edit_text(target, &request, expected.as_deref());
        let shown = target.display_path().to_owned();
        self.note_mutation(&shown, &done);
        Ok(lift(done, |o| wit::EditOutcome {
            replacements: o.replacements,
            version: o.version,
            first_line: o.first_line,
        }))
    }

    fn list_dir(&mut self, t: Resource<Target>) -> Res<Resource<ListingHandle>> {
        let target = self.table.get(&t)?;
        match self.provider.list_dir(target) {
            Ok(listing) => Ok(Ok(self.hand_out(ListingHandle(listing))?)),
            Err(e) => Ok(Err(e.into())),
        }
    }

    fn search(&mut self, t: Resource<Target>, query: wit::SearchQuery) -> Res<Option<String>> {
        let target = self.table.get(&t)?;
        let query = match query {
            wit::SearchQuery::Glob(pattern) => core::SearchQuery::Glob(pattern),
            wit::SearchQuery::Grep(q) => core::SearchQuery::Grep {
                pattern: q.pattern,
                include: q.include,
            },
        };
        Ok(self.provider.search(target, &query).map_err(Into::into))
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
            entries
                .into_iter()
                .map(|e| wit::DirEntry {
                    name: e.name,
                    kind: match e.kind {
                        core::DirEntryKind::File => wit::DirEntryKind::File,
                        core::DirEntryKind::Directory => wit::DirEntryKind::Directory,
                        core::DirEntryKind::Symlink => wit::DirEntryKind::Symlink,
                        core::DirEntryKind::Other => wit::DirEntryKind::Other,
                    },
                    size: e.size,
                    modified: e.modified,
                })
                .collect()
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

fn text_content(c: core::TextContent) -> wit::TextContent {
    wit::TextContent {
        text: c.text,
        version: c.version,
    }
}

impl From<core::FsError> for wit::FsError {
    fn from(e: core::FsError) -> Self {
        use core::ErrorCode as C;
        use wit::ErrorCode as W;
        let code = match e.code {
            C::NotFound => W::NotFound,
            C::NotText => W::NotText,
            C::NotRegularFile => W::NotRegularFile,
            C::NotDirectory => W::NotDirectory,
            C::StaleVersion => W::StaleVersion,
            C::NotObserved => W::NotObserved,
            C::AmbiguousEdit => W::AmbiguousEdit,
            C::EditNotFound => W::EditNotFound,
            C::SandboxDenied => W::SandboxDenied,
            C::PermissionDenied => W::PermissionDenied,
            C::TooLarge => W::TooLarge,
            C::IoError => W::IoError,
            C::Aborted => W::Aborted,
            C::InvalidInput => W::InvalidInput,
            C::Busy => W::Busy,
            // `ErrorCode` is non-exhaustive for downstream crates only.
            #[allow(unreachable_patterns)]
            _ => W::IoError,
        };
        wit::FsError {
            code,
            message: e.message,
        }
    }
}

//! The WIT glue: exports `dsh:fs/provider` by forwarding to one
//! [`WasiProvider`] (the text layer over a [`WasiStore`] opened on the root
//! named by the environment), and `dsh:fs/store` (in [`store`]) by
//! forwarding to that same store. Nothing else lives here.

mod store;

use crate::{WasiObject, WasiProvider, WasiStore};
use dsh_fs_core as core;
use dsh_fs_core::layer::Stream;
use dsh_fs_core::listing::SortedListing;
use dsh_fs_core::store::{Target, TextStream};
use std::cell::RefCell;
use std::sync::OnceLock;

wit_bindgen::generate!({
    world: "fs-provider-store",
    path: "../../wit",
});

use exports::dsh::fs::provider as api;
use exports::dsh::fs::types as wit;

/// The instance's provider, opened on first use; a root the runtime did not
/// grant makes every call fail with the reason.
fn provider() -> Result<&'static WasiProvider, wit::FsError> {
    static PROVIDER: OnceLock<Result<WasiProvider, core::FsError>> = OnceLock::new();
    PROVIDER
        .get_or_init(|| WasiStore::from_env().map(WasiProvider::new))
        .as_ref()
        .map_err(|e| e.clone().into())
}

/// The exported component.
struct Component;

impl api::Guest for Component {
    type Target = Target;
    type TextStream = StreamResource;
    type Listing = ListingResource;

    fn resolve(path: String) -> Result<api::Target, wit::FsError> {
        Ok(api::Target::new(provider()?.resolve(&path)?))
    }

    fn stat(t: api::TargetBorrow<'_>) -> Result<Option<wit::FsInfo>, wit::FsError> {
        let info = provider()?.stat(t.get())?;
        Ok(info.map(|i| wit::FsInfo {
            version: i.version,
            kind: entry_kind(i.kind),
            size: i.size,
        }))
    }

    fn read_text(
        t: api::TargetBorrow<'_>,
        max_bytes: u64,
    ) -> Result<wit::TextContent, wit::FsError> {
        Ok(text_content(provider()?.read_text(t.get(), max_bytes)?))
    }

    fn read_path(path: String, max_bytes: u64) -> Result<wit::PathText, wit::FsError> {
        let found = provider()?.read_path(&path, max_bytes)?;
        Ok(wit::PathText {
            display_path: found.display_path,
            key: found.key,
            content: found.content.map(text_content).map_err(Into::into),
        })
    }

    fn stream_text(t: api::TargetBorrow<'_>, start: u64) -> Result<api::TextStream, wit::FsError> {
        let stream = provider()?.stream_text(t.get(), start)?;
        Ok(api::TextStream::new(StreamResource(RefCell::new(stream))))
    }

    fn write_text(
        t: api::TargetBorrow<'_>,
        content: String,
        intent: Option<wit::WriteIntent>,
    ) -> Result<wit::WriteOutcome, wit::FsError> {
        let intent = intent.map(|i| match i {
            wit::WriteIntent::CreateIfAbsent => core::WriteIntent::CreateIfAbsent,
            wit::WriteIntent::ReplaceIfVersion(v) => core::WriteIntent::ReplaceIfVersion(v),
        });
        let o = provider()?.write_text(t.get(), &content, intent)?;
        Ok(wit::WriteOutcome {
            operation: match o.operation {
                core::WriteOperation::Created => wit::WriteOperation::Created,
                core::WriteOperation::Updated => wit::WriteOperation::Updated,
            },
            version: o.version,
        })
    }

    fn edit_text(
        t: api::TargetBorrow<'_>,
        edit: wit::EditRequest,
        expected: Option<wit::Version>,
    ) -> Result<wit::EditOutcome, wit::FsError> {
        let edit = core::EditRequest::new(edit.old_string, edit.new_string, edit.replace_all);
        let o = provider()?.edit_text(t.get(), &edit, expected.as_deref())?;
        Ok(wit::EditOutcome {
            replacements: o.replacements,
            version: o.version,
            first_line: o.first_line,
        })
    }

    fn list_dir(t: api::TargetBorrow<'_>) -> Result<api::Listing, wit::FsError> {
        let listing = provider()?.list_dir(t.get())?;
        Ok(api::Listing::new(ListingResource(RefCell::new(listing))))
    }

    /// No native search: the tools search through `list-dir` and `stream-text`.
    fn search(
        _: api::TargetBorrow<'_>,
        _: wit::SearchQuery,
    ) -> Result<Option<String>, wit::FsError> {
        Ok(None)
    }
}

impl api::GuestTarget for Target {
    fn display_path(&self) -> String {
        Target::display_path(self).to_owned()
    }

    fn key(&self) -> String {
        Target::key(self).to_owned()
    }
}

/// The exported `text-stream` resource.
struct StreamResource(RefCell<Stream<WasiObject>>);

impl api::GuestTextStream for StreamResource {
    fn next(&self, max_bytes: u32) -> Result<Option<String>, wit::FsError> {
        Ok(self.0.borrow_mut().next_chunk(max_bytes)?)
    }

    fn version(&self) -> Option<wit::Version> {
        self.0.borrow().version()
    }
}

/// The exported `listing` resource, of `provider` and of `store` alike.
struct ListingResource(RefCell<SortedListing>);

impl ListingResource {
    fn next_page(&self, max: u32) -> Vec<wit::DirEntry> {
        let page = self.0.borrow_mut().next_entries(max);
        page.into_iter()
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
    }
}

impl api::GuestListing for ListingResource {
    fn next(&self, max: u32) -> Result<Vec<wit::DirEntry>, wit::FsError> {
        Ok(self.next_page(max))
    }

    fn skipped(&self) -> u64 {
        self.0.borrow().skipped()
    }
}

fn entry_kind(kind: core::EntryKind) -> wit::EntryKind {
    match kind {
        core::EntryKind::File => wit::EntryKind::File,
        core::EntryKind::Directory => wit::EntryKind::Directory,
        core::EntryKind::Other => wit::EntryKind::Other,
    }
}

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
            C::Busy => W::Busy,
            C::InvalidInput => W::InvalidInput,
            _ => W::IoError,
        };
        wit::FsError {
            code,
            message: e.message,
        }
    }
}

export!(Component);

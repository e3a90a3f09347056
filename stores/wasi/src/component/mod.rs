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
    path: "../../wit/since_v0.1.0",
});

use exports::dsh::fs::provider as api;
use exports::dsh::fs::types as wit;

dsh_fs_core::wit_types!(wit);
dsh_fs_core::wit_store!(store_wit);
use exports::dsh::fs::store as store_wit;

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
        Ok(provider()?.stat(t.get())?.map(Into::into))
    }

    fn read_text(
        t: api::TargetBorrow<'_>,
        max_bytes: u64,
    ) -> Result<wit::TextContent, wit::FsError> {
        Ok(provider()?.read_text(t.get(), max_bytes)?.into())
    }

    fn read_path(path: String, max_bytes: u64) -> Result<wit::PathText, wit::FsError> {
        Ok(provider()?.read_path(&path, max_bytes)?.into())
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
        let intent = intent.map(Into::into);
        Ok(provider()?.write_text(t.get(), &content, intent)?.into())
    }

    fn edit_text(
        t: api::TargetBorrow<'_>,
        edit: wit::EditRequest,
        expected: Option<wit::Version>,
    ) -> Result<wit::EditOutcome, wit::FsError> {
        let edit = edit.into();
        Ok(provider()?
            .edit_text(t.get(), &edit, expected.as_deref())?
            .into())
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
        page.into_iter().map(Into::into).collect()
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

export!(Component);

//! The WIT glue: exports `dsh:fs/provider` by forwarding to one
//! [`TextLayer`] over the imported store, and converts between the WIT value
//! types (the imported `types` of the store, the exported `types` of the
//! provider) and the core's. Nothing else lives here.

use crate::store::WitStore;
use dsh_fs_core as core;
use dsh_fs_core::layer::{Stream, TextLayer};
use dsh_fs_core::listing::SortedListing;
use dsh_fs_core::store::TextStream as _;
use std::cell::RefCell;
use std::sync::OnceLock;

#[cfg(not(feature = "contract"))]
wit_bindgen::generate!({
    world: "fs-text",
    path: "../../wit/since_v0.1.0",
});

#[cfg(feature = "contract")]
wit_bindgen::generate!({
    world: "fs-text-contract",
    path: "../../wit/since_v0.1.0",
});

/// The byte-store contract suite, run against the imported store.
#[cfg(feature = "contract")]
impl exports::dsh::fs::store_contract::Guest for Component {
    fn checks() -> Vec<String> {
        let checks = dsh_fs_core::store::contract::checks::<WitStore>();
        checks.iter().map(|c| c.name.to_owned()).collect()
    }

    fn run(name: String) -> Result<(), String> {
        let checks = dsh_fs_core::store::contract::checks::<WitStore>();
        let check = checks
            .iter()
            .find(|c| c.name == name)
            .ok_or_else(|| format!("no check is named {name}"))?;
        check.run(&WitStore::new())
    }
}

use dsh::fs::store as store_wit;
use dsh::fs::types as inner;
use exports::dsh::fs::provider as api;
use exports::dsh::fs::types as outer;

dsh_fs_core::wit_types!(inner);
dsh_fs_core::wit_types!(outer);
dsh_fs_core::wit_store!(store_wit);

/// The instance's text layer, over the store the host plugged in.
fn layer() -> &'static TextLayer<WitStore> {
    static LAYER: OnceLock<TextLayer<WitStore>> = OnceLock::new();
    LAYER.get_or_init(|| TextLayer::new(WitStore::new()))
}

/// The exported component.
struct Component;

impl api::Guest for Component {
    type Target = TargetResource;
    type TextStream = StreamResource;
    type Listing = ListingResource;

    fn resolve(path: String) -> Result<api::Target, outer::FsError> {
        Ok(api::Target::new(TargetResource(layer().resolve(&path)?)))
    }

    fn stat(t: api::TargetBorrow<'_>) -> Result<Option<outer::FsInfo>, outer::FsError> {
        Ok(layer().stat(&t.get::<TargetResource>().0)?.map(Into::into))
    }

    fn read_text(
        t: api::TargetBorrow<'_>,
        max_bytes: u64,
    ) -> Result<outer::TextContent, outer::FsError> {
        Ok(layer()
            .read_text(&t.get::<TargetResource>().0, max_bytes)?
            .into())
    }

    fn read_path(path: String, max_bytes: u64) -> Result<outer::PathText, outer::FsError> {
        Ok(layer().read_path(&path, max_bytes)?.into())
    }

    fn stream_text(
        t: api::TargetBorrow<'_>,
        start: u64,
    ) -> Result<api::TextStream, outer::FsError> {
        let stream = layer().stream_text(&t.get::<TargetResource>().0, start)?;
        Ok(api::TextStream::new(StreamResource(RefCell::new(stream))))
    }

    fn write_text(
        t: api::TargetBorrow<'_>,
        content: String,
        intent: Option<outer::WriteIntent>,
    ) -> Result<outer::WriteOutcome, outer::FsError> {
        let intent = intent.map(Into::into);
        let target = &t.get::<TargetResource>().0;
        Ok(layer().write_text(target, &content, intent)?.into())
    }

    fn edit_text(
        t: api::TargetBorrow<'_>,
        edit: outer::EditRequest,
        expected: Option<outer::Version>,
    ) -> Result<outer::EditOutcome, outer::FsError> {
        let target = &t.get::<TargetResource>().0;
        Ok(layer()
            .edit_text(target, &edit.into(), expected.as_deref())?
            .into())
    }

    fn list_dir(t: api::TargetBorrow<'_>) -> Result<api::Listing, outer::FsError> {
        let listing = layer().list_dir(&t.get::<TargetResource>().0)?;
        Ok(api::Listing::new(ListingResource(RefCell::new(listing))))
    }

    /// A byte store has no native search: the tools search through
    /// `list-dir` and `stream-text`.
    fn search(
        _: api::TargetBorrow<'_>,
        _: outer::SearchQuery,
    ) -> Result<Option<String>, outer::FsError> {
        Ok(None)
    }
}

/// The exported `target` resource.
struct TargetResource(core::store::Target);

impl api::GuestTarget for TargetResource {
    fn display_path(&self) -> String {
        self.0.display_path().to_owned()
    }

    fn key(&self) -> String {
        self.0.key().to_owned()
    }
}

/// The exported `text-stream` resource.
struct StreamResource(RefCell<Stream<crate::store::WitObject>>);

impl api::GuestTextStream for StreamResource {
    fn next(&self, max_bytes: u32) -> Result<Option<String>, outer::FsError> {
        Ok(self.0.borrow_mut().next_chunk(max_bytes)?)
    }

    fn version(&self) -> Option<outer::Version> {
        self.0.borrow().version()
    }
}

/// The exported `listing` resource.
struct ListingResource(RefCell<SortedListing>);

impl api::GuestListing for ListingResource {
    fn next(&self, max: u32) -> Result<Vec<outer::DirEntry>, outer::FsError> {
        let page = self.0.borrow_mut().next_entries(max);
        Ok(page.into_iter().map(Into::into).collect())
    }

    fn skipped(&self) -> u64 {
        self.0.borrow().skipped()
    }
}

export!(Component);

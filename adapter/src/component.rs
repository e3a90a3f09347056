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
    path: "../wit",
});

#[cfg(feature = "contract")]
wit_bindgen::generate!({
    world: "fs-text-contract",
    path: "../wit",
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
        let info = layer().stat(&t.get::<TargetResource>().0)?;
        Ok(info.map(|i| outer::FsInfo {
            version: i.version,
            kind: match i.kind {
                core::EntryKind::File => outer::EntryKind::File,
                core::EntryKind::Directory => outer::EntryKind::Directory,
                core::EntryKind::Other => outer::EntryKind::Other,
            },
            size: i.size,
        }))
    }

    fn read_text(
        t: api::TargetBorrow<'_>,
        max_bytes: u64,
    ) -> Result<outer::TextContent, outer::FsError> {
        Ok(text_content(
            layer().read_text(&t.get::<TargetResource>().0, max_bytes)?,
        ))
    }

    fn read_path(path: String, max_bytes: u64) -> Result<outer::PathText, outer::FsError> {
        let found = layer().read_path(&path, max_bytes)?;
        Ok(outer::PathText {
            display_path: found.display_path,
            key: found.key,
            content: found.content.map(text_content).map_err(Into::into),
        })
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
        let intent = intent.map(|i| match i {
            outer::WriteIntent::CreateIfAbsent => core::WriteIntent::CreateIfAbsent,
            outer::WriteIntent::ReplaceIfVersion(v) => core::WriteIntent::ReplaceIfVersion(v),
        });
        let o = layer().write_text(&t.get::<TargetResource>().0, &content, intent)?;
        Ok(outer::WriteOutcome {
            operation: match o.operation {
                core::WriteOperation::Created => outer::WriteOperation::Created,
                core::WriteOperation::Updated => outer::WriteOperation::Updated,
            },
            version: o.version,
        })
    }

    fn edit_text(
        t: api::TargetBorrow<'_>,
        edit: outer::EditRequest,
        expected: Option<outer::Version>,
    ) -> Result<outer::EditOutcome, outer::FsError> {
        let edit = core::EditRequest::new(edit.old_string, edit.new_string, edit.replace_all);
        let target = &t.get::<TargetResource>().0;
        let o = layer().edit_text(target, &edit, expected.as_deref())?;
        Ok(outer::EditOutcome {
            replacements: o.replacements,
            version: o.version,
            first_line: o.first_line,
        })
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
        Ok(page
            .into_iter()
            .map(|e| outer::DirEntry {
                name: e.name,
                kind: match e.kind {
                    core::DirEntryKind::File => outer::DirEntryKind::File,
                    core::DirEntryKind::Directory => outer::DirEntryKind::Directory,
                    core::DirEntryKind::Symlink => outer::DirEntryKind::Symlink,
                    core::DirEntryKind::Other => outer::DirEntryKind::Other,
                },
                size: e.size,
                modified: e.modified,
            })
            .collect())
    }

    fn skipped(&self) -> u64 {
        self.0.borrow().skipped()
    }
}

/// The error codes, mapped by name from the store's WIT type to the core's
/// and from the core's to the provider's WIT type.
macro_rules! error_codes {
    ($($code:ident),* $(,)?) => {
        impl From<inner::ErrorCode> for core::ErrorCode {
            fn from(code: inner::ErrorCode) -> Self {
                match code {
                    $(inner::ErrorCode::$code => core::ErrorCode::$code,)*
                }
            }
        }

        impl From<core::ErrorCode> for outer::ErrorCode {
            fn from(code: core::ErrorCode) -> Self {
                match code {
                    $(core::ErrorCode::$code => outer::ErrorCode::$code,)*
                    _ => outer::ErrorCode::IoError,
                }
            }
        }
    };
}

error_codes!(
    NotFound,
    NotText,
    NotRegularFile,
    NotDirectory,
    StaleVersion,
    NotObserved,
    AmbiguousEdit,
    EditNotFound,
    SandboxDenied,
    PermissionDenied,
    TooLarge,
    IoError,
    Aborted,
    InvalidInput,
    Busy,
);

impl From<inner::FsError> for core::FsError {
    fn from(e: inner::FsError) -> Self {
        core::FsError::new(e.code.into(), e.message)
    }
}

fn text_content(c: core::TextContent) -> outer::TextContent {
    outer::TextContent {
        text: c.text,
        version: c.version,
    }
}

impl From<core::FsError> for outer::FsError {
    fn from(e: core::FsError) -> Self {
        outer::FsError {
            code: e.code.into(),
            message: e.message,
        }
    }
}

impl From<store_wit::ObjectMeta> for core::store::ObjectMeta {
    fn from(m: store_wit::ObjectMeta) -> Self {
        core::store::ObjectMeta {
            kind: match m.kind {
                inner::EntryKind::File => core::EntryKind::File,
                inner::EntryKind::Directory => core::EntryKind::Directory,
                inner::EntryKind::Other => core::EntryKind::Other,
            },
            size: m.size,
            token: m.token,
        }
    }
}

impl From<inner::DirEntryKind> for core::DirEntryKind {
    fn from(kind: inner::DirEntryKind) -> Self {
        match kind {
            inner::DirEntryKind::File => core::DirEntryKind::File,
            inner::DirEntryKind::Directory => core::DirEntryKind::Directory,
            inner::DirEntryKind::Symlink => core::DirEntryKind::Symlink,
            inner::DirEntryKind::Other => core::DirEntryKind::Other,
        }
    }
}

export!(Component);

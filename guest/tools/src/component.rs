//! The WIT glue: binds the imported `dsh:fs/provider` to [`Provider`] and
//! exports `dsh:fs/tools` by forwarding to [`crate::Session`]; with the
//! `text` feature, the provider is the text layer linked in, over the
//! imported `dsh:fs/store`; with the `memory` feature, sessions keep their
//! observations in the imported `dsh:fs/memory`. Nothing else lives here.

use crate::tools;
use std::cell::RefCell;

#[cfg(not(any(feature = "memory", feature = "text")))]
wit_bindgen::generate!({
    world: "fs-tools",
    path: "../../wit/since_v0.1.0",
});

#[cfg(all(feature = "memory", not(feature = "text")))]
wit_bindgen::generate!({
    world: "fs-tools-with-memory",
    path: "../../wit/since_v0.1.0",
});

#[cfg(all(feature = "text", not(feature = "memory")))]
wit_bindgen::generate!({
    world: "fs-tools-text",
    path: "../../wit/since_v0.1.0",
});

#[cfg(all(feature = "text", feature = "memory"))]
wit_bindgen::generate!({
    world: "fs-tools-text-with-memory",
    path: "../../wit/since_v0.1.0",
});

use dsh::fs::types as wit;
use exports::dsh::fs::tools as api;

dsh_fs_core::wit_types!(wit);

#[cfg(not(feature = "text"))]
use imported::Imported as Provided;

#[cfg(not(feature = "text"))]
fn provided() -> Provided {
    Provided
}

/// The text layer over the imported store: one per session.
#[cfg(feature = "text")]
type Provided = dsh_fs_core::layer::TextLayer<store::WitStore>;

#[cfg(feature = "text")]
fn provided() -> Provided {
    dsh_fs_core::layer::TextLayer::new(store::WitStore::new())
}

/// [`dsh_fs_core::store::ByteStore`] over the imported `dsh:fs/store`.
#[cfg(feature = "text")]
mod store {
    use super::dsh::fs::store as wit;

    dsh_fs_core::wit_store!(wit);
    dsh_fs_core::wit_byte_store!(wit);
}

/// [`Provider`](dsh_fs_core::provider::Provider) over the imported
/// `dsh:fs/provider`, and its resources as targets, streams and listings.
#[cfg(not(feature = "text"))]
mod imported {
    use super::dsh::fs::provider as seam;
    use super::wit;
    use dsh_fs_core as core;
    use dsh_fs_core::provider::{Listing, Provider, Resolved, TextStream};

    /// The imported provider.
    #[derive(Debug)]
    pub(super) struct Imported;

    impl Provider for Imported {
        type Target = seam::Target;
        type Stream = seam::TextStream;
        type Listing = seam::Listing;

        fn resolve(&self, path: &str) -> Result<seam::Target, core::FsError> {
            seam::resolve(path).map_err(Into::into)
        }

        fn stat(&self, target: &seam::Target) -> Result<Option<core::FsInfo>, core::FsError> {
            Ok(seam::stat(target)?.map(Into::into))
        }

        fn read_text(
            &self,
            target: &seam::Target,
            max_bytes: u64,
        ) -> Result<core::TextContent, core::FsError> {
            Ok(seam::read_text(target, max_bytes)?.into())
        }

        fn read_path(&self, path: &str, max_bytes: u64) -> Result<core::PathText, core::FsError> {
            Ok(seam::read_path(path, max_bytes)?.into())
        }

        fn stream_text(
            &self,
            target: &seam::Target,
            start: u64,
        ) -> Result<seam::TextStream, core::FsError> {
            seam::stream_text(target, start).map_err(Into::into)
        }

        fn write_text(
            &self,
            target: &seam::Target,
            content: &str,
            intent: Option<core::WriteIntent>,
        ) -> Result<core::WriteOutcome, core::FsError> {
            let intent = intent.map(wit::WriteIntent::from);
            Ok(seam::write_text(target, content, intent.as_ref())?.into())
        }

        fn edit_text(
            &self,
            target: &seam::Target,
            edit: &core::EditRequest,
            expected: Option<&str>,
        ) -> Result<core::EditOutcome, core::FsError> {
            let request = wit::EditRequest::from(edit.clone());
            Ok(seam::edit_text(target, &request, expected)?.into())
        }

        fn edit_texts(
            &self,
            target: &seam::Target,
            edits: &[core::EditRequest],
            expected: Option<&str>,
        ) -> Result<core::EditOutcome, core::EditsError> {
            let requests: Vec<wit::EditRequest> = edits.iter().cloned().map(Into::into).collect();
            seam::edit_texts(target, &requests, expected)
                .map(Into::into)
                .map_err(Into::into)
        }

        fn remove_file(&self, target: &seam::Target, expected: &str) -> Result<(), core::FsError> {
            seam::remove_file(target, expected).map_err(Into::into)
        }

        fn list_dir(&self, target: &seam::Target) -> Result<seam::Listing, core::FsError> {
            seam::list_dir(target).map_err(Into::into)
        }

        fn search(
            &self,
            target: &seam::Target,
            query: &core::SearchQuery,
        ) -> Result<Option<String>, core::FsError> {
            let query = wit::SearchQuery::from(query.clone());
            seam::search(target, &query).map_err(Into::into)
        }
    }

    impl Resolved for seam::Target {
        fn display_path(&self) -> String {
            seam::Target::display_path(self)
        }

        fn key(&self) -> String {
            seam::Target::key(self)
        }
    }

    impl Listing for seam::Listing {
        fn next_entries(&mut self, max: u32) -> Result<Vec<core::DirEntry>, core::FsError> {
            Ok(self.next(max)?.into_iter().map(Into::into).collect())
        }

        fn skipped(&self) -> u64 {
            seam::Listing::skipped(self)
        }
    }

    impl TextStream for seam::TextStream {
        fn next_chunk(&mut self, max_bytes: u32) -> Result<Option<String>, core::FsError> {
            self.next(max_bytes).map_err(Into::into)
        }

        fn skip(
            &mut self,
            max_bytes: u32,
            max_lines: u64,
        ) -> Result<Option<core::Skipped>, core::FsError> {
            Ok(seam::TextStream::skip(self, max_bytes, max_lines)?.map(Into::into))
        }

        fn version(&self) -> Option<String> {
            seam::TextStream::version(self)
        }
    }
}

/// Observations kept by the host in the imported `dsh:fs/memory`: the
/// version seen under `seen:<key>`, a confirmed twin under `twin:<key>`.
#[cfg(feature = "memory")]
#[derive(Debug)]
struct Remembered;

#[cfg(feature = "memory")]
impl crate::Memory for Remembered {
    fn observed(&self, key: &str) -> Option<dsh_fs_core::Version> {
        dsh::fs::memory::recall(&format!("seen:{key}"))
    }

    fn observe(&mut self, key: String, version: dsh_fs_core::Version) {
        dsh::fs::memory::remember(&format!("seen:{key}"), &version);
    }

    fn twin_allowed(&self, key: &str) -> bool {
        dsh::fs::memory::recall(&format!("twin:{key}")).is_some()
    }

    fn allow_twin(&mut self, key: String) {
        dsh::fs::memory::remember(&format!("twin:{key}"), "");
    }
}

/// The exported component.
struct Component;

impl api::Guest for Component {
    type Session = SessionResource;

    fn definitions() -> Vec<api::ToolDefinition> {
        tools::definitions().into_iter().map(exported).collect()
    }

    fn extra_definitions() -> Vec<api::ToolDefinition> {
        tools::extra_definitions()
            .into_iter()
            .map(exported)
            .collect()
    }
}

/// A definition as the WIT export gives it.
fn exported(d: tools::ToolDefinition) -> api::ToolDefinition {
    api::ToolDefinition {
        name: d.name.into(),
        title: d.title.into(),
        description: d.description.into(),
        guidance: d.guidance.into(),
        parameters: d.parameters,
        hints: api::ToolHints {
            read_only: d.hints.read_only,
            destructive: d.hints.destructive,
            idempotent: d.hints.idempotent,
        },
    }
}

/// The exported `session` resource.
struct SessionResource(RefCell<tools::Session<Provided>>);

impl api::GuestSession for SessionResource {
    #[cfg(not(feature = "memory"))]
    fn new(options: api::SessionOptions) -> Self {
        SessionResource(RefCell::new(
            tools::Session::new(provided(), options.observation_policy)
                .with_journal_budget(options.journal_bytes),
        ))
    }

    #[cfg(feature = "memory")]
    fn new(options: api::SessionOptions) -> Self {
        SessionResource(RefCell::new(
            tools::Session::with_memory(
                provided(),
                options.observation_policy,
                Box::new(Remembered),
            )
            .with_journal_budget(options.journal_bytes),
        ))
    }

    fn execute(&self, tool: String, arguments_json: String) -> api::ToolResult {
        let result = self.0.borrow_mut().execute(&tool, &arguments_json);
        api::ToolResult {
            is_error: result.is_error(),
            error: result.error.map(|e| api::ToolError {
                code: e.code,
                message: e.message,
            }),
            text: result.text,
        }
    }
}

export!(Component);

//! The WIT glue: binds the imported `dsh:fs/provider` to [`Provider`] and
//! exports `dsh:fs/tools` by forwarding to [`crate::Session`]. Nothing else
//! lives here.

use crate::provider::{Listing, Provider, TextStream};
use crate::tools;
use dsh_fs_core as core;
use std::cell::RefCell;

wit_bindgen::generate!({
    world: "fs-tools",
    path: "../wit",
});

use dsh::fs::provider as seam;
use dsh::fs::types as wit;
use exports::dsh::fs::tools as api;

/// The imported provider.
struct Imported;

impl Provider for Imported {
    type Target = seam::Target;
    type Stream = seam::TextStream;
    type Listing = seam::Listing;

    fn resolve(&self, path: &str) -> Result<seam::Target, core::FsError> {
        seam::resolve(path).map_err(Into::into)
    }

    fn display_path(&self, target: &seam::Target) -> String {
        target.display_path()
    }

    fn key(&self, target: &seam::Target) -> String {
        target.key()
    }

    fn stat(&self, target: &seam::Target) -> Result<Option<core::FsInfo>, core::FsError> {
        Ok(seam::stat(target)?.map(|i| core::FsInfo {
            version: i.version,
            kind: match i.kind {
                wit::EntryKind::File => core::EntryKind::File,
                wit::EntryKind::Directory => core::EntryKind::Directory,
                wit::EntryKind::Other => core::EntryKind::Other,
            },
            size: i.size,
        }))
    }

    fn read_text(
        &self,
        target: &seam::Target,
        max_bytes: u64,
    ) -> Result<core::TextContent, core::FsError> {
        Ok(text_content(seam::read_text(target, max_bytes)?))
    }

    fn read_path(&self, path: &str, max_bytes: u64) -> Result<core::PathText, core::FsError> {
        let found = seam::read_path(path, max_bytes)?;
        Ok(core::PathText {
            display_path: found.display_path,
            key: found.key,
            content: found.content.map(text_content).map_err(Into::into),
        })
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
        let intent = intent.map(|i| match i {
            core::WriteIntent::CreateIfAbsent => wit::WriteIntent::CreateIfAbsent,
            core::WriteIntent::ReplaceIfVersion(v) => wit::WriteIntent::ReplaceIfVersion(v),
        });
        let o = seam::write_text(target, content, intent.as_ref())?;
        Ok(core::WriteOutcome {
            operation: match o.operation {
                wit::WriteOperation::Created => core::WriteOperation::Created,
                wit::WriteOperation::Updated => core::WriteOperation::Updated,
            },
            version: o.version,
        })
    }

    fn edit_text(
        &self,
        target: &seam::Target,
        edit: &core::EditRequest,
        expected: Option<&str>,
    ) -> Result<core::EditOutcome, core::FsError> {
        let request = wit::EditRequest {
            old_string: edit.old_string.clone(),
            new_string: edit.new_string.clone(),
            replace_all: edit.replace_all,
        };
        let o = seam::edit_text(target, &request, expected)?;
        Ok(core::EditOutcome {
            replacements: o.replacements,
            version: o.version,
            first_line: o.first_line,
        })
    }

    fn list_dir(&self, target: &seam::Target) -> Result<seam::Listing, core::FsError> {
        seam::list_dir(target).map_err(Into::into)
    }

    fn search(
        &self,
        target: &seam::Target,
        query: &core::SearchQuery,
    ) -> Result<Option<String>, core::FsError> {
        let query = match query {
            core::SearchQuery::Glob(pattern) => wit::SearchQuery::Glob(pattern.clone()),
            core::SearchQuery::Grep { pattern, include } => {
                wit::SearchQuery::Grep(wit::GrepQuery {
                    pattern: pattern.clone(),
                    include: include.clone(),
                })
            }
        };
        seam::search(target, &query).map_err(Into::into)
    }
}

impl Listing for seam::Listing {
    fn next_entries(&mut self, max: u32) -> Result<Vec<core::DirEntry>, core::FsError> {
        let page = self.next(max)?;
        Ok(page
            .into_iter()
            .map(|e| core::DirEntry {
                name: e.name,
                kind: match e.kind {
                    wit::DirEntryKind::File => core::DirEntryKind::File,
                    wit::DirEntryKind::Directory => core::DirEntryKind::Directory,
                    wit::DirEntryKind::Symlink => core::DirEntryKind::Symlink,
                    wit::DirEntryKind::Other => core::DirEntryKind::Other,
                },
                size: e.size,
                modified: e.modified,
            })
            .collect())
    }

    fn skipped(&self) -> u64 {
        seam::Listing::skipped(self)
    }
}

impl TextStream for seam::TextStream {
    fn next_chunk(&mut self, max_bytes: u32) -> Result<Option<String>, core::FsError> {
        self.next(max_bytes).map_err(Into::into)
    }

    fn version(&self) -> Option<String> {
        seam::TextStream::version(self)
    }
}

fn text_content(c: wit::TextContent) -> core::TextContent {
    core::TextContent {
        text: c.text,
        version: c.version,
    }
}

impl From<wit::FsError> for core::FsError {
    fn from(e: wit::FsError) -> Self {
        use core::ErrorCode as C;
        use wit::ErrorCode as W;
        let code = match e.code {
            W::NotFound => C::NotFound,
            W::NotText => C::NotText,
            W::NotRegularFile => C::NotRegularFile,
            W::NotDirectory => C::NotDirectory,
            W::StaleVersion => C::StaleVersion,
            W::NotObserved => C::NotObserved,
            W::AmbiguousEdit => C::AmbiguousEdit,
            W::EditNotFound => C::EditNotFound,
            W::SandboxDenied => C::SandboxDenied,
            W::PermissionDenied => C::PermissionDenied,
            W::TooLarge => C::TooLarge,
            W::IoError => C::IoError,
            W::Aborted => C::Aborted,
            W::Busy => C::Busy,
            W::InvalidInput => C::InvalidInput,
        };
        core::FsError::new(code, e.message)
    }
}

/// The exported component.
struct Component;

impl api::Guest for Component {
    type Session = SessionResource;

    fn definitions() -> Vec<api::ToolDefinition> {
        tools::definitions()
            .into_iter()
            .map(|d| api::ToolDefinition {
                name: d.name.into(),
                description: d.description.into(),
                guidance: d.guidance.into(),
                parameters: d.parameters,
            })
            .collect()
    }
}

/// The exported `session` resource.
struct SessionResource(RefCell<tools::Session<Imported>>);

impl api::GuestSession for SessionResource {
    fn new(options: api::SessionOptions) -> Self {
        SessionResource(RefCell::new(tools::Session::new(
            Imported,
            options.observation_policy,
        )))
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

//! The executor: tool definitions, argument parsing and dispatch to the one
//! file per tool. A [`Session`] owns the policy's observations.

mod args;
mod artefacts;
mod diagnose;
mod diff;
mod edit;
mod elided;
mod glob;
mod grep;
mod journal;
mod multi_edit;
mod read;
mod spelling;
mod suggest;
mod tree;
mod undo;
mod window;
mod write;

pub use journal::JournalKeeper;
pub use read::MAX_LINES;
pub use window::{LineIndex, MAX_LINE_CHARS, MAX_OUTPUT_BYTES, Window};

use crate::error::{Tool, ToolError};
use crate::policy::{Memory, Policy};
use dsh_fs_core::provider::{Provider, Resolved, TextStream};
use dsh_fs_core::{EntryKind, ErrorCode, FsError, SearchQuery};
use dsh_fs_search::Budget;

/// What a tool may do to the workspace, for clients' permission prompts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hints {
    /// It changes nothing.
    pub read_only: bool,
    /// It may replace what is there.
    pub destructive: bool,
    /// The same call again changes nothing more.
    pub idempotent: bool,
}

impl Hints {
    /// A tool that only looks.
    pub const READS: Hints = Hints {
        read_only: true,
        destructive: false,
        idempotent: true,
    };
}

/// One tool as the model sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolDefinition {
    /// `read`, `write`, `edit`, `glob` or `grep`.
    pub name: &'static str,
    /// A short title for people: `Read file`.
    pub title: &'static str,
    /// What it may do.
    pub hints: Hints,
    /// What the tool does, including the observation policy.
    pub description: &'static str,
    /// Longer advice for a system prompt.
    pub guidance: &'static str,
    /// JSON Schema of the arguments.
    pub parameters: String,
}

/// The answer to one call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolResult {
    /// The text for the model.
    pub text: String,
    /// The structured error, when the call failed.
    pub error: Option<ToolError>,
}

impl ToolResult {
    fn ok(text: String) -> Self {
        ToolResult { text, error: None }
    }

    fn err(error: ToolError) -> Self {
        ToolResult {
            text: error.text(),
            error: Some(error),
        }
    }

    /// Whether the call failed.
    pub fn is_error(&self) -> bool {
        self.error.is_some()
    }
}

/// The definitions of every tool, in a stable order.
pub fn definitions() -> Vec<ToolDefinition> {
    vec![
        read::SPEC.definition(),
        write::SPEC.definition(),
        edit::SPEC.definition(),
        glob::SPEC.definition(),
        grep::SPEC.definition(),
    ]
}

/// Tools a host may offer besides [`definitions`], each only when it turns
/// it on (so the list every model is given stays as small as it is):
/// `multi_edit`, several edits of one file in one atomic change; and
/// `checkpoint`, `changes` and `revert`, the session's change journal. A
/// session runs them whether or not they are offered.
pub fn extra_definitions() -> Vec<ToolDefinition> {
    vec![
        multi_edit::SPEC.definition(),
        undo::CHECKPOINT.definition(),
        undo::CHANGES.definition(),
        undo::REVERT.definition(),
    ]
}

/// One agent session over a provider: the owner of observations.
#[derive(Debug)]
pub struct Session<P> {
    provider: P,
    policy: Policy,
    /// Line indexes of large files this session streamed, newest last.
    index: Vec<(String, window::LineIndex)>,
    /// What this session changed, from its first checkpoint on.
    journal: Option<journal::Journal>,
    /// Most bytes of old text the journal may hold; 0: no journal.
    journal_budget: usize,
    /// Where the journal outlives the instance, when it must.
    keeper: Option<Box<dyn JournalKeeper>>,
}

impl<P: Provider> Session<P> {
    /// A session with no observations; `observation_policy = false` makes
    /// every write and edit unconditional.
    pub fn new(provider: P, observation_policy: bool) -> Self {
        Session {
            provider,
            policy: Policy::new(observation_policy),
            index: Vec::new(),
            journal: None,
            journal_budget: journal::DEFAULT_BUDGET,
            keeper: None,
        }
    }

    /// A session that keeps its observations in `memory` rather than in
    /// itself: for a host that runs each call in a fresh instance.
    pub fn with_memory(provider: P, observation_policy: bool, memory: Box<dyn Memory>) -> Self {
        Session {
            provider,
            policy: Policy::with_memory(observation_policy, memory),
            index: Vec::new(),
            journal: None,
            journal_budget: journal::DEFAULT_BUDGET,
            keeper: None,
        }
    }

    /// The session with a change journal of at most `bytes` of old text
    /// (the default is 32 MiB); 0 keeps no journal, and `checkpoint` says so.
    pub fn with_journal_budget(mut self, bytes: u64) -> Self {
        self.journal_budget = usize::try_from(bytes).unwrap_or(usize::MAX);
        self
    }

    /// The session with its change journal kept by `keeper` (set the
    /// budget first): the journal it saved last is this session's, and every
    /// call that changes it saves it there, for a host that runs each call
    /// in a fresh instance.
    pub fn with_journal_keeper(mut self, keeper: Box<dyn JournalKeeper>) -> Self {
        if self.journal_budget > 0 {
            self.journal = keeper
                .load()
                .and_then(|index| journal::Journal::from_image(&index, self.journal_budget));
        }
        self.keeper = Some(keeper);
        self
    }

    /// Whether the session keeps a change journal now (it starts at the
    /// first checkpoint).
    pub fn journaling(&self) -> bool {
        self.journal.is_some()
    }

    /// Saves the journal with the keeper, if it has one and the journal
    /// changed since `generation`: why it could not, if it could not.
    fn keep_journal(&mut self, generation: Option<u64>) -> Option<String> {
        let (Some(keeper), Some(journal)) = (self.keeper.as_mut(), self.journal.as_mut()) else {
            return None;
        };
        if generation == Some(journal.generation) {
            return None;
        }
        let saved = journal.image(keeper.as_mut()).and_then(|(index, live)| {
            keeper.save(&index)?;
            let live: Vec<&str> = live.iter().map(String::as_str).collect();
            keeper.forget_others(&live);
            Ok(())
        });
        saved.err()
    }

    /// Loads the kept texts of the journal's changes from `from` on.
    fn load_journal_texts(&mut self, from: usize) {
        if let (Some(keeper), Some(journal)) = (self.keeper.as_ref(), self.journal.as_mut()) {
            journal.load_texts(from, keeper.as_ref());
        }
    }

    /// The provider this session uses.
    pub fn provider(&self) -> &P {
        &self.provider
    }

    /// Ends the session, handing its provider back (to the next session of
    /// a host that makes one per call).
    pub fn into_provider(self) -> P {
        self.provider
    }

    /// Runs one call. Never panics on bad input: every failure is an error result.
    pub fn execute(&mut self, tool: &str, arguments_json: &str) -> ToolResult {
        if arguments_json.len() > dsh_fs_core::MAX_ARGUMENT_BYTES {
            return ToolResult::err(too_large_arguments(tool, arguments_json.len()));
        }
        let generation = self.journal.as_ref().map(|j| j.generation);
        let outcome = match tool {
            "read" => read::run(self, arguments_json),
            "write" => write::run(self, arguments_json),
            "edit" => edit::run(self, arguments_json),
            "multi_edit" => multi_edit::run(self, arguments_json),
            "checkpoint" => undo::checkpoint(self, arguments_json),
            "changes" => undo::changes(self, arguments_json),
            "revert" => undo::revert(self, arguments_json),
            "glob" => glob::run(self, arguments_json),
            "grep" => grep::run(self, arguments_json),
            other => Err(ToolError::unknown_tool(other)),
        };
        let mut result = match outcome {
            Ok(text) => ToolResult::ok(text),
            Err(e) => ToolResult::err(e),
        };
        if let Some(why) = self.keep_journal(generation) {
            result.text.push_str(&format!(
                "\n(Note: dsh-fs could not save the change journal ({why}); changes and revert \
will not know of this call's changes.)"
            ));
        }
        result
    }

    /// What `target` is before a change, when the session keeps a journal;
    /// `read`: its text and version, if the caller has them.
    fn before_change(
        &self,
        target: &P::Target,
        read: Option<(&str, &str)>,
    ) -> Option<journal::Before> {
        self.journal
            .as_ref()
            .map(|j| j.capture(&self.provider, target, read))
    }

    /// Journals a committed change of `target` from `before` to `after`.
    fn journal_change(
        &mut self,
        target: &P::Target,
        display: &str,
        before: Option<journal::Before>,
        after: &str,
    ) {
        if let (Some(journal), Some(before)) = (self.journal.as_mut(), before) {
            journal.record(journal::Change {
                key: target.key(),
                path: display.to_owned(),
                before,
                after: Some(after.to_owned()),
            });
        }
    }

    /// Keeps the line index of `key`, dropping the oldest beyond [`INDEXED_FILES`].
    fn remember(&mut self, key: String, index: window::LineIndex) {
        self.index.retain(|(k, _)| *k != key);
        if self.index.len() == INDEXED_FILES {
            self.index.remove(0);
        }
        self.index.push((key, index));
    }

    /// The line index of `key`, if this session built one.
    fn indexed(&self, key: &str) -> Option<&window::LineIndex> {
        self.index.iter().find(|(k, _)| k == key).map(|(_, ix)| ix)
    }

    /// Resolves `path` for `tool`, mapping failures to the model-facing error.
    /// Resolves a model path. A trailing `/` promises a directory: on a
    /// regular file it is `not-directory`, and nothing is written to it.
    fn resolve(&self, tool: Tool, path: &str) -> Result<P::Target, ToolError> {
        let fail = |e| ToolError::from_fs(tool, e);
        let target = self.provider.resolve(path).map_err(fail)?;
        if path.len() > 1 && path.ends_with('/') {
            let display = self.display(&target);
            match self.provider.stat(&target).map_err(fail)? {
                Some(info) if info.kind == EntryKind::File => {
                    return Err(fail(FsError::new(
                        ErrorCode::NotDirectory,
                        format!(
                            "{display}/ ends with `/`, but {display} is a regular file: drop the `/`"
                        ),
                    )));
                }
                None if tool == Tool::Write => {
                    return Err(fail(FsError::new(
                        ErrorCode::InvalidInput,
                        format!("{display}/ ends with `/`: a file path names a file, drop the `/`"),
                    )));
                }
                _ => {}
            }
        }
        Ok(target)
    }

    /// Runs a discovery `query` from the model's `path` (the root when
    /// absent), confined like `read`: natively when the provider offers it,
    /// otherwise over its listings and text streams, within the search
    /// budget either way. Discovery observes nothing: the read-before-edit
    /// policy is untouched.
    fn discover(
        &self,
        tool: Tool,
        path: Option<String>,
        query: SearchQuery,
    ) -> Result<String, ToolError> {
        let path = path.filter(|p| !p.is_empty()).unwrap_or_else(|| ".".into());
        let target = self.resolve(tool, &path)?;
        let found = self.provider.search(&target, &query).and_then(|native| {
            if let Some(text) = native {
                return Ok(text);
            }
            let shown = target.display_path();
            let at = if shown == "." { "" } else { shown.as_str() };
            let tree = tree::ProviderTree {
                provider: &self.provider,
            };
            dsh_fs_search::search(&tree, at, &query, &Budget::default())
        });
        found.map_err(|e| match e.code {
            ErrorCode::NotFound => {
                suggest::not_found(&self.provider, tool, &path, &self.display(&target))
            }
            _ => ToolError::from_fs(tool, e),
        })
    }

    /// The path shown to the model, with control characters escaped: a
    /// crafted file name cannot fake lines of a tool's output.
    fn display(&self, target: &P::Target) -> String {
        crate::error::one_line(target.display_path())
    }
}

/// Bytes of an unobserved file decoded to tell text from binary.
const PROBE_BYTES: u32 = 64 * 1024;

/// Why a change to `target`, which this session has not observed, is
/// refused: what the target is comes first (missing, not a regular file, not
/// text), and only for an existing text file the policy's `not_observed`.
#[cold]
fn refuse_unobserved<P: Provider>(
    provider: &P,
    target: &P::Target,
    asked: &str,
    display: &str,
    tool: Tool,
    not_observed: FsError,
) -> ToolError {
    let fail = |e| ToolError::from_fs(tool, e);
    match provider.stat(target) {
        Ok(None) => suggest::not_found(provider, tool, asked, display),
        Ok(Some(info)) => match info.kind {
            EntryKind::Directory => fail(FsError::new(
                ErrorCode::NotRegularFile,
                format!("{display} is a directory"),
            )),
            EntryKind::Other => fail(FsError::new(
                ErrorCode::NotRegularFile,
                format!("{display} is not a regular file (it is a FIFO, socket or device)"),
            )),
            EntryKind::File => {
                match provider
                    .stream_text(target, 0)
                    .and_then(|mut s| s.next_chunk(PROBE_BYTES))
                {
                    Err(e) => fail(e),
                    Ok(_) => fail(not_observed),
                }
            }
        },
        Err(e) => fail(e),
    }
}

/// Streams the text of `target` from its start into `each` until it
/// returns false or the text ends.
fn stream_each<P: Provider>(
    provider: &P,
    target: &P::Target,
    mut each: impl FnMut(&str) -> bool,
) -> Result<(), FsError> {
    let mut stream = provider.stream_text(target, 0)?;
    while let Some(chunk) = stream.next_chunk(read::STREAM_CHUNK)? {
        if !each(&chunk) {
            break;
        }
    }
    Ok(())
}

/// Streams the lines of `target` into `each` with their numbers (1-based),
/// without their `\n`, until it returns false or the text ends; a line
/// longer than `max_line` bytes is cut there.
fn stream_lines<P: Provider>(
    provider: &P,
    target: &P::Target,
    max_line: usize,
    mut each: impl FnMut(u64, &str) -> bool,
) -> Result<(), FsError> {
    let mut carry = String::new();
    let mut no = 1;
    let mut going = true;
    let keep = |carry: &mut String, piece: &str| {
        let mut room = max_line.saturating_sub(carry.len()).min(piece.len());
        while !piece.is_char_boundary(room) {
            room -= 1;
        }
        carry.push_str(&piece[..room]);
    };
    stream_each(provider, target, |chunk| {
        let mut rest = chunk;
        while let Some(at) = memchr::memchr(b'\n', rest.as_bytes()) {
            keep(&mut carry, &rest[..at]);
            going = each(no, &carry);
            carry.clear();
            no += 1;
            if !going {
                return false;
            }
            rest = &rest[at + 1..];
        }
        keep(&mut carry, rest);
        true
    })?;
    if going && !carry.is_empty() {
        each(no, &carry);
    }
    Ok(())
}

/// Large files whose line index a session keeps (about 16 KiB per GiB each).
const INDEXED_FILES: usize = 8;

/// INVALID_ARGS for an arguments object over [`dsh_fs_core::MAX_ARGUMENT_BYTES`].
#[cold]
pub fn too_large_arguments(tool: &str, len: usize) -> ToolError {
    ToolError::refused(dsh_fs_core::too_large_arguments(tool, len))
}

/// Formats `n` with a unit, `1 line` / `2 lines`.
fn plural(n: u64, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn schemas_are_snake_case_with_the_documented_required_sets() {
        let defs = definitions();
        let names: Vec<_> = defs.iter().map(|d| d.name).collect();
        assert_eq!(names, ["read", "write", "edit", "glob", "grep"]);
        let expect: [(&str, &[&str], &[&str]); 5] = [
            ("read", &["file_path"], &["offset", "limit"]),
            ("write", &["file_path", "content"], &[]),
            (
                "edit",
                &["file_path", "old_string", "new_string"],
                &["replace_all"],
            ),
            ("glob", &["pattern"], &["path"]),
            ("grep", &["pattern"], &["path", "include"]),
        ];
        for (def, (name, required, optional)) in defs.iter().zip(expect) {
            assert_eq!(def.name, name);
            let schema: Value = serde_json::from_str(&def.parameters).unwrap();
            assert_eq!(schema["type"], "object");
            assert_eq!(schema["additionalProperties"], false);
            let req: Vec<&str> = schema["required"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap())
                .collect();
            assert_eq!(req, required, "{name}");
            let props = schema["properties"].as_object().unwrap();
            let mut all: Vec<&str> = required.iter().chain(optional).copied().collect();
            all.sort();
            let mut got: Vec<&str> = props.keys().map(String::as_str).collect();
            got.sort();
            assert_eq!(got, all, "{name}");
            for (key, prop) in props {
                assert!(
                    key.chars().all(|c| c.is_ascii_lowercase() || c == '_'),
                    "{key}"
                );
                assert!(
                    prop["description"].as_str().is_some_and(|d| !d.is_empty()),
                    "{key}"
                );
            }
        }
    }

    #[test]
    fn replace_all_defaults_to_false_and_limits_are_declared() {
        let defs = definitions();
        let edit: Value = serde_json::from_str(&defs[2].parameters).unwrap();
        assert_eq!(edit["properties"]["replace_all"]["default"], false);
        assert_eq!(edit["properties"]["old_string"]["minLength"], 1);
        let read: Value = serde_json::from_str(&defs[0].parameters).unwrap();
        assert_eq!(read["properties"]["offset"]["minimum"], 1);
        assert_eq!(read["properties"]["limit"]["maximum"], 2000);
    }

    #[test]
    fn descriptions_explain_the_policy_once() {
        for def in definitions() {
            let text = format!("{} {}", def.description, def.guidance).to_lowercase();
            let changes = matches!(def.name, "read" | "write" | "edit");
            assert_eq!(text.contains("read-before-write"), changes, "{}", def.name);
            assert_eq!(
                text.contains("fs_stale_version"),
                def.name == "read",
                "{}",
                def.name
            );
        }
    }
}

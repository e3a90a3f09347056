//! Model-facing errors: a stable code and one line that says what went wrong
//! and what to do next. The remedy for each provider error lives here, once.

use dsh_fs_core::{ErrorCode, FsError};

/// A failed tool call as the model sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolError {
    /// Stable code: `INVALID_ARGS`, `UNKNOWN_TOOL`, or an `FS_*` code.
    pub code: String,
    /// What went wrong and the next step: one line.
    pub message: String,
    /// Lines quoted under the message (the place in the file, as `read`
    /// numbers it), or empty.
    pub detail: String,
}

/// Which tool failed, to tailor the remedy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tool {
    /// `read`
    Read,
    /// `write`
    Write,
    /// `edit`
    Edit,
    /// `glob`
    Glob,
    /// `grep`
    Grep,
}

impl Tool {
    /// The public name.
    pub fn name(self) -> &'static str {
        match self {
            Tool::Read => "read",
            Tool::Write => "write",
            Tool::Edit => "edit",
            Tool::Glob => "glob",
            Tool::Grep => "grep",
        }
    }
}

impl ToolError {
    /// Bad arguments: names the tool and what to fix.
    #[cold]
    pub fn invalid_args(tool: &str, what: impl std::fmt::Display) -> Self {
        ToolError {
            code: "INVALID_ARGS".into(),
            message: one_line(format!(
                "{tool}: {what}. Fix the arguments and call {tool} again."
            )),
            detail: String::new(),
        }
    }

    /// Arguments refused because the call would do harm the model did not
    /// ask for: `message` says why, that nothing changed, and what to send.
    #[cold]
    pub fn refused(message: String) -> Self {
        ToolError {
            code: "INVALID_ARGS".into(),
            message: one_line(message),
            detail: String::new(),
        }
    }

    /// A tool name the component does not have.
    #[cold]
    pub fn unknown_tool(name: &str) -> Self {
        let shown: String = name.chars().take(64).collect();
        ToolError {
            code: "UNKNOWN_TOOL".into(),
            message: format!(
                "there is no tool named {shown:?}; the tools are read, write, edit, glob and grep."
            ),
            detail: String::new(),
        }
    }

    /// A provider error with the remedy for `tool`.
    #[cold]
    pub fn from_fs(tool: Tool, err: FsError) -> Self {
        let remedy = remedy(tool, err.code);
        let mut message = err.message;
        if !message.ends_with('.') {
            message.push('.');
        }
        if !remedy.is_empty() {
            message.push(' ');
            message.push_str(remedy);
        }
        ToolError {
            code: err.code.as_str().into(),
            message: one_line(message),
            detail: String::new(),
        }
    }

    /// FS_EDIT_NOT_FOUND with a diagnosis: `message` says what differs and
    /// what to do, `excerpt` shows the place.
    #[cold]
    pub fn edit_not_found(path: &str, message: &str, excerpt: String) -> Self {
        ToolError {
            code: ErrorCode::EditNotFound.as_str().into(),
            message: one_line(format!("old_string was not found in {path}; {message}")),
            detail: excerpt,
        }
    }

    /// The text shown to the model: `CODE: message`, then the quoted lines.
    pub fn text(&self) -> String {
        if self.detail.is_empty() {
            format!("{}: {}", self.code, self.message)
        } else {
            format!("{}: {}\n{}", self.code, self.message, self.detail)
        }
    }
}

/// `s` with control characters escaped, so a message is always one line
/// (paths and field names may contain newlines).
pub(crate) fn one_line(s: String) -> String {
    match dsh_fs_core::text::one_line(&s) {
        std::borrow::Cow::Borrowed(_) => s,
        escaped => escaped.into_owned(),
    }
}

/// What the model should try next after `code` from `tool`.
fn remedy(tool: Tool, code: ErrorCode) -> &'static str {
    use ErrorCode::*;
    match (code, tool) {
        (NotFound, Tool::Edit) => "Check the path; use write to create a new file.",
        (NotFound, Tool::Glob | Tool::Grep) => "Check the path, or search from the root.",
        (NotFound, _) => "Check the path and try again.",
        (NotText, Tool::Glob | Tool::Grep) => "Search a directory of text files instead.",
        (NotText, _) => "These tools handle UTF-8 text files only.",
        (NotRegularFile, Tool::Glob | Tool::Grep) => "Give a file or directory inside the root.",
        (NotRegularFile, _) => "Give the path of a regular file.",
        (NotDirectory, Tool::Glob | Tool::Grep) => "Then call it again.",
        (NotDirectory, _) => "A parent of that path is a file; choose another path.",
        (StaleVersion, _) => "Read the file again, then retry the change on its current content.",
        (NotObserved, Tool::Write) => {
            "Read it first (any window counts), then retry the write, or write to a new path."
        }
        (NotObserved, _) => "Read it first (any window counts), then retry.",
        (AmbiguousEdit, _) => {
            "Add surrounding lines to old_string so it matches exactly one place, or set replace_all to true."
        }
        (EditNotFound, _) => {
            "Read the file again and copy old_string exactly, including whitespace and indentation."
        }
        (SandboxDenied, _) => "Use a path inside the workspace.",
        (PermissionDenied, _) => "The file cannot be accessed; choose another path.",
        (TooLarge, Tool::Read) => "Read a smaller window with offset and limit.",
        (TooLarge, Tool::Glob | Tool::Grep) => "Search a smaller directory below it.",
        (TooLarge, _) => "The file is too large for this operation.",
        (IoError, _) | (Aborted, _) => {
            "Retry the call once; if it fails again, stop and report it."
        }
        (InvalidInput, Tool::Glob | Tool::Grep) => "Then call it again.",
        (InvalidInput, _) => "Fix the argument and retry.",
        (Busy, _) => "Nothing was changed; retry in a few seconds.",
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_has_a_remedy_for_every_tool() {
        for code in ErrorCode::ALL {
            for tool in [Tool::Read, Tool::Write, Tool::Edit, Tool::Glob, Tool::Grep] {
                assert!(!remedy(tool, code).is_empty(), "{code} {tool:?}");
            }
        }
    }

    #[test]
    fn messages_are_one_line_whatever_the_input() {
        let e = ToolError::from_fs(Tool::Read, FsError::not_found("a\nb\r.txt"));
        assert_eq!(
            e.message,
            "a\\nb\\r.txt does not exist. Check the path and try again."
        );
        let e = ToolError::invalid_args("edit", "unknown field `x\ny`");
        assert!(!e.message.contains('\n'), "{}", e.message);
    }

    #[test]
    fn message_carries_the_code_and_the_next_step() {
        let e = ToolError::from_fs(Tool::Edit, FsError::stale("a.txt"));
        assert_eq!(e.code, "FS_STALE_VERSION");
        assert_eq!(
            e.text(),
            "FS_STALE_VERSION: a.txt changed since it was last read. \
             Read the file again, then retry the change on its current content."
        );
    }
}

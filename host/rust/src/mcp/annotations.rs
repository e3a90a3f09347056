//! What MCP clients show and ask about before a call: each tool's `title` and
//! its behaviour hints (`readOnlyHint`, `destructiveHint`, `idempotentHint`,
//! `openWorldHint`), which clients use for permission prompts.

use rmcp::model::{Tool, ToolAnnotations};

/// `tool` with its title and hints. Every tool works inside one workspace, so
/// none is open-world. A tool this table does not know gets the protocol's
/// cautious defaults spelled out (it may change and destroy, and is not
/// idempotent), so a client never waves it through as harmless.
pub(super) fn annotate(tool: Tool) -> Tool {
    let (title, read_only, destructive, idempotent) = match tool.name.as_ref() {
        // Reads change nothing.
        "read" => ("Read file", true, false, true),
        // Replaces a whole file; writing the same content again changes nothing.
        "write" => ("Write file", false, true, true),
        // Replaces text in place; the same edit again may apply again
        // (`new_string` can contain `old_string`).
        "edit" => ("Edit file", false, true, false),
        // Discovery lists names and reads lines; it changes nothing.
        "glob" => ("Find files", true, false, true),
        "grep" => ("Search file contents", true, false, true),
        _ => ("", false, true, false),
    };
    let title = match title {
        "" => tool.name.to_string(),
        known => known.to_owned(),
    };
    let annotations = ToolAnnotations::with_title(title.clone())
        .read_only(read_only)
        .destructive(destructive)
        .idempotent(idempotent)
        .open_world(false);
    tool.with_title(title).with_annotations(annotations)
}

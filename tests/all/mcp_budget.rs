//! What every model pays before its first call: the model-facing part of
//! `tools/list` (names, descriptions, JSON Schemas) and the server
//! instructions from `initialize`, measured as they go over the wire. Titles
//! and annotations are for the client's permission prompts, not the model's
//! context, and are reported apart.

use crate::Workspace;
use rmcp::ServiceExt;
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};

/// The budget for both together, in bytes of JSON text: 2560 for read, write
/// and edit; glob and grep (two schemas, descriptions, guidance) cost about
/// 950 more, measured at 3393 in all.
const BUDGET: usize = 3400;

/// What `dsh-fs mcp --root WS EXTRA...` lists: the model-facing JSON of
/// `tools/list`, the instructions, and the bytes of titles and annotations.
async fn list_tools(extra: &[&str]) -> (String, String, usize, Vec<String>) {
    let ws = Workspace::new();
    let root = ws.root.clone();
    let cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_dsh-fs")).configure(|c| {
        c.args(["mcp", "--root"])
            .arg(&root)
            .args(extra)
            .env("DSH_FS_CACHE_DIR", crate::cache_dir());
    });
    let client = ().serve(TokioChildProcess::new(cmd).unwrap()).await.unwrap();
    let instructions = client
        .peer_info()
        .and_then(|i| i.instructions.clone())
        .unwrap_or_default();
    let tools = client.list_all_tools().await.unwrap();
    let names = tools.iter().map(|t| t.name.to_string()).collect();
    let mut model_facing = serde_json::to_value(&tools).unwrap();
    for tool in model_facing.as_array_mut().unwrap() {
        let tool = tool.as_object_mut().unwrap();
        tool.remove("title");
        tool.remove("annotations");
    }
    let listed = serde_json::to_string(&model_facing).unwrap();
    let metadata = serde_json::to_string(&tools).unwrap().len() - listed.len();
    client.cancel().await.unwrap();
    (listed, instructions, metadata, names)
}

#[tokio::test(flavor = "multi_thread")]
async fn tool_definitions_and_instructions_fit_the_budget() {
    let (listed, instructions, metadata, _) = list_tools(&[]).await;
    let total = listed.len() + serde_json::to_string(&instructions).unwrap().len();
    eprintln!(
        "tools/list {} B + instructions {} B = {total} B (titles and annotations: {metadata} B more)",
        listed.len(),
        instructions.len()
    );
    assert!(total <= BUDGET, "{total} B:\n{listed}\n{instructions}");
    // Each rule once: the policy's error code and read's prefix rule.
    let all = format!("{listed}{instructions}");
    assert_eq!(all.matches("FS_STALE_VERSION").count(), 1, "{all}");
    assert_eq!(all.matches("`N: ").count(), 2, "{all}"); // read's format, edit's advice
    assert!(
        instructions.contains("edit: Copy old_string"),
        "{instructions}"
    );
}

/// What `multi_edit` adds when a host turns it on, at most (measured at
/// 1,003 B with its guidance); the list without it is the one above.
const MULTI_EDIT_BUDGET: usize = 1024;

/// What `checkpoint`, `changes` and `revert` add together, at most
/// (measured at 1,271 B).
const UNDO_BUDGET: usize = 1300;

#[tokio::test(flavor = "multi_thread")]
async fn an_extra_tool_is_listed_only_when_turned_on_and_costs_what_it_says() {
    let (plain, plain_instructions, _, names) = list_tools(&[]).await;
    assert_eq!(names, ["read", "write", "edit", "glob", "grep"]);
    let (listed, instructions, _, names) = list_tools(&["--extra-tools", "multi_edit"]).await;
    assert_eq!(
        names,
        ["read", "write", "edit", "glob", "grep", "multi_edit"]
    );
    let added = listed.len() + instructions.len() - plain.len() - plain_instructions.len();
    eprintln!("multi_edit adds {added} B to tools/list and the instructions");
    assert!(
        added <= MULTI_EDIT_BUDGET,
        "{added} B:\n{listed}\n{instructions}"
    );
    assert!(
        instructions.contains("multi_edit: Use it for several changes"),
        "{instructions}"
    );
    let (listed, instructions, _, names) =
        list_tools(&["--extra-tools", "checkpoint,changes,revert"]).await;
    assert_eq!(names[5..], ["checkpoint", "changes", "revert"]);
    let undo = listed.len() + instructions.len() - plain.len() - plain_instructions.len();
    eprintln!("checkpoint, changes and revert add {undo} B");
    assert!(undo <= UNDO_BUDGET, "{undo} B:\n{listed}\n{instructions}");
    let refused = std::process::Command::new(env!("CARGO_BIN_EXE_dsh-fs"))
        .args(["mcp", "--root", ".", "--extra-tools", "undo"])
        .env("DSH_FS_CACHE_DIR", crate::cache_dir())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(!refused.status.success());
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(
        said.contains("there is no extra tool named \"undo\"; the extra tools are multi_edit"),
        "{said}"
    );
}

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

#[tokio::test(flavor = "multi_thread")]
async fn tool_definitions_and_instructions_fit_the_budget() {
    let ws = Workspace::new();
    let root = ws.root.clone();
    let cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_dsh-fs")).configure(|c| {
        c.args(["mcp", "--root"])
            .arg(&root)
            .env("DSH_FS_CACHE_DIR", crate::cache_dir());
    });
    let client = ().serve(TokioChildProcess::new(cmd).unwrap()).await.unwrap();
    let instructions = client
        .peer_info()
        .and_then(|i| i.instructions.clone())
        .unwrap_or_default();
    let tools = client.list_all_tools().await.unwrap();
    let mut model_facing = serde_json::to_value(&tools).unwrap();
    for tool in model_facing.as_array_mut().unwrap() {
        let tool = tool.as_object_mut().unwrap();
        tool.remove("title");
        tool.remove("annotations");
    }
    let listed = serde_json::to_string(&model_facing).unwrap();
    let metadata = serde_json::to_string(&tools).unwrap().len() - listed.len();
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
    client.cancel().await.unwrap();
}

//! `dsh-fs mcp` end to end: a subprocess driven by the rmcp client over stdio.

use crate::Workspace;
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult, JsonObject};
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use serde_json::{Value, json};

fn text(r: &CallToolResult) -> String {
    r.content[0]
        .as_text()
        .map(|t| t.text.clone())
        .unwrap_or_default()
}

fn params(tool: &'static str, args: Value) -> CallToolRequestParams {
    let Value::Object(map) = args else {
        unreachable!()
    };
    CallToolRequestParams::new(tool).with_arguments(JsonObject::from_iter(map))
}

#[tokio::test(flavor = "multi_thread")]
async fn read_edit_stale_reread_edit_over_mcp() {
    let ws = Workspace::new();
    ws.write("app.py", "def main():\r\n    print('hello')\r\n");
    let root = ws.root.clone();
    let cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_dsh-fs")).configure(|c| {
        c.args(["mcp", "--root"])
            .arg(&root)
            .env("DSH_FS_CACHE_DIR", crate::cache_dir());
    });
    let client = ().serve(TokioChildProcess::new(cmd).unwrap()).await.unwrap();
    let info = client.peer_info().unwrap();
    assert_eq!(info.server_info.as_ref().unwrap().name, "dsh-fs");

    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<_> = tools.iter().map(|t| t.name.to_string()).collect();
    assert_eq!(names, ["read", "write", "edit", "glob", "grep"]);
    assert_eq!(
        tools[2].input_schema["properties"]["replace_all"]["default"],
        false
    );

    let read = client
        .call_tool(params("read", json!({"file_path": "app.py"})))
        .await
        .unwrap();
    assert_eq!(read.is_error, Some(false));
    assert_eq!(
        text(&read),
        "File: app.py\n1: def main():\n2:     print('hello')\n(End of file: 2 lines.)"
    );

    let edit = client
        .call_tool(params(
            "edit",
            json!({"file_path": "app.py", "old_string": "'hello'", "new_string": "'hi'"}),
        ))
        .await
        .unwrap();
    assert_eq!(edit.is_error, Some(false), "{}", text(&edit));
    assert_eq!(ws.bytes("app.py"), b"def main():\r\n    print('hi')\r\n");

    ws.write(
        "app.py",
        "def main():\r\n    print('changed elsewhere')\r\n",
    );
    let stale = client
        .call_tool(params(
            "edit",
            json!({"file_path": "app.py", "old_string": "'hi'", "new_string": "'hey'"}),
        ))
        .await
        .unwrap();
    assert_eq!(stale.is_error, Some(true));
    let error = &stale.structured_content.as_ref().unwrap()["error"];
    assert_eq!(error["code"], "FS_STALE_VERSION");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("Read the file again")
    );
    assert!(text(&stale).starts_with("FS_STALE_VERSION: "));

    let reread = client
        .call_tool(params("read", json!({"file_path": "app.py", "offset": 2})))
        .await
        .unwrap();
    assert_eq!(
        text(&reread),
        "File: app.py\n2:     print('changed elsewhere')\n(Lines 2-2 of 2; end of file.)"
    );
    let edit = client
        .call_tool(params("edit", json!({"file_path": "app.py", "old_string": "changed elsewhere", "new_string": "merged"})))
        .await
        .unwrap();
    assert_eq!(edit.is_error, Some(false), "{}", text(&edit));
    assert_eq!(
        ws.bytes("app.py"),
        b"def main():\r\n    print('merged')\r\n"
    );

    let found = client
        .call_tool(params("glob", json!({"pattern": "*.py"})))
        .await
        .unwrap();
    assert_eq!(text(&found), "app.py");
    let hits = client
        .call_tool(params(
            "grep",
            json!({"pattern": "print\\(", "include": "*.py"}),
        ))
        .await
        .unwrap();
    assert_eq!(
        text(&hits),
        "Found 1 match in 1 file\n\napp.py:\n  Line 2:     print('merged')"
    );

    let bad = client
        .call_tool(params("read", json!({"path": "app.py"})))
        .await
        .unwrap();
    assert_eq!(bad.is_error, Some(true));
    assert_eq!(
        bad.structured_content.unwrap()["error"]["code"],
        "INVALID_ARGS"
    );
    client.cancel().await.unwrap();
}

/// `tools/list` gives each tool the title and hints clients use for
/// permission prompts, in the protocol's camelCase wire form.
#[tokio::test(flavor = "multi_thread")]
async fn tools_list_carries_titles_and_annotations() {
    let ws = Workspace::new();
    let root = ws.root.clone();
    let cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_dsh-fs")).configure(|c| {
        c.args(["mcp", "--root"])
            .arg(&root)
            .env("DSH_FS_CACHE_DIR", crate::cache_dir());
    });
    let client = ().serve(TokioChildProcess::new(cmd).unwrap()).await.unwrap();
    let tools = client.list_all_tools().await.unwrap();
    let wire: Vec<Value> = tools
        .iter()
        .map(|t| {
            let t = serde_json::to_value(t).unwrap();
            json!({"name": t["name"], "title": t["title"], "annotations": t["annotations"]})
        })
        .collect();
    let hints = |title: &str, read_only: bool, destructive: bool, idempotent: bool| {
        json!({
            "title": title,
            "readOnlyHint": read_only,
            "destructiveHint": destructive,
            "idempotentHint": idempotent,
            "openWorldHint": false,
        })
    };
    assert_eq!(
        wire,
        [
            json!({"name": "read", "title": "Read file", "annotations": hints("Read file", true, false, true)}),
            json!({"name": "write", "title": "Write file", "annotations": hints("Write file", false, true, true)}),
            json!({"name": "edit", "title": "Edit file", "annotations": hints("Edit file", false, true, false)}),
            json!({"name": "glob", "title": "Find files", "annotations": hints("Find files", true, false, true)}),
            json!({"name": "grep", "title": "Search file contents", "annotations": hints("Search file contents", true, false, true)}),
        ]
    );
    client.cancel().await.unwrap();
}

/// The README's first `mcpServers` entry, as a client would run it: its
/// `command` and `args` (with the built binary and a scratch project in place
/// of the two placeholder paths) serve the project, and a read goes through.
#[tokio::test(flavor = "multi_thread")]
async fn the_readme_mcp_client_configuration_serves_a_project() {
    let readme = include_str!("../../README.md");
    let at = readme
        .find("Serve a project to an MCP client")
        .expect("the README has the MCP client section");
    let block = &readme[at..];
    let start = block.find("```json\n").expect("a json block") + "```json\n".len();
    let end = start + block[start..].find("```").expect("the block ends");
    let config: Value = serde_json::from_str(&block[start..end]).unwrap();
    let server = &config["mcpServers"]["files"];
    assert_eq!(server["command"], "/path/to/dsh-fs/target/release/dsh-fs");

    let ws = Workspace::new();
    ws.write("notes.md", "# notes\n");
    let root = ws.root.to_str().unwrap().to_owned();
    let args: Vec<String> = server["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().replace("/path/to/project", &root))
        .collect();
    let cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_dsh-fs")).configure(|c| {
        c.args(&args).env("DSH_FS_CACHE_DIR", crate::cache_dir());
    });
    let client = ().serve(TokioChildProcess::new(cmd).unwrap()).await.unwrap();
    let read = client
        .call_tool(params("read", json!({"file_path": "notes.md"})))
        .await
        .unwrap();
    assert_eq!(
        text(&read),
        "File: notes.md\n1: # notes\n(End of file: 1 line.)"
    );
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn the_undo_tools_over_mcp_go_back_to_the_session_start() {
    let ws = Workspace::new();
    ws.write("app.py", "def main():\r\n    print('hello')\r\n");
    let root = ws.root.clone();
    let cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_dsh-fs")).configure(|c| {
        c.args(["mcp", "--root"])
            .arg(&root)
            .args(["--extra-tools", "multi_edit,checkpoint,changes,revert"])
            .env("DSH_FS_CACHE_DIR", crate::cache_dir());
    });
    let client = ().serve(TokioChildProcess::new(cmd).unwrap()).await.unwrap();
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<_> = tools.iter().map(|t| t.name.to_string()).collect();
    assert_eq!(
        names,
        [
            "read",
            "write",
            "edit",
            "glob",
            "grep",
            "multi_edit",
            "checkpoint",
            "changes",
            "revert"
        ]
    );
    let call = |tool: &'static str, args: Value| {
        let client = &client;
        async move { text(&client.call_tool(params(tool, args)).await.unwrap()) }
    };
    call("read", json!({"file_path": "app.py"})).await;
    let edited = call(
        "multi_edit",
        json!({"file_path": "app.py", "edits": [
            {"old_string": "main", "new_string": "run"},
            {"old_string": "'hello'", "new_string": "'hi'"},
        ]}),
    )
    .await;
    assert!(edited.starts_with("Edited app.py: 2 edits"), "{edited}");
    let listed = call("changes", json!({})).await;
    assert!(
        listed.starts_with("Changes since checkpoint 1 (session start): 1 file."),
        "{listed}"
    );
    let reverted = call("revert", json!({})).await;
    assert!(
        reverted.starts_with("Reverted to checkpoint 1 (session start): 1 file restored"),
        "{reverted}"
    );
    assert_eq!(ws.bytes("app.py"), b"def main():\r\n    print('hello')\r\n");
    client.cancel().await.unwrap();
}

// Issue 43: without --extra-tools the server ran checkpoint and multi_edit
// when called by name, though it did not list them.
#[tokio::test(flavor = "multi_thread")]
async fn tools_the_server_does_not_offer_are_unknown() {
    let ws = Workspace::new();
    ws.write("app.py", "def main():\n    pass\n");
    for extra in [None, Some("multi_edit")] {
        let root = ws.root.clone();
        let cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_dsh-fs")).configure(|c| {
            c.args(["mcp", "--root"])
                .arg(&root)
                .env("DSH_FS_CACHE_DIR", crate::cache_dir());
            if let Some(extra) = extra {
                c.args(["--extra-tools", extra]);
            }
        });
        let client = ().serve(TokioChildProcess::new(cmd).unwrap()).await.unwrap();
        let call = |tool: &'static str, args: Value| {
            let client = &client;
            async move { client.call_tool(params(tool, args)).await.unwrap() }
        };
        call("read", json!({"file_path": "app.py"})).await;
        let mut refused = vec![
            ("checkpoint", json!({})),
            ("changes", json!({})),
            ("revert", json!({})),
        ];
        if extra.is_none() {
            refused.push((
                "multi_edit",
                json!({"file_path": "app.py", "edits": [{"old_string": "main", "new_string": "run"}]}),
            ));
        }
        for (tool, args) in refused {
            let r = call(tool, args).await;
            assert_eq!(r.is_error, Some(true), "{tool}: {}", text(&r));
            let error = &r.structured_content.as_ref().unwrap()["error"];
            assert_eq!(error["code"], "UNKNOWN_TOOL", "{tool}");
            let offered = match extra {
                None => "read, write, edit, glob and grep.",
                Some(_) => "read, write, edit, glob, grep and multi_edit.",
            };
            assert_eq!(
                text(&r),
                format!("UNKNOWN_TOOL: there is no tool named {tool:?}; the tools are {offered}")
            );
        }
        assert_eq!(ws.bytes("app.py"), b"def main():\n    pass\n");
        client.cancel().await.unwrap();
    }
}

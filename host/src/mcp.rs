//! The MCP server behind `dsh-fs mcp`: the component's tools over the
//! official `rmcp` SDK. One connection is one session, so observations made
//! by one MCP client never authorize another's edits.

use crate::runtime::{Session, ToolResult};
use crate::{Runtime, SessionOptions};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    JsonObject, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use std::sync::Arc;
use tokio::sync::Mutex;

/// An MCP server for one session over one provider.
pub struct McpServer {
    session: Arc<Mutex<Session>>,
    tools: Vec<Tool>,
    instructions: String,
}

impl McpServer {
    /// A server whose one session runs on `provider`.
    pub fn new(
        runtime: &Runtime,
        provider: Arc<dyn crate::Provider>,
        options: SessionOptions,
    ) -> anyhow::Result<Self> {
        let definitions = runtime.definitions()?;
        let mut instructions = String::from(
            "File tools confined to one workspace. Read a file before you edit or overwrite it.",
        );
        let tools = definitions
            .into_iter()
            .map(|d| {
                instructions.push_str(&format!("\n\n{}: {}", d.name, d.guidance));
                let schema: JsonObject = match d.parameters {
                    serde_json::Value::Object(map) => map,
                    _ => JsonObject::new(),
                };
                Tool::new(d.name, d.description, Arc::new(schema))
            })
            .collect();
        Ok(McpServer {
            session: Arc::new(Mutex::new(runtime.session(provider, options)?)),
            tools,
            instructions,
        })
    }

    /// Serves MCP on stdin/stdout until the client disconnects.
    pub async fn serve_stdio(self) -> anyhow::Result<()> {
        let service = self.serve(rmcp::transport::stdio()).await?;
        service.waiting().await?;
        Ok(())
    }
}

/// The MCP form of a tool result: the text, `isError`, and on failure
/// `{"error":{"code","message"}}` as structured content.
fn to_mcp(result: ToolResult) -> CallToolResult {
    let content = vec![ContentBlock::text(result.text)];
    match result.error {
        None => CallToolResult::success(content),
        Some(error) => {
            let mut r = CallToolResult::error(content);
            r.structured_content = Some(serde_json::json!({ "error": error }));
            r
        }
    }
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("dsh-fs", env!("CARGO_PKG_VERSION")))
            .with_instructions(self.instructions.clone())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.tools.clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let tool = request.name.to_string();
        let arguments =
            serde_json::Value::Object(request.arguments.unwrap_or_default()).to_string();
        // Calls of one session run one at a time, off the async threads.
        let mut session = self.session.clone().lock_owned().await;
        let result = tokio::task::spawn_blocking(move || session.execute(&tool, &arguments))
            .await
            .map_err(|e| McpError::internal_error(format!("tool call panicked: {e}"), None))?;
        Ok(to_mcp(result).into())
    }
}

//! [`mcp_pair`]: a registry served over MCP and mounted in another, in one
//! process, over an in-memory pipe.

use std::sync::Arc;

use crate::mcp::{McpClients, McpConfig, McpServer};
use crate::registry::ToolRegistry;

/// A server and the client that mounted it, in one process: what a model
/// sees of a served registry through an MCP client, without a child
/// process or a port.
#[derive(Debug)]
pub struct McpPair {
    /// The client side: the registry the served tools are mounted in, as
    /// `mcp_{name}_{tool}`.
    pub registry: Arc<ToolRegistry>,
    /// The client, to look at the server's link or add more servers.
    pub clients: McpClients,
}

impl McpPair {
    /// Close the session; the server stops when the pipe closes.
    pub async fn shutdown(self) {
        self.clients.disconnect().await;
    }
}

/// Serve `server` and mount it in a new registry as the server called
/// `name`, over an in-memory pipe.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// use std::sync::Arc;
/// use toolsmith::mcp::McpServer;
/// use toolsmith::testing::mcp_pair;
/// use toolsmith::{ToolContext, ToolRegistry, tool};
///
/// /// Add two numbers.
/// #[tool(read_only)]
/// async fn add(a: i64, b: i64) -> i64 { a + b }
///
/// let served = Arc::new(ToolRegistry::new());
/// served.register(AddTool).unwrap();
/// let pair = mcp_pair("calc", McpServer::new(served)).await.unwrap();
/// let out = pair
///     .registry
///     .call("mcp_calc_add", serde_json::json!({"a": 2, "b": "3"}), &ToolContext::new())
///     .await;
/// assert_eq!(out.content, "5");
/// pair.shutdown().await;
/// # }
/// ```
pub async fn mcp_pair(name: &str, server: McpServer) -> Result<McpPair, String> {
    let registry = Arc::new(ToolRegistry::new());
    let clients = McpClients::new(McpConfig::default(), &registry);
    clients.add_in_process(name, server).await?;
    Ok(McpPair { registry, clients })
}

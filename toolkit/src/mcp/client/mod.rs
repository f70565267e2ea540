//! The client side: configured MCP servers mounted as tools.

mod handler;
mod link;
mod sampling;
mod sse;
mod tap;
mod template;
mod tools;

use std::sync::Arc;

pub use link::ServerLink;
pub use sampling::{Sampled, Sampler, SamplingMessage, SamplingRequest};

use crate::mcp::config::McpConfig;
use crate::registry::ToolRegistry;

/// The configured MCP servers, mounted into one registry.
///
/// Creating it connects to nothing. [`connect`](Self::connect), called
/// before a turn of the agent, connects every server not connected yet and
/// mounts its tools; a server that fails is left out and tried again on the
/// next `connect`. Each mounted tool reconnects its server itself when the
/// connection died (a crashed process is started again on the next call).
///
/// ```no_run
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// use std::sync::Arc;
/// use toolsmith::ToolRegistry;
/// use toolsmith::mcp::{McpClients, McpConfig};
///
/// let config: McpConfig = r#"{"mcpServers": {"fs": {
///     "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]
/// }}}"#.parse()?;
/// let registry = Arc::new(ToolRegistry::new());
/// let clients = McpClients::new(config, &registry);
/// for (server, outcome) in clients.connect().await {
///     println!("{server}: {outcome:?}");
/// }
/// assert!(registry.contains("mcp_fs_read_text_file"));
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct McpClients {
    links: Vec<Arc<ServerLink>>,
}

impl McpClients {
    /// One link per configured server; nothing is connected yet.
    pub fn new(config: McpConfig, registry: &Arc<ToolRegistry>) -> Self {
        let links = config
            .servers
            .into_iter()
            .map(|server| ServerLink::new(server, registry))
            .collect();
        Self { links }
    }

    /// Answer the servers' sampling requests (`sampling/createMessage`) with
    /// the host's model: every server is told, when it connects, that this
    /// client offers sampling, and what it asks for goes to `sampler`.
    /// Without a sampler the capability is not declared and such requests
    /// are refused. Set it before [`connect`](Self::connect): sessions
    /// already open keep what they were opened with.
    ///
    /// ```no_run
    /// # use std::sync::Arc;
    /// # use toolsmith::ToolRegistry;
    /// # use toolsmith::mcp::{McpClients, McpConfig, Sampled, Sampler, SamplingRequest};
    /// # struct MyModel;
    /// # #[toolsmith::async_trait]
    /// # impl Sampler for MyModel {
    /// #     async fn sample(&self, r: SamplingRequest) -> Result<Sampled, Box<dyn std::error::Error + Send + Sync>> {
    /// #         Ok(Sampled::new("", "m"))
    /// #     }
    /// # }
    /// # async fn run(config: McpConfig) {
    /// let registry = Arc::new(ToolRegistry::new());
    /// let clients = McpClients::new(config, &registry).with_sampler(MyModel);
    /// clients.connect().await;
    /// # }
    /// ```
    pub fn with_sampler(self, sampler: impl Sampler) -> Self {
        let sampler: Arc<dyn Sampler> = Arc::new(sampler);
        for link in &self.links {
            link.set_sampler(Arc::clone(&sampler));
        }
        self
    }

    /// Connect every server that has no session yet and mount its tools.
    /// Returns, per server, how many tools it has mounted or why it failed;
    /// servers already connected are not asked again.
    pub async fn connect(&self) -> Vec<(String, Result<usize, String>)> {
        let mut outcomes = Vec::with_capacity(self.links.len());
        let attempts = self.links.iter().map(|link| async move {
            if link.is_connected().await && !link.mounted().is_empty() {
                return Ok(link.mounted().len());
            }
            link.refresh().await
        });
        let results = futures_util::future::join_all(attempts).await;
        for (link, result) in self.links.iter().zip(results) {
            if let Err(e) = &result {
                tracing::warn!(server = %link.name(), "MCP server not connected (will retry): {e}");
            }
            outcomes.push((link.name().to_owned(), result));
        }
        outcomes
    }

    /// The configured servers' names, in configuration order.
    pub fn servers(&self) -> Vec<&str> {
        self.links.iter().map(|l| l.name()).collect()
    }

    /// The names of the servers with an open session now.
    pub async fn connected(&self) -> Vec<String> {
        let mut names = Vec::new();
        for link in &self.links {
            if link.is_connected().await {
                names.push(link.name().to_owned());
            }
        }
        names
    }

    /// The link to the server called `name`.
    pub fn server(&self, name: &str) -> Option<&Arc<ServerLink>> {
        self.links.iter().find(|l| l.name() == name)
    }

    /// Close every session (stdio servers' processes are stopped).
    pub async fn disconnect(&self) {
        for link in &self.links {
            link.disconnect().await;
        }
    }
}

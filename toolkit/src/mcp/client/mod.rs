//! The client side: configured MCP servers mounted as tools.

mod answers;
mod busy;
mod elicitation;
mod handler;
mod link;
#[cfg(feature = "mcp-oauth")]
mod oauth;
mod process;
mod rate;
mod sampling;
mod sse;
mod tap;
mod template;
mod tools;
pub(crate) mod trust;

use std::sync::{Arc, Mutex, Weak};

pub use elicitation::{
    Elicitation, ElicitationKind, ElicitationModes, ElicitationRequest, Elicitor,
};
pub use link::ServerLink;
#[cfg(feature = "mcp-oauth")]
pub use oauth::{
    AuthorizationPrompt, AuthorizationRedirect, Authorizer, FileTokenStore, LoopbackAuthorizer,
    MemoryTokenStore, SIGN_IN_TIMEOUT, StoredTokens, TokenStore,
};
pub use rate::QuestionRate;
pub use sampling::{Sampled, Sampler, SamplingMessage, SamplingRequest};

use crate::mcp::McpServer;
use crate::mcp::config::{McpConfig, ServerConfig};
use crate::registry::ToolRegistry;

/// The configured MCP servers, mounted into one registry.
///
/// Creating it connects to nothing. [`connect`](Self::connect), called
/// before a turn of the agent, connects every server not connected yet and
/// mounts its tools; a server that fails is left out and tried again on the
/// next `connect`. Each mounted tool reconnects its server itself when the
/// connection died (a crashed process is started again on the next call).
///
/// Servers can also come and go while the agent runs:
/// [`add_server`](Self::add_server) connects one more and mounts its tools,
/// [`remove_server`](Self::remove_server) takes one out and stops it.
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
pub struct McpClients {
    /// The servers, in the order they were configured or added. Never held
    /// across an await: each use takes a copy.
    links: Mutex<Vec<Arc<ServerLink>>>,
    /// Where servers added later mount their tools.
    registry: Weak<ToolRegistry>,
    /// Given to servers added later too.
    sampler: Option<Arc<dyn Sampler>>,
    /// Given to servers added later too.
    elicitor: Option<Arc<dyn Elicitor>>,
    /// Given to servers added later too.
    question_rate: QuestionRate,
    /// The sign-in and token store of servers with `oauth`; given to
    /// servers added later too.
    #[cfg(feature = "mcp-oauth")]
    oauth: link::OAuthHost,
}

impl std::fmt::Debug for McpClients {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpClients")
            .field("servers", &self.servers())
            .field("sampler", &self.sampler.is_some())
            .finish()
    }
}

impl McpClients {
    /// One link per configured server; nothing is connected yet.
    pub fn new(config: McpConfig, registry: &Arc<ToolRegistry>) -> Self {
        let links = config
            .servers
            .into_iter()
            .map(|server| ServerLink::new(server, registry))
            .collect();
        Self {
            links: Mutex::new(links),
            registry: Arc::downgrade(registry),
            sampler: None,
            elicitor: None,
            question_rate: QuestionRate::DEFAULT,
            #[cfg(feature = "mcp-oauth")]
            oauth: link::OAuthHost::default(),
        }
        .with_oauth_host()
    }

    /// Tell every link of the host's sign-in and token store.
    fn with_oauth_host(self) -> Self {
        #[cfg(feature = "mcp-oauth")]
        for link in self.links() {
            link.set_oauth(self.oauth.clone());
        }
        self
    }

    /// Sign in to servers whose entry has an `oauth` block with the host's
    /// `authorizer`: it shows the user the authorization server's page and
    /// brings back the redirect (see [`LoopbackAuthorizer`]). Without one,
    /// connecting to a server that requires a sign-in fails and says so.
    /// Set it before [`connect`](Self::connect), as the sampler.
    #[cfg(feature = "mcp-oauth")]
    pub fn with_authorizer(mut self, authorizer: impl Authorizer) -> Self {
        self.oauth.authorizer = Some(Arc::new(authorizer));
        self.with_oauth_host()
    }

    /// Keep signed-in servers' tokens in `store` (by default in memory,
    /// for the life of the process; [`FileTokenStore`] keeps them across
    /// runs). Set it before [`connect`](Self::connect).
    #[cfg(feature = "mcp-oauth")]
    pub fn with_token_store(mut self, store: impl TokenStore) -> Self {
        self.oauth.store = Arc::new(store);
        self.with_oauth_host()
    }

    /// Answer the servers' sampling requests (`sampling/createMessage`) with
    /// the host's model: every server is told, when it connects, that this
    /// client offers sampling, and what it asks for goes to `sampler`.
    /// Without a sampler the capability is not declared and such requests
    /// are refused. Set it before [`connect`](Self::connect): sessions
    /// already open keep what they were opened with. Servers added later
    /// with [`add_server`](Self::add_server) get it too.
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
    pub fn with_sampler(mut self, sampler: impl Sampler) -> Self {
        let sampler: Arc<dyn Sampler> = Arc::new(sampler);
        for link in self.links() {
            link.set_sampler(Arc::clone(&sampler));
        }
        self.sampler = Some(sampler);
        self
    }

    /// Answer what the servers ask the user (`elicitation/create`, or the
    /// elicitations of an input-required result) with the host's
    /// `elicitor`: every server is told, when it connects, that this client
    /// offers elicitation (in the modes the elicitor names). Without an
    /// elicitor the capability is not declared and such requests are
    /// refused. Set it before [`connect`](Self::connect), as the sampler.
    pub fn with_elicitor(mut self, elicitor: impl Elicitor) -> Self {
        let elicitor: Arc<dyn Elicitor> = Arc::new(elicitor);
        for link in self.links() {
            link.set_elicitor(Arc::clone(&elicitor));
        }
        self.elicitor = Some(elicitor);
        self
    }

    /// How fast each server may have the sampler sample, and, on its own
    /// count, the elicitor ask the user (by default
    /// [`QuestionRate::DEFAULT`]: 8 at once, then one a second). A
    /// server's request past its rate is answered at once with a JSON-RPC
    /// error (code -32029) saying it is rate limited and when to try again;
    /// the questions of a call of the host's wait their turn within the
    /// call. See [`QuestionRate`]. Set it before [`connect`](Self::connect),
    /// as the sampler; servers added later get it too.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::time::Duration;
    /// use toolsmith::ToolRegistry;
    /// use toolsmith::mcp::{McpClients, McpConfig, QuestionRate};
    ///
    /// let registry = Arc::new(ToolRegistry::new());
    /// // 2 at once, then one every 30 s.
    /// let clients = McpClients::new(McpConfig::default(), &registry)
    ///     .with_question_rate(QuestionRate::new(2, Duration::from_secs(30)));
    /// # let _ = clients;
    /// ```
    pub fn with_question_rate(mut self, rate: QuestionRate) -> Self {
        for link in self.links() {
            link.set_question_rate(rate);
        }
        self.question_rate = rate;
        self
    }

    /// A copy of the list of links, so no lock is held while they work.
    fn links(&self) -> Vec<Arc<ServerLink>> {
        self.links.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Connect every server that has no session yet and mount its tools.
    /// Returns, per server, how many tools it has mounted or why it failed;
    /// servers already connected are not asked again.
    pub async fn connect(&self) -> Vec<(String, Result<usize, String>)> {
        let links = self.links();
        let mut outcomes = Vec::with_capacity(links.len());
        let attempts = links.iter().map(|link| async move {
            if link.is_connected().await && !link.mounted().is_empty() {
                return Ok(link.mounted().len());
            }
            link.refresh().await
        });
        let results = futures_util::future::join_all(attempts).await;
        for (link, result) in links.iter().zip(results) {
            if let Err(e) = &result {
                tracing::warn!(server = %link.name(), "MCP server not connected (will retry): {e}");
            }
            outcomes.push((link.name().to_owned(), result));
        }
        outcomes
    }

    /// Connect one more server now and mount its tools, resources and
    /// prompts in the registry, all in one step; returns how many it
    /// mounted. A server of the same name already here is an error (remove
    /// it first), and so is a server that cannot be reached or whose tools
    /// the registry refuses: such a server is not kept, its process (if it
    /// started one) is stopped, and nothing of it is mounted.
    ///
    /// ```no_run
    /// # async fn run(clients: toolsmith::mcp::McpClients) -> Result<(), Box<dyn std::error::Error>> {
    /// use serde_json::json;
    /// use toolsmith::mcp::ServerConfig;
    ///
    /// let git = ServerConfig::from_json("git", &json!({"command": "uvx", "args": ["mcp-server-git"]}))?;
    /// let mounted = clients.add_server(git).await?;
    /// println!("git: {mounted} tools");
    /// // ... later, when the user turns it off:
    /// clients.remove_server("git").await;
    /// # Ok(()) }
    /// ```
    pub async fn add_server(&self, config: ServerConfig) -> Result<usize, String> {
        let registry = self
            .registry
            .upgrade()
            .ok_or("the registry the MCP tools belong to is gone")?;
        self.add_link(ServerLink::new(config, &registry)).await
    }

    /// Mount `server`, running in this process, as the server called
    /// `name`: its tools become `mcp_{name}_{tool}` here, reached over an
    /// in-memory pipe, with no child process and no port. For tests of a
    /// server and of what a model sees of it through a client, in one
    /// process; see also [`testing::mcp_pair`](crate::testing::mcp_pair).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// use std::sync::Arc;
    /// use toolsmith::mcp::{McpClients, McpConfig, McpServer};
    /// use toolsmith::{ToolContext, ToolRegistry, tool};
    ///
    /// /// Say hello.
    /// #[tool(read_only)]
    /// async fn hello() -> &'static str { "hello" }
    ///
    /// let served = Arc::new(ToolRegistry::new());
    /// served.register(HelloTool).unwrap();
    /// let mounted = Arc::new(ToolRegistry::new());
    /// let clients = McpClients::new(McpConfig::default(), &mounted);
    /// clients.add_in_process("here", McpServer::new(served)).await.unwrap();
    /// let out = mounted.call("mcp_here_hello", serde_json::json!({}), &ToolContext::new()).await;
    /// assert_eq!(out.content, "hello");
    /// clients.disconnect().await;
    /// # }
    /// ```
    pub async fn add_in_process(&self, name: &str, server: McpServer) -> Result<usize, String> {
        let registry = self
            .registry
            .upgrade()
            .ok_or("the registry the MCP tools belong to is gone")?;
        self.add_link(ServerLink::in_process(name, server, &registry))
            .await
    }

    async fn add_link(&self, link: Arc<ServerLink>) -> Result<usize, String> {
        let name = link.name().to_owned();
        if let Some(sampler) = &self.sampler {
            link.set_sampler(Arc::clone(sampler));
        }
        if let Some(elicitor) = &self.elicitor {
            link.set_elicitor(Arc::clone(elicitor));
        }
        link.set_question_rate(self.question_rate);
        #[cfg(feature = "mcp-oauth")]
        link.set_oauth(self.oauth.clone());
        {
            // Checked and reserved in one step, so two adds of one name
            // cannot both go on.
            let mut links = self.links.lock().unwrap_or_else(|e| e.into_inner());
            if links.iter().any(|l| l.name() == name) {
                return Err(format!(
                    "an MCP server named `{name}` is already there; remove it first"
                ));
            }
            links.push(Arc::clone(&link));
        }
        match link.refresh().await {
            Ok(count) => Ok(count),
            Err(e) => {
                self.links
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .retain(|l| !Arc::ptr_eq(l, &link));
                link.retire().await;
                Err(e)
            }
        }
    }

    /// Take the server called `name` out: its tools, resources and prompts
    /// leave the registry in one step, then its session is closed and, for
    /// a stdio server, its process stopped and waited for (10 s at most).
    /// Calls to it still running fail, and nothing connects it again.
    /// Returns whether there was such a server.
    pub async fn remove_server(&self, name: &str) -> bool {
        let removed = {
            let mut links = self.links.lock().unwrap_or_else(|e| e.into_inner());
            let index = links.iter().position(|l| l.name() == name);
            index.map(|i| links.remove(i))
        };
        match removed {
            Some(link) => {
                link.retire().await;
                true
            }
            None => false,
        }
    }

    /// The servers' names, in the order they were configured or added.
    pub fn servers(&self) -> Vec<String> {
        self.links().iter().map(|l| l.name().to_owned()).collect()
    }

    /// The names of the servers with an open session now.
    pub async fn connected(&self) -> Vec<String> {
        let mut names = Vec::new();
        for link in self.links() {
            if link.is_connected().await {
                names.push(link.name().to_owned());
            }
        }
        names
    }

    /// The link to the server called `name`.
    pub fn server(&self, name: &str) -> Option<Arc<ServerLink>> {
        self.links().into_iter().find(|l| l.name() == name)
    }

    /// Close every session (stdio servers' processes are stopped and waited
    /// for, 10 s at most). The servers stay: the next
    /// [`connect`](Self::connect), or a call to one of their tools,
    /// connects them again.
    pub async fn disconnect(&self) {
        let links = self.links();
        futures_util::future::join_all(links.iter().map(|link| link.disconnect())).await;
    }
}

//! The MCP bridge: MCP servers' tools as ordinary tools, and any registry
//! served over MCP.
//!
//! - [`McpConfig`] reads the `mcpServers` configuration Claude Desktop and
//!   Cursor use; [`McpClients`] connects those servers (stdio, streamable HTTP
//!   or the older HTTP+SSE) and mounts their tools, resources and prompts in a
//!   [`ToolRegistry`](crate::ToolRegistry) as `mcp_{server}_{name}`.
//!   Resource templates are read-only tools too, their URI template's
//!   variables the parameters.
//! - A [`Sampler`] set with [`McpClients::with_sampler`] answers the
//!   servers' sampling requests with the host's model, and an [`Elicitor`]
//!   set with [`McpClients::with_elicitor`] what they ask the user.
//! - [`McpServer`] serves a registry over stdio or streamable HTTP.

mod client;
mod config;
pub(crate) mod convert;
mod in_flight;
mod naming;
mod server;
mod trace_context;

#[cfg(feature = "mcp-oauth")]
pub use client::{
    AuthorizationPrompt, AuthorizationRedirect, Authorizer, FileTokenStore, LoopbackAuthorizer,
    MemoryTokenStore, SIGN_IN_TIMEOUT, StoredTokens, TokenStore,
};
pub use client::{
    Elicitation, ElicitationKind, ElicitationModes, ElicitationRequest, Elicitor, McpClients,
    QuestionRate, Sampled, Sampler, SamplingMessage, SamplingRequest, ServerLink,
};
pub use config::{
    ConfigError, DEFAULT_OAUTH_REQUEST_TIMEOUT, DEFAULT_TOOL_TIMEOUT, EnabledTools, McpConfig,
    OAuthConfig, ServerConfig, Transport,
};
pub use server::*;

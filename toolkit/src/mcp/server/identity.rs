//! [`Caller`]: who made a served call, for the tool that serves it.

use hyper::http::request::Parts;
use rmcp::RoleServer;
use rmcp::service::RequestContext;

use super::auth::Claims;
use crate::context::ToolContext;

pub use hyper::http::HeaderMap;

/// Who is calling a served tool: the HTTP request's headers, the verified
/// token's claims, the session and the negotiated protocol version.
///
/// Every call an [`McpServer`](super::McpServer) serves has one in its
/// context, so a tool takes `&Caller` as a parameter like any injected
/// value. What the transport does not have is `None`: a call over stdio
/// has no headers, no session id and no claims; a stateless HTTP request
/// has no session id; claims are there only when the server checks bearer
/// tokens ([`HttpOptions::auth`](super::HttpOptions::auth)).
///
/// When the token was verified, its [`Claims`] are also in the context on
/// their own: a tool that takes `&Claims` cannot run without a verified
/// token (the call fails as missing state, and the model is told so).
///
/// ```
/// use toolsmith::mcp::Caller;
/// use toolsmith::tool;
///
/// /// Say who is asking.
/// #[tool(read_only)]
/// async fn whoami(caller: &Caller) -> String {
///     let who = caller.claims().and_then(|c| c.subject()).unwrap_or("anonymous");
///     let tenant = caller.header("x-tenant").unwrap_or("none");
///     format!("{who} (tenant {tenant}, protocol {:?})", caller.protocol_version())
/// }
/// ```
#[derive(Clone, Debug, Default)]
pub struct Caller {
    headers: Option<HeaderMap>,
    session_id: Option<String>,
    protocol_version: Option<String>,
    claims: Option<Claims>,
    client: Option<(String, String)>,
}

impl Caller {
    /// The caller of a request served over the transport `context` came from.
    pub(crate) fn of_request(context: &RequestContext<RoleServer>) -> Self {
        let parts = context.extensions.get::<Parts>();
        let headers = parts.map(|p| p.headers.clone());
        let header = |name: &str| {
            headers
                .as_ref()
                .and_then(|h| h.get(name))
                .and_then(|v| v.to_str().ok())
                .map(|v| v.trim().to_owned())
                .filter(|v| !v.is_empty())
        };
        // The header a client sends after `initialize` carries the version
        // the server agreed to; without it (stdio, the `initialize`
        // exchange itself) the request's own or the handshake's version.
        let protocol_version = header("mcp-protocol-version")
            .or_else(|| context.protocol_version().map(|v| v.to_string()));
        let client = context.peer.peer_info().map(|info| {
            (
                info.client_info.name.clone(),
                info.client_info.version.clone(),
            )
        });
        Self {
            session_id: header("mcp-session-id"),
            protocol_version,
            claims: parts.and_then(|p| p.extensions.get::<Claims>().cloned()),
            headers,
            client,
        }
    }

    /// The same caller without a session: its `Mcp-Session-Id` header, if
    /// any, named no session the server gave.
    pub(crate) fn without_session_id(mut self) -> Self {
        self.session_id = None;
        self
    }

    /// `ctx` with this caller in it, and its claims on their own.
    pub(crate) fn inject(self, ctx: ToolContext) -> ToolContext {
        match self.claims.clone() {
            Some(claims) => ctx.with_state(claims).with_state(self),
            None => ctx.with_state(self),
        }
    }

    /// The HTTP request's headers; `None` over stdio.
    pub fn headers(&self) -> Option<&HeaderMap> {
        self.headers.as_ref()
    }

    /// One header's value (names are case-insensitive), when present and
    /// readable as text. The first, if the header was sent more than once.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.as_ref()?.get(name)?.to_str().ok()
    }

    /// The verified bearer token's claims, when the server checks tokens.
    pub fn claims(&self) -> Option<&Claims> {
        self.claims.as_ref()
    }

    /// The MCP session (`Mcp-Session-Id`); `None` over stdio and for
    /// stateless HTTP.
    pub fn session_id(&self) -> Option<&str> {
        self.session_id.as_deref()
    }

    /// The protocol version in force for this request (`2025-11-25`...).
    pub fn protocol_version(&self) -> Option<&str> {
        self.protocol_version.as_deref()
    }

    /// The client's name as it introduced itself at `initialize`.
    /// Self-reported: not proof of anything.
    pub fn client_name(&self) -> Option<&str> {
        self.client.as_ref().map(|(name, _)| name.as_str())
    }

    /// The client's version as it introduced itself at `initialize`.
    pub fn client_version(&self) -> Option<&str> {
        self.client.as_ref().map(|(_, version)| version.as_str())
    }

    /// Whether the call came over HTTP.
    pub fn is_http(&self) -> bool {
        self.headers.is_some()
    }

    /// A caller made by hand, for testing a tool that takes `&Caller`
    /// outside a server.
    pub fn new() -> Self {
        Self::default()
    }

    /// Set the headers (see [`new`](Self::new)).
    pub fn with_headers(mut self, headers: HeaderMap) -> Self {
        self.headers = Some(headers);
        self
    }

    /// Set the claims (see [`new`](Self::new)).
    pub fn with_claims(mut self, claims: Claims) -> Self {
        self.claims = Some(claims);
        self
    }

    /// Set the session id (see [`new`](Self::new)).
    pub fn with_session_id(mut self, id: impl Into<String>) -> Self {
        self.session_id = Some(id.into());
        self
    }

    /// Set the protocol version (see [`new`](Self::new)).
    pub fn with_protocol_version(mut self, version: impl Into<String>) -> Self {
        self.protocol_version = Some(version.into());
        self
    }
}

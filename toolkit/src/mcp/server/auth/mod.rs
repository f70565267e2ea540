//! The HTTP server as an OAuth 2.1 resource server, as MCP's authorization
//! specification has it: bearer tokens checked on every request, protected
//! resource metadata (RFC 9728) for clients to find the authorization
//! server, and scopes per tool.

mod gate;
#[cfg(feature = "mcp-jwt")]
mod jwt;
mod params;

use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Map, Value, json};

pub(crate) use gate::{Gate, GateBody};
#[cfg(feature = "mcp-jwt")]
pub use jwt::JwtVerifier;

/// The key of [`ToolSpec::meta`](crate::ToolSpec::meta) where a tool lists
/// the scopes a token needs to call it: an array of strings. Sent to
/// clients in the tool's `_meta`, so they can see it too.
///
/// ```
/// use serde_json::json;
/// use toolsmith::ToolSpec;
/// use toolsmith::mcp::SCOPES_META_KEY;
///
/// let spec = ToolSpec::new("delete_file", "Delete a file.", json!({"type": "object"}))
///     .with_meta(SCOPES_META_KEY, json!(["files:write"]));
/// assert_eq!(spec.meta[SCOPES_META_KEY], json!(["files:write"]));
/// ```
pub const SCOPES_META_KEY: &str = "toolsmith/scopes";

/// What a verified access token says: its subject, issuer, audiences,
/// scopes and expiry, and every claim as JSON.
///
/// Made by a [`TokenVerifier`]; a served tool takes `&Claims` (or reads
/// [`Caller::claims`](super::Caller::claims)).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Claims {
    subject: Option<String>,
    issuer: Option<String>,
    audience: Vec<String>,
    scopes: Vec<String>,
    client_id: Option<String>,
    expires_at: Option<u64>,
    all: Map<String, Value>,
}

impl Claims {
    /// Claims from a token's JSON payload (a JWT's, an introspection
    /// response's): `sub`, `iss`, `aud` (a string or an array), the scopes
    /// from `scope` (space-separated) or `scp` (an array or a string),
    /// `client_id` (or `azp`) and `exp`. Everything stays in
    /// [`get`](Self::get).
    pub fn from_json(claims: Map<String, Value>) -> Self {
        let text = |key: &str| claims.get(key).and_then(Value::as_str).map(str::to_owned);
        let list = |value: Option<&Value>| -> Vec<String> {
            match value {
                Some(Value::String(s)) => s.split_whitespace().map(str::to_owned).collect(),
                Some(Value::Array(items)) => items
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect(),
                _ => Vec::new(),
            }
        };
        let scopes = match claims.get("scope") {
            Some(scope) => list(Some(scope)),
            None => list(claims.get("scp")),
        };
        Self {
            subject: text("sub"),
            issuer: text("iss"),
            audience: list(claims.get("aud")),
            scopes,
            client_id: text("client_id").or_else(|| text("azp")),
            expires_at: claims.get("exp").and_then(Value::as_u64),
            all: claims,
        }
    }

    /// Whom the token was issued for (`sub`).
    pub fn subject(&self) -> Option<&str> {
        self.subject.as_deref()
    }

    /// Who issued it (`iss`).
    pub fn issuer(&self) -> Option<&str> {
        self.issuer.as_deref()
    }

    /// Whom it is for (`aud`).
    pub fn audience(&self) -> &[String] {
        &self.audience
    }

    /// What it allows (`scope` or `scp`).
    pub fn scopes(&self) -> &[String] {
        &self.scopes
    }

    /// Whether it allows `scope`.
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.iter().any(|s| s == scope)
    }

    /// The OAuth client it was issued to (`client_id` or `azp`).
    pub fn client_id(&self) -> Option<&str> {
        self.client_id.as_deref()
    }

    /// When it expires, in seconds since the Unix epoch (`exp`).
    pub fn expires_at(&self) -> Option<u64> {
        self.expires_at
    }

    /// Any claim, as JSON.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.all.get(name)
    }

    /// Every claim, as JSON.
    pub fn all(&self) -> &Map<String, Value> {
        &self.all
    }

    /// Whom the token speaks for, as one key: its issuer with its subject,
    /// else with its client. Two issuers may each have an `alice`, and a
    /// client may be called what a user is, so the key holds all three
    /// parts, unambiguously (as a JSON array). `None` when the token names
    /// neither subject nor client.
    pub(crate) fn principal(&self) -> Option<String> {
        let (kind, name) = match (&self.subject, &self.client_id) {
            (Some(subject), _) => ("sub", subject),
            (None, Some(client)) => ("client", client),
            (None, None) => return None,
        };
        Some(json!([self.issuer, kind, name]).to_string())
    }
}

/// Why a bearer token was not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TokenError {
    /// The token is not good: malformed, badly signed, expired, for
    /// another audience or issuer. The client is told `401` with
    /// `error="invalid_token"` and gets a new token.
    #[error("invalid token: {0}")]
    Invalid(String),
    /// The token could not be checked now (the authorization server's keys
    /// could not be fetched). The client is told `503` and may try again.
    #[error("the token could not be checked: {0}")]
    Unavailable(String),
}

/// Checks a bearer token and says what it allows. `JwtVerifier` (feature
/// `mcp-jwt`) checks JWTs against the authorization server's keys;
/// implement it to introspect opaque tokens (RFC 7662) or to call an
/// identity provider's own API.
///
/// A verifier must check that the token was issued for this server (its
/// audience, RFC 8707): a token for another service must not pass.
#[async_trait]
pub trait TokenVerifier: Send + Sync + 'static {
    /// The claims of `token` (the text after `Bearer `), or why it is refused.
    async fn verify(&self, token: &str) -> Result<Claims, TokenError>;
}

/// The HTTP server as an OAuth 2.1 protected resource: give it to
/// [`HttpOptions::auth`](super::HttpOptions::auth).
///
/// Every request to the MCP endpoint must carry `Authorization: Bearer …`
/// with a token the [`TokenVerifier`] accepts and, when
/// [`require_scopes`](Self::require_scopes) set some, those scopes. A
/// `tools/call` of a tool that needs more scopes (see
/// [`tool_scopes`](Self::tool_scopes) and [`SCOPES_META_KEY`]) is refused
/// before the tool runs with `403` and `error="insufficient_scope"`
/// naming them, so the client can ask the user for them (step-up).
///
/// The metadata (RFC 9728) is served at
/// `/.well-known/oauth-protected-resource` and at that path followed by
/// the endpoint's path (`/.well-known/oauth-protected-resource/mcp`), and
/// each `401` names the latter in `WWW-Authenticate`'s `resource_metadata`.
#[derive(Clone)]
pub struct OAuthResource {
    resource: String,
    authorization_servers: Vec<String>,
    verifier: Arc<dyn TokenVerifier>,
    required: Vec<String>,
    supported: Vec<String>,
    tools: HashMap<String, Vec<String>>,
    name: Option<String>,
    documentation: Option<String>,
}

impl std::fmt::Debug for OAuthResource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthResource")
            .field("resource", &self.resource)
            .field("authorization_servers", &self.authorization_servers)
            .field("required", &self.required)
            .field("tools", &self.tools)
            .finish_non_exhaustive()
    }
}

impl OAuthResource {
    /// The resource at `resource`, the canonical URI of the MCP endpoint as
    /// clients reach it (`https://mcp.example.com/mcp`: the audience its
    /// tokens are for), whose tokens `authorization_server` (its issuer
    /// URL) issues and `verifier` checks.
    pub fn new(
        resource: impl Into<String>,
        authorization_server: impl Into<String>,
        verifier: impl TokenVerifier,
    ) -> Self {
        Self {
            resource: resource.into(),
            authorization_servers: vec![authorization_server.into()],
            verifier: Arc::new(verifier),
            required: Vec::new(),
            supported: Vec::new(),
            tools: HashMap::new(),
            name: None,
            documentation: None,
        }
    }

    /// Another authorization server whose tokens are accepted (listed in
    /// the metadata; the verifier must accept its tokens too).
    pub fn authorization_server(mut self, url: impl Into<String>) -> Self {
        self.authorization_servers.push(url.into());
        self
    }

    /// Scopes every request needs (named in each `401`'s `scope`, and
    /// listed as supported).
    pub fn require_scopes(mut self, scopes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.required = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// Scopes a call of `tool` needs on top of the required ones; replaces
    /// what the tool's own [`SCOPES_META_KEY`] says.
    pub fn tool_scopes(
        mut self,
        tool: impl Into<String>,
        scopes: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        self.tools
            .insert(tool.into(), scopes.into_iter().map(Into::into).collect());
        self
    }

    /// Scopes listed as supported in the metadata, besides the required
    /// ones and those the host map names.
    pub fn scopes_supported(mut self, scopes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.supported = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// A name for people, in the metadata (`resource_name`).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Where people read how to use the resource (`resource_documentation`).
    pub fn documentation(mut self, url: impl Into<String>) -> Self {
        self.documentation = Some(url.into());
        self
    }

    /// The resource's canonical URI.
    pub fn resource(&self) -> &str {
        &self.resource
    }

    /// The protected resource metadata (RFC 9728) served at the well-known paths.
    pub fn metadata(&self) -> Value {
        let mut scopes: Vec<&String> = Vec::new();
        let all = self
            .required
            .iter()
            .chain(&self.supported)
            .chain(self.tools.values().flatten());
        for scope in all {
            if !scopes.contains(&scope) {
                scopes.push(scope);
            }
        }
        let mut metadata = json!({
            "resource": self.resource,
            "authorization_servers": self.authorization_servers,
            "bearer_methods_supported": ["header"],
        });
        if !scopes.is_empty() {
            metadata["scopes_supported"] = json!(scopes);
        }
        if let Some(name) = &self.name {
            metadata["resource_name"] = json!(name);
        }
        if let Some(url) = &self.documentation {
            metadata["resource_documentation"] = json!(url);
        }
        metadata
    }

    /// The URL of the metadata for this resource: the well-known path
    /// inserted between its origin and its path (RFC 9728 §3.1).
    pub fn metadata_url(&self) -> String {
        match reqwest::Url::parse(&self.resource) {
            Ok(url) => {
                let path = url.path().trim_end_matches('/');
                format!(
                    "{}/.well-known/oauth-protected-resource{path}",
                    url.origin().ascii_serialization()
                )
            }
            Err(_) => format!("{}/.well-known/oauth-protected-resource", self.resource),
        }
    }

    /// The scopes a call of `tool` (spec `meta`) needs beyond the required ones.
    fn scopes_for(&self, tool: &str, meta: Option<&Map<String, Value>>) -> Vec<String> {
        if let Some(scopes) = self.tools.get(tool) {
            return scopes.clone();
        }
        meta.and_then(|m| m.get(SCOPES_META_KEY))
            .and_then(Value::as_array)
            .map(|items| {
                items
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Nobody;

    #[async_trait]
    impl TokenVerifier for Nobody {
        async fn verify(&self, _token: &str) -> Result<Claims, TokenError> {
            Err(TokenError::Invalid("no".into()))
        }
    }

    #[test]
    fn claims_read_the_standard_names() {
        let claims = Claims::from_json(
            json!({"sub": "u1", "iss": "https://as", "aud": "https://rs/mcp",
                   "scope": "a b", "azp": "c1", "exp": 10, "tenant": "t"})
            .as_object()
            .unwrap()
            .clone(),
        );
        assert_eq!(claims.subject(), Some("u1"));
        assert_eq!(claims.audience(), ["https://rs/mcp"]);
        assert!(claims.has_scope("b") && !claims.has_scope("c"));
        assert_eq!(claims.client_id(), Some("c1"));
        assert_eq!(claims.expires_at(), Some(10));
        assert_eq!(claims.get("tenant"), Some(&json!("t")));
        let scp = Claims::from_json(json!({"scp": ["x"]}).as_object().unwrap().clone());
        assert_eq!(scp.scopes(), ["x"]);
    }

    #[test]
    fn metadata_sits_under_the_endpoints_path() {
        let resource = OAuthResource::new("https://rs.example/mcp", "https://as.example", Nobody)
            .require_scopes(["mcp"])
            .tool_scopes("rm", ["files:write", "mcp"]);
        assert_eq!(
            resource.metadata_url(),
            "https://rs.example/.well-known/oauth-protected-resource/mcp"
        );
        let metadata = resource.metadata();
        assert_eq!(metadata["resource"], "https://rs.example/mcp");
        assert_eq!(
            metadata["authorization_servers"],
            json!(["https://as.example"])
        );
        assert_eq!(metadata["scopes_supported"], json!(["mcp", "files:write"]));
        let root = OAuthResource::new("https://rs.example/", "https://as", Nobody);
        assert_eq!(
            root.metadata_url(),
            "https://rs.example/.well-known/oauth-protected-resource"
        );
    }
}

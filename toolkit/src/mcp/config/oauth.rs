//! A server entry's `oauth` block: how this client signs in to a streamable
//! HTTP server that requires OAuth.

use std::fmt;
use std::time::Duration;

use serde_json::Value;

use super::{ConfigError, Fields, canonical_keys, kind};

/// How long one request to an authorization server may take when the
/// block's `requestTimeout` is not set: its answers are small, and one that
/// dawdles must not hold the connection for the whole connect timeout.
pub const DEFAULT_OAUTH_REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// The keys an `oauth` block may have, in camelCase (each reads in
/// snake_case too, as a server entry's keys do).
const KEYS: [&str; 7] = [
    "clientId",
    "clientMetadataUrl",
    "clientSecret",
    "scopes",
    "redirectUri",
    "clientName",
    "requestTimeout",
];

/// How to sign in to a server that requires OAuth: a server entry's
/// `oauth` block. Every key is optional; `"oauth": {}` signs in with
/// dynamic client registration and the scopes the server asks for.
///
/// ```
/// use toolsmith::mcp::McpConfig;
///
/// let config: McpConfig = r#"{"mcpServers": {"crm": {
///     "url": "https://crm.example.com/mcp",
///     "oauth": {
///         "clientId": "toolsmith-desktop",
///         "scopes": "crm.read crm.write",
///         "redirectUri": "http://127.0.0.1:8976/callback"
///     }
/// }}}"#.parse().unwrap();
/// let oauth = config.servers[0].oauth.as_ref().unwrap();
/// assert_eq!(oauth.client_id.as_deref(), Some("toolsmith-desktop"));
/// assert_eq!(oauth.scopes, ["crm.read", "crm.write"]);
/// ```
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct OAuthConfig {
    /// The client's id at the authorization server (`clientId`), when it
    /// was registered beforehand. Without one the client registers itself
    /// (dynamic client registration, RFC 7591) as a public client.
    pub client_id: Option<String>,
    /// The registered client's secret (`clientSecret`), for a confidential
    /// client; only with `clientId`. Never shown by `Debug`.
    pub client_secret: Option<String>,
    /// The `https` address of this client's metadata document
    /// (`clientMetadataUrl`), published by the host: used as the client id
    /// at an authorization server that advertises
    /// `client_id_metadata_document_supported`, instead of registering.
    /// `clientId`, when set, comes first; a server without the support is
    /// registered with as usual.
    pub client_metadata_url: Option<String>,
    /// The scopes to ask for (`scopes`: a list, or one string of
    /// space-separated scopes). Empty: the scopes the server's `401`
    /// challenge or its metadata names.
    pub scopes: Vec<String>,
    /// Where the authorization server sends the user back with the code
    /// (`redirectUri`): `https`, `http` on a loopback address, or an
    /// application's own scheme (`com.example.app:/callback`). Without it,
    /// the host's [`Authorizer`](crate::mcp::McpClients) names it.
    pub redirect_uri: Option<String>,
    /// The name this client registers under (`clientName`; default
    /// `toolsmith`).
    pub client_name: Option<String>,
    /// How long one request to the authorization server may take
    /// (`requestTimeout`, seconds; default 10).
    pub request_timeout: Duration,
}

impl Default for OAuthConfig {
    fn default() -> Self {
        Self {
            client_id: None,
            client_secret: None,
            client_metadata_url: None,
            scopes: Vec::new(),
            redirect_uri: None,
            client_name: None,
            request_timeout: DEFAULT_OAUTH_REQUEST_TIMEOUT,
        }
    }
}

impl fmt::Debug for OAuthConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuthConfig")
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "[REDACTED]"),
            )
            .field("client_metadata_url", &self.client_metadata_url)
            .field("scopes", &self.scopes)
            .field("redirect_uri", &self.redirect_uri)
            .field("client_name", &self.client_name)
            .field("request_timeout", &self.request_timeout)
            .finish()
    }
}

impl OAuthConfig {
    /// Parse the `oauth` block of the server called `server`.
    pub(super) fn from_json(server: &str, block: &Value) -> Result<Self, ConfigError> {
        let err = |key: &str, message: String| ConfigError {
            server: server.to_owned(),
            key: if key.is_empty() {
                "oauth".to_owned()
            } else {
                format!("oauth.{key}")
            },
            message,
        };
        let Value::Object(block) = block else {
            return Err(err(
                "",
                format!("`oauth` must be an object, got {}", kind(block)),
            ));
        };
        let canonical = canonical_keys(block, &KEYS).map_err(|(key, m)| err(&key, m))?;
        let fields = Fields {
            server,
            entry: &canonical,
        };
        let nested = |e: ConfigError| err(&e.key, format!("in `oauth`: {}", e.message));
        let client_id = fields.string("clientId").map_err(nested)?;
        let client_secret = fields.string("clientSecret").map_err(nested)?;
        if client_secret.is_some() && client_id.is_none() {
            return Err(err(
                "clientSecret",
                "`clientSecret` needs the `clientId` it belongs to".into(),
            ));
        }
        let client_metadata_url = fields.string("clientMetadataUrl").map_err(nested)?;
        if let Some(url) = &client_metadata_url {
            check_client_metadata_url(url).map_err(|m| err("clientMetadataUrl", m))?;
        }
        let scopes = match canonical.get("scopes") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::String(joined)) => joined.split_whitespace().map(str::to_owned).collect(),
            Some(_) => fields
                .strings("scopes")
                .map_err(nested)?
                .unwrap_or_default(),
        };
        let redirect_uri = fields.string("redirectUri").map_err(nested)?;
        if let Some(uri) = &redirect_uri {
            check_redirect_uri(uri).map_err(|m| err("redirectUri", m))?;
        }
        let client_name = fields.string("clientName").map_err(nested)?;
        let request_timeout = fields
            .seconds("requestTimeout")
            .map_err(nested)?
            .unwrap_or(DEFAULT_OAUTH_REQUEST_TIMEOUT);
        Ok(Self {
            client_id,
            client_secret,
            client_metadata_url,
            scopes,
            redirect_uri,
            client_name,
            request_timeout,
        })
    }
}

/// A redirect URI an authorization server may send a code to, as OAuth 2.1
/// and RFC 8252 allow a native application: `https`, `http` only to this
/// machine's loopback (the code never crosses a network in the clear), or
/// an application's own reverse-domain scheme; never with a fragment.
fn check_redirect_uri(uri: &str) -> Result<(), String> {
    let parsed = reqwest::Url::parse(uri)
        .map_err(|e| format!("`redirectUri` must be an absolute URL: {e}"))?;
    if parsed.fragment().is_some() {
        return Err("`redirectUri` must not have a fragment".into());
    }
    match parsed.scheme() {
        "https" => Ok(()),
        "http" => match parsed.host_str() {
            Some(host) if is_loopback(host) => Ok(()),
            _ => Err(format!(
                "an `http` `redirectUri` must name a loopback address (127.0.0.1, [::1] or localhost), got `{uri}`"
            )),
        },
        scheme if scheme.contains('.') => Ok(()),
        scheme => Err(format!(
            "`redirectUri` must be https, http on a loopback address, or an application's reverse-domain scheme, got `{scheme}:`"
        )),
    }
}

/// A client id metadata document's address: the authorization server
/// fetches it and takes the client's name and redirect URIs from it, so it
/// must be `https` with a path (the document, not a site's root), and carry
/// nothing that makes two spellings of one id (no fragment, no
/// credentials).
fn check_client_metadata_url(url: &str) -> Result<(), String> {
    let parsed = reqwest::Url::parse(url)
        .map_err(|e| format!("`clientMetadataUrl` must be an absolute URL: {e}"))?;
    if parsed.scheme() != "https" {
        return Err(format!(
            "`clientMetadataUrl` must be an https URL, got `{}:`",
            parsed.scheme()
        ));
    }
    if parsed.path() == "/" || parsed.path().is_empty() {
        return Err("`clientMetadataUrl` must name a document, not a site's root".into());
    }
    if parsed.fragment().is_some() || !parsed.username().is_empty() || parsed.password().is_some() {
        return Err("`clientMetadataUrl` must have no fragment and no credentials".into());
    }
    Ok(())
}

/// Whether a URL's host names this machine's loopback.
fn is_loopback(host: &str) -> bool {
    host.eq_ignore_ascii_case("localhost")
        || host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn block(value: Value) -> Result<OAuthConfig, ConfigError> {
        OAuthConfig::from_json("srv", &value)
    }

    #[test]
    fn an_empty_block_registers_and_takes_the_servers_scopes() {
        let config = block(json!({})).unwrap();
        assert_eq!(config, OAuthConfig::default());
        assert_eq!(config.request_timeout, DEFAULT_OAUTH_REQUEST_TIMEOUT);
    }

    #[test]
    fn scopes_read_as_a_list_or_one_spaced_string() {
        let listed = block(json!({"scopes": ["a", "b"]})).unwrap();
        let spaced = block(json!({"scopes": "  a   b "})).unwrap();
        assert_eq!(listed.scopes, ["a", "b"]);
        assert_eq!(spaced.scopes, listed.scopes);
        let err = block(json!({"scopes": 3})).unwrap_err();
        assert_eq!(err.key, "oauth.scopes");
    }

    #[test]
    fn keys_read_in_either_spelling_and_unknown_ones_are_refused() {
        let config =
            block(json!({"client_id": "c", "CLIENT_SECRET": "s", "request_timeout": 2})).unwrap();
        assert_eq!(config.client_id.as_deref(), Some("c"));
        assert_eq!(config.client_secret.as_deref(), Some("s"));
        assert_eq!(config.request_timeout, Duration::from_secs(2));
        let err = block(json!({"clientID": "c", "client_id": "d"})).unwrap_err();
        assert_eq!(err.key, "oauth.client_id");
        let err = block(json!({"audience": "x"})).unwrap_err();
        assert_eq!(err.key, "oauth.audience");
        assert!(err.message.contains("expected one of: clientId"), "{err}");
    }

    #[test]
    fn a_secret_needs_its_client_and_is_never_shown() {
        let err = block(json!({"clientSecret": "s3cr3t"})).unwrap_err();
        assert_eq!(err.key, "oauth.clientSecret");
        let config = block(json!({"clientId": "c", "clientSecret": "s3cr3t"})).unwrap();
        assert!(!format!("{config:?}").contains("s3cr3t"));
    }

    #[test]
    fn redirect_uris_that_could_leak_a_code_are_refused() {
        for good in [
            "http://127.0.0.1:8976/callback",
            "http://[::1]/cb",
            "http://localhost:1/cb",
            "https://app.example.com/oauth/cb",
            "com.example.app:/callback",
        ] {
            assert!(block(json!({"redirectUri": good})).is_ok(), "{good}");
        }
        for bad in [
            "http://example.com/cb",
            "http://10.0.0.1/cb",
            "http://127.0.0.1.example.com/cb",
            "http://localhost.example.com/cb",
            "https://app.example.com/cb#frag",
            "javascript:alert(1)",
            "file:///etc/passwd",
            "/relative/callback",
            "",
        ] {
            let err = block(json!({"redirectUri": bad})).unwrap_err();
            assert_eq!(err.key, "oauth.redirectUri", "{bad}");
        }
    }

    #[test]
    fn client_metadata_urls_must_be_https_documents() {
        let good = "https://app.example.com/oauth/client.json";
        let config = block(json!({"clientMetadataUrl": good})).unwrap();
        assert_eq!(config.client_metadata_url.as_deref(), Some(good));
        for bad in [
            "http://app.example.com/client.json",
            "http://127.0.0.1/client.json",
            "https://app.example.com/",
            "https://app.example.com",
            "https://app.example.com/client.json#x",
            "https://user:pw@app.example.com/client.json",
            "file:///etc/client.json",
            "javascript:alert(1)",
            "/client.json",
            "",
        ] {
            let err = block(json!({"clientMetadataUrl": bad})).unwrap_err();
            assert_eq!(err.key, "oauth.clientMetadataUrl", "{bad}");
        }
    }

    #[test]
    fn only_streamable_http_servers_sign_in() {
        use crate::mcp::config::ServerConfig;
        let http = ServerConfig::from_json("s", &json!({"url": "http://h/mcp", "oauth": {}}));
        assert_eq!(http.unwrap().oauth, Some(OAuthConfig::default()));
        for entry in [
            json!({"command": "x", "oauth": {}}),
            json!({"url": "http://h/sse", "oauth": {}}),
        ] {
            let err = ServerConfig::from_json("s", &entry).unwrap_err();
            assert_eq!(err.key, "oauth", "{entry}");
        }
    }

    #[test]
    fn a_block_that_is_no_object_is_refused() {
        for value in [json!("yes"), json!(true), json!([1])] {
            let err = block(value).unwrap_err();
            assert_eq!(err.key, "oauth");
        }
    }
}

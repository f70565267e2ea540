//! Signing in to MCP servers that require OAuth (feature `mcp-oauth`).
//!
//! A server's `401` names its protected resource metadata (RFC 9728); that
//! names the authorization server, whose metadata (RFC 8414, or OpenID
//! Connect discovery) gives its endpoints. The client registers itself
//! there (RFC 7591) when the configuration names no client id, sends the
//! user to the authorization endpoint with a PKCE S256 challenge and the
//! server as the `resource` (RFC 8707), and trades the code it gets back
//! for tokens. The host does the one step that needs a person: an
//! [`Authorizer`] opens the URL and hands back what the redirect carried.
//! Tokens live in a [`TokenStore`], are refreshed before they expire (and
//! once when the server refuses one), and a refresh the authorization
//! server refuses sends the user through the sign-in again.
//!
//! After sign-in a server may ask for more (see `challenge`): a `403`
//! `insufficient_scope` signs the user in again for the union of the
//! scopes held and the ones it names (checked, bounded, and only when the
//! union grows), and a `401` starts over from discovery, which follows a
//! server that moved to another authorization server (registering there
//! anew, the old issuer's tokens dropped). Either way the refused request
//! is sent again once. Where the authorization server takes client ID
//! metadata documents, the host's `clientMetadataUrl` is the client id.
//!
//! The protocol's steps are the MCP SDK's (`rmcp`'s `auth`); this module
//! binds them to the configuration, the host and the store, and puts a
//! bounded HTTP client under them ([`http`]).

mod challenge;
mod http;
mod loopback;
mod redirect;
mod signin;
mod store;

use std::error::Error;

use async_trait::async_trait;

pub(crate) use challenge::{Refusal, refusal_of};
pub use loopback::LoopbackAuthorizer;
pub use redirect::AuthorizationRedirect;
pub(crate) use signin::{SignIn, SignedInClient, challenge_of};
pub use store::{FileTokenStore, MemoryTokenStore, StoredTokens, TokenStore};

/// The host's part of signing in: show the user the authorization server's
/// page and bring back where it redirected them.
///
/// Set one with [`McpClients::with_authorizer`](crate::mcp::McpClients::with_authorizer).
/// [`authorize`](Self::authorize) gets the URL to open; it returns the
/// `code`, `state` and `iss` of the redirect (the client checks `state`
/// against the one it sent and `iss` against the authorization server's
/// issuer, and refuses a redirect that does not match).
/// [`LoopbackAuthorizer`] receives the redirect on a loopback port, as
/// desktop hosts do.
///
/// ```
/// use toolsmith::mcp::{AuthorizationPrompt, AuthorizationRedirect, Authorizer};
///
/// /// Asks the user to paste the address the browser ended on.
/// struct Paste;
///
/// #[toolsmith::async_trait]
/// impl Authorizer for Paste {
///     fn redirect_uri(&self) -> String {
///         "http://127.0.0.1:8976/callback".into()
///     }
///
///     async fn authorize(
///         &self,
///         prompt: AuthorizationPrompt,
///     ) -> Result<AuthorizationRedirect, Box<dyn std::error::Error + Send + Sync>> {
///         println!("Sign in to {}: open {}", prompt.server, prompt.url);
///         let mut pasted = String::new();
///         std::io::stdin().read_line(&mut pasted)?;
///         Ok(AuthorizationRedirect::from_url(pasted.trim())?)
///     }
/// }
/// ```
#[async_trait]
pub trait Authorizer: Send + Sync + 'static {
    /// Where the authorization server sends the user back, registered with
    /// it and sent with each authorization request; a server entry's
    /// `oauth.redirectUri` takes its place.
    fn redirect_uri(&self) -> String;

    /// Show the user `prompt.url` and return what the redirect to
    /// `prompt.redirect_uri` carried. The client waits at most
    /// [`SIGN_IN_TIMEOUT`] for it.
    async fn authorize(
        &self,
        prompt: AuthorizationPrompt,
    ) -> Result<AuthorizationRedirect, Box<dyn Error + Send + Sync>>;
}

/// How long the host's [`Authorizer`] may take to bring back the redirect:
/// long enough for a person to sign in, not for ever.
pub const SIGN_IN_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(300);

/// What the host shows the user to sign in to a server.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct AuthorizationPrompt {
    /// The configured server's name.
    pub server: String,
    /// The authorization server's page to open: its authorization endpoint
    /// with this request's client id, PKCE challenge, state, scopes and
    /// resource.
    pub url: String,
    /// Where it will send the user back.
    pub redirect_uri: String,
}

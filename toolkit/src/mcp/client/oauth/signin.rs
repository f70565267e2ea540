//! One server's sign-in: the token sent with each request, refreshed as
//! needed, and the authorization the host's user goes through when there
//! is no token or it can no longer be refreshed.

use std::path::PathBuf;
use std::sync::Arc;

use futures_util::FutureExt;
use rmcp::service::ClientInitializeError;
use rmcp::transport::auth::{
    AuthClient, AuthError, AuthorizationManager, AuthorizationRequest, AuthorizationSession,
    OAuthClientConfig,
};
use rmcp::transport::streamable_http_client::{AuthRequiredError, StreamableHttpError};

use super::http::BoundedHttp;
use super::store::Slot;
use super::{AuthorizationPrompt, Authorizer, SIGN_IN_TIMEOUT, TokenStore};
use crate::mcp::config::OAuthConfig;

/// The most of an authorization server's error text passed on: it reaches
/// logs and, through a failed call, the model.
const MAX_ERROR_CHARS: usize = 300;

/// The HTTP client of a signed-in server: it adds the token to each
/// request to the MCP server (and to no other origin).
pub(crate) type SignedInClient = AuthClient<reqwest::Client>;

/// A server's sign-in state.
pub(crate) struct SignIn {
    server: String,
    url: String,
    config: OAuthConfig,
    ca_certificate: Option<PathBuf>,
    store: Arc<dyn TokenStore>,
    authorizer: Option<Arc<dyn Authorizer>>,
    client: tokio::sync::OnceCell<SignedInClient>,
    /// Held while the user signs in, so two calls ask them once.
    signing_in: tokio::sync::Mutex<()>,
}

impl SignIn {
    pub(crate) fn new(
        server: &str,
        url: &str,
        config: OAuthConfig,
        ca_certificate: Option<PathBuf>,
        store: Arc<dyn TokenStore>,
        authorizer: Option<Arc<dyn Authorizer>>,
    ) -> Self {
        Self {
            server: server.to_owned(),
            url: url.to_owned(),
            config,
            ca_certificate,
            store,
            authorizer,
            client: tokio::sync::OnceCell::new(),
            signing_in: tokio::sync::Mutex::new(()),
        }
    }

    /// A manager of this server's tokens, speaking to authorization
    /// servers through the bounded client only.
    async fn manager(&self) -> Result<AuthorizationManager, String> {
        let url = reqwest::Url::parse(&self.url).map_err(|e| format!("`url`: {e}"))?;
        let http = BoundedHttp::new(
            &url,
            self.config.request_timeout,
            self.ca_certificate.as_deref(),
        )?;
        let mut manager = AuthorizationManager::new_with_oauth_http_client(url, Arc::new(http))
            .await
            .map_err(|e| said(&e))?;
        manager.set_credential_store(Slot {
            store: Arc::clone(&self.store),
            server_url: self.url.clone(),
        });
        Ok(manager)
    }

    /// The client the MCP transport sends requests with, made once around
    /// `http`: with the tokens kept from an earlier run, when the store has
    /// some that the server's authorization server (its issuer unchanged)
    /// minted.
    pub(crate) async fn client(&self, http: reqwest::Client) -> Result<SignedInClient, String> {
        self.client
            .get_or_try_init(|| async {
                let mut manager = self.manager().await?;
                if manager
                    .initialize_from_store()
                    .await
                    .map_err(|e| said(&e))?
                {
                    self.configure_registered(&mut manager)?;
                }
                Ok(AuthClient::new(http, manager))
            })
            .await
            .cloned()
    }

    /// A client registered beforehand authenticates with its own secret.
    fn configure_registered(&self, manager: &mut AuthorizationManager) -> Result<(), String> {
        let (Some(id), Some(secret)) = (&self.config.client_id, &self.config.client_secret) else {
            return Ok(());
        };
        let redirect = self.config.redirect_uri.clone().unwrap_or_default();
        let config = OAuthClientConfig::new(id.clone(), redirect)
            .with_client_secret(secret.clone())
            .with_scopes(self.config.scopes.clone());
        manager.configure_client(config).map_err(|e| said(&e))
    }

    /// Before a request: a token close to expiring is refreshed now, and
    /// one that can no longer be refreshed (the authorization server
    /// refused the refresh token) sends the user through sign-in again.
    /// With no token at all the server's `401` decides, as the connection
    /// learns the server's challenge from it.
    pub(crate) async fn ensure(&self) -> Result<(), String> {
        let Some(client) = self.client.get() else {
            return Ok(());
        };
        match client.get_access_token().await {
            Ok(_) => Ok(()),
            Err(AuthError::AuthorizationRequired) => {
                let kept = self.store.load(&self.url).await.ok().flatten();
                if kept.is_some_and(|t| t.access_token().is_some()) {
                    self.sign_in(None).await
                } else {
                    Ok(())
                }
            }
            Err(e) => Err(self.failed(&said(&e))),
        }
    }

    /// Send the user through the authorization the server's `challenge`
    /// (its `401`'s `WWW-Authenticate`) or its metadata describes, and keep
    /// the tokens it ends with.
    pub(crate) async fn sign_in(&self, challenge: Option<&str>) -> Result<(), String> {
        let client = self
            .client
            .get()
            .ok_or_else(|| self.failed("signing in before connecting"))?;
        let _one = self.signing_in.lock().await;
        // Another call may have signed in while this one waited.
        if challenge.is_none() && client.get_access_token().await.is_ok() {
            return Ok(());
        }
        let Some(authorizer) = &self.authorizer else {
            return Err(self.failed(
                "the server requires OAuth sign-in, and the host set no Authorizer (McpClients::with_authorizer)",
            ));
        };
        let redirect_uri = self
            .config
            .redirect_uri
            .clone()
            .unwrap_or_else(|| authorizer.redirect_uri());
        let mut manager = self.manager().await.map_err(|e| self.failed(&e))?;
        let found = manager
            .resolve_metadata_from_challenge(challenge)
            .await
            .map_err(|e| {
                self.failed(&format!(
                    "discovering its authorization server: {}",
                    said(&e)
                ))
            })?;
        manager.set_metadata(found.metadata);
        let mut request = AuthorizationRequest::new(redirect_uri.clone())
            .with_client_name(self.config.client_name.as_deref().unwrap_or("toolsmith"));
        if !self.config.scopes.is_empty() {
            request = request.with_scopes(self.config.scopes.iter().cloned());
        }
        if let Some(id) = &self.config.client_id {
            request = request.with_preregistered_client(id.clone());
            if let Some(secret) = &self.config.client_secret {
                request = request.with_client_secret(secret.clone());
            }
        }
        let session = AuthorizationSession::new(manager, request)
            .await
            .map_err(|(_, e)| self.failed(&said(&e)))?;
        let prompt = AuthorizationPrompt {
            server: self.server.clone(),
            url: session.get_authorization_url().to_owned(),
            redirect_uri,
        };
        let asked = std::panic::AssertUnwindSafe(authorizer.authorize(prompt)).catch_unwind();
        let back = match tokio::time::timeout(SIGN_IN_TIMEOUT, asked).await {
            Err(_) => {
                return Err(self.failed(&format!(
                    "the sign-in did not come back within {SIGN_IN_TIMEOUT:?}"
                )));
            }
            Ok(Err(_panic)) => return Err(self.failed("the host's Authorizer panicked")),
            Ok(Ok(Err(e))) => return Err(self.failed(&format!("the sign-in failed: {e}"))),
            Ok(Ok(Ok(back))) => back,
        };
        session
            .handle_callback_with_issuer(&back.code, &back.state, back.issuer.as_deref())
            .await
            .map_err(|e| {
                self.failed(&format!("the sign-in's redirect was refused: {}", said(&e)))
            })?;
        *client.auth_manager.lock().await = session.auth_manager;
        tracing::info!(server = %self.server, "signed in to the MCP server");
        Ok(())
    }

    fn failed(&self, why: &str) -> String {
        format!("signing in to the MCP server `{}`: {why}", self.server)
    }
}

/// The `WWW-Authenticate` challenge of the `401` that refused a connection,
/// if that is why it failed.
pub(crate) fn challenge_of(error: &ClientInitializeError) -> Option<String> {
    let mut next: Option<&(dyn std::error::Error + 'static)> = match error {
        ClientInitializeError::TransportError { error, .. } => Some(error),
        other => std::error::Error::source(other),
    };
    while let Some(cause) = next {
        if let Some(refused) = cause.downcast_ref::<AuthRequiredError>() {
            return Some(refused.www_authenticate_header.clone());
        }
        if let Some(StreamableHttpError::AuthRequired(refused)) =
            cause.downcast_ref::<StreamableHttpError<reqwest::Error>>()
        {
            return Some(refused.www_authenticate_header.clone());
        }
        next = cause.source();
    }
    None
}

/// An error of the OAuth steps as it may be passed on: the authorization
/// server's words in it are bounded and stripped of control characters.
fn said(error: &AuthError) -> String {
    // The causes too: "discovery failed" alone does not say that the
    // answer was too large, or too slow.
    let mut text = error.to_string();
    let mut next = std::error::Error::source(error);
    while let Some(cause) = next {
        let cause_said = cause.to_string();
        if !text.contains(&cause_said) {
            text = format!("{text}: {cause_said}");
        }
        next = cause.source();
    }
    let mut shown: String = text
        .chars()
        .filter(|c| !c.is_control())
        .take(MAX_ERROR_CHARS)
        .collect();
    if text.chars().count() > MAX_ERROR_CHARS {
        shown.push('…');
    }
    shown
}

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

use super::challenge::{self, MAX_SCOPES};
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
    /// The scopes the last sign-in asked for: a step-up asks for them
    /// and the ones the server's `403` names.
    requested: std::sync::Mutex<Vec<String>>,
    /// How many sign-ins have ended well. A request notes it when sent: a
    /// refusal that comes back after another call's sign-in (for the
    /// scopes it lacked, or after a `401`) is answered by sending the
    /// request again with the new token, not by asking the user again.
    signed_in: std::sync::atomic::AtomicU64,
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
            requested: std::sync::Mutex::new(Vec::new()),
            signed_in: std::sync::atomic::AtomicU64::new(0),
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

    /// Send the user through the authorization the server's metadata
    /// describes, or after a `401` its challenge, and keep the tokens it
    /// ends with. `refused` is that `401`'s challenge and the
    /// [`generation`](Self::generation) its request was sent at: when
    /// another call has signed in since, nobody is asked and the request
    /// goes again with the new token. Without one (the kept token can no
    /// longer be refreshed), nobody is asked when another call has got a
    /// token meanwhile.
    pub(crate) async fn sign_in(&self, refused: Option<(&str, u64)>) -> Result<(), String> {
        let client = self
            .client
            .get()
            .ok_or_else(|| self.failed("signing in before connecting"))?;
        let challenge = refused.map(|(challenge, _)| challenge);
        if let Some(challenge) = challenge {
            self.scopes_asked(challenge)?;
        }
        let _one = self.signing_in.lock().await;
        match refused {
            Some((_, sent_at)) if sent_at != self.generation() => return Ok(()),
            None if client.get_access_token().await.is_ok() => return Ok(()),
            _ => {}
        }
        self.authorize(client, challenge, None).await
    }

    /// How many sign-ins have ended well so far. Read when a request is
    /// sent, it tells whether a refusal of that request came before or
    /// after the token changed.
    pub(crate) fn generation(&self) -> u64 {
        self.signed_in.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// After a `403` `insufficient_scope`: sign in again asking for the
    /// scopes held and the ones the `challenge` names together, so the call
    /// can be tried again once. Refused, without asking the user, when the
    /// challenge names no scope, a malformed one, only scopes already
    /// asked for (a server that would refuse again and again), or would
    /// take the request past [`MAX_SCOPES`]. `sent_at` is the
    /// [`generation`](Self::generation) when the refused request was sent:
    /// when another call's sign-in has since added the scopes, the request
    /// is sent again without one.
    pub(crate) async fn step_up(&self, challenge: &str, sent_at: u64) -> Result<(), String> {
        let client = self
            .client
            .get()
            .ok_or_else(|| self.failed("signing in before connecting"))?;
        let asked = self.scopes_asked(challenge)?;
        if asked.is_empty() {
            return Err(self.failed(
                "the server refused the token for its scopes (403 insufficient_scope) without naming the scopes it needs",
            ));
        }
        let _one = self.signing_in.lock().await;
        let held = self.held_scopes().await;
        let wanted = challenge::union(&held, &asked);
        if wanted.len() == held.len() {
            // Another call's sign-in may have added them since this
            // request was sent: then trying again may pass.
            if self.generation() != sent_at {
                return Ok(());
            }
            return Err(self.failed(&format!(
                "the server refused the token for lack of scopes it was already asked for ({}); not signing in again",
                asked.join(" ")
            )));
        }
        if wanted.len() > MAX_SCOPES {
            return Err(self.failed(&format!(
                "the server asks for more than {MAX_SCOPES} scopes in all; not signing in again"
            )));
        }
        tracing::info!(server = %self.server, scopes = %wanted.join(" "), "signing in again for more scopes");
        self.authorize(client, Some(challenge), Some(wanted)).await
    }

    /// The scopes a challenge names, checked; refused with this server's
    /// name when they are malformed.
    fn scopes_asked(&self, challenge: &str) -> Result<Vec<String>, String> {
        let url = reqwest::Url::parse(&self.url).map_err(|e| self.failed(&e.to_string()))?;
        challenge::scopes_of(challenge, &url).map_err(|e| self.failed(&e))
    }

    /// The scopes asked for last, and those the kept tokens were granted.
    async fn held_scopes(&self) -> Vec<String> {
        let requested = self
            .requested
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let granted = match self.store.load(&self.url).await {
            Ok(Some(tokens)) => tokens.scopes().to_vec(),
            _ => Vec::new(),
        };
        challenge::union(&requested, &granted)
    }

    /// The authorization itself, with the sign-in lock held: discovery
    /// from `challenge`, registration unless configured otherwise, the
    /// user's step, the code traded for tokens. `scopes`, when given, are
    /// asked for instead of the configured or discovered ones.
    async fn authorize(
        &self,
        client: &SignedInClient,
        challenge: Option<&str>,
        scopes: Option<Vec<String>>,
    ) -> Result<(), String> {
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
        self.forget_other_issuers(found.metadata.issuer.as_deref())
            .await;
        manager.set_metadata(found.metadata);
        let mut request = AuthorizationRequest::new(redirect_uri.clone())
            .with_client_name(self.config.client_name.as_deref().unwrap_or("toolsmith"));
        if let Some(scopes) = scopes {
            request = request.with_scopes(scopes);
        } else if !self.config.scopes.is_empty() {
            request = request.with_scopes(self.config.scopes.iter().cloned());
        }
        if let Some(url) = &self.config.client_metadata_url {
            request = request.with_client_metadata_url(url.clone());
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
        let url = session.get_authorization_url().to_owned();
        let prompt = AuthorizationPrompt {
            server: self.server.clone(),
            url: url.clone(),
            redirect_uri,
        };
        let asked = std::panic::AssertUnwindSafe(authorizer.authorize(prompt)).catch_unwind();
        let back = match tokio::time::timeout(SIGN_IN_TIMEOUT, asked).await {
            Err(_) => {
                return Err(self.failed(&format!(
                    "the sign-in did not come back within {SIGN_IN_TIMEOUT:?}"
                )));
            }
            Ok(Err(panic)) => {
                crate::panics::discard(panic);
                return Err(self.failed("the host's Authorizer panicked"));
            }
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
        *self.requested.lock().unwrap_or_else(|e| e.into_inner()) = scopes_requested_by(&url);
        self.signed_in
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        tracing::info!(server = %self.server, "signed in to the MCP server");
        Ok(())
    }

    /// Tokens and registration belong to the authorization server that
    /// issued them: when the server's metadata now names another (it moved
    /// to a new one), the kept ones are dropped before signing in there,
    /// so nothing of the old one is sent to the new.
    async fn forget_other_issuers(&self, issuer: Option<&str>) {
        let Ok(Some(kept)) = self.store.load(&self.url).await else {
            return;
        };
        let (Some(old), Some(new)) = (kept.issuer(), issuer) else {
            return;
        };
        if old != new {
            tracing::info!(server = %self.server, from = %old, to = %new, "the MCP server's authorization server changed; its old tokens are dropped");
            if let Err(e) = self.store.clear(&self.url).await {
                tracing::warn!(server = %self.server, "the old tokens could not be dropped: {e}");
            }
            self.requested
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clear();
        }
    }

    fn failed(&self, why: &str) -> String {
        format!("signing in to the MCP server `{}`: {why}", self.server)
    }
}

/// The scopes an authorization URL asks for (its `scope` parameter).
fn scopes_requested_by(url: &str) -> Vec<String> {
    reqwest::Url::parse(url)
        .ok()
        .and_then(|url| {
            url.query_pairs()
                .find(|(key, _)| key == "scope")
                .map(|(_, value)| {
                    value
                        .split(' ')
                        .filter(|s| !s.is_empty())
                        .map(str::to_owned)
                        .collect()
                })
        })
        .unwrap_or_default()
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

//! Our MCP client signing in to an OAuth-protected server (feature
//! `mcp-oauth`), against a real authorization server on loopback: Node's
//! `oidc-provider` (`scripts/oauth_peers.sh`, run by
//! `tests/mcp-fixtures/oauth_server.mjs`). The protected server is this
//! SDK's own, checking the authorization server's JWTs with `JwtVerifier`
//! against its JWKS.
//!
//! The user's part is played by a program: it follows the authorization
//! URL, fills in the authorization server's login and consent forms, and
//! stops at the redirect, which it hands back (or, through
//! `LoopbackAuthorizer`, requests from the loopback port as a browser
//! would).

#[path = "../peers.rs"]
mod peers;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use tk::mcp::{
    AuthorizationPrompt, AuthorizationRedirect, Authorizer, HttpOptions, JwtVerifier,
    LoopbackAuthorizer, McpClients, McpConfig, McpServer, MemoryTokenStore, OAuthResource,
    TokenStore,
};
use tk::{ToolContext, ToolRegistry, tool};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

async fn bounded<F: std::future::Future>(body: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(90), body)
        .await
        .expect("the test did not finish within 90 s")
}

/// The folder `scripts/oauth_peers.sh` fills.
fn oauth_peers() -> PathBuf {
    let dir = peers::root().join(".cache/oauth-peers");
    assert!(
        dir.join(".installed").exists(),
        "oidc-provider is not installed in {}: run scripts/oauth_peers.sh",
        dir.display()
    );
    dir
}

/// A running authorization server.
struct AuthServer {
    _child: tokio::process::Child,
    issuer: String,
    /// Where it is reached (its issuer may name another host).
    base: String,
}

impl AuthServer {
    async fn start(access_token_ttl: u64, issuer_host: Option<&str>) -> Self {
        let node_22 = peers::root().join(".cache/mcp-peers/bin/node");
        let node = if node_22.exists() {
            node_22
        } else {
            PathBuf::from("node")
        };
        let mut command = tokio::process::Command::new(node);
        command
            .arg(peers::root().join("tests/mcp-fixtures/oauth_server.mjs"))
            .env("OAUTH_PEERS", oauth_peers())
            .env("ACCESS_TOKEN_TTL", access_token_ttl.to_string())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true);
        if let Some(host) = issuer_host {
            command.env("ISSUER_HOST", host);
        }
        let mut child = command
            .spawn()
            .expect("node starts the authorization server");
        let mut line = String::new();
        tokio::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .await
            .unwrap();
        let started: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("the authorization server said {line:?}: {e}"));
        Self {
            _child: child,
            issuer: started["issuer"].as_str().unwrap().to_owned(),
            base: format!("http://127.0.0.1:{}", started["port"]),
        }
    }

    async fn stats(&self) -> Value {
        let body = reqwest::get(format!("{}/_stats", self.base))
            .await
            .unwrap()
            .bytes()
            .await
            .unwrap();
        serde_json::from_slice(&body).unwrap()
    }

    async fn grants(&self, kind: &str) -> u64 {
        self.stats().await["grants"][kind].as_u64().unwrap_or(0)
    }
}

/// Say hello to whoever the token names.
#[tool(read_only)]
async fn hello(caller: &tk::mcp::Caller) -> String {
    let subject = caller.claims().and_then(|c| c.subject());
    format!("hello {}", subject.unwrap_or("nobody"))
}

/// This SDK's server on a free port, accepting the JWTs `auth_server`
/// issues for its URL (with the scope `mcp`) and naming `named_as` as its
/// authorization server; its URL.
async fn protected_server(auth_server: &AuthServer, named_as: &str) -> String {
    protected_server_where_hello_needs(auth_server, named_as, &[]).await
}

/// [`protected_server`], where calling `hello` needs `scopes` besides
/// `mcp` (refused with `403` `insufficient_scope` without them).
async fn protected_server_where_hello_needs(
    auth_server: &AuthServer,
    named_as: &str,
    scopes: &[&str],
) -> String {
    let registry = Arc::new(ToolRegistry::new());
    registry.register(HelloTool).unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let verifier = JwtVerifier::new(
        format!("{}/jwks", auth_server.base),
        auth_server.issuer.clone(),
        url.clone(),
    )
    .refresh_interval(Duration::ZERO);
    let mut resource = OAuthResource::new(url.clone(), named_as, verifier).require_scopes(["mcp"]);
    if !scopes.is_empty() {
        resource = resource.tool_scopes("hello", scopes.iter().copied());
    }
    let options = HttpOptions::default().auth(resource);
    tokio::spawn(McpServer::new(registry).serve_http(listener, options));
    url
}

/// A client of one server, `demo`, at `url`, signing in with `authorizer`
/// and keeping tokens in `store`.
fn client_of(
    url: &str,
    oauth: Value,
    authorizer: impl Authorizer,
    store: impl TokenStore,
) -> (Arc<ToolRegistry>, McpClients) {
    let config = McpConfig::from_json(&json!({"mcpServers": {"demo": {
        "url": url, "oauth": oauth, "toolTimeout": 30
    }}}))
    .unwrap();
    let registry = Arc::new(ToolRegistry::new());
    let clients = McpClients::new(config, &registry)
        .with_authorizer(authorizer)
        .with_token_store(store);
    (registry, clients)
}

async fn hello_through(registry: &ToolRegistry) -> tk::ToolOutput {
    registry
        .call("mcp_demo_hello", json!({}), &ToolContext::new())
        .await
}

/// Plays the user at the authorization server: follows `url`'s redirects
/// and submits each form it is shown (any login and password, consent
/// given), keeping the cookies it is given, until a redirect goes to
/// `redirect_uri`; returns that redirect's URL.
async fn sign_in_as_user(url: &str, redirect_uri: &str) -> Result<String, String> {
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap();
    let mut cookies: BTreeMap<String, String> = BTreeMap::new();
    let mut at = reqwest::Url::parse(url).map_err(|e| e.to_string())?;
    let mut form: Option<Vec<(String, String)>> = None;
    for _ in 0..20 {
        let cookie = cookies
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join("; ");
        let request = match form.take() {
            Some(fields) => http
                .post(at.clone())
                .header("content-type", "application/x-www-form-urlencoded")
                .body(form_encoded(&fields)),
            None => http.get(at.clone()),
        };
        let response = request
            .header("cookie", cookie)
            .send()
            .await
            .map_err(|e| e.to_string())?;
        for set in response.headers().get_all("set-cookie") {
            let set = set.to_str().unwrap_or_default();
            let pair = set.split(';').next().unwrap_or_default();
            if let Some((name, value)) = pair.split_once('=') {
                cookies.insert(name.trim().to_owned(), value.trim().to_owned());
            }
        }
        if response.status().is_redirection() {
            let location = response.headers()["location"].to_str().unwrap().to_owned();
            let next = at.join(&location).map_err(|e| e.to_string())?;
            if next.as_str().starts_with(redirect_uri) {
                return Ok(next.to_string());
            }
            at = next;
            continue;
        }
        let page = response.text().await.map_err(|e| e.to_string())?;
        let (action, fields) =
            form_of(&page).ok_or_else(|| format!("no form and no redirect at {at}: {page}"))?;
        at = at.join(&action).map_err(|e| e.to_string())?;
        form = Some(fields);
    }
    Err("the sign-in went on for more than 20 pages".into())
}

fn form_encoded(fields: &[(String, String)]) -> String {
    let mut url = reqwest::Url::parse("http://form.invalid/").unwrap();
    url.query_pairs_mut().extend_pairs(fields);
    url.query().unwrap_or_default().to_owned()
}

/// A page's form: its action and its fields, the login's filled in.
fn form_of(page: &str) -> Option<(String, Vec<(String, String)>)> {
    let form = &page[page.find("<form")?..];
    let action = attribute(form, "action")?;
    let mut fields = Vec::new();
    for input in form.split("<input").skip(1) {
        let tag = &input[..input.find('>')?];
        let Some(name) = attribute(tag, "name") else {
            continue;
        };
        let value = match name.as_str() {
            "login" => "alice".to_owned(),
            "password" => "secret".to_owned(),
            _ => attribute(tag, "value").unwrap_or_default(),
        };
        fields.push((name, value));
    }
    Some((action, fields))
}

fn attribute(tag: &str, name: &str) -> Option<String> {
    let start = tag.find(&format!("{name}=\""))? + name.len() + 2;
    let end = start + tag[start..].find('"')?;
    Some(tag[start..end].replace("&amp;", "&"))
}

/// The user, driven by the test: signs in at the authorization server and
/// hands back the redirect, as it came or altered as a forger would.
#[derive(Clone, Default)]
struct User {
    prompts: Arc<AtomicUsize>,
    forge_state: bool,
    forge_issuer: bool,
}

#[tk::async_trait]
impl Authorizer for User {
    fn redirect_uri(&self) -> String {
        "http://127.0.0.1:9/callback".into()
    }

    async fn authorize(
        &self,
        prompt: AuthorizationPrompt,
    ) -> Result<AuthorizationRedirect, Box<dyn std::error::Error + Send + Sync>> {
        self.prompts.fetch_add(1, Ordering::SeqCst);
        let url = reqwest::Url::parse(&prompt.url)?;
        let asked: BTreeMap<_, _> = url.query_pairs().into_owned().collect();
        assert_eq!(asked["code_challenge_method"], "S256");
        assert_eq!(asked["response_type"], "code");
        assert!(
            asked.contains_key("resource"),
            "no resource indicator: {url}"
        );
        let back = sign_in_as_user(&prompt.url, &prompt.redirect_uri).await?;
        let mut back = AuthorizationRedirect::from_url(&back)?;
        if self.forge_state {
            back.state = "forged-state".into();
        }
        if self.forge_issuer {
            back.issuer = Some("http://127.0.0.1:1".into());
        }
        Ok(back)
    }
}

#[tokio::test]
async fn a_first_call_registers_signs_in_through_the_loopback_and_succeeds() {
    bounded(async {
        let auth_server = AuthServer::start(3600, None).await;
        let url = protected_server(&auth_server, &auth_server.issuer).await;
        // The user's browser: follows the page and requests the redirect
        // from the loopback port, as a browser would.
        let opened = Arc::new(AtomicUsize::new(0));
        let seen = Arc::clone(&opened);
        let callback = Arc::new(std::sync::OnceLock::<String>::new());
        let redirect_uri = Arc::clone(&callback);
        let authorizer = LoopbackAuthorizer::bind(move |page: &str| {
            seen.fetch_add(1, Ordering::SeqCst);
            let page = page.to_owned();
            let redirect_uri = redirect_uri.get().cloned().unwrap_or_default();
            tokio::spawn(async move {
                let back = sign_in_as_user(&page, &redirect_uri).await.unwrap();
                reqwest::get(back).await.unwrap();
            });
            Ok(())
        })
        .await
        .unwrap();
        callback.set(authorizer.redirect_uri()).unwrap();
        let store = MemoryTokenStore::new();
        let (registry, clients) = client_of(&url, json!({}), authorizer, store.clone());
        let connected = clients.connect().await;
        assert!(connected[0].1.is_ok(), "{connected:?}");
        let out = hello_through(&registry).await;
        assert!(!out.is_error, "{}", out.content);
        assert_eq!(out.content, "hello alice");
        assert_eq!(opened.load(Ordering::SeqCst), 1);

        let stats = auth_server.stats().await;
        assert_eq!(stats["registrations"], 1, "{stats}");
        assert_eq!(stats["grants"]["authorization_code"], 1, "{stats}");
        let kept = store.load(&url).await.unwrap().expect("tokens kept");
        assert_eq!(kept.issuer(), Some(auth_server.issuer.as_str()));
        assert!(kept.refresh_token().is_some());
        assert!(
            kept.scopes().iter().any(|s| s == "mcp"),
            "{:?}",
            kept.scopes()
        );
        clients.disconnect().await;
    })
    .await;
}

#[tokio::test]
async fn tokens_near_expiry_are_refreshed_and_a_refused_refresh_signs_in_again() {
    bounded(async {
        // Tokens live 10 s: less than the margin the client refreshes
        // within, so each request refreshes first.
        let auth_server = AuthServer::start(10, None).await;
        let url = protected_server(&auth_server, &auth_server.issuer).await;
        let user = User::default();
        let store = MemoryTokenStore::new();
        let (registry, clients) = client_of(&url, json!({}), user.clone(), store.clone());
        let connected = clients.connect().await;
        assert!(connected[0].1.is_ok(), "{connected:?}");
        assert_eq!(user.prompts.load(Ordering::SeqCst), 1);

        let before = auth_server.grants("refresh_token").await;
        let out = hello_through(&registry).await;
        assert!(!out.is_error, "{}", out.content);
        assert!(auth_server.grants("refresh_token").await > before);
        assert_eq!(
            user.prompts.load(Ordering::SeqCst),
            1,
            "refreshed without the user"
        );

        // The authorization server revokes the refresh token: the next
        // call sends the user through the sign-in again, and goes on.
        let kept = store.load(&url).await.unwrap().unwrap();
        let revoked = reqwest::Client::new()
            .post(format!("{}/token/revocation", auth_server.base))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(form_encoded(&[
                ("token".into(), kept.refresh_token().unwrap()),
                ("token_type_hint".into(), "refresh_token".into()),
                ("client_id".into(), kept.client_id().into()),
            ]))
            .send()
            .await
            .unwrap();
        assert!(revoked.status().is_success(), "{}", revoked.status());
        let out = hello_through(&registry).await;
        assert!(!out.is_error, "{}", out.content);
        assert_eq!(user.prompts.load(Ordering::SeqCst), 2);
        assert_eq!(auth_server.grants("authorization_code").await, 2);
        clients.disconnect().await;
    })
    .await;
}

#[tokio::test]
async fn a_call_needing_more_scopes_signs_in_again_for_them_and_succeeds() {
    bounded(async {
        let auth_server = AuthServer::start(3600, None).await;
        let url =
            protected_server_where_hello_needs(&auth_server, &auth_server.issuer, &["admin"]).await;
        let user = User::default();
        let store = MemoryTokenStore::new();
        // The host asks for `mcp` alone at first (without `scopes` the
        // client would ask for every scope the server lists, `admin` too).
        let (registry, clients) =
            client_of(&url, json!({"scopes": "mcp"}), user.clone(), store.clone());
        let connected = clients.connect().await;
        assert!(connected[0].1.is_ok(), "{connected:?}");
        assert_eq!(user.prompts.load(Ordering::SeqCst), 1);
        let first = store.load(&url).await.unwrap().expect("tokens kept");
        assert!(
            !first.scopes().iter().any(|s| s == "admin"),
            "{:?}",
            first.scopes()
        );

        // The server refuses the call with 403 naming `admin`: the user
        // is asked once more, for `mcp` and `admin` together, and the
        // call is sent again and passes.
        let out = hello_through(&registry).await;
        assert!(!out.is_error, "{}", out.content);
        assert_eq!(out.content, "hello alice");
        assert_eq!(user.prompts.load(Ordering::SeqCst), 2);
        assert_eq!(auth_server.grants("authorization_code").await, 2);
        let stepped_up = store.load(&url).await.unwrap().unwrap();
        for scope in ["mcp", "admin"] {
            assert!(
                stepped_up.scopes().iter().any(|s| s == scope),
                "{scope} not granted: {:?}",
                stepped_up.scopes()
            );
        }

        // The scopes are kept: the next call needs no sign-in.
        let out = hello_through(&registry).await;
        assert!(!out.is_error, "{}", out.content);
        assert_eq!(user.prompts.load(Ordering::SeqCst), 2);
        clients.disconnect().await;
    })
    .await;
}

#[tokio::test]
async fn a_redirect_with_a_forged_state_or_issuer_is_refused() {
    bounded(async {
        let auth_server = AuthServer::start(3600, None).await;
        let url = protected_server(&auth_server, &auth_server.issuer).await;
        for user in [
            User {
                forge_state: true,
                ..User::default()
            },
            User {
                forge_issuer: true,
                ..User::default()
            },
        ] {
            let store = MemoryTokenStore::new();
            let (_registry, clients) = client_of(&url, json!({}), user.clone(), store.clone());
            let connected = clients.connect().await;
            let err = connected[0].1.clone().unwrap_err();
            assert!(err.contains("redirect was refused"), "{err}");
            assert_eq!(user.prompts.load(Ordering::SeqCst), 1);
            assert!(store.load(&url).await.unwrap().is_none());
        }
        assert_eq!(auth_server.grants("authorization_code").await, 0);
    })
    .await;
}

#[tokio::test]
async fn an_authorization_server_whose_issuer_differs_from_its_address_is_refused() {
    bounded(async {
        // Reached at 127.0.0.1, its metadata says it is `localhost`.
        let auth_server = AuthServer::start(3600, Some("localhost")).await;
        let url = protected_server(&auth_server, &auth_server.base).await;
        let user = User::default();
        let (_registry, clients) =
            client_of(&url, json!({}), user.clone(), MemoryTokenStore::new());
        let connected = clients.connect().await;
        let err = connected[0].1.clone().unwrap_err();
        assert!(err.contains("issuer"), "{err}");
        assert_eq!(
            user.prompts.load(Ordering::SeqCst),
            0,
            "never sent to sign in"
        );
    })
    .await;
}

/// What a hostile authorization server does with each request.
#[derive(Clone, Copy, Debug)]
enum Hostile {
    /// An endless body, sent as fast as it is read.
    Endless,
    /// A length far beyond any metadata's.
    Huge,
    /// Headers, then nothing, for ever.
    Stalls,
    /// Nothing at all, for ever.
    Silent,
}

/// A server that answers every request as `how`; its base URL.
async fn hostile_server(how: Hostile) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        loop {
            let Ok((mut stream, _)) = listener.accept().await else {
                return;
            };
            tokio::spawn(async move {
                let mut buf = [0u8; 4096];
                let _ = stream.read(&mut buf).await;
                let head = match how {
                    Hostile::Endless | Hostile::Stalls => {
                        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n"
                    }
                    Hostile::Huge => {
                        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 50000000000\r\n\r\n"
                    }
                    Hostile::Silent => "",
                };
                if stream.write_all(head.as_bytes()).await.is_err() {
                    return;
                }
                match how {
                    Hostile::Endless => {
                        let chunk = format!("10000\r\n{}\r\n", " ".repeat(0x10000));
                        let _ = stream.write_all(b"4\r\n{\"a\"\r\n").await;
                        while stream.write_all(chunk.as_bytes()).await.is_ok() {}
                    }
                    Hostile::Huge => {
                        let _ = stream.write_all(b"{\"issuer\": \"").await;
                        let filler = vec![b'x'; 0x10000];
                        while stream.write_all(&filler).await.is_ok() {}
                    }
                    Hostile::Stalls | Hostile::Silent => {
                        tokio::time::sleep(Duration::from_secs(3600)).await;
                    }
                }
            });
        }
    });
    base
}

#[tokio::test]
async fn an_authorization_server_that_floods_or_stalls_is_cut_off() {
    bounded(async {
        // The protected server's metadata names the hostile server as its
        // authorization server; the client may wait 2 s for each answer.
        let auth_server = AuthServer::start(3600, None).await;
        for how in [
            Hostile::Endless,
            Hostile::Huge,
            Hostile::Stalls,
            Hostile::Silent,
        ] {
            let hostile = hostile_server(how).await;
            let url = protected_server(&auth_server, &hostile).await;
            let user = User::default();
            let (_registry, clients) = client_of(
                &url,
                json!({"requestTimeout": 2}),
                user.clone(),
                MemoryTokenStore::new(),
            );
            let connected = clients.connect().await;
            let err = connected[0].1.clone().unwrap_err();
            assert!(
                err.contains("discovering its authorization server"),
                "{how:?}: {err}"
            );
            assert!(
                err.len() < 1000,
                "{how:?}: the error passes on too much: {err}"
            );
            assert_eq!(user.prompts.load(Ordering::SeqCst), 0, "{how:?}");
        }
    })
    .await;
}

#[tokio::test]
async fn without_an_authorizer_a_protected_server_says_what_is_missing() {
    bounded(async {
        let auth_server = AuthServer::start(3600, None).await;
        let url = protected_server(&auth_server, &auth_server.issuer).await;
        let config = McpConfig::from_json(&json!({"mcpServers": {"demo": {
            "url": url, "oauth": {}
        }}}))
        .unwrap();
        let registry = Arc::new(ToolRegistry::new());
        let clients = McpClients::new(config, &registry);
        let connected = clients.connect().await;
        let err = connected[0].1.clone().unwrap_err();
        assert!(err.contains("no Authorizer"), "{err}");
    })
    .await;
}

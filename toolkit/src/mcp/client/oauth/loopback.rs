//! An [`Authorizer`] for desktop hosts: the redirect comes back to a port
//! on this machine's loopback (RFC 8252 §7.3).

use std::error::Error;
use std::time::Duration;

use async_trait::async_trait;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use super::{AuthorizationPrompt, AuthorizationRedirect, Authorizer};

/// The most of a request to the loopback port that is read: its request
/// line and headers (the redirect carries its parameters in the query).
const MAX_REQUEST_BYTES: usize = 8 * 1024;

/// How long one connection to the loopback port may take to send its
/// request: a browser sends it at once.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// The path the redirect comes back to.
const CALLBACK_PATH: &str = "/callback";

/// Shows the user the authorization page (with the host's `open`: a
/// browser, a printed link) and takes the redirect on a port of
/// `127.0.0.1`, answering the browser with a page saying the sign-in is
/// done. Other requests to the port (a browser's `favicon.ico`) get a
/// `404`; the first request to the callback path ends the wait, with its
/// code or with the error it carries.
///
/// ```no_run
/// # async fn run(clients: toolsmith::mcp::McpClients) -> std::io::Result<()> {
/// use toolsmith::mcp::LoopbackAuthorizer;
///
/// let authorizer = LoopbackAuthorizer::bind(|url: &str| {
///     println!("Open this page to sign in: {url}");
///     Ok(())
/// })
/// .await?;
/// let clients = clients.with_authorizer(authorizer);
/// # Ok(()) }
/// ```
pub struct LoopbackAuthorizer {
    listener: tokio::sync::Mutex<TcpListener>,
    redirect_uri: String,
    open: Box<OpenPage>,
}

/// How the host shows the user a page: a browser, a printed link.
type OpenPage = dyn Fn(&str) -> Result<(), String> + Send + Sync;

impl std::fmt::Debug for LoopbackAuthorizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoopbackAuthorizer")
            .field("redirect_uri", &self.redirect_uri)
            .finish_non_exhaustive()
    }
}

impl LoopbackAuthorizer {
    /// Listen on a port of `127.0.0.1` the system picks; `open` shows the
    /// user the authorization page's URL.
    pub async fn bind(
        open: impl Fn(&str) -> Result<(), String> + Send + Sync + 'static,
    ) -> std::io::Result<Self> {
        Self::bind_port(0, open).await
    }

    /// Listen on `port` of `127.0.0.1`, for an authorization server that
    /// knows this client by a fixed redirect URI.
    pub async fn bind_port(
        port: u16,
        open: impl Fn(&str) -> Result<(), String> + Send + Sync + 'static,
    ) -> std::io::Result<Self> {
        let listener = TcpListener::bind(("127.0.0.1", port)).await?;
        let port = listener.local_addr()?.port();
        Ok(Self {
            listener: tokio::sync::Mutex::new(listener),
            redirect_uri: format!("http://127.0.0.1:{port}{CALLBACK_PATH}"),
            open: Box::new(open),
        })
    }
}

#[async_trait]
impl Authorizer for LoopbackAuthorizer {
    fn redirect_uri(&self) -> String {
        self.redirect_uri.clone()
    }

    async fn authorize(
        &self,
        prompt: AuthorizationPrompt,
    ) -> Result<AuthorizationRedirect, Box<dyn Error + Send + Sync>> {
        // One sign-in at a time takes the port's redirects.
        let listener = self.listener.lock().await;
        (self.open)(&prompt.url)?;
        loop {
            let (mut stream, _) = listener.accept().await?;
            let Ok(Some(target)) =
                tokio::time::timeout(REQUEST_TIMEOUT, request_target(&mut stream)).await
            else {
                continue;
            };
            if target.split('?').next() != Some(CALLBACK_PATH) {
                let _ = respond(&mut stream, "404 Not Found", "Not found.").await;
                continue;
            }
            return match AuthorizationRedirect::from_url(&target) {
                Ok(back) => {
                    let _ = respond(
                        &mut stream,
                        "200 OK",
                        "Signed in. You can close this window.",
                    )
                    .await;
                    Ok(back)
                }
                Err(why) => {
                    let _ = respond(&mut stream, "400 Bad Request", "The sign-in failed.").await;
                    Err(why.into())
                }
            };
        }
    }
}

/// The target of a `GET` request (its path and query), read within
/// [`MAX_REQUEST_BYTES`]; none for anything else.
async fn request_target(stream: &mut TcpStream) -> Option<String> {
    let mut head = Vec::with_capacity(1024);
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = stream.read(&mut buf).await.ok()?;
        if n == 0 || head.len() + n > MAX_REQUEST_BYTES {
            return None;
        }
        head.extend_from_slice(&buf[..n]);
    }
    let line = head.split(|b| *b == b'\r').next()?;
    let line = std::str::from_utf8(line).ok()?;
    let mut parts = line.split(' ');
    match (parts.next(), parts.next()) {
        (Some("GET"), Some(target)) if target.starts_with('/') => Some(target.to_owned()),
        _ => None,
    }
}

async fn respond(stream: &mut TcpStream, status: &str, text: &str) -> std::io::Result<()> {
    let body = format!("<!doctype html><meta charset=utf-8><title>{text}</title><p>{text}</p>");
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await?;
    stream.write_all(body.as_bytes()).await?;
    stream.shutdown().await
}

//! One guarded HTTP exchange: every hop checked by the network guard,
//! connected to the checked addresses, redirects followed by hand (at most
//! five, each checked again), the body read up to a byte limit.

use std::net::SocketAddr;
use std::time::Duration;

use reqwest::header::{AUTHORIZATION, COOKIE, HeaderMap, LOCATION, PROXY_AUTHORIZATION};
use reqwest::{Method, StatusCode};
use url::{Host, Url};

use super::WebError;
use crate::net::NetPolicy;

/// Redirects followed before giving up.
pub const MAX_REDIRECTS: usize = 5;

/// What the guarded client sends.
#[derive(Debug, Clone)]
pub(crate) struct Outgoing {
    pub method: Method,
    pub url: Url,
    pub headers: HeaderMap,
    pub body: Option<Vec<u8>>,
}

/// Limits of one exchange.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub timeout: Duration,
    pub max_bytes: usize,
}

/// What came back.
#[derive(Debug)]
pub(crate) struct Fetched {
    pub url: Url,
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
    pub truncated: bool,
}

impl Fetched {
    /// The media type, lowercased, without parameters.
    pub fn media_type(&self) -> String {
        self.headers
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(';').next())
            .map(|v| v.trim().to_ascii_lowercase())
            .unwrap_or_default()
    }
}

const USER_AGENT: &str = concat!("toolkit-builtins/", env!("CARGO_PKG_VERSION"));

/// Send `outgoing`, following redirects; `also_check` runs on every hop's
/// URL before the network guard (the domain allow list of `http_request`).
pub(crate) async fn send(
    net: &NetPolicy,
    mut outgoing: Outgoing,
    limits: Limits,
    also_check: &(dyn Fn(&Url) -> Result<(), WebError> + Sync),
) -> Result<Fetched, WebError> {
    let mut hops = 0;
    loop {
        also_check(&outgoing.url)?;
        let addrs = net.check_url(&outgoing.url).await?;
        let client = client_for(&outgoing.url, &addrs, limits.timeout)?;
        let mut request = client
            .request(outgoing.method.clone(), outgoing.url.clone())
            .headers(outgoing.headers.clone());
        if let Some(body) = &outgoing.body {
            request = request.body(body.clone());
        }
        let response = request
            .send()
            .await
            .map_err(|e| WebError::from_reqwest(&outgoing.url, e))?;
        let status = response.status();
        if status.is_redirection()
            && let Some(location) = response.headers().get(LOCATION)
        {
            if hops == MAX_REDIRECTS {
                return Err(WebError::TooManyRedirects(MAX_REDIRECTS));
            }
            hops += 1;
            let location = location
                .to_str()
                .map_err(|_| WebError::BadRedirect("a Location header that is not text".into()))?;
            let next = outgoing
                .url
                .join(location)
                .map_err(|_| WebError::BadRedirect(location.to_string()))?;
            redirect(&mut outgoing, next, status);
            continue;
        }
        if let Some(encoding) = encoding_of(response.headers()) {
            return Err(WebError::Encoded {
                url: outgoing.url.to_string(),
                encoding,
            });
        }
        return read_body(response, limits.max_bytes).await;
    }
}

/// The `Content-Encoding` of a response, unless there is none (or only
/// `identity`): this client asks for no compression and decodes none, so a
/// server that compresses anyway sends bytes no tool can show.
fn encoding_of(headers: &HeaderMap) -> Option<String> {
    let mut named = Vec::new();
    for value in headers.get_all(reqwest::header::CONTENT_ENCODING) {
        for coding in String::from_utf8_lossy(value.as_bytes()).split(',') {
            let coding = coding.trim().to_ascii_lowercase();
            if !coding.is_empty() && coding != "identity" {
                named.push(coding);
            }
        }
    }
    // Named to the model: cut short, as any text from a server.
    (!named.is_empty()).then(|| named.join(", ").chars().take(64).collect())
}

/// A client that can only reach `addrs` for `url`'s host: the name is
/// pinned to the checked addresses, so no second lookup happens, and no
/// proxy is used (a proxy would make its own connection elsewhere).
fn client_for(
    url: &Url,
    addrs: &[SocketAddr],
    timeout: Duration,
) -> Result<reqwest::Client, WebError> {
    let mut builder = reqwest::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(timeout)
        .user_agent(USER_AGENT);
    if let Some(Host::Domain(name)) = url.host() {
        builder = builder.resolve_to_addrs(name, addrs);
    }
    builder.build().map_err(|e| WebError::Client(e.to_string()))
}

/// Turn `outgoing` into the request for the redirect target, as browsers do:
/// 303 (and 301/302 after a POST) becomes a body-less GET; credentials are
/// not carried to another origin.
fn redirect(outgoing: &mut Outgoing, next: Url, status: StatusCode) {
    let to_get = status == StatusCode::SEE_OTHER
        || (matches!(status, StatusCode::MOVED_PERMANENTLY | StatusCode::FOUND)
            && outgoing.method == Method::POST);
    if to_get {
        if outgoing.method != Method::HEAD {
            outgoing.method = Method::GET;
        }
        outgoing.body = None;
        outgoing.headers.remove(reqwest::header::CONTENT_TYPE);
    }
    if next.origin() != outgoing.url.origin() {
        for header in [AUTHORIZATION, COOKIE, PROXY_AUTHORIZATION] {
            outgoing.headers.remove(header);
        }
    }
    outgoing.url = next;
}

/// Read at most `max_bytes` of the body; the rest is never read.
async fn read_body(mut response: reqwest::Response, max_bytes: usize) -> Result<Fetched, WebError> {
    let url = response.url().clone();
    let status = response.status();
    let headers = response.headers().clone();
    let mut body = Vec::new();
    let mut truncated = false;
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| WebError::from_reqwest(&url, e))?
    {
        let room = max_bytes - body.len();
        if chunk.len() > room {
            body.extend_from_slice(&chunk[..room]);
            truncated = true;
            break;
        }
        body.extend_from_slice(&chunk);
    }
    Ok(Fetched {
        url,
        status,
        headers,
        body,
        truncated,
    })
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    /// The client connects to the addresses it is given for a name and never
    /// looks the name up again: `pinned.invalid` has no DNS record at all,
    /// yet the request reaches the loopback server it was pinned to.
    #[tokio::test]
    async fn the_client_connects_to_the_checked_address_without_a_lookup() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let server = tokio::spawn(async move {
            let (mut stream, _) = listener.accept().await.unwrap();
            let mut head = vec![0u8; 4096];
            let n = stream.read(&mut head).await.unwrap();
            stream
                .write_all(
                    b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\nConnection: close\r\n\r\npinned",
                )
                .await
                .unwrap();
            String::from_utf8_lossy(&head[..n]).into_owned()
        });
        let url = Url::parse(&format!("http://pinned.invalid:{}/x", addr.port())).unwrap();
        let client = client_for(&url, &[addr], Duration::from_secs(10)).unwrap();
        let response = client.get(url).send().await.unwrap();
        assert_eq!(response.text().await.unwrap(), "pinned");
        let request = server.await.unwrap();
        assert!(
            request
                .to_ascii_lowercase()
                .contains("host: pinned.invalid:"),
            "{request}"
        );
    }
}

//! Serving a registry over real HTTP on loopback, with tokens signed here
//! by a key whose JWKS a loopback server publishes, and raw JSON-RPC posts
//! whose answers are read whole.

#![allow(dead_code)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use toolsmith::CancellationToken;
use toolsmith::mcp::{HttpOptions, McpServer, OAuthResource};

/// The issuer the served resource trusts.
pub const ISSUER: &str = "https://as.test";

/// A signing key and the JWK that publishes it.
pub struct Key {
    pub kid: Option<String>,
    pub encoding: EncodingKey,
    pub jwk: Value,
}

impl Key {
    pub fn new(kid: &str) -> Self {
        let pair = EcdsaKeyPair::generate(&ECDSA_P256_SHA256_FIXED_SIGNING).unwrap();
        let der = pair.to_pkcs8v1().unwrap();
        let point = pair.public_key().as_ref().to_vec();
        assert_eq!(point.len(), 65);
        Self {
            kid: Some(kid.into()),
            encoding: EncodingKey::from_ec_der(der.as_ref()),
            jwk: json!({"kty": "EC", "crv": "P-256", "use": "sig", "alg": "ES256", "kid": kid,
                "x": URL_SAFE_NO_PAD.encode(&point[1..33]),
                "y": URL_SAFE_NO_PAD.encode(&point[33..])}),
        }
    }

    pub fn sign(&self, claims: &Value) -> String {
        let mut header = Header::new(Algorithm::ES256);
        header.kid = self.kid.clone();
        jsonwebtoken::encode(&header, claims, &self.encoding).unwrap()
    }
}

pub fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// Claims for the audience `url`, with the scope `mcp`, good for five minutes.
pub fn claims(url: &str, issuer: &str, subject: Option<&str>) -> Value {
    let mut claims = json!({"iss": issuer, "aud": url, "scope": "mcp",
           "exp": now() + 300, "iat": now()});
    if let Some(subject) = subject {
        claims["sub"] = json!(subject);
    }
    claims
}

/// How the loopback JWKS answers.
pub const HEALTHY: usize = 0;
pub const FAILING: usize = 1;
pub const GARBAGE: usize = 2;

/// A JWKS served on loopback; what it serves can change, it can fail on
/// demand, and it counts fetches.
pub struct Jwks {
    pub url: String,
    pub keys: Arc<Mutex<Vec<Value>>>,
    pub mode: Arc<AtomicUsize>,
    pub fetches: Arc<AtomicUsize>,
}

pub async fn jwks(keys: Vec<Value>, mode: usize, stop: CancellationToken) -> Jwks {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/jwks.json", listener.local_addr().unwrap());
    let keys = Arc::new(Mutex::new(keys));
    let mode = Arc::new(AtomicUsize::new(mode));
    let fetches = Arc::new(AtomicUsize::new(0));
    let (served, answering, counted) = (Arc::clone(&keys), Arc::clone(&mode), Arc::clone(&fetches));
    tokio::spawn(async move {
        loop {
            let (mut stream, _) = tokio::select! {
                () = stop.cancelled() => return,
                accepted = listener.accept() => accepted.unwrap(),
            };
            counted.fetch_add(1, Ordering::SeqCst);
            let (status, body) = match answering.load(Ordering::SeqCst) {
                HEALTHY => (
                    "200 OK",
                    json!({"keys": *served.lock().unwrap()}).to_string(),
                ),
                FAILING => ("500 Internal Server Error", "down".to_owned()),
                _ => ("200 OK", "{\"keys\": [".to_owned()),
            };
            tokio::spawn(async move {
                let mut buffer = [0u8; 4096];
                let _ = stream.read(&mut buffer).await;
                let response = format!(
                    "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = stream.write_all(response.as_bytes()).await;
            });
        }
    });
    Jwks {
        url,
        keys,
        mode,
        fetches,
    }
}

/// Serve `server` on loopback; its endpoint's URL. `auth` makes the
/// resource server for that URL, or `None` for none.
pub async fn serve(
    server: McpServer,
    stateless: bool,
    auth: impl FnOnce(String) -> Option<OAuthResource>,
    stop: &CancellationToken,
) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let mut options = HttpOptions::default()
        .stateless(stateless)
        .shutdown(stop.clone());
    if let Some(auth) = auth(url.clone()) {
        options = options.auth(auth);
    }
    tokio::spawn(server.serve_http(listener, options));
    url
}

/// For [`serve`]: no resource server.
pub fn no_auth(_url: String) -> Option<OAuthResource> {
    None
}

pub struct Reply {
    pub status: u16,
    pub challenge: Option<String>,
    pub headers: reqwest::header::HeaderMap,
    pub body: Value,
}

/// POST one JSON-RPC message with a bearer token and headers; the answer's
/// status, `WWW-Authenticate`, headers and body (JSON, or the JSON of its
/// last SSE data line).
pub async fn post(
    url: &str,
    token: Option<&str>,
    headers: &[(&str, &str)],
    message: &Value,
) -> Reply {
    post_text(url, token, headers, message.to_string()).await
}

/// [`post`] with the body as written, for spellings a `Value` would not keep.
pub async fn post_text(
    url: &str,
    token: Option<&str>,
    headers: &[(&str, &str)],
    body: String,
) -> Reply {
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(20))
        .build()
        .unwrap();
    let mut request = client
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body);
    if let Some(token) = token {
        request = request.header("authorization", format!("Bearer {token}"));
    }
    for (k, v) in headers {
        request = request.header(*k, *v);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let challenge = headers
        .get("www-authenticate")
        .map(|v| v.to_str().unwrap().to_owned());
    let text = response.text().await.unwrap();
    let body = serde_json::from_str(&text).unwrap_or_else(|_| {
        text.lines()
            .rev()
            .filter_map(|l| l.strip_prefix("data:"))
            .find_map(|d| serde_json::from_str(d.trim()).ok())
            .unwrap_or(Value::String(text.clone()))
    });
    Reply {
        status,
        challenge,
        headers,
        body,
    }
}

//! What the HTTP server checks before a request reaches the MCP service:
//! the bearer token and its scopes, a session's owner, and the
//! `Mcp-Param-*` headers of a tool call; and the metadata it answers itself.

use std::collections::{BTreeMap, HashMap};
use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Either, Full, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::http::{HeaderValue, Method, Request, StatusCode, header};
use serde_json::{Value, json};
use tower_service::Service;

use super::{Claims, OAuthResource, TokenError, params};
use crate::registry::ToolRegistry;

/// The body the MCP service is given: the client's, untouched, or the one
/// the gate read to look into.
pub(crate) type GateBody = Either<Incoming, Full<Bytes>>;

type Response = hyper::Response<BoxBody<Bytes, Infallible>>;

/// The most a request body may hold when the gate reads it: 4 MiB, the
/// limit the MCP service behind it keeps too.
const BODY_LIMIT: usize = 4 << 20;

/// How long a request body may take to arrive: one sent a byte at a time
/// would otherwise hold its connection, and its task, for ever.
const BODY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// How many sessions' owners are remembered; the one used least recently
/// is forgotten first. Not the oldest: a client that opens and closes
/// sessions in a loop would then push out the sessions of everyone else,
/// in use or not.
const SESSION_LIMIT: usize = 65_536;

/// The error code of a header that does not match the body (SEP-2243).
const HEADER_MISMATCH: i64 = -32020;

const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

/// The checks in front of one HTTP server's endpoint.
pub(crate) struct Gate {
    auth: Option<OAuthResource>,
    registry: Arc<ToolRegistry>,
    /// The paths the metadata is served at.
    metadata_paths: Vec<String>,
    /// Who opened each session (the token's issuer and subject), so
    /// another's token cannot use it.
    owners: Mutex<Owners>,
}

#[derive(Default)]
struct Owners {
    /// Each session's owner, and when it was last used (a count of uses).
    by_session: HashMap<String, (Option<String>, u64)>,
    /// The sessions by when they were last used.
    by_use: BTreeMap<u64, String>,
    uses: u64,
}

impl Owners {
    /// Mark `session` (remembered, last used at `used`) as used now.
    fn touch(&mut self, session: &str, used: u64) -> u64 {
        self.uses += 1;
        self.by_use.remove(&used);
        self.by_use.insert(self.uses, session.to_owned());
        self.uses
    }
}

impl Gate {
    /// The gate of the endpoint at `path` serving `registry`.
    pub(crate) fn new(
        auth: Option<OAuthResource>,
        registry: Arc<ToolRegistry>,
        path: &str,
    ) -> Arc<Self> {
        let mut metadata_paths = vec![WELL_KNOWN.to_owned(), format!("{WELL_KNOWN}{path}")];
        if let Some(auth) = &auth
            && let Ok(url) = reqwest::Url::parse(auth.resource())
        {
            metadata_paths.push(format!("{WELL_KNOWN}{}", url.path().trim_end_matches('/')));
        }
        Arc::new(Self {
            auth,
            registry,
            metadata_paths,
            owners: Mutex::default(),
        })
    }

    /// The answer to a request outside the endpoint that the gate serves
    /// itself (the protected resource metadata), if it is one.
    pub(crate) fn answer<B>(&self, request: &Request<B>) -> Option<Response> {
        let auth = self.auth.as_ref()?;
        let path = request.uri().path();
        if !self.metadata_paths.iter().any(|p| p == path) {
            return None;
        }
        if request.method() != Method::GET && request.method() != Method::HEAD {
            return Some(plain(StatusCode::METHOD_NOT_ALLOWED, "use GET"));
        }
        let mut response = json_response(StatusCode::OK, &auth.metadata());
        response.headers_mut().insert(
            header::ACCESS_CONTROL_ALLOW_ORIGIN,
            HeaderValue::from_static("*"),
        );
        Some(response)
    }

    /// Check `request` to the endpoint and hand it to `service`, or refuse it.
    pub(crate) async fn serve<S>(
        &self,
        mut request: Request<Incoming>,
        mut service: S,
    ) -> Result<Response, Infallible>
    where
        S: Service<Request<GateBody>, Response = Response, Error = Infallible>,
    {
        let claims = match &self.auth {
            None => None,
            Some(auth) => match self.authenticate(auth, &request).await {
                Ok(claims) => Some(claims),
                Err(refusal) => return Ok(refusal),
            },
        };
        let subject = claims.as_ref().map(Claims::principal);
        let session = request
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        if let (Some(subject), Some(session)) = (&subject, &session)
            && !self.owned_by(session, subject)
        {
            // As for a session that does not exist: nothing about it is told.
            return Ok(plain(StatusCode::NOT_FOUND, "no such session"));
        }
        if let Some(claims) = claims {
            request.extensions_mut().insert(claims);
        }
        let request = if request.method() == Method::POST {
            let (parts, body) = request.into_parts();
            let read = tokio::time::timeout(BODY_TIMEOUT, Limited::new(body, BODY_LIMIT).collect());
            let bytes = match read.await {
                Ok(Ok(collected)) => collected.to_bytes(),
                Err(_) => {
                    return Ok(plain(
                        StatusCode::REQUEST_TIMEOUT,
                        "the request body did not arrive in time",
                    ));
                }
                Ok(Err(_)) => {
                    return Ok(plain(
                        StatusCode::PAYLOAD_TOO_LARGE,
                        "the request body could not be read whole",
                    ));
                }
            };
            if let Some(refusal) = self.inspect(&parts, &bytes) {
                return Ok(refusal);
            }
            Request::from_parts(parts, Either::Right(Full::new(bytes)))
        } else {
            request.map(Either::Left)
        };
        let response = service.call(request).await?;
        if let (Some(subject), None) = (subject, session)
            && let Some(id) = response
                .headers()
                .get("mcp-session-id")
                .and_then(|v| v.to_str().ok())
        {
            self.own(id, subject);
        }
        Ok(response)
    }

    /// The claims of the request's bearer token, or the `401`/`403`/`503`
    /// that refuses it.
    async fn authenticate<B>(
        &self,
        auth: &OAuthResource,
        request: &Request<B>,
    ) -> Result<Claims, Response> {
        let token = request
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| {
                let (scheme, token) = v.trim().split_once(' ')?;
                scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
            })
            .filter(|t| !t.is_empty());
        let Some(token) = token else {
            let mut challenge = format!(
                "Bearer resource_metadata=\"{}\"",
                quoted(&auth.metadata_url())
            );
            if !auth.required.is_empty() {
                challenge.push_str(&format!(", scope=\"{}\"", quoted(&auth.required.join(" "))));
            }
            return Err(challenge_response(
                StatusCode::UNAUTHORIZED,
                challenge,
                "invalid_request",
                "a bearer token is required",
            ));
        };
        let claims = match auth.verifier.verify(token).await {
            Ok(claims) => claims,
            Err(TokenError::Invalid(why)) => {
                let challenge = format!(
                    "Bearer error=\"invalid_token\", error_description=\"{}\", resource_metadata=\"{}\"",
                    quoted(&why),
                    quoted(&auth.metadata_url())
                );
                return Err(challenge_response(
                    StatusCode::UNAUTHORIZED,
                    challenge,
                    "invalid_token",
                    &why,
                ));
            }
            Err(TokenError::Unavailable(why)) => {
                let mut response = json_response(
                    StatusCode::SERVICE_UNAVAILABLE,
                    &json!({"error": "temporarily_unavailable", "error_description": why}),
                );
                response
                    .headers_mut()
                    .insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
                return Err(response);
            }
        };
        if let Some(refusal) = missing_scopes(auth, &claims, &auth.required, None) {
            return Err(refusal);
        }
        Ok(claims)
    }

    /// Look into a POST's JSON-RPC messages: a `tools/call` needs its tool's
    /// scopes, and its `Mcp-Param-*` headers must match its arguments.
    fn inspect(&self, request: &hyper::http::request::Parts, bytes: &[u8]) -> Option<Response> {
        let mirrored = params::applies(&request.headers);
        if self.auth.is_none() && !mirrored {
            return None;
        }
        // Read as the MCP service reads it (JSON escapes decoded, so
        // `tools\/call` is a `tools/call`), never by its bytes. Malformed
        // JSON is the MCP service's to refuse.
        let body: Value = serde_json::from_slice(bytes).ok()?;
        let messages = match &body {
            Value::Array(items) => items.iter().collect(),
            message => vec![message],
        };
        let claims = request.extensions.get::<Claims>();
        for message in messages {
            if message.get("method").and_then(Value::as_str) != Some("tools/call") {
                continue;
            }
            let params = message.get("params");
            let Some(name) = params.and_then(|p| p.get("name")).and_then(Value::as_str) else {
                continue;
            };
            let Some(entry) = self.registry.entry(name) else {
                continue;
            };
            let spec = entry.tool.spec();
            if let (Some(auth), Some(claims)) = (&self.auth, claims) {
                let needed = auth.scopes_for(&spec.name, Some(&spec.meta));
                if let Some(refusal) = missing_scopes(auth, claims, &needed, Some(&spec.name)) {
                    return Some(refusal);
                }
            }
            if mirrored {
                let arguments = params
                    .and_then(|p| p.get("arguments"))
                    .and_then(Value::as_object);
                let checked = params::check(&spec.input_schema, arguments, &request.headers)
                    .and_then(|()| params::check_received(&entry, arguments, &request.headers));
                if let Err(problem) = checked {
                    let id = message.get("id").cloned().unwrap_or(Value::Null);
                    return Some(json_response(
                        StatusCode::BAD_REQUEST,
                        &json!({"jsonrpc": "2.0", "id": id, "error": {
                            "code": HEADER_MISMATCH, "message": problem}}),
                    ));
                }
            }
        }
        None
    }

    fn owned_by(&self, session: &str, subject: &Option<String>) -> bool {
        let mut owners = self.owners.lock().unwrap_or_else(|e| e.into_inner());
        // A session not remembered (opened before a restart, forgotten as
        // the least used, or never opened here) has no owner to compare: it
        // is refused, so no other identity can take it over.
        let used = match owners.by_session.get(session) {
            Some((owner, used)) if owner == subject => *used,
            _ => return false,
        };
        let now = owners.touch(session, used);
        if let Some((_, used)) = owners.by_session.get_mut(session) {
            *used = now;
        }
        true
    }

    /// Forget the owner of `session`, which has closed (deleted by its
    /// client, idle too long, or ended): a closed session's id is never
    /// served again, so its entry would only take room until pushed out.
    pub(crate) fn forget(&self, session: &str) {
        let mut owners = self.owners.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, used)) = owners.by_session.remove(session) {
            owners.by_use.remove(&used);
        }
    }

    fn own(&self, session: &str, subject: Option<String>) {
        let mut owners = self.owners.lock().unwrap_or_else(|e| e.into_inner());
        // An owner, once recorded, is never replaced.
        if owners.by_session.contains_key(session) {
            return;
        }
        let now = owners.touch(session, 0);
        owners.by_session.insert(session.to_owned(), (subject, now));
        if owners.by_session.len() > SESSION_LIMIT
            && let Some((_, least_used)) = owners.by_use.pop_first()
        {
            owners.by_session.remove(&least_used);
        }
    }
}

/// The `403` for a token without all of `needed`, naming every scope the
/// request needs (the required ones and the tool's).
fn missing_scopes(
    auth: &OAuthResource,
    claims: &Claims,
    needed: &[String],
    tool: Option<&str>,
) -> Option<Response> {
    if needed.iter().all(|scope| claims.has_scope(scope)) {
        return None;
    }
    let mut scopes: Vec<&str> = auth.required.iter().map(String::as_str).collect();
    for scope in needed {
        if !scopes.contains(&scope.as_str()) {
            scopes.push(scope);
        }
    }
    let scopes = scopes.join(" ");
    let description = match tool {
        Some(tool) => format!("calling `{tool}` needs the scopes: {scopes}"),
        None => format!("this resource needs the scopes: {scopes}"),
    };
    let challenge = format!(
        "Bearer error=\"insufficient_scope\", scope=\"{}\", resource_metadata=\"{}\", error_description=\"{}\"",
        quoted(&scopes),
        quoted(&auth.metadata_url()),
        quoted(&description)
    );
    Some(challenge_response(
        StatusCode::FORBIDDEN,
        challenge,
        "insufficient_scope",
        &description,
    ))
}

/// Text fit for a quoted-string of a `WWW-Authenticate` parameter.
fn quoted(text: &str) -> String {
    text.chars()
        .filter(|c| !c.is_control())
        .map(|c| if c == '"' || c == '\\' { '\'' } else { c })
        .collect()
}

fn challenge_response(
    status: StatusCode,
    challenge: String,
    error: &str,
    description: &str,
) -> Response {
    let mut response = json_response(
        status,
        &json!({"error": error, "error_description": description}),
    );
    if let Ok(value) = HeaderValue::from_str(&challenge) {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, value);
    }
    response
}

fn json_response(status: StatusCode, body: &Value) -> Response {
    let mut response = hyper::Response::new(Full::new(Bytes::from(body.to_string())).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

fn plain(status: StatusCode, text: &'static str) -> Response {
    let mut response = hyper::Response::new(Full::new(Bytes::from_static(text.as_bytes())).boxed());
    *response.status_mut() = status;
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_forgotten_session_is_nobodys() {
        let gate = Gate::new(None, Arc::new(ToolRegistry::new()), "/mcp");
        let alice = Some(r#"["https://as.test","sub","alice"]"#.to_owned());
        let bob = Some(r#"["https://as.test","sub","bob"]"#.to_owned());
        gate.own("first", alice.clone());
        assert!(gate.owned_by("first", &alice));
        assert!(!gate.owned_by("first", &bob));
        // Recorded once: another's response naming the same id changes nothing.
        gate.own("first", bob.clone());
        assert!(!gate.owned_by("first", &bob));
        assert!(!gate.owned_by("never-opened", &alice));
        for n in 0..SESSION_LIMIT {
            gate.own(&format!("later-{n}"), bob.clone());
        }
        // Forgotten as the oldest: refused to everyone, its opener included.
        assert!(!gate.owned_by("first", &alice));
        assert!(!gate.owned_by("first", &bob));
        assert!(gate.owned_by("later-0", &bob));
    }

    /// A session that closes is forgotten at once, its entries in both
    /// tables gone, and no other session's.
    #[test]
    fn a_closed_session_is_forgotten() {
        let gate = Gate::new(None, Arc::new(ToolRegistry::new()), "/mcp");
        let alice = Some(r#"["https://as.test","sub","alice"]"#.to_owned());
        gate.own("kept", alice.clone());
        gate.own("closed", alice.clone());
        assert!(gate.owned_by("closed", &alice));
        gate.forget("closed");
        gate.forget("never-opened");
        assert!(!gate.owned_by("closed", &alice));
        assert!(gate.owned_by("kept", &alice));
        let owners = gate.owners.lock().unwrap();
        assert_eq!(owners.by_session.len(), 1);
        assert_eq!(owners.by_use.len(), 1);
    }

    /// A client that opens sessions without end pushes out the sessions
    /// least used, never one in use.
    #[test]
    fn a_flood_of_sessions_never_pushes_out_one_in_use() {
        let gate = Gate::new(None, Arc::new(ToolRegistry::new()), "/mcp");
        let alice = Some(r#"["https://as.test","sub","alice"]"#.to_owned());
        let mallory = Some(r#"["https://as.test","sub","mallory"]"#.to_owned());
        gate.own("alices", alice.clone());
        for n in 0..2 * SESSION_LIMIT {
            gate.own(&format!("flood-{n}"), mallory.clone());
            if n % 10_000 == 0 {
                assert!(gate.owned_by("alices", &alice), "pushed out after {n}");
            }
        }
        assert!(gate.owned_by("alices", &alice));
        assert!(
            !gate.owned_by("flood-0", &mallory),
            "the least used went first"
        );
        let owners = gate.owners.lock().unwrap();
        assert_eq!(owners.by_session.len(), SESSION_LIMIT);
        assert_eq!(owners.by_use.len(), SESSION_LIMIT);
    }
}

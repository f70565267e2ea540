//! Serving over streamable HTTP.

use std::sync::Arc;
use std::time::Duration;

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use rmcp::transport::StreamableHttpService;
use rmcp::transport::streamable_http_server::StreamableHttpServerConfig;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tower_service::Service;

use super::McpServer;
use super::auth::{Gate, GateBody, OAuthResource};
use super::connections::ClientConnections;
use super::freed_on_close::FreedOnClose;
use super::peer::Peer;
use super::sessions::{Answered, BoundedSessions, NoSession, SessionsError, answering};
use super::stream::{Resumptions, StreamRelease, releasable};
use super::write_deadline::WriteDeadline;
use crate::mcp::in_flight::{ServerPermits, ServerWide};

/// How to serve over HTTP.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct HttpOptions {
    /// The endpoint's path (default `/mcp`); other paths get 404.
    pub path: String,
    /// Keep no session between requests, so any of several server processes
    /// behind a load balancer can answer any request. Server-to-client
    /// requests (sampling, elicitation) and the GET stream need sessions.
    pub stateless: bool,
    /// `Host` values accepted (names, or `name:port`), against DNS rebinding.
    /// Default: loopback names only. Empty accepts every host.
    pub allowed_hosts: Vec<String>,
    /// `Origin` values accepted from browsers (`http://localhost:*`...).
    /// Default: loopback origins on any port. Empty accepts every origin.
    pub allowed_origins: Vec<String>,
    /// Stops the server when cancelled.
    pub shutdown: CancellationToken,
    /// Check bearer tokens as an OAuth resource server (see [`OAuthResource`]);
    /// `None` (the default) lets every request in.
    pub auth: Option<OAuthResource>,
    /// Connections served at once (default 1024); a client past them waits
    /// to be accepted. Each holds a task, a descriptor and up to a request
    /// body (4 MiB).
    ///
    /// The server also answers at most this many requests at once, in all
    /// its sessions and outside them (a request of protocol 2026-07-28
    /// needs no session; [`stateless`](Self::stateless), every request is
    /// outside): a request holds its permit until its handler ends, even
    /// when its client has left (a handler that does not watch its
    /// cancellation runs on), and one past them waits (in a session,
    /// counted among the session's waiting requests; outside, until its
    /// client leaves, when it stops waiting and never runs). One session holds at most half of
    /// them, rounded up (all of them when this is 1), and one client, in
    /// all its sessions, at most [`max_per_client`](Self::max_per_client):
    /// one client whose requests never end cannot take them all from the
    /// others, which share the rest first come, first served. One client's
    /// requests outside every session of a server that keeps sessions hold
    /// at most half of them, as one session does: even when one client
    /// may hold them all (behind a proxy), a flood of those leaves the
    /// sessions the rest. A request
    /// takes its session's slot and its shares before its permit, so one
    /// waiting for them holds none. A request waiting keeps its
    /// connection, which this bounds too, and one client holds at most
    /// [`max_connections_per_client`](Self::max_connections_per_client)
    /// of them.
    pub max_connections: usize,
    /// The connections one client holds whatever the others do; `None`
    /// (the default) is its part of the requests
    /// ([`max_per_client`](Self::max_per_client)) and one more, for its
    /// event stream, and at least half of
    /// [`max_connections`](Self::max_connections). Past them, a client
    /// takes another connection only while a quarter of `max_connections`
    /// stay free: a lone client's burst, or its sessions' event streams,
    /// use what is spare, and the last quarter is kept for the other
    /// clients. A connection refused is answered `503 Service Unavailable`
    /// with `Retry-After` and closed, holding none of the server's
    /// connections meanwhile (64 such answers at once, 32 to one client,
    /// enough for a burst of an SDK's usual 16; past them, a connection is
    /// closed unanswered). Without it one client, opening connections that
    /// wait or streams that stay open, would leave every other client in
    /// the listen queue. Clients are told apart by address, as for
    /// [`max_per_client`](Self::max_per_client): behind a proxy, raise
    /// this to `max_connections` and bound each client at the proxy. Any
    /// local process may connect from any 127.0.0.0/8 address, so on one
    /// machine this keeps clients apart only if they are not hostile.
    pub max_connections_per_client: Option<usize>,
    /// The most of one client's requests answered at once, in all its
    /// sessions and outside them; `None` (the
    /// default) is half of
    /// [`max_connections`](Self::max_connections), rounded up. A request
    /// past them waits, as one past the server's bound does, on its own
    /// connection: one past the client's connections
    /// ([`max_connections_per_client`](Self::max_connections_per_client))
    /// is answered `503` instead, and the project's MCP client sends it
    /// again after the wait it is told.
    ///
    /// The server tells clients apart by the address they connect from (an
    /// IPv6 address by its /64 prefix), so a client cannot get more by
    /// opening sessions. Clients on one machine all connect from
    /// 127.0.0.1 unless they bind another loopback address, and share one
    /// client's part. Behind a proxy or a load balancer every connection
    /// comes from it: raise this to `max_connections` there, and bound
    /// each client at the proxy.
    pub max_per_client: Option<usize>,
    /// Sessions open at once (default 1024); an `initialize` past them is
    /// refused with `503 Service Unavailable` and a `Retry-After` header,
    /// unless a session of a client over its part is closed for it
    /// (see [`max_sessions_per_client`](Self::max_sessions_per_client)).
    /// A session idle for five minutes is closed, and one its client
    /// deletes (`DELETE`) at once.
    ///
    /// Each session answers at most 64 of its requests at once; a request
    /// past them waits, with its HTTP request, for one to end, and past 64
    /// waiting is answered at once with an error (-32029). A request
    /// counts until its handler has ended (a cancelled one too: a handler
    /// need not watch its cancellation) and its answer is handed out. One
    /// its client cancels while it waits is never run, nor answered (its
    /// event stream ends empty).
    pub max_sessions: usize,
    /// The sessions one client keeps from the others once the server has
    /// [`max_sessions`](Self::max_sessions) open; `None` (the default) is
    /// half of them, rounded up. While the server has room, any client
    /// opens a session, one alone all of them (every local client, and
    /// every client behind a proxy, is one client). Once it is full, a
    /// client with fewer than this many open is given room: a session of
    /// a client with more is closed, the oldest idle one (no request
    /// running or waiting, no event stream open), else the oldest with no
    /// request running (a stream open or a request waiting for its shares
    /// costs the client nothing, so it does not keep the session); its
    /// client is answered 404 there, as the MCP spec allows, and
    /// initializes again. A session with a request running is never
    /// closed for another. A client with this many or more, or one for
    /// which no such session exists, is refused (503, with
    /// `Retry-After`): a client opening sessions in a loop, or keeping a
    /// stream open in each, cannot keep them all from the others. A client
    /// is told apart by its address, as for
    /// [`max_per_client`](Self::max_per_client): behind a proxy, raise this
    /// to `max_sessions`, so that no session is closed for another.
    pub max_sessions_per_client: Option<usize>,
    /// How long a write to a client may wait without progress (default
    /// 30 s); then its connection is closed. A client that stops reading
    /// its answers would otherwise hold its connection for ever.
    pub write_timeout: Duration,
}

impl Default for HttpOptions {
    fn default() -> Self {
        Self {
            path: "/mcp".into(),
            stateless: false,
            allowed_hosts: vec![
                "localhost".into(),
                "127.0.0.1".into(),
                "::1".into(),
                "[::1]".into(),
            ],
            allowed_origins: vec![
                "http://localhost:*".into(),
                "http://127.0.0.1:*".into(),
                "http://[::1]:*".into(),
                "https://localhost:*".into(),
            ],
            shutdown: CancellationToken::new(),
            auth: None,
            max_connections: 1024,
            max_per_client: None,
            max_connections_per_client: None,
            max_sessions: 1024,
            max_sessions_per_client: None,
            write_timeout: Duration::from_secs(30),
        }
    }
}

impl HttpOptions {
    /// Serve statelessly (see [`stateless`](Self::stateless)).
    pub fn stateless(mut self, stateless: bool) -> Self {
        self.stateless = stateless;
        self
    }

    /// Accept these `Host` values instead of the loopback names.
    pub fn allowed_hosts(mut self, hosts: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.allowed_hosts = hosts.into_iter().map(Into::into).collect();
        self
    }

    /// Accept these `Origin` values instead of the loopback origins.
    pub fn allowed_origins(mut self, origins: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.allowed_origins = origins.into_iter().map(Into::into).collect();
        self
    }

    /// Serve at this path instead of `/mcp`.
    pub fn path(mut self, path: impl Into<String>) -> Self {
        self.path = path.into();
        self
    }

    /// Accept only requests with a bearer token `resource` accepts.
    pub fn auth(mut self, resource: OAuthResource) -> Self {
        self.auth = Some(resource);
        self
    }

    /// Serve at most `max` connections at once (at least 1), and answer at
    /// most `max` requests at once, one session at most half of them (see
    /// [`max_connections`](Self::max_connections)).
    pub fn max_connections(mut self, max: usize) -> Self {
        self.max_connections = max.max(1);
        self
    }

    /// Let one client have at most `max` requests answered at once (see
    /// [`max_per_client`](Self::max_per_client)).
    pub fn max_per_client(mut self, max: usize) -> Self {
        self.max_per_client = Some(max);
        self
    }

    /// The most one client holds: [`max_per_client`](Self::max_per_client),
    /// or half of the connections, between 1 and all of them.
    fn client_share(&self) -> usize {
        let max = self.max_connections.max(1);
        self.max_per_client.unwrap_or(max.div_ceil(2)).clamp(1, max)
    }

    /// Let one client hold at most `max` connections at once (see
    /// [`max_connections_per_client`](Self::max_connections_per_client)).
    pub fn max_connections_per_client(mut self, max: usize) -> Self {
        self.max_connections_per_client = Some(max);
        self
    }

    /// The connections one client holds whatever the others do:
    /// [`max_connections_per_client`](Self::max_connections_per_client),
    /// or its part of the requests and one more (for its event stream), and
    /// at least half of them, between 1 and all of them.
    fn client_connections(&self) -> usize {
        let max = self.max_connections.max(1);
        self.max_connections_per_client
            .unwrap_or((self.client_share() + 1).max(max.div_ceil(2)))
            .clamp(1, max)
    }

    /// Keep at most `max` sessions open at once (at least 1).
    pub fn max_sessions(mut self, max: usize) -> Self {
        self.max_sessions = max.max(1);
        self
    }

    /// Let one client keep `max` sessions from the others once the server
    /// is full (see
    /// [`max_sessions_per_client`](Self::max_sessions_per_client)).
    pub fn max_sessions_per_client(mut self, max: usize) -> Self {
        self.max_sessions_per_client = Some(max);
        self
    }

    /// The sessions one client keeps from the others:
    /// [`max_sessions_per_client`](Self::max_sessions_per_client), or half
    /// of the sessions, between 1 and all of them.
    fn client_sessions(&self) -> usize {
        let max = self.max_sessions.max(1);
        self.max_sessions_per_client
            .unwrap_or(max.div_ceil(2))
            .clamp(1, max)
    }

    /// Close a client's connection once a write to it has waited this long
    /// without progress (see [`write_timeout`](Self::write_timeout)).
    pub fn write_timeout(mut self, timeout: Duration) -> Self {
        self.write_timeout = timeout;
        self
    }

    /// Stop when `token` is cancelled.
    pub fn shutdown(mut self, token: CancellationToken) -> Self {
        self.shutdown = token;
        self
    }
}

impl McpServer {
    /// Serve over streamable HTTP on `listener` until `options.shutdown` is cancelled.
    pub async fn serve_http(
        self,
        listener: TcpListener,
        options: HttpOptions,
    ) -> std::io::Result<()> {
        let mut config = StreamableHttpServerConfig::default()
            .with_legacy_session_mode(!options.stateless)
            .with_json_response(options.stateless)
            .with_cancellation_token(options.shutdown.child_token());
        config = if options.allowed_hosts.is_empty() {
            config.disable_allowed_hosts()
        } else {
            config.with_allowed_hosts(options.allowed_hosts.clone())
        };
        if !options.allowed_origins.is_empty() {
            config = config.with_allowed_origins(options.allowed_origins.clone());
        }
        // One handler per session, so what a client sets (its log level,
        // its subscriptions) is its own.
        let factory = {
            let server = self.clone();
            let stateless = options.stateless;
            move || Ok(server.for_new_session(stateless))
        };
        let path: Arc<str> = options.path.as_str().into();
        let gate = Gate::new(options.auth.clone(), Arc::clone(self.registry()), &path);
        // The requests answered at once, in all sessions and outside them.
        let requests = ServerWide::new(options.max_connections, options.client_share());
        if options.stateless {
            let service = StreamableHttpService::new(
                factory,
                Arc::new(NeverSessionManager::default()),
                config,
            );
            accept(listener, service, path, gate, requests, &options).await
        } else {
            // A session that closes is forgotten by the gate at once, not
            // only when its table is full.
            let forget = {
                let gate = Arc::downgrade(&gate);
                Box::new(move |session: &str| {
                    if let Some(gate) = gate.upgrade() {
                        gate.forget(session);
                    }
                })
            };
            let sessions = BoundedSessions::new(
                LocalSessionManager::default(),
                (options.max_sessions.max(1), options.client_sessions()),
                requests.clone(),
                forget,
            );
            let service = StreamableHttpService::new(factory, Arc::new(sessions), config);
            accept(listener, service, path, gate, requests, &options).await
        }
    }
}

pub(super) type Response =
    hyper::Response<http_body_util::combinators::BoxBody<Bytes, std::convert::Infallible>>;

/// How long a client may take to send a request's head; then the
/// connection is closed. A client that sends it a byte at a time would
/// otherwise hold its connection for ever.
const HEAD_TIMEOUT: Duration = Duration::from_secs(10);

/// The pause after a failed accept. Out of descriptors, `accept` fails at
/// once, every time: without a pause the loop would spin.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

async fn accept<S>(
    listener: TcpListener,
    service: S,
    path: Arc<str>,
    gate: Arc<Gate>,
    requests: ServerWide,
    options: &HttpOptions,
) -> std::io::Result<()>
where
    S: Service<hyper::Request<GateBody>, Response = Response, Error = std::convert::Infallible>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
{
    let shutdown = &options.shutdown;
    let resumptions = Resumptions::default();
    let connections = Arc::new(Semaphore::new(options.max_connections.max(1)));
    let per_client =
        ClientConnections::new(options.client_connections(), options.max_connections.max(1));
    // Stateless, each request is answered on its own, and its handler runs
    // on when its client leaves (one that does not watch its cancellation
    // runs to its end): the bound holds only if its handler holds a permit
    // until it ends. A session's requests take theirs as they are let in
    // (`Admission`). A request of a protocol without sessions posted to a
    // server that keeps them is answered outside every session: the SDK
    // tells it from an `initialize`, whose head it keeps for as long as the
    // session lives, only by its body, so its head carries a handle to the
    // permits, not a permit, and its handler waits for one
    // (`outside_sessions`).
    let stateless = options.stateless;
    loop {
        // A permit first: past the bound, clients wait in the listen queue.
        let permit = tokio::select! {
            () = shutdown.cancelled() => return Ok(()),
            permit = Arc::clone(&connections).acquire_owned() => match permit {
                Ok(permit) => permit,
                Err(_) => return Ok(()),
            },
        };
        let (stream, address) = tokio::select! {
            () = shutdown.cancelled() => return Ok(()),
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                // A connection that failed before we saw it is the client's
                // problem; no descriptor left is ours, and passes.
                Err(_) => {
                    tokio::select! {
                        () = shutdown.cancelled() => return Ok(()),
                        () = tokio::time::sleep(ACCEPT_BACKOFF) => continue,
                    }
                }
            },
        };
        let peer = Peer::of(address.ip());
        let Some(held) = per_client.take(peer, connections.available_permits()) else {
            // Refused with the server's connection given back: the answer
            // holds only one of the few kept for refusals.
            drop(permit);
            per_client.refuse(stream, peer);
            continue;
        };
        // An answer streamed as events goes out in several small writes
        // (the head, then each event): with Nagle's algorithm each waits
        // for the client's delayed ACK of the one before, about 40 ms.
        let _ = stream.set_nodelay(true);
        let service = service.clone();
        let path = Arc::clone(&path);
        let gate = Arc::clone(&gate);
        let shutdown = shutdown.clone();
        let resumptions = resumptions.clone();
        let requests = requests.clone();
        let stream = FreedOnClose::new(
            WriteDeadline::new(stream, options.write_timeout),
            permit,
            held,
        );
        tokio::spawn(async move {
            let handler =
                hyper::service::service_fn(move |mut request: hyper::Request<Incoming>| {
                    let service = service.clone();
                    let known = request.uri().path() == &*path;
                    let gate = Arc::clone(&gate);
                    let resumptions = resumptions.clone();
                    let requests = requests.clone();
                    // Who sent the request, for the bounds that are a client's
                    // (see `Peer`): the SDK hands the request's head on to the
                    // session with the request.
                    request.extensions_mut().insert(peer);
                    if !stateless {
                        request.extensions_mut().insert(requests.clone());
                    }
                    async move {
                        if known {
                            let mut request = request;
                            if stateless && request.method() == hyper::Method::POST {
                                // The SDK moves the request's head, extensions
                                // included, into its handler's context: the
                                // permit is held until the handler ends.
                                let Some(permits) = requests.permits_for(peer).await else {
                                    return Ok(unavailable());
                                };
                                request.extensions_mut().insert(HandlerPermit {
                                    _held: Arc::new(permits),
                                });
                            }
                            // A session refused is answered as such: the
                            // SDK makes every failure to open one a 500.
                            let served = serve_endpoint(request, service, &gate, &resumptions);
                            match answering(peer, served).await {
                                (
                                    _,
                                    Answered {
                                        refused: Some(refused),
                                        ..
                                    },
                                ) => Ok(no_session(refused)),
                                (Ok(response), Answered { gone: true, .. })
                                    if response.status()
                                        == hyper::StatusCode::INTERNAL_SERVER_ERROR =>
                                {
                                    Ok(session_gone())
                                }
                                (response, _) => response,
                            }
                        } else if let Some(answer) = gate.answer(&request) {
                            Ok(answer)
                        } else {
                            let mut response = hyper::Response::new(
                                Full::new(Bytes::from_static(b"not found")).boxed(),
                            );
                            *response.status_mut() = hyper::StatusCode::NOT_FOUND;
                            Ok(response)
                        }
                    }
                });
            // HTTP/1 only: the transport needs nothing more, and HTTP/2's
            // streams and settings are more for a client to abuse.
            let mut builder = auto::Builder::new(TokioExecutor::new()).http1_only();
            builder
                .http1()
                .timer(TokioTimer::new())
                .header_read_timeout(HEAD_TIMEOUT);
            let connection = builder.serve_connection(TokioIo::new(stream), handler);
            tokio::select! {
                _ = connection => {}
                () = shutdown.cancelled() => {}
            }
        });
    }
}

/// The permits of a stateless server's request, held by the request's
/// handler until it ends.
#[derive(Clone)]
struct HandlerPermit {
    _held: Arc<ServerPermits>,
}

/// How long a client refused a session is told to wait before it tries
/// again: sessions close when their clients delete them, or idle.
const SESSION_RETRY_AFTER: &str = "10";

/// The answer to an `initialize` whose session was refused: the server,
/// or its client, has as many sessions open as it may.
fn no_session(why: NoSession) -> Response {
    busy(SessionsError::from(why).to_string(), SESSION_RETRY_AFTER)
}

/// `503 Service Unavailable` saying `why`, with the seconds to wait before
/// trying again (`retry_after`).
pub(super) fn busy(why: String, retry_after: &'static str) -> Response {
    let mut response = hyper::Response::new(Full::new(Bytes::from(why)).boxed());
    *response.status_mut() = hyper::StatusCode::SERVICE_UNAVAILABLE;
    let headers = response.headers_mut();
    headers.insert(
        hyper::header::RETRY_AFTER,
        hyper::header::HeaderValue::from_static(retry_after),
    );
    headers.insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

/// The answer to a request of a session that closed before the request
/// reached it (deleted, idle too long, or given to another client), as to
/// one of a session never opened: the client opens another.
fn session_gone() -> Response {
    let mut response = hyper::Response::new(
        Full::new(Bytes::from_static(b"Not Found: Session not found")).boxed(),
    );
    *response.status_mut() = hyper::StatusCode::NOT_FOUND;
    response
}

/// The answer when the server is stopping.
fn unavailable() -> Response {
    let mut response =
        hyper::Response::new(Full::new(Bytes::from_static(b"shutting down")).boxed());
    *response.status_mut() = hyper::StatusCode::SERVICE_UNAVAILABLE;
    response
}

/// A request to the endpoint. A POST of a session may have its event stream
/// ended early by its call, and a GET that resumes such a stream tells the
/// call it may answer (see `stream`).
async fn serve_endpoint<S>(
    mut request: hyper::Request<Incoming>,
    service: S,
    gate: &Gate,
    resumptions: &Resumptions,
) -> Result<Response, std::convert::Infallible>
where
    S: Service<hyper::Request<GateBody>, Response = Response, Error = std::convert::Infallible>,
{
    let header = |name: &str| {
        request
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    let session = header("mcp-session-id");
    let resumed = header("last-event-id");
    let is_post = request.method() == hyper::Method::POST;
    let release = match &session {
        Some(session) if is_post => {
            let release = StreamRelease::new(session.clone(), resumptions.clone());
            request.extensions_mut().insert(release.clone());
            Some(release)
        }
        _ => None,
    };
    let response = gate.serve(request, service).await?;
    if let (Some(session), Some(last_event_id), true) = (
        &session,
        &resumed,
        response.status().is_success() && !is_post,
    ) {
        resumptions.came_back(session, last_event_id);
    }
    Ok(match release {
        Some(release) => releasable(response, release),
        None => response,
    })
}

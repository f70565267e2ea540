//! The server side: a registry served over MCP.

// Logging and sampling are deprecated only from protocol version 2026-07-28
// on; the clients and servers of the versions we speak still use them.
#![allow(deprecated)]

mod auth;
mod connections;
mod freed_on_close;
mod http;
mod identity;
mod listeners;
pub(crate) mod peer;
mod session;
mod sessions;
mod sources;
mod stream;
mod tasks;
mod write_deadline;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CompleteRequestParams, CompleteResult,
    GetPromptRequestParams, GetPromptResponse, InitializeRequestParams, InitializeResult,
    InputRequiredResult, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    ListToolsResult, PaginatedRequestParams, ProtocolVersion, ReadResourceRequestParams,
    ReadResourceResponse, RequestStateCodec, ResourceUpdatedNotificationParam, SealOptions,
    SetLevelRequestParams, SubscribeRequestParams, UnsubscribeRequestParams,
};
use rmcp::model::{
    CancelTaskParams, ClientCapabilities, CreateTaskResult, GetTaskParams, GetTaskResult,
    ServerNotification, SubscriptionFilter, TASKS_EXTENSION_ID, UpdateTaskParams,
};
use rmcp::service::{RequestContext, SubscriptionContext};
use rmcp::task_manager::{TaskContext, TaskExit, TaskOptions};
use rmcp::{ErrorData, Peer, RoleServer, ServerHandler, ServiceExt};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

#[cfg(feature = "mcp-jwt")]
pub use auth::JwtVerifier;
pub use auth::{Claims, OAuthResource, SCOPES_META_KEY, TokenError, TokenVerifier};
pub use http::HttpOptions;
pub use identity::{Caller, HeaderMap};
pub use session::ClientSession;
pub use sources::{PromptSource, ResourceSource};
pub use tasks::{DEFAULT_TASKS_IN_ALL, DEFAULT_TASKS_PER_CALLER};

use crate::context::ToolContext;
use crate::error::ErrorKind;
use crate::mcp::convert::call_result_from_output;
use crate::mcp::in_flight::{self, SessionWork, outside_sessions, peer_of};
use crate::pipeline::Pipeline;
use crate::pipeline::error_output;
use crate::registry::ToolRegistry;
use crate::schema::DefinitionFormat;
use crate::tool::TaskSupport;
use session::{Channel, Offers, ProgressRelay, Rounds};
use tasks::{Owner, Tasks};

/// How many tools one `tools/list` page holds unless set otherwise.
pub const DEFAULT_PAGE_SIZE: usize = 100;

/// A registry served over MCP: every tool with its annotations and output
/// schema; calls go through the registry's [`Pipeline`] (or the one given
/// with [`with_pipeline`](Self::with_pipeline)) as every other call does:
/// casting, validation, the timeout, the layers and the shaping, and every
/// failure is an `isError` result the model can read.
///
/// A tool reports progress with [`ToolContext::report_progress`] (sent as
/// progress notifications when the client asked for them), sees the client
/// cancel through its cancellation token, and can take `&ClientSession` to
/// log to the client or ask it for sampling and elicitation.
///
/// ```no_run
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// use std::sync::Arc;
/// use toolsmith::{ToolContext, ToolFilter, ToolRegistry};
/// use toolsmith::mcp::McpServer;
///
/// let registry = Arc::new(ToolRegistry::from_inventory(&ToolFilter::default())?);
/// McpServer::new(registry)
///     .with_context(ToolContext::new().with_workspace("/srv/work"))
///     .serve_stdio()
///     .await?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct McpServer {
    shared: Arc<Shared>,
    /// What one client's session sets; each HTTP session gets its own.
    session: Arc<SessionState>,
}

/// How long [`McpServer::resource_updated`] waits for one client to take a notification.
const NOTIFY_LIMIT: std::time::Duration = std::time::Duration::from_secs(5);

/// What a client sets for its own session only.
struct SessionState {
    /// The rank of the least severe log level the client wants (`debug` until set).
    log_level: Arc<AtomicUsize>,
    /// The resources the client subscribed to.
    subscriptions: Mutex<Vec<String>>,
    /// Cancelled when the session's handler is dropped: stops the task that
    /// tells the client its tool list changed.
    ended: CancellationToken,
    /// The client, once it has initialized the session.
    peer: OnceLock<Peer<RoleServer>>,
    /// A stateless HTTP request, not a session: nothing can be sent to the
    /// client later, so nothing is offered that would need it.
    stateless: bool,
    /// The session key calls of this session run under when the host's
    /// context sets none, so that what a layer keeps per session (a cache,
    /// limits, a retry budget) is this client's alone.
    key: String,
}

impl SessionState {
    fn new(stateless: bool) -> Arc<Self> {
        Arc::new(Self {
            log_level: Arc::default(),
            subscriptions: Mutex::default(),
            ended: CancellationToken::new(),
            peer: OnceLock::new(),
            stateless,
            key: next_session_key(),
        })
    }
}

impl Drop for SessionState {
    fn drop(&mut self) {
        self.ended.cancel();
    }
}

struct Shared {
    registry: Arc<ToolRegistry>,
    context: ToolContext,
    name: String,
    version: String,
    instructions: Option<String>,
    page_size: usize,
    resources: Option<Arc<dyn ResourceSource>>,
    prompts: Option<Arc<dyn PromptSource>>,
    /// What calls run through, when not the registry's own pipeline.
    pipeline: Option<Pipeline>,
    /// Signs the answers a call of protocol 2026-07-28 carries from one
    /// round to the next (`requestState`).
    rounds: Arc<RequestStateCodec>,
    /// The tasks of calls to tools that run as tasks, of every session,
    /// each kept to its caller.
    tasks: Tasks,
    /// Every session's state while it lives, for [`McpServer::resource_updated`];
    /// shared with the copies [`McpServer::edit`] makes.
    sessions: Arc<Mutex<Vec<Weak<SessionState>>>>,
    /// The `subscriptions/listen` streams that asked to hear of resources'
    /// updates (protocol 2026-07-28), shared with the copies too.
    listeners: listeners::ResourceListeners,
}

impl Shared {
    /// What calls run through: the server's own pipeline, else the
    /// registry's.
    fn pipeline(&self) -> &Pipeline {
        self.pipeline
            .as_ref()
            .unwrap_or_else(|| self.registry.pipeline())
    }

    /// Keep `session` in the list of live sessions (and drop the ended ones).
    fn track(&self, session: &Arc<SessionState>) {
        let mut sessions = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
        sessions.retain(|s| s.strong_count() > 0);
        sessions.push(Arc::downgrade(session));
    }

    fn live_sessions(&self) -> Vec<Arc<SessionState>> {
        let sessions = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
        sessions.iter().filter_map(Weak::upgrade).collect()
    }
}

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer")
            .field("name", &self.shared.name)
            .field("tools", &self.shared.registry.len())
            .finish()
    }
}

impl McpServer {
    /// Serve `registry`, named after this crate until [`with_name`](Self::with_name).
    pub fn new(registry: Arc<ToolRegistry>) -> Self {
        let shared = Arc::new(Shared {
            registry,
            context: ToolContext::new(),
            name: "toolsmith".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            instructions: None,
            page_size: DEFAULT_PAGE_SIZE,
            resources: None,
            prompts: None,
            pipeline: None,
            rounds: Arc::new(RequestStateCodec::new_unchecked(random_key())),
            tasks: Tasks::default(),
            sessions: Arc::default(),
            listeners: listeners::ResourceListeners::default(),
        });
        let session = SessionState::new(false);
        shared.track(&session);
        Self { shared, session }
    }

    /// The same server for another client: its settings, a session state
    /// of its own (`stateless`: one HTTP request of no session).
    pub(crate) fn for_new_session(&self, stateless: bool) -> Self {
        let session = SessionState::new(stateless);
        self.shared.track(&session);
        Self {
            shared: Arc::clone(&self.shared),
            session,
        }
    }

    /// Remember this session's client and, once, start telling it whenever
    /// the registry's tools change (a registration, a removal, an MCP
    /// server of ours refreshing its share), until the session ends. Done
    /// while answering `initialize`, before the client can list the tools,
    /// so no change can fall between its list and the watch.
    fn attach(&self, peer: &Peer<RoleServer>) {
        if self.session.stateless || self.session.peer.set(peer.clone()).is_err() {
            return;
        }
        let registry = Arc::clone(&self.shared.registry);
        let ended = self.session.ended.clone();
        let peer = peer.clone();
        let mut seen = registry.generation();
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    () = registry.changed(seen) => {}
                    () = ended.cancelled() => return,
                }
                seen = registry.generation();
                if peer.notify_tool_list_changed().await.is_err() {
                    return;
                }
            }
        });
    }

    /// Tell every client subscribed to `uri` (with `resources/subscribe`,
    /// or on protocol 2026-07-28 by naming it on a `subscriptions/listen`
    /// stream) that the resource changed: they are sent
    /// `notifications/resources/updated` and read it again when they want.
    /// Returns how many were told.
    ///
    /// Call it on the server (or any clone of it) being served, whenever
    /// what the [`ResourceSource`] answers for `uri` changes.
    ///
    /// Clients are told all at once; one that does not read what it is sent
    /// is given up on after a few seconds without holding up the others.
    pub async fn resource_updated(&self, uri: &str) -> usize {
        let subscribed = self.shared.live_sessions().into_iter().filter(|session| {
            session
                .subscriptions
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .iter()
                .any(|s| s == uri)
        });
        let sends = subscribed
            .filter_map(|session| session.peer.get().cloned())
            .map(|peer| async move {
                let update =
                    peer.notify_resource_updated(ResourceUpdatedNotificationParam::new(uri));
                matches!(tokio::time::timeout(NOTIFY_LIMIT, update).await, Ok(Ok(())))
            });
        let (told, listening) = tokio::join!(
            futures_util::future::join_all(sends),
            self.shared.listeners.tell(uri, NOTIFY_LIMIT)
        );
        told.into_iter().filter(|&ok| ok).count() + listening
    }

    fn edit(mut self, change: impl FnOnce(&mut Shared)) -> Self {
        if let Some(shared) = Arc::get_mut(&mut self.shared) {
            change(shared);
        } else {
            // Configured after being cloned: rebuild rather than change what others share.
            let s = &self.shared;
            let mut copy = Shared {
                registry: Arc::clone(&s.registry),
                context: s.context.clone(),
                name: s.name.clone(),
                version: s.version.clone(),
                instructions: s.instructions.clone(),
                page_size: s.page_size,
                resources: s.resources.clone(),
                prompts: s.prompts.clone(),
                pipeline: s.pipeline.clone(),
                rounds: Arc::clone(&s.rounds),
                tasks: s.tasks.clone(),
                sessions: Arc::clone(&s.sessions),
                listeners: s.listeners.clone(),
            };
            change(&mut copy);
            self.shared = Arc::new(copy);
        }
        self
    }

    /// The name and version the server introduces itself with.
    pub fn with_name(self, name: impl Into<String>, version: impl Into<String>) -> Self {
        let (name, version) = (name.into(), version.into());
        self.edit(|s| {
            s.name = name;
            s.version = version;
        })
    }

    /// Instructions for the client's model, sent at initialization.
    pub fn with_instructions(self, instructions: impl Into<String>) -> Self {
        let instructions = instructions.into();
        self.edit(|s| s.instructions = Some(instructions))
    }

    /// The context every call starts from (workspace, shared state).
    pub fn with_context(self, context: ToolContext) -> Self {
        self.edit(|s| s.context = context)
    }

    /// Run served calls through `pipeline` instead of the registry's own:
    /// its timeout, shaping and layers (approval with a policy that denies,
    /// limits, hooks) apply to every call a client makes.
    pub fn with_pipeline(self, pipeline: Pipeline) -> Self {
        self.edit(|s| s.pipeline = Some(pipeline))
    }

    /// The pipeline served calls run through.
    pub fn pipeline(&self) -> &Pipeline {
        self.shared.pipeline()
    }

    /// Sign the `requestState` of input-required results with `key`
    /// instead of a key of this process's own. Give every process serving
    /// the same tools behind a load balancer the same key (32 bytes or
    /// more of secret randomness), so any of them can take a call's next
    /// round; see [`ClientSession`] for the rounds.
    pub fn with_request_state_key(self, key: impl Into<Vec<u8>>) -> Self {
        let codec = Arc::new(RequestStateCodec::new_unchecked(key));
        self.edit(|s| s.rounds = codec)
    }

    /// How many tasks (calls of tools that run as tasks) may run at once:
    /// `per_caller` for one caller, `in_all` on the server (each at least
    /// 1; by default [`DEFAULT_TASKS_PER_CALLER`] and
    /// [`DEFAULT_TASKS_IN_ALL`]). A call past either is refused with an
    /// error saying which. Ended tasks stay readable for a while, up to
    /// four times `in_all` of them.
    pub fn with_task_limits(self, per_caller: usize, in_all: usize) -> Self {
        self.edit(|s| s.tasks = Tasks::new(per_caller, in_all))
    }

    /// How many tools one `tools/list` page holds (at least 1).
    pub fn with_page_size(self, page_size: usize) -> Self {
        self.edit(|s| s.page_size = page_size.max(1))
    }

    /// Serve resources too.
    pub fn with_resources(self, resources: impl ResourceSource) -> Self {
        let resources: Arc<dyn ResourceSource> = Arc::new(resources);
        self.edit(|s| s.resources = Some(resources))
    }

    /// Serve prompts too.
    pub fn with_prompts(self, prompts: impl PromptSource) -> Self {
        let prompts: Arc<dyn PromptSource> = Arc::new(prompts);
        self.edit(|s| s.prompts = Some(prompts))
    }

    /// The registry being served.
    pub fn registry(&self) -> &Arc<ToolRegistry> {
        &self.shared.registry
    }

    /// Serve one client on standard input and output until it leaves.
    ///
    /// Standard output belongs to the protocol: nothing else may print
    /// there (log to standard error).
    pub async fn serve_stdio(self) -> std::io::Result<()> {
        // tokio's stdin and stdout hand every read and write to a blocking
        // thread; when they are pipes (as when a client starts the server)
        // they can be polled directly, which saves two thread hand-offs
        // per message.
        #[cfg(unix)]
        if let Some((reader, writer)) = stdio_pipes() {
            return self.serve_io(reader, writer).await;
        }
        self.serve_io(tokio::io::stdin(), tokio::io::stdout()).await
    }

    /// Serve one client on a pair of byte streams (newline-delimited JSON-RPC) until it leaves.
    ///
    /// At most 64 of the client's requests are answered at once, each
    /// counting until its handler has ended (a cancelled one too) and its
    /// answer is written; 64 more are held, and past those a request is
    /// answered at once with an error (-32029) while reading goes on, so
    /// the client's answers to the server's questions, its cancels and its
    /// pings are never stuck behind requests the server cannot take. A
    /// request reusing the id of one not yet answered is not run: it is
    /// answered at once with JSON-RPC's "invalid request" error (-32600,
    /// "the id ... is in use"), an answer bearing that id like the one
    /// still to come.
    pub async fn serve_io<R, W>(self, reader: R, writer: W) -> std::io::Result<()>
    where
        R: tokio::io::AsyncRead + Send + Unpin + 'static,
        W: tokio::io::AsyncWrite + Send + Unpin + 'static,
    {
        // A session of its own, whichever clone of the server serves it.
        let running = self
            .for_new_session(false)
            .serve(super::in_flight::InFlight::new(
                rmcp::transport::async_rw::AsyncRwTransport::new_server(reader, writer),
            ))
            .await
            .map_err(|e| std::io::Error::other(e.to_string()))?;
        running
            .waiting()
            .await
            .map_err(|e| std::io::Error::other(e.to_string()))?;
        Ok(())
    }

    fn call_context(&self, context: &RequestContext<RoleServer>) -> ToolContext {
        let caller = self.caller_of(context);
        // Only a session of protocol 2025-11-25 or older can resume an
        // event stream the call ends (`GET` with `Last-Event-ID`).
        let stream = (caller.session_id().is_some() && !is_2026_or_later(context))
            .then(|| stream::release_of(context))
            .flatten();
        let ctx = self
            .shared
            .context
            .clone()
            .with_cancellation(context.ct.clone())
            .with_call_id(context.id.to_string())
            .with_state(
                ClientSession::new(context.peer.clone(), Arc::clone(&self.session.log_level))
                    .on_stream(stream),
            );
        let ctx = match self.session_key_for(&caller) {
            Some(key) => ctx.with_session_key(key),
            None => ctx,
        };
        caller.inject(ctx)
    }

    /// The session key of a call, when the host's context sets none, so
    /// that what a layer keeps per session (a cache, limits, a retry
    /// budget) is one client's alone: the key this server gave the session
    /// (an HTTP session's, a stdio connection's); for an HTTP request of no
    /// session (stateless, or protocol 2026-07-28, which has no sessions),
    /// the verified issuer and subject of its token. Never anything the
    /// client chose: requests of no session and no token cannot be told
    /// apart, so they share the host's scope.
    fn session_key_for(&self, caller: &identity::Caller) -> Option<String> {
        if self.shared.context.session_key().is_some() {
            return None;
        }
        if let Some(key) = self.issued_session(caller) {
            return Some(key);
        }
        caller
            .claims()
            .and_then(Claims::principal)
            .map(|principal| format!("mcp-caller:{principal}"))
    }

    /// The key of the session this server gave and the request belongs
    /// to: a stdio connection's, or an HTTP session's when the request
    /// names one (the HTTP service answers a session id it did not give
    /// with `404`, so a named one is the server's). None for a request of
    /// no session: a stateless server's, or one of protocol 2026-07-28,
    /// which has no sessions and is served by a handler of its own.
    fn issued_session(&self, caller: &identity::Caller) -> Option<String> {
        let in_session =
            !self.session.stateless && (!caller.is_http() || caller.session_id().is_some());
        in_session.then(|| self.session.key.clone())
    }
}

impl McpServer {
    /// Who makes `context`'s request, with the session id it names only
    /// when that is a session this server gave. A stateless server gives
    /// none, and a request of protocol 2026-07-28 over HTTP belongs to no
    /// session (it is answered by a handler of its own, where no one checks
    /// the id): one it names is its client's choice. Taken for a session,
    /// that made each such request a scope of its own (out of the shared
    /// one a per-session limit counts it in) and its task an owner of its
    /// own, stopped when the request's handler went.
    fn caller_of(&self, context: &RequestContext<RoleServer>) -> identity::Caller {
        let caller = identity::Caller::of_request(context);
        if self.session.stateless || (caller.is_http() && is_2026_or_later(context)) {
            caller.without_session_id()
        } else {
            caller
        }
    }

    /// Who makes a request, as a task's owner: the session this server
    /// gave (none for a request of no session) and the verified token's
    /// issuer and subject; for a request of neither, the client's address,
    /// so that one anonymous client's tasks are not another's.
    fn owner(&self, context: &RequestContext<RoleServer>) -> Owner {
        let caller = self.caller_of(context);
        let session = self.issued_session(&caller);
        let principal = caller.claims().and_then(Claims::principal);
        let client = if session.is_none() && principal.is_none() {
            peer_of(&context.extensions)
        } else {
            None
        };
        Owner {
            session,
            principal,
            client,
        }
    }
}

/// A key no other session of this process has.
fn next_session_key() -> String {
    static NEXT: AtomicUsize = AtomicUsize::new(1);
    format!("mcp-session-{}", NEXT.fetch_add(1, Ordering::Relaxed))
}

/// 32 bytes no other process can guess: std's hasher keys come from the
/// operating system's randomness.
fn random_key() -> Vec<u8> {
    use std::hash::{BuildHasher, Hasher};
    (0..4u8)
        .flat_map(|i| {
            let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
            hasher.write_u8(i);
            hasher.finish().to_le_bytes()
        })
        .collect()
}

/// How often a client is asked to look at a task, in milliseconds.
const TASK_POLL_INTERVAL_MS: u64 = 200;

/// How long a tool that asks first runs before its call becomes a task:
/// a question left open by then ends the round instead. One poll interval,
/// so a client polling the task would not have heard sooner.
const QUESTIONS_BEFORE_TASK: std::time::Duration =
    std::time::Duration::from_millis(TASK_POLL_INTERVAL_MS);

/// The options of every task of a served call.
fn task_options() -> TaskOptions {
    TaskOptions::new().with_poll_interval_ms(TASK_POLL_INTERVAL_MS)
}

/// A served call that owns what it needs: its typed outcome and the tool's name.
type OwnedCall = std::pin::Pin<
    Box<
        dyn std::future::Future<Output = (Result<crate::ToolOutput, crate::CallError>, String)>
            + Send,
    >,
>;

/// The refusal of a request whose `what` (a tool, a prompt) asked for a
/// capability the client did not declare (protocol 2026-07-28's -32021).
fn missing_capability(what: &str, capability: &str) -> ErrorData {
    ErrorData::new(
        rmcp::model::ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
        format!(
            "the {what} needs the client's {capability} capability, which the request does not declare"
        ),
        Some(json!({"requiredCapabilities": {capability: {}}})),
    )
}

/// What a call of protocol 2026-07-28 carries, signed, from one round to
/// the next: the answers so far, and the questions asked and left open,
/// the only ones the next round's `inputResponses` may answer.
#[derive(Default, serde::Serialize, serde::Deserialize)]
struct RoundState {
    answers: serde_json::Map<String, Value>,
    asked: Vec<String>,
}

/// What a call's signed state is bound to: the tool (or `prompt:` and a
/// prompt's name) and the arguments, so that the answers given for one call
/// never reach another, whatever order the client writes the arguments in.
fn round_binding(name: &str, arguments: Option<&serde_json::Map<String, Value>>) -> String {
    /// `value` with every object's keys in order.
    fn sorted(value: &Value) -> Value {
        match value {
            Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                Value::Object(
                    keys.into_iter()
                        .map(|k| (k.clone(), sorted(&map[k])))
                        .collect(),
                )
            }
            Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    let arguments = arguments.map_or(Value::Null, |a| sorted(&Value::Object(a.clone())));
    format!("{name}\n{arguments}")
}

/// How long a call's answers stay valid between its rounds.
const ROUND_STATE_TTL: std::time::Duration = std::time::Duration::from_secs(3600);

/// Whether the request's protocol version is 2026-07-28 or newer: no
/// requests to the client, input-required results instead.
fn is_2026_or_later(context: &RequestContext<RoleServer>) -> bool {
    context
        .protocol_version()
        .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str())
}

/// Standard input and output as non-blocking pipes, when both are pipes.
#[cfg(unix)]
fn stdio_pipes() -> Option<(
    tokio::net::unix::pipe::Receiver,
    tokio::net::unix::pipe::Sender,
)> {
    use std::os::fd::AsFd;
    let input = std::io::stdin().as_fd().try_clone_to_owned().ok()?;
    let output = std::io::stdout().as_fd().try_clone_to_owned().ok()?;
    // Both refuse anything but a FIFO, so a terminal or a file falls back.
    let reader = tokio::net::unix::pipe::Receiver::from_owned_fd(input).ok()?;
    let writer = tokio::net::unix::pipe::Sender::from_owned_fd(output).ok()?;
    Some((reader, writer))
}

/// A typed SDK result from MCP's JSON form, marked complete: protocol
/// version 2026-07-28 requires `resultType`, and the SDK drops it for
/// clients of older versions.
fn typed<T: DeserializeOwned>(mut value: Value) -> Result<T, ErrorData> {
    if let Value::Object(map) = &mut value {
        map.entry("resultType").or_insert_with(|| json!("complete"));
    }
    serde_json::from_value(value).map_err(|e| ErrorData::internal_error(e.to_string(), None))
}

/// One page of `items` after `cursor`, and the cursor of the next.
///
/// A cursor names where the page before ended: its length so far and the
/// key of its last item (a tool's or prompt's name, a resource's URI), as
/// `LENGTH:KEY`. When the list has not changed the length finds the place;
/// when it has (a tool registered or removed between two pages), the next
/// page starts after that item wherever it now is, or, in a list sorted by
/// key, after where it would be. So a client paging while the list changes
/// sees what stayed exactly once; what was added before its place it learns
/// of from the list-changed notification. Only when that item is gone from
/// a list in no key order (the registry lists MCP servers' tools after its
/// own) does the next page start at the place it had, which may repeat or
/// skip one item. A cursor that is not `LENGTH:KEY` is refused.
fn page<T: Clone>(
    items: &[T],
    key: impl Fn(&T) -> Option<&str>,
    cursor: Option<&str>,
    size: usize,
) -> Result<(Vec<T>, Option<String>), ErrorData> {
    let start = match cursor {
        None => 0,
        Some(cursor) => resume(items, &key, cursor).ok_or_else(|| {
            ErrorData::invalid_params(
                format!("unknown cursor `{cursor}`: list again from the start"),
                None,
            )
        })?,
    };
    let end = start.saturating_add(size.max(1)).min(items.len());
    let next = (end < items.len()).then(|| format!("{end}:{}", key(&items[end - 1]).unwrap_or("")));
    Ok((items[start..end].to_vec(), next))
}

/// Where the page after `cursor` starts in `items` (see [`page`]).
fn resume<T>(items: &[T], key: &impl Fn(&T) -> Option<&str>, cursor: &str) -> Option<usize> {
    let (length, last) = cursor.split_once(':')?;
    let length: usize = length.parse().ok()?;
    // An item without a key is known by the empty one, as its cursor says.
    let is_last = |item: &T| key(item).unwrap_or_default() == last;
    if length > 0 && length <= items.len() && is_last(&items[length - 1]) {
        return Some(length);
    }
    // The item moved. A key can repeat in a list in no key order, and the
    // first item with it may be far back: paging would go back there. Of the
    // items with its key, the one nearest to where it was (the earlier of
    // two as near: a page repeated rather than an item skipped).
    let was = length.saturating_sub(1);
    let nearest = (0..items.len())
        .filter(|&at| is_last(&items[at]))
        .min_by_key(|&at| at.abs_diff(was));
    if let Some(at) = nearest {
        return Some(at + 1);
    }
    let sorted = items
        .windows(2)
        .all(|pair| key(&pair[0]).unwrap_or_default() <= key(&pair[1]).unwrap_or_default());
    if sorted {
        return Some(items.partition_point(|item| key(item).unwrap_or_default() <= last));
    }
    // The item is gone from a list in no key order: the place it had.
    Some(length.min(items.len()))
}

/// The result of a list request: one page of `items` under `key`, and the
/// cursor of the next. Only the page is turned into JSON. Each item is
/// known by its `field` (see [`page`]).
fn paged<T: Clone + serde::Serialize + Listed>(
    key: &str,
    field: &str,
    items: &[T],
    request: Option<PaginatedRequestParams>,
    size: usize,
) -> Result<Value, ErrorData> {
    let cursor = request.and_then(|r| r.cursor);
    let (items, next) = page(
        items,
        |item| item.json()[field].as_str(),
        cursor.as_deref(),
        size,
    )?;
    let mut result = json!({ key: items });
    if let Some(next) = next {
        result["nextCursor"] = json!(next);
    }
    Ok(result)
}

/// An item of a list a client pages through, read as JSON for its key.
trait Listed {
    fn json(&self) -> &Value;
}

impl Listed for Value {
    fn json(&self) -> &Value {
        self
    }
}

impl Listed for crate::Definition {
    fn json(&self) -> &Value {
        self
    }
}

impl McpServer {
    /// The answers a call of protocol 2026-07-28 brings: those of earlier
    /// rounds from its signed `requestState`, and its `inputResponses`.
    fn rounds_of(&self, request: &CallToolRequestParams) -> Result<Rounds, ErrorData> {
        self.rounds_for(
            &round_binding(&request.name, request.arguments.as_ref()),
            request.request_state.as_ref(),
            request.input_responses.clone(),
        )
    }

    /// The answers a request of protocol 2026-07-28 bound to `binding` (see
    /// [`round_binding`]) brings: those the signed state
    /// carries, and of the `inputResponses` only the answers to the
    /// questions that state says were asked and left open. An answer to a
    /// question never asked, or to one already answered, is ignored: the
    /// client may not answer ahead of the tool, nor change an answer the
    /// server signed.
    fn rounds_for(
        &self,
        binding: &str,
        request_state: Option<&String>,
        input_responses: Option<rmcp::model::InputResponses>,
    ) -> Result<Rounds, ErrorData> {
        let RoundState { mut answers, asked } = match request_state {
            Some(state) => self
                .shared
                .rounds
                .open_json_with::<RoundState>(state, binding.as_bytes())
                .map_err(|_| {
                    ErrorData::invalid_params(
                        "the requestState is not one this server gave for this call (this tool with these arguments), or it has expired",
                        None,
                    )
                })?,
            None => RoundState::default(),
        };
        for (key, answer) in session::answers(input_responses) {
            if asked.contains(&key) && !answers.contains_key(&key) {
                answers.insert(key, answer);
            }
        }
        Ok(Rounds::new(answers))
    }

    /// Run a call as a task: its questions wait in the task for
    /// `tasks/update`, `tasks/cancel` stops it, and its result is kept for
    /// `tasks/get`. The task exists before this returns.
    fn start_task(
        &self,
        request: CallToolRequestParams,
        ctx: ToolContext,
        offers: Offers,
        owner: Owner,
        context: &RequestContext<RoleServer>,
    ) -> Result<CreateTaskResult, ErrorData> {
        let shared = Arc::clone(&self.shared);
        let tie = self.session_tie(&owner, context);
        let task = self
            .shared
            .tasks
            .spawn(owner, task_options(), move |task| {
                // The task outlives the request that started it.
                let stop = CancellationToken::new();
                let mut ctx = ctx.with_cancellation(stop.clone());
                if let Some(session) = ctx.state::<ClientSession>() {
                    // The POST was answered with the task: no stream is left
                    // for the tool to end.
                    let session = session
                        .clone()
                        .asking(Channel::Task(task.clone()), offers)
                        .on_stream(None);
                    ctx = ctx.with_state(session);
                }
                let call = owned_call(Arc::clone(&shared), request, ctx.clone());
                Box::pin(run_task(shared, task, stop, call, ctx, tie))
            })?;
        Ok(CreateTaskResult::new(task))
    }

    /// The call of a tool that asks first (`ToolSpec::asks_first`), from a
    /// client of protocol 2026-07-28 that takes tasks: run at once, its
    /// questions asked in rounds, until it leaves one open (the round ends
    /// with an input-required result and the call with it), or it has run
    /// a poll interval without asking, or it is done: then the running
    /// call is handed to a task, which its later questions wait in, and
    /// the client is answered with the task.
    async fn ask_then_task(
        &self,
        request: CallToolRequestParams,
        ctx: ToolContext,
        offers: Offers,
        owner: Owner,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let rounds = Arc::new(self.rounds_of(&request)?);
        // The call outlives the request once it is a task.
        let stop = CancellationToken::new();
        let mut ctx = ctx.with_cancellation(stop.clone());
        if let Some(session) = ctx.state::<ClientSession>() {
            let session = session
                .clone()
                .asking(Channel::Rounds(Arc::clone(&rounds)), offers);
            ctx = ctx.with_state(session);
        }
        let binding = round_binding(&request.name, request.arguments.as_ref());
        let mut call = Box::pin(owned_call(Arc::clone(&self.shared), request, ctx.clone()));
        let mut done = None;
        let left_open = tokio::select! {
            biased;
            outcome = &mut call => {
                done = Some(outcome);
                false
            }
            () = rounds.asked() => true,
            () = tokio::time::sleep(QUESTIONS_BEFORE_TASK) => false,
            // The client gave up on the call before it became a task.
            () = context.ct.cancelled() => {
                stop.cancel();
                return Err(ErrorData::invalid_request("the call was cancelled", None));
            }
        };
        if !left_open {
            let call: OwnedCall = match done {
                Some(outcome) => Box::pin(std::future::ready(outcome)),
                None => call,
            };
            let started = rounds.hand_over(|| {
                let mut handed = None;
                let tie = self.session_tie(&owner, context);
                let shared = Arc::clone(&self.shared);
                let task = self.shared.tasks.spawn(owner, task_options(), |task| {
                    handed = Some(task.clone());
                    Box::pin(run_task(shared, task, stop, call, ctx, tie))
                })?;
                let handed = handed.expect("the task's future is made as it is spawned");
                Ok::<_, ErrorData>((task, handed))
            });
            if let Some(started) = started {
                return Ok(CreateTaskResult::new(started?).into());
            }
        }
        if let Some(capability) = rounds.missing() {
            return Err(missing_capability("tool", capability));
        }
        self.input_required(&binding, &rounds).map(Into::into)
    }

    /// What ties a task to the session it belongs to, for a task of this
    /// session (`owner` names it): the signal that the session has ended
    /// (once it is closed, deleted or idle, no request reaches the task
    /// again, so it is stopped instead of running on unread), and the
    /// session's count of work running, which keeps a session with a task
    /// from being taken for idle and given to another client. A task of no
    /// session (a stateless or sessionless request) has none.
    fn session_tie(
        &self,
        owner: &Owner,
        context: &RequestContext<RoleServer>,
    ) -> Option<SessionTie> {
        owner.session.is_some().then(|| SessionTie {
            ended: self.session.ended.clone(),
            _work: in_flight::session_work(&context.extensions),
        })
    }

    /// The result that ends a round with questions open: them, and the
    /// answers so far, signed for the next round of the same call
    /// (`binding`, see [`round_binding`]).
    fn input_required(
        &self,
        binding: &str,
        rounds: &Rounds,
    ) -> Result<InputRequiredResult, ErrorData> {
        let (open, used) = rounds.take();
        let options = SealOptions::new()
            .associated_data(binding.as_bytes())
            .ttl(ROUND_STATE_TTL);
        let round = RoundState {
            answers: used,
            asked: open.keys().cloned().collect(),
        };
        let state = self
            .shared
            .rounds
            .seal_json_with(&round, &options)
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        Ok(InputRequiredResult::new(Some(open), Some(state)))
    }
}

/// What ties a task to its session (see [`McpServer::session_tie`]).
struct SessionTie {
    ended: CancellationToken,
    _work: Option<SessionWork>,
}

/// A call of `request`'s tool owning all it needs, so it can run beyond
/// the request: the pipeline's typed outcome, and the context it ran in.
/// It holds the server's shared parts, not the session's state, so that
/// a task keeps no session alive (its end is what stops the task).
fn owned_call(shared: Arc<Shared>, request: CallToolRequestParams, ctx: ToolContext) -> OwnedCall {
    Box::pin(async move {
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        let outcome = shared
            .pipeline()
            .try_call(&shared.registry, &request.name, arguments, &ctx)
            .await;
        (outcome, request.name.into_owned())
    })
}

/// A task's run: the call, until it ends, the client cancels the task, or
/// the task's session ends (`tie`); then its result, shaped as a
/// direct call's is.
async fn run_task(
    shared: Arc<Shared>,
    task: TaskContext,
    stop: CancellationToken,
    call: OwnedCall,
    ctx: ToolContext,
    tie: Option<SessionTie>,
) -> Result<rmcp::model::CallToolResult, TaskExit> {
    // Held until the task ends, counting it as its session's work.
    let (ended, _work) = match tie {
        Some(SessionTie { ended, _work }) => (Some(ended), _work),
        None => (None, None),
    };
    let session_ended = async {
        match ended {
            Some(ended) => ended.cancelled_owned().await,
            None => std::future::pending().await,
        }
    };
    let (outcome, name) = tokio::select! {
        outcome = call => outcome,
        () = task.cancelled() => {
            stop.cancel();
            return Err(TaskExit::Cancelled);
        }
        () = session_ended => {
            stop.cancel();
            return Err(TaskExit::Cancelled);
        }
    };
    // Cancelled while it waited for an answer, the tool may end first,
    // with the cancellation as its error: the task was still cancelled.
    if task.is_cancel_requested() {
        return Err(TaskExit::Cancelled);
    }
    // A tool's failure is a result marked as an error; a crash or a
    // fault of the program fails the task itself.
    if let Err(e) = &outcome
        && matches!(e.kind(), ErrorKind::Panicked | ErrorKind::Internal)
    {
        let message = error_output(e).content;
        return Err(TaskExit::Error(ErrorData::internal_error(message, None)));
    }
    // Kept as a direct call's result is given: shaped (cut or saved)
    // by the pipeline's rules.
    let id = ctx.call_id().unwrap_or_default().to_owned();
    let output = shared.pipeline().finish(outcome, &name, &id, &ctx).await;
    typed(call_result_from_output(&output)).map_err(TaskExit::Error)
}

// A request's handler first waits for the server-wide permits of a request
// answered outside every session, if it is one (`outside_sessions`): over
// HTTP a request of protocol 2026-07-28 needs no session. `initialize`
// takes none (it opens a session and ends at once), nor do the requests
// the SDK answers itself (ping, discover), which end at once too, nor a
// `subscriptions/listen` stream, idle while open.
impl ServerHandler for McpServer {
    fn get_info(&self) -> InitializeResult {
        let s = &self.shared;
        // Only a session can be told things later: a stateless request is
        // offered no change notifications and no subscriptions. Resource and
        // prompt lists are never announced as changed.
        let notifies = !self.session.stateless;
        let mut capabilities = json!({"tools": {"listChanged": notifies}, "logging": {}});
        if s.resources.is_some() {
            capabilities["resources"] = json!({"subscribe": notifies, "listChanged": false});
        }
        if s.prompts.is_some() {
            capabilities["prompts"] = json!({"listChanged": false});
            capabilities["completions"] = json!({});
        }
        // Tools may run as tasks (`ToolSpec::task_support`).
        capabilities["extensions"] = json!({TASKS_EXTENSION_ID: {}});
        let mut info = json!({
            "protocolVersion": rmcp::model::ProtocolVersion::LATEST,
            "capabilities": capabilities,
            "serverInfo": {"name": s.name, "version": s.version},
        });
        if let Some(instructions) = &s.instructions {
            info["instructions"] = json!(instructions);
        }
        serde_json::from_value(info).unwrap_or_else(|_| InitializeResult::new(Default::default()))
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let _permits = outside_sessions(&context).await?;
        let definitions = self.shared.registry.definitions(DefinitionFormat::Mcp);
        typed(paged(
            "tools",
            "name",
            &definitions,
            request,
            self.shared.page_size,
        )?)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let _permits = outside_sessions(&context).await?;
        let mut ctx = self.call_context(&context);
        let capabilities = context.client_capabilities();
        let offers = Offers::from_capabilities(capabilities.as_ref());
        let (support, asks_first) = self
            .shared
            .registry
            .get(&request.name)
            .map(|tool| (tool.spec().task_support, tool.spec().asks_first))
            .unwrap_or_default();
        let takes_tasks = capabilities.as_ref().is_some_and(|c| c.supports_tasks());
        match support {
            TaskSupport::Optional | TaskSupport::Required if takes_tasks => {
                let owner = self.owner(&context);
                if asks_first && is_2026_or_later(&context) {
                    return self
                        .ask_then_task(request, ctx, offers, owner, &context)
                        .await;
                }
                return Ok(self
                    .start_task(request, ctx, offers, owner, &context)?
                    .into());
            }
            TaskSupport::Required => {
                return Err(ErrorData::missing_required_client_capability(
                    ClientCapabilities::builder().enable_tasks().build(),
                ));
            }
            _ => {}
        }
        // How the tool's questions reach the client (see `ClientSession`).
        let rounds = if is_2026_or_later(&context) {
            Some(Arc::new(self.rounds_of(&request)?))
        } else {
            None
        };
        let channel = match &rounds {
            Some(rounds) => Channel::Rounds(Arc::clone(rounds)),
            None if self.session.stateless => Channel::Closed(
                format!(
                    "the client cannot be asked: this server keeps no sessions, and the \
                     client's protocol version ({}) has no way to ask it outside a \
                     request (protocol 2026-07-28 has)",
                    context
                        .protocol_version()
                        .map_or_else(|| "unknown".to_owned(), |v| v.to_string())
                )
                .into(),
            ),
            None => Channel::Push,
        };
        if let Some(session) = ctx.state::<ClientSession>() {
            let session = session.clone().asking(channel, offers);
            ctx = ctx.with_state(session);
        }
        let relay = context.meta.get_progress_token().map(|token| {
            let (relay, task) = ProgressRelay::start(context.peer.clone(), token);
            ctx = ctx.clone().with_progress_reporter(relay);
            task
        });
        // Only a call in rounds signs a state.
        let binding = rounds
            .as_ref()
            .map(|_| round_binding(&request.name, request.arguments.as_ref()));
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        let output = {
            let call = self
                .pipeline()
                .call(&self.shared.registry, &request.name, arguments, &ctx);
            let call = crate::mcp::trace_context::continue_trace(&context.meta, call);
            match &rounds {
                None => Some(call.await),
                Some(rounds) => tokio::select! {
                    biased;
                    output = call => Some(output),
                    // The tool waits for an answer the client has not given:
                    // the call ends here, and the tool with it.
                    () = rounds.asked() => None,
                },
            }
        };
        let stream = ctx
            .state::<ClientSession>()
            .and_then(|session| session.stream().cloned());
        drop(ctx);
        if let Some(relay) = relay {
            relay.finish().await;
        }
        if let Some(stream) = stream {
            // A stream the tool ended: the result waits for the client to
            // come back for it, or it would be sent where nobody listens.
            tokio::select! {
                () = stream.until_resumed() => {}
                () = context.ct.cancelled() => {}
            }
        }
        let Some(output) = output else {
            let rounds = rounds.expect("only rounds leave questions open");
            if let Some(capability) = rounds.missing() {
                return Err(missing_capability("tool", capability));
            }
            let binding = binding.unwrap_or_default();
            return self.input_required(&binding, &rounds).map(Into::into);
        };
        let result: rmcp::model::CallToolResult = typed(call_result_from_output(&output))?;
        Ok(result.into())
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let _permits = outside_sessions(&context).await?;
        let items = contained_now(|| {
            self.shared
                .resources
                .as_ref()
                .map(|r| r.resources())
                .unwrap_or_default()
        })?;
        typed(paged(
            "resources",
            "uri",
            &items,
            request,
            self.shared.page_size,
        )?)
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let _permits = outside_sessions(&context).await?;
        let items = contained_now(|| {
            self.shared
                .resources
                .as_ref()
                .map(|r| r.templates())
                .unwrap_or_default()
        })?;
        typed(paged(
            "resourceTemplates",
            "uriTemplate",
            &items,
            request,
            self.shared.page_size,
        )?)
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let _permits = outside_sessions(&context).await?;
        let Some(resources) = &self.shared.resources else {
            return Err(ErrorData::resource_not_found(
                format!("no resource `{}`", request.uri),
                None,
            ));
        };
        let result = contained(resources.read(&request.uri))
            .await?
            .map_err(|e| ErrorData::resource_not_found(e, Some(json!({"uri": request.uri}))))?;
        let result: rmcp::model::ReadResourceResult = typed(result)?;
        Ok(result.into())
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let _permits = outside_sessions(&context).await?;
        let mut subscriptions = self
            .session
            .subscriptions
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if !subscriptions.contains(&request.uri) {
            subscriptions.push(request.uri);
        }
        Ok(())
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let _permits = outside_sessions(&context).await?;
        let mut subscriptions = self
            .session
            .subscriptions
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        subscriptions.retain(|uri| *uri != request.uri);
        Ok(())
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let _permits = outside_sessions(&context).await?;
        let items = contained_now(|| {
            self.shared
                .prompts
                .as_ref()
                .map(|p| p.prompts())
                .unwrap_or_default()
        })?;
        typed(paged(
            "prompts",
            "name",
            &items,
            request,
            self.shared.page_size,
        )?)
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let _permits = outside_sessions(&context).await?;
        let Some(prompts) = &self.shared.prompts else {
            return Err(ErrorData::invalid_params(
                format!("no prompt `{}`", request.name),
                None,
            ));
        };
        // A prompt asks the client as a tool does (see `ClientSession`).
        let key = round_binding(
            &format!("prompt:{}", request.name),
            request.arguments.as_ref(),
        );
        let offers = Offers::from_capabilities(context.client_capabilities().as_ref());
        let session = ClientSession::new(context.peer.clone(), Arc::clone(&self.session.log_level));
        let (session, rounds) = if is_2026_or_later(&context) {
            let rounds = Arc::new(self.rounds_for(
                &key,
                request.request_state.as_ref(),
                request.input_responses.clone(),
            )?);
            let channel = Channel::Rounds(Arc::clone(&rounds));
            (session.asking(channel, offers), Some(rounds))
        } else if self.session.stateless {
            let closed =
                Channel::Closed("the client cannot be asked: this server keeps no sessions".into());
            (session.asking(closed, offers), None)
        } else {
            (session.asking(Channel::Push, offers), None)
        };
        let arguments = request.arguments.unwrap_or_default();
        let filled = contained(prompts.get_asking(&request.name, arguments, &session));
        let result = match &rounds {
            None => filled.await,
            Some(rounds) => tokio::select! {
                biased;
                result = filled => result,
                () = rounds.asked() => {
                    if let Some(capability) = rounds.missing() {
                        return Err(missing_capability("prompt", capability));
                    }
                    return self.input_required(&key, rounds).map(Into::into);
                }
            },
        }?
        .map_err(|e| ErrorData::invalid_params(e, None))?;
        let result: rmcp::model::GetPromptResult = typed(result)?;
        Ok(result.into())
    }

    async fn complete(
        &self,
        _request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let _permits = outside_sessions(&context).await?;
        typed(json!({"completion": {"values": [], "total": 0, "hasMore": false}}))
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        context.peer.set_peer_info(request.clone());
        self.attach(&context.peer);
        self.negotiate_initialize(&request)
    }

    /// Protocol 2026-07-28 tells of changes only on `subscriptions/listen`
    /// streams: the tool list's, when this server says it changes, and the
    /// updates of the resources a stream names, when it serves resources.
    /// A server of no sessions offers neither (see `get_info`).
    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        let mut accepted = SubscriptionFilter::builder();
        if requested.tools_list_changed == Some(true) && !self.session.stateless {
            accepted = accepted.tools_list_changed();
        }
        if let Some(uris) = &requested.resource_subscriptions
            && self.shared.resources.is_some()
            && !self.session.stateless
        {
            accepted = accepted.resource_subscriptions(uris.iter().cloned());
        }
        Some(accepted.build())
    }

    async fn listen(&self, subscription: SubscriptionContext) -> Result<(), ErrorData> {
        // The SDK has acknowledged the stream before this runs: it is told
        // of the resources it names, and of the tools changed since, from
        // now on, before anything here could wait. It takes no request
        // permit: it is idle while open (its connection counts among
        // `max_connections`), and one holding its client's only permit
        // kept the client's own calls from ever running, or, waiting for
        // one, missed the changes made meanwhile.
        let _kept = self.shared.listeners.keep(subscription.sink());
        let registry = Arc::clone(&self.shared.registry);
        let mut seen = registry.generation();
        if subscription.accepted().tools_list_changed != Some(true) {
            subscription.cancelled().await;
            return Ok(());
        }
        loop {
            tokio::select! {
                () = registry.changed(seen) => {}
                () = subscription.cancelled() => return Ok(()),
            }
            seen = registry.generation();
            let changed = ServerNotification::ToolListChangedNotification(Default::default());
            if subscription.sink().send(changed).await.is_err() {
                return Ok(());
            }
        }
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        let _permits = outside_sessions(&context).await?;
        let owner = self.owner(&context);
        self.shared
            .tasks
            .get(&owner, &request.task_id)
            .map(GetTaskResult::new)
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let _permits = outside_sessions(&context).await?;
        let owner = self.owner(&context);
        self.shared
            .tasks
            .update(&owner, &request.task_id, request.input_responses)
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let _permits = outside_sessions(&context).await?;
        let owner = self.owner(&context);
        self.shared.tasks.cancel(&owner, &request.task_id)
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let _permits = outside_sessions(&context).await?;
        let level = serde_json::to_value(request.level).unwrap_or_default();
        let rank = session::level_rank(level.as_str().unwrap_or("info"));
        // This client's session only: another client keeps the level it chose.
        self.session.log_level.store(rank, Ordering::Relaxed);
        Ok(())
    }
}

/// A host's future (a resource read, a prompt), a panic in it made an
/// error answer, as a tool's is: the client is answered, and the
/// request's slot comes free (a panicking handler sent nothing, and its
/// slot stayed taken until a cancel that never came).
async fn contained<T>(future: impl Future<Output = T>) -> Result<T, ErrorData> {
    use futures_util::FutureExt;
    match std::panic::AssertUnwindSafe(future).catch_unwind().await {
        Ok(value) => Ok(value),
        Err(panic) => {
            crate::panics::discard(panic);
            Err(host_panicked())
        }
    }
}

/// [`contained`] for the host's code that does not wait (a listing).
fn contained_now<T>(work: impl FnOnce() -> T) -> Result<T, ErrorData> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)).map_err(|panic| {
        crate::panics::discard(panic);
        host_panicked()
    })
}

/// The answer to a request whose host code panicked. What the panic said
/// stays in the server: it may name the host's internals.
fn host_panicked() -> ErrorData {
    ErrorData::internal_error("the server failed while answering this request", None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(item: &Value) -> Option<&str> {
        item.as_str()
    }

    fn names(names: &[&str]) -> Vec<Value> {
        names.iter().map(|n| json!(n)).collect()
    }

    #[test]
    fn pages_follow_their_cursors() {
        let items = names(&["a", "b", "c", "d", "e"]);
        let (first, next) = page(&items, key, None, 2).unwrap();
        assert_eq!(first, names(&["a", "b"]));
        let (second, next) = page(&items, key, next.as_deref(), 2).unwrap();
        assert_eq!(second, names(&["c", "d"]));
        let (last, next) = page(&items, key, next.as_deref(), 2).unwrap();
        assert_eq!(last, names(&["e"]));
        assert!(next.is_none());
        let (all, next) = page(&items, key, None, 10).unwrap();
        assert_eq!(all, items);
        assert!(next.is_none());
    }

    #[test]
    fn a_list_that_changes_between_pages_repeats_and_skips_nothing_that_stayed() {
        let before = names(&["a", "b", "c", "d", "e", "f"]);
        let (first, next) = page(&before, key, None, 2).unwrap();
        assert_eq!(first, names(&["a", "b"]));
        // `a` removed and `aa` added before the place, `cc` after it.
        let after = names(&["aa", "b", "c", "cc", "d", "e", "f"]);
        let (second, next) = page(&after, key, next.as_deref(), 2).unwrap();
        assert_eq!(second, names(&["c", "cc"]));
        // `cc`, the last item sent, removed: sorted by name, the next page
        // starts where it would be.
        let later = names(&["aa", "b", "c", "d", "e", "f"]);
        let (third, next) = page(&later, key, next.as_deref(), 2).unwrap();
        assert_eq!(third, names(&["d", "e"]));
        let (fourth, next) = page(&later, key, next.as_deref(), 2).unwrap();
        assert_eq!(fourth, names(&["f"]));
        assert!(next.is_none());
    }

    #[test]
    fn a_repeated_key_resumes_where_its_item_was_not_at_the_first_of_them() {
        // Page size 5: the first page ends with the second `x`.
        let before = names(&["x", "a", "b", "c", "x", "d", "e"]);
        let (first, next) = page(&before, key, None, 5).unwrap();
        assert_eq!(first, names(&["x", "a", "b", "c", "x"]));
        assert_eq!(next.as_deref(), Some("5:x"));
        // `a` removed: the second `x` moved back one place.
        let after = names(&["x", "b", "c", "x", "d", "e"]);
        let (second, next) = page(&after, key, next.as_deref(), 5).unwrap();
        assert_eq!(second, names(&["d", "e"]));
        assert!(next.is_none());
        // An item inserted before the place: the second `x` moved on one.
        let grown = names(&["x", "a", "aa", "b", "c", "x", "d", "e"]);
        let (second, _) = page(&grown, key, Some("5:x"), 5).unwrap();
        assert_eq!(second, names(&["d", "e"]));
    }

    /// Every page of `items`, from the start, as a client reads them:
    /// bounded, so a cursor that led back would fail rather than loop.
    fn all_pages(items: &[Value], size: usize) -> Vec<Value> {
        let (mut seen, mut next) = page(items, key, None, size).unwrap();
        for _ in 0..=items.len() {
            let Some(cursor) = next else { return seen };
            let (more, after) = page(items, key, Some(&cursor), size).unwrap();
            seen.extend(more);
            next = after;
        }
        panic!("paging {items:?} did not end");
    }

    #[test]
    fn lists_with_items_without_keys_or_with_one_key_twice_are_paged_to_their_end() {
        let lists = [
            vec![json!("x"), json!(null), json!("a")],
            vec![json!(""), json!(null), json!("x")],
            vec![json!(null), json!(null), json!(null), json!("a")],
            vec![json!("a"), json!("a"), json!("b"), json!("a")],
        ];
        for items in lists {
            for size in [1, 2] {
                assert_eq!(all_pages(&items, size), items, "page size {size}");
            }
        }
    }

    #[test]
    fn unknown_and_hostile_cursors_are_refused() {
        let items = names(&["a", "b", "c"]);
        for cursor in ["x", "9", "", ":", "-1:a", "99999999999999999999:a", "2"] {
            assert!(page(&items, key, Some(cursor), 2).is_err(), "{cursor}");
        }
        // In a list in no key order whose item is gone, the place it had;
        // past the end, nothing more.
        let unsorted = names(&["c", "a", "b"]);
        let (rest, next) = page(&unsorted, key, Some("2:zz"), 2).unwrap();
        assert_eq!(rest, names(&["b"]));
        assert!(next.is_none());
        let (none, next) = page(&unsorted, key, Some("99:zz"), 2).unwrap();
        assert!(none.is_empty() && next.is_none());
        // In a sorted list a key that is gone resumes after where it would be;
        // past the end, the page is empty and there is no next.
        let (rest, next) = page(&items, key, Some("0:bb"), 2).unwrap();
        assert_eq!(rest, names(&["c"]));
        assert!(next.is_none());
        let (none, next) = page(&items, key, Some("7:zz"), 2).unwrap();
        assert!(none.is_empty() && next.is_none());
        // A page size of 0 still moves on.
        let (one, next) = page(&items, key, None, 0).unwrap();
        assert_eq!(one, names(&["a"]));
        assert_eq!(next.as_deref(), Some("1:a"));
    }
}

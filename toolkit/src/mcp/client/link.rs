//! One configured server: its connection, made on first use and remade after
//! a failure, and the tools it has mounted in the registry.

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelTaskParams,
    CancelledNotificationParam, ClientRequest, DEFAULT_MRTR_MAX_ROUNDS, GetTaskParams,
    ProgressToken, ProtocolVersion, RequestId, ServerResult, SubscriptionFilter, Task,
    UpdateTaskParams,
};
use rmcp::service::{ClientInitializeError, ClientLifecycleMode, ClientServiceExt};
use rmcp::service::{Peer, PeerRequestOptions, RoleClient, RunningService, ServiceError};
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::transport::common::client_side_sse::SseRetryPolicy;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClientTransport, StreamableHttpClientTransportConfig,
};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::busy::RetryWhenBusy;
use super::elicitation::Elicitor;
use super::handler::ClientSide;
use super::rate::{QuestionRate, Questions};
use super::sampling::Sampler;
use super::sse::SseClientTransport;
use super::tap::{ProgressTap, Watch};
use super::tools::mount_all;
use crate::context::{Progress, ToolContext};
use crate::error::ToolError;
use crate::mcp::config::{ServerConfig, Transport};
use crate::mcp::in_flight::InFlight;
use crate::registry::ToolRegistry;
use crate::tool::Tool;

/// The least time a server gets to start and answer the handshake: a first
/// `npx -y` start downloads the server, which takes longer than a call.
const CONNECT_TIMEOUT_FLOOR: Duration = Duration::from_secs(60);

/// How long closing a session may take. The SDK closes a stdio server's
/// input, waits 3 s for it to exit, sends SIGTERM, waits 3 s more, then
/// kills it; this leaves room for all of that.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(10);

/// A live session with a server.
pub(crate) type Session = RunningService<RoleClient, ClientSide>;

/// An open session, and how to know when it has closed.
struct Open {
    session: Arc<Session>,
    /// What its transport saw: whether the server's messages ended, and
    /// when the transport is dropped (its connection is closed then, and a
    /// stdio server's process has exited).
    closed: Arc<Watch>,
}

impl Open {
    /// Whether calls can still go through it.
    fn is_live(&self) -> bool {
        !self.session.is_transport_closed() && !self.closed.is_over()
    }
}

/// A configured server and, once connected, its session.
pub struct ServerLink {
    config: ServerConfig,
    registry: Weak<ToolRegistry>,
    /// Held while connecting, so two first calls start one process, not two.
    session: tokio::sync::Mutex<Option<Open>>,
    /// Set when the server is removed from its clients: it is not connected
    /// again, and its tools are not mounted again (a call or a list-changed
    /// notification in flight may still hold the link).
    retired: AtomicBool,
    /// The names this server has in the registry now.
    mounted: Mutex<Vec<String>>,
    /// Held while listing and mounting, so refreshes land in the order
    /// they started: a listing taken before a change never overwrites one
    /// taken after it.
    refreshing: tokio::sync::Mutex<()>,
    /// Set while a refresh asked for by the server waits for its turn:
    /// further word of changes until it starts is answered by that one.
    refresh_waiting: AtomicBool,
    /// When the last refresh the server asked for started: the next starts
    /// [`REFRESH_INTERVAL`] later at the soonest.
    last_server_refresh: Mutex<Option<tokio::time::Instant>>,
    /// Calls waiting for progress, by the token sent with them.
    progress: Mutex<ProgressRoutes>,
    /// The host's model, for servers that ask to sample; read when connecting.
    sampler: Mutex<Option<Arc<dyn Sampler>>>,
    /// The host's user, for servers that ask for input; read when connecting.
    elicitor: Mutex<Option<Arc<dyn Elicitor>>>,
    /// How fast this server may ask the sampler and the elicitor: kept
    /// across reconnections, so a server that crashes on purpose gets no
    /// fresh burst; read when connecting.
    questions: Mutex<Arc<Questions>>,
    /// The server itself, for a server in this process.
    in_process: Option<crate::mcp::McpServer>,
    /// The host's sign-in and token store, for a server with `oauth`.
    #[cfg(feature = "mcp-oauth")]
    oauth: Mutex<OAuthHost>,
    /// The sign-in, made on the first connection of a server with `oauth`
    /// and kept across reconnections (its tokens stay valid).
    #[cfg(feature = "mcp-oauth")]
    sign_in: tokio::sync::OnceCell<Arc<super::oauth::SignIn>>,
    me: Weak<ServerLink>,
}

/// What the host gives a server that signs in with OAuth.
#[cfg(feature = "mcp-oauth")]
#[derive(Clone)]
pub(crate) struct OAuthHost {
    pub(crate) authorizer: Option<Arc<dyn super::oauth::Authorizer>>,
    pub(crate) store: Arc<dyn super::oauth::TokenStore>,
}

#[cfg(feature = "mcp-oauth")]
impl Default for OAuthHost {
    fn default() -> Self {
        Self {
            authorizer: None,
            store: Arc::new(super::oauth::MemoryTokenStore::new()),
        }
    }
}

impl std::fmt::Debug for ServerLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerLink")
            .field("name", &self.config.name)
            .finish()
    }
}

/// Bytes the pipe to a server in this process holds before a writer waits.
const IN_PROCESS_BUFFER: usize = 64 * 1024;

impl ServerLink {
    pub(crate) fn new(config: ServerConfig, registry: &Arc<ToolRegistry>) -> Arc<Self> {
        Self::with_server(config, registry, None)
    }

    /// A link to `server`, which runs in this process.
    pub(crate) fn in_process(
        name: &str,
        server: crate::mcp::McpServer,
        registry: &Arc<ToolRegistry>,
    ) -> Arc<Self> {
        Self::with_server(ServerConfig::in_process(name), registry, Some(server))
    }

    fn with_server(
        config: ServerConfig,
        registry: &Arc<ToolRegistry>,
        in_process: Option<crate::mcp::McpServer>,
    ) -> Arc<Self> {
        Arc::new_cyclic(|me| Self {
            config,
            registry: Arc::downgrade(registry),
            session: tokio::sync::Mutex::new(None),
            retired: AtomicBool::new(false),
            mounted: Mutex::new(Vec::new()),
            refreshing: tokio::sync::Mutex::new(()),
            refresh_waiting: AtomicBool::new(false),
            last_server_refresh: Mutex::new(None),
            progress: Mutex::new(ProgressRoutes::default()),
            sampler: Mutex::new(None),
            elicitor: Mutex::new(None),
            questions: Mutex::new(Arc::new(Questions::new(QuestionRate::DEFAULT))),
            in_process,
            #[cfg(feature = "mcp-oauth")]
            oauth: Mutex::new(OAuthHost::default()),
            #[cfg(feature = "mcp-oauth")]
            sign_in: tokio::sync::OnceCell::new(),
            me: me.clone(),
        })
    }

    /// Sign in to this server (one with `oauth`) with `host`'s authorizer
    /// and token store, from the next connection on.
    #[cfg(feature = "mcp-oauth")]
    pub(crate) fn set_oauth(&self, host: OAuthHost) {
        *self.oauth.lock().unwrap_or_else(|e| e.into_inner()) = host;
    }

    /// Answer this server's elicitation requests with `elicitor` from the
    /// next connection on.
    pub(crate) fn set_elicitor(&self, elicitor: Arc<dyn Elicitor>) {
        *self.elicitor.lock().unwrap_or_else(|e| e.into_inner()) = Some(elicitor);
    }

    /// Answer this server's sampling requests with `sampler` from the next
    /// connection on.
    pub(crate) fn set_sampler(&self, sampler: Arc<dyn Sampler>) {
        *self.sampler.lock().unwrap_or_else(|e| e.into_inner()) = Some(sampler);
    }

    /// Let this server ask the sampler and the elicitor at `rate` from the
    /// next connection on (with full buckets).
    pub(crate) fn set_question_rate(&self, rate: QuestionRate) {
        *self.questions.lock().unwrap_or_else(|e| e.into_inner()) = Arc::new(Questions::new(rate));
    }

    /// The server's configured name.
    pub fn name(&self) -> &str {
        &self.config.name
    }

    /// Its configuration.
    pub fn config(&self) -> &ServerConfig {
        &self.config
    }

    /// The names of the tools it has mounted.
    pub fn mounted(&self) -> Vec<String> {
        self.mounted
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Whether a session is open now.
    pub async fn is_connected(&self) -> bool {
        self.session
            .lock()
            .await
            .as_ref()
            .is_some_and(Open::is_live)
    }

    /// The open session, connecting first when there is none (or it died).
    pub(crate) async fn session(&self) -> Result<Arc<Session>, String> {
        self.open_session().await.map(|(session, _)| session)
    }

    /// [`session`](Self::session), with what its transport sees.
    async fn open_session(&self) -> Result<(Arc<Session>, Arc<Watch>), String> {
        // A token about to expire is refreshed before the request, and the
        // user signs in again when it can no longer be.
        #[cfg(feature = "mcp-oauth")]
        if let Some(sign_in) = self.sign_in.get() {
            sign_in.ensure().await?;
        }
        let mut slot = self.session.lock().await;
        // Checked under the lock `retire` takes to close the session, so a
        // removed server is never started again.
        if self.retired.load(Ordering::SeqCst) {
            return Err(format!("the MCP server `{}` was removed", self.config.name));
        }
        if let Some(open) = slot.as_ref().filter(|open| open.is_live()) {
            return Ok((Arc::clone(&open.session), Arc::clone(&open.closed)));
        }
        *slot = None;
        let open = self.connect().await?;
        let live = (Arc::clone(&open.session), Arc::clone(&open.closed));
        *slot = Some(open);
        Ok(live)
    }

    /// Forget `dead` so the next call connects anew.
    async fn forget(&self, dead: &Arc<Session>) {
        let mut slot = self.session.lock().await;
        if slot
            .as_ref()
            .is_some_and(|open| Arc::ptr_eq(&open.session, dead))
        {
            *slot = None;
        }
    }

    /// Close the session, if any, and wait (10 s at most) until it is
    /// closed: a stdio server's process has exited, asked to by closing its
    /// input, then by SIGTERM, then killed.
    pub async fn disconnect(&self) {
        let open = self.session.lock().await.take();
        if let Some(open) = open {
            // Calls still holding the session see it closed and fail.
            open.session.cancellation_token().cancel();
            if tokio::time::timeout(CLOSE_TIMEOUT, open.closed.dropped())
                .await
                .is_err()
            {
                tracing::warn!(
                    server = %self.config.name,
                    "the MCP server's connection did not close within {CLOSE_TIMEOUT:?}"
                );
            }
        }
    }

    /// Take the server out for good: its tools leave the registry in one
    /// step, then its session is closed; nothing connects it again.
    pub(crate) async fn retire(&self) {
        self.retired.store(true, Ordering::SeqCst);
        self.take_tools_out();
        self.disconnect().await;
    }

    /// Take this server's tools out of the registry in one step.
    fn take_tools_out(&self) {
        let mut mounted = self.mounted.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(registry) = self.registry.upgrade() {
            let owned = |name: &str| mounted.iter().any(|n| n == name);
            // Removing only: nothing new can clash.
            let _ = registry.replace(owned, Vec::new());
        }
        mounted.clear();
    }

    /// Call a tool, asking for progress, and hand the server's progress
    /// notifications for the call to `ctx` (the SDK picks the progress
    /// token, so the request is sent first and the token registered before
    /// its answer is awaited). Each report also starts the `toolTimeout`
    /// again, when the configuration says so (see [`within_idle`](Self::within_idle));
    /// `started` is when the call began, before the pipeline's timer.
    pub(crate) async fn call_tool_reporting_progress(
        &self,
        session: &Session,
        params: CallToolRequestParams,
        ctx: &ToolContext,
        started: tokio::time::Instant,
    ) -> Result<CallToolResult, ServiceError> {
        let mut params = params;
        for _ in 0..DEFAULT_MRTR_MAX_ROUNDS {
            let answer = self
                .call_tool_once_reporting_progress(session, params.clone(), ctx, started)
                .await?;
            match answer {
                ServerResult::CallToolResult(result) => return Ok(result),
                // Protocol 2026-07-28: the server asks questions; answer
                // them and call again.
                ServerResult::InputRequiredResult(asked) => {
                    let asked_now = asked.input_requests.unwrap_or_default();
                    refuse_too_many_questions(asked_now.len(), MAX_QUESTIONS)?;
                    let answers = futures_util::future::try_join_all(asked_now.into_iter().map(
                        |(key, request)| async move {
                            let answer = session
                                .service()
                                .answer_input(&request, ctx.cancellation())
                                .await?;
                            Ok::<_, rmcp::ErrorData>((key, answer))
                        },
                    ))
                    .await
                    .map_err(ServiceError::McpError)?;
                    params.input_responses =
                        (!answers.is_empty()).then(|| answers.into_iter().collect());
                    params.request_state = asked.request_state;
                }
                // The tool runs as a task: wait for it.
                ServerResult::CreateTaskResult(created) => {
                    return self.wait_for_task(session, created.task, ctx).await;
                }
                _ => return Err(ServiceError::UnexpectedResponse),
            }
        }
        Err(ServiceError::InputRequiredRoundsExceeded {
            max_rounds: DEFAULT_MRTR_MAX_ROUNDS,
        })
    }

    /// Poll a task until it ends, answering its questions with the host's
    /// sampler and elicitor; dropped before (the call cancelled or timed
    /// out), the task is cancelled on the server.
    async fn wait_for_task(
        &self,
        session: &Session,
        task: Task,
        ctx: &ToolContext,
    ) -> Result<CallToolResult, ServiceError> {
        let peer = session.peer().clone();
        let mut cancel = CancelTaskOnDrop {
            peer: peer.clone(),
            task: Some(task.task_id.clone()),
        };
        let interval = Duration::from_millis(task.poll_interval_ms.unwrap_or(500).clamp(20, 5_000));
        let mut answered = std::collections::HashSet::new();
        loop {
            let got = peer
                .get_task(GetTaskParams::new(task.task_id.clone()))
                .await?;
            let got = serde_json::to_value(&got).unwrap_or_default();
            let failed =
                |what: String| ServiceError::McpError(rmcp::ErrorData::internal_error(what, None));
            match got["status"].as_str().unwrap_or("working") {
                "completed" => {
                    cancel.task = None;
                    return serde_json::from_value(got["result"].clone())
                        .map_err(|e| failed(format!("the task's result is malformed: {e}")));
                }
                "failed" => {
                    cancel.task = None;
                    return Err(failed(format!(
                        "the task failed: {}",
                        got["error"]["message"]
                            .as_str()
                            .unwrap_or("no reason given")
                    )));
                }
                "cancelled" => {
                    cancel.task = None;
                    return Err(failed("the server cancelled the task".into()));
                }
                "input_required" => {
                    let asked: rmcp::model::InputRequests =
                        serde_json::from_value(got["inputRequests"].clone()).unwrap_or_default();
                    let new = asked.keys().filter(|key| !answered.contains(*key)).count();
                    refuse_too_many_questions(new, MAX_QUESTIONS)?;
                    // Over the task's life too: a server asking afresh at
                    // every poll would have the host asked without end.
                    refuse_too_many_questions(answered.len() + new, MAX_TASK_QUESTIONS)?;
                    let mut responses = rmcp::model::InputResponses::new();
                    for (key, request) in asked {
                        if answered.insert(key.clone()) {
                            let answer = session
                                .service()
                                .answer_input(&request, ctx.cancellation())
                                .await
                                .map_err(ServiceError::McpError)?;
                            responses.insert(key, answer);
                        }
                    }
                    if responses.is_empty() {
                        tokio::time::sleep(interval).await;
                    } else {
                        peer.update_task(UpdateTaskParams::new(task.task_id.clone(), responses))
                            .await?;
                    }
                }
                _ => tokio::time::sleep(interval).await,
            }
        }
    }

    /// Call the server's tool `tool` (its own name) as a task and return
    /// the task's id at once, for a host that polls it with
    /// [`task`](Self::task) and may [`cancel_task`](Self::cancel_task) it.
    /// A tool that does not run as a task is an error. This, [`task`](Self::task)
    /// and [`cancel_task`](Self::cancel_task) fail when the server does not
    /// answer within its `toolTimeout`.
    pub async fn start_task(&self, tool: &str, arguments: Value) -> Result<String, String> {
        let session = self.session().await?;
        let mut params = CallToolRequestParams::new(tool.to_owned());
        if let Value::Object(arguments) = arguments {
            params = params.with_arguments(arguments);
        }
        let refused =
            |e: &dyn std::fmt::Display| format!("the MCP server `{}`: {e}", self.config.name);
        let started = self.within_tool_timeout(session.peer().call_tool_once(params));
        match started.await?.map_err(|e| refused(&e))? {
            rmcp::model::CallToolResponse::Task(created) => Ok(created.task.task_id),
            _ => Err(refused(&format!("`{tool}` did not start a task"))),
        }
    }

    /// The state of a task as the server reports it (`tasks/get`): its
    /// `status`, and its `result`, `error` or `inputRequests`.
    pub async fn task(&self, id: &str) -> Result<Value, String> {
        let session = self.session().await?;
        let got = self
            .within_tool_timeout(session.peer().get_task(GetTaskParams::new(id.to_owned())))
            .await?
            .map_err(|e| format!("the MCP server `{}`: {e}", self.config.name))?;
        Ok(serde_json::to_value(got).unwrap_or_default())
    }

    /// Ask the server to cancel a task (`tasks/cancel`); it ends as
    /// `cancelled` unless it finished first.
    pub async fn cancel_task(&self, id: &str) -> Result<(), String> {
        let session = self.session().await?;
        self.within_tool_timeout(
            session
                .peer()
                .cancel_task(CancelTaskParams::new(id.to_owned())),
        )
        .await?
        .map_err(|e| format!("the MCP server `{}`: {e}", self.config.name))
    }

    /// `request`, failed when the server has not answered it within
    /// `toolTimeout`: a request the host makes outside any call is bounded
    /// in time as a call is.
    async fn within_tool_timeout<T>(&self, request: impl Future<Output = T>) -> Result<T, String> {
        let limit = self.config.tool_timeout;
        tokio::time::timeout(limit, request).await.map_err(|_| {
            format!(
                "the MCP server `{}` did not answer within {limit:?}",
                self.config.name
            )
        })
    }

    /// One round of [`call_tool_reporting_progress`](Self::call_tool_reporting_progress):
    /// the server's answer as it came.
    async fn call_tool_once_reporting_progress(
        &self,
        session: &Session,
        params: CallToolRequestParams,
        ctx: &ToolContext,
        started: tokio::time::Instant,
    ) -> Result<ServerResult, ServiceError> {
        let peer = session.peer().clone();
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let handle = peer
            .send_request_with_option(request, PeerRequestOptions::no_options())
            .await?;
        let token = token_key(&handle.progress_token);
        let beat = Arc::new(tokio::sync::Notify::new());
        self.progress
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .route(token.clone(), ctx.clone(), Arc::clone(&beat));
        let _routing = ProgressRoute { link: self, token };
        let mut cancel = CancelOnDrop {
            peer,
            request: Some(handle.id.clone()),
        };
        let result = self
            .within_idle(handle.await_response(), &beat, started)
            .await;
        if !matches!(result, Err(ServiceError::Timeout { .. })) {
            // Answered: nothing to cancel. A silent call is dropped, and the
            // server told so.
            cancel.request = None;
        }
        result
    }

    /// Wait for `answer`, giving up (with [`ServiceError::Timeout`] of the
    /// `toolTimeout`) once the server has been silent, no answer and no
    /// progress, for `toolTimeout`.
    ///
    /// The call's whole time is the pipeline's timeout (the mounted tool's
    /// [`ServerConfig::call_timeout`]), counted from a moment after
    /// `started`. So that one timer decides each call, this one is set only
    /// for a silence that would end before the whole time is up: without
    /// resets on progress, or once a silence would reach the end, only the
    /// pipeline's timer runs.
    async fn within_idle<T>(
        &self,
        answer: impl Future<Output = Result<T, ServiceError>>,
        beat: &tokio::sync::Notify,
        started: tokio::time::Instant,
    ) -> Result<T, ServiceError> {
        let config = &self.config;
        if !config.reset_timeout_on_progress {
            return answer.await;
        }
        let idle = config.tool_timeout;
        let Some(end) = started.checked_add(config.call_timeout()) else {
            return answer.await;
        };
        let mut answer = std::pin::pin!(answer);
        loop {
            let silence_ends = tokio::time::Instant::now() + idle;
            if silence_ends >= end {
                return answer.await;
            }
            tokio::select! {
                biased;
                result = &mut answer => return result,
                () = beat.notified() => {}
                () = tokio::time::sleep_until(silence_ends) => {
                    return Err(ServiceError::Timeout { timeout: idle });
                }
            }
        }
    }

    /// Hand a progress notification to the call it belongs to.
    pub(crate) fn progress(&self, token: &ProgressToken, progress: Progress) {
        self.progress
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .deliver(token_key(token), progress);
    }

    /// Close the session and take the server's tools out of the registry;
    /// a later [`refresh`](Self::refresh) (or `McpClients::connect`) mounts them again.
    pub async fn unmount(&self) {
        self.disconnect().await;
        self.take_tools_out();
    }

    /// Open a session: by `server/discover` (protocol 2026-07-28), falling
    /// back to the `initialize` handshake; and again, with the handshake
    /// alone, when the server answered the discovery with something that
    /// is no answer to it (as some older servers answer any method).
    ///
    /// A server that refuses the connection with a `401` (one configured
    /// with `oauth`) is signed in to, unless another call has signed in
    /// since this one began, and connected to again once. Each
    /// attempt has the connect timeout; the user's sign-in between has its
    /// own.
    async fn connect(&self) -> Result<Open, String> {
        #[cfg(feature = "mcp-oauth")]
        let sent_at = self.sign_in_generation();
        match self.connect_once().await {
            #[cfg(feature = "mcp-oauth")]
            Err(Attempt::Unauthorized(challenge)) => {
                let sign_in = self.sign_in.get().ok_or("no sign-in for this server")?;
                sign_in.sign_in(Some((&challenge, sent_at))).await?;
                self.connect_once().await.map_err(Attempt::into_message)
            }
            other => other.map_err(Attempt::into_message),
        }
    }

    /// One connection: by discovery, or by the handshake alone when the
    /// server misread the discovery.
    async fn connect_once(&self) -> Result<Open, Attempt> {
        match self.connect_within(lifecycle()).await {
            Err(Attempt::Legacy(e)) => {
                tracing::debug!(server = %self.config.name, "discovery misunderstood, initializing: {e}");
                self.connect_within(ClientLifecycleMode::Initialize).await
            }
            other => other,
        }
    }

    /// [`connect_with`](Self::connect_with), within the connect timeout.
    async fn connect_within(&self, lifecycle: ClientLifecycleMode) -> Result<Open, Attempt> {
        let limit = self.config.tool_timeout.max(CONNECT_TIMEOUT_FLOOR);
        tokio::time::timeout(limit, self.connect_with(lifecycle))
            .await
            .map_err(|_| {
                Attempt::Failed(format!(
                    "connecting to the MCP server `{}` took longer than {limit:?}",
                    self.config.name
                ))
            })?
    }

    async fn connect_with(&self, lifecycle: ClientLifecycleMode) -> Result<Open, Attempt> {
        let name = &self.config.name;
        let handler = ClientSide {
            link: self.me.clone(),
            server: name.clone(),
            sampler: self
                .sampler
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone(),
            elicitor: self
                .elicitor
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone(),
            questions: Arc::clone(&self.questions.lock().unwrap_or_else(|e| e.into_inner())),
        };
        let failed = |e: &dyn std::fmt::Display| {
            format!("could not connect to the MCP server `{name}`: {e}")
        };
        let refused = |e: ClientInitializeError| match e {
            ClientInitializeError::ExpectedInitResult(_) => Attempt::Legacy(failed(&e)),
            #[cfg(feature = "mcp-oauth")]
            e if self.config.oauth.is_some() && super::oauth::challenge_of(&e).is_some() => {
                Attempt::Unauthorized(super::oauth::challenge_of(&e).unwrap_or_default())
            }
            e => Attempt::Failed(failed(&super::trust::with_causes(&e))),
        };
        let closed = Arc::new(Watch::default());
        let session = match &self.config.transport {
            Transport::Stdio {
                command,
                args,
                env,
                cwd,
            } => {
                let transport = super::process::spawn(command, args, env, cwd.as_deref(), name)
                    .map_err(|e| failed(&format!("cannot start `{command}`: {e}")))?;
                handler
                    .serve_with_lifecycle(self.tap(transport, &closed), lifecycle.clone())
                    .await
                    .map_err(refused)
            }
            Transport::StreamableHttp { url, headers } => {
                let client = http_client(url, headers, self.config.ca_certificate.as_deref())
                    .map_err(|e| failed(&e))?;
                let mut config = StreamableHttpClientTransportConfig::with_uri(url.as_str());
                config.retry_config = Arc::new(ResumeOnce);
                if self.config.oauth.is_some() {
                    let client = self.signed_in(url, client).await.map_err(|e| failed(&e))?;
                    let client = RetryWhenBusy::new(client);
                    let transport = StreamableHttpClientTransport::with_client(client, config);
                    handler
                        .serve_with_lifecycle(self.tap(transport, &closed), lifecycle.clone())
                        .await
                        .map_err(refused)
                } else {
                    let client = RetryWhenBusy::new(client);
                    let transport = StreamableHttpClientTransport::with_client(client, config);
                    handler
                        .serve_with_lifecycle(self.tap(transport, &closed), lifecycle.clone())
                        .await
                        .map_err(refused)
                }
            }
            Transport::InProcess => {
                let server = self
                    .in_process
                    .clone()
                    .ok_or_else(|| failed(&"no server in this process was given for this entry"))?;
                // One pipe: the server serves one end until the client
                // closes the other, as a child process would its stdio.
                let (ours, theirs) = tokio::io::duplex(IN_PROCESS_BUFFER);
                let (read, write) = tokio::io::split(theirs);
                tokio::spawn(async move {
                    if let Err(e) = server.serve_io(read, write).await {
                        tracing::debug!("an in-process MCP server stopped: {e}");
                    }
                });
                let (read, write) = tokio::io::split(ours);
                let transport = AsyncRwTransport::new_client(read, write);
                handler
                    .serve_with_lifecycle(self.tap(transport, &closed), lifecycle.clone())
                    .await
                    .map_err(refused)
            }
            Transport::Sse { url, headers } => {
                let client = http_client(url, headers, self.config.ca_certificate.as_deref())
                    .map_err(|e| failed(&e))?;
                let transport = SseClientTransport::connect(client, url)
                    .await
                    .map_err(|e| failed(&e))?;
                handler
                    .serve_with_lifecycle(self.tap(transport, &closed), lifecycle.clone())
                    .await
                    .map_err(refused)
            }
        }?;
        self.listen_for_changes(&session, &closed);
        Ok(Open {
            session: Arc::new(session),
            closed,
        })
    }

    /// The HTTP client of a server with `oauth`: `http`, with the token of
    /// this server's sign-in added to each request.
    #[cfg(feature = "mcp-oauth")]
    async fn signed_in(
        &self,
        url: &str,
        http: reqwest::Client,
    ) -> Result<super::oauth::SignedInClient, String> {
        let oauth = self.config.oauth.clone().unwrap_or_default();
        let sign_in = self
            .sign_in
            .get_or_init(|| async {
                let host = self.oauth.lock().unwrap_or_else(|e| e.into_inner()).clone();
                Arc::new(super::oauth::SignIn::new(
                    &self.config.name,
                    url,
                    oauth,
                    self.config.ca_certificate.clone(),
                    host.store,
                    host.authorizer,
                ))
            })
            .await;
        sign_in.client(http).await
    }

    /// Without the feature `mcp-oauth` a server with `oauth` cannot be reached.
    #[cfg(not(feature = "mcp-oauth"))]
    async fn signed_in(
        &self,
        _url: &str,
        _http: reqwest::Client,
    ) -> Result<reqwest::Client, String> {
        Err("`oauth` needs the feature `mcp-oauth` of toolsmith".into())
    }

    /// On protocol 2026-07-28 a server tells of changed lists only on a
    /// `subscriptions/listen` stream: open one, for the lists the server
    /// says change, and refresh on what comes, until the session closes.
    fn listen_for_changes(&self, session: &Session, closed: &CancellationToken) {
        let peer = session.peer().clone();
        let Some(info) = peer.peer_info() else {
            return;
        };
        if info.protocol_version.as_str() < ProtocolVersion::V_2026_07_28.as_str() {
            return;
        }
        let capabilities = serde_json::to_value(&info.capabilities).unwrap_or_default();
        let changes = |kind: &str| capabilities[kind]["listChanged"] == true;
        let mut filter = SubscriptionFilter::builder();
        if changes("tools") {
            filter = filter.tools_list_changed();
        }
        if changes("prompts") {
            filter = filter.prompts_list_changed();
        }
        if changes("resources") {
            filter = filter.resources_list_changed();
        }
        if !(changes("tools") || changes("prompts") || changes("resources")) {
            return;
        }
        let filter = filter.build();
        let link = self.me.clone();
        let closed = closed.clone();
        tokio::spawn(async move {
            let listening = async {
                let Ok(mut subscription) = peer.listen(filter).await else {
                    return;
                };
                // A change made after the first listing but before the
                // stream was acknowledged was told to no one: list again.
                let Some(first) = link.upgrade() else { return };
                first.changed_on_server();
                drop(first);
                while let Ok(Some(_changed)) = subscription.next().await {
                    let Some(link) = link.upgrade() else { return };
                    link.changed_on_server();
                }
            };
            tokio::select! {
                () = listening => {}
                () = closed.cancelled() => {}
            }
        });
    }

    /// `transport`, with progress notifications routed as they arrive,
    /// `closed` told of what it sees and when it is dropped, and the
    /// server's requests to us answered a bounded number at a time (a
    /// server asking in a loop would otherwise have us hold every request).
    fn tap<T>(&self, transport: T, closed: &Arc<Watch>) -> ProgressTap<InFlight<T, RoleClient>> {
        ProgressTap {
            inner: InFlight::new(transport),
            link: self.me.clone(),
            _closed: closed.drop_guard(),
            watch: Arc::clone(closed),
        }
    }

    /// Ask the server for its tools, resources and prompts and put them in
    /// the registry in place of what it had there, in one step. Returns how
    /// many tools it has mounted.
    pub async fn refresh(&self) -> Result<usize, String> {
        let _turn = self.refreshing.lock().await;
        let session = self.session().await?;
        self.list_and_mount(session).await
    }

    /// Refresh because the server said its lists changed, beside the
    /// caller (the word arrives while the session is busy delivering it).
    /// While one such refresh waits for its turn, further word is answered
    /// by it, since it lists after that word arrived: a server announcing
    /// changes in a burst, or without end, costs one listing at a time, and
    /// one a [`REFRESH_INTERVAL`] at the most.
    pub(crate) fn changed_on_server(&self) {
        let Some(link) = self.me.upgrade() else {
            return;
        };
        if self.refresh_waiting.swap(true, Ordering::SeqCst) {
            return;
        }
        tokio::spawn(async move {
            let last = *link
                .last_server_refresh
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            if let Some(last) = last {
                tokio::time::sleep_until(last + REFRESH_INTERVAL).await;
            }
            let _turn = link.refreshing.lock().await;
            link.refresh_waiting.store(false, Ordering::SeqCst);
            *link
                .last_server_refresh
                .lock()
                .unwrap_or_else(|e| e.into_inner()) = Some(tokio::time::Instant::now());
            // The word came over a session: once that is closed (the server
            // unmounted or disconnected meanwhile) there is nothing to list,
            // and the server is not started again for it.
            let Some(session) = link.open_now().await else {
                return;
            };
            if let Err(e) = link.list_and_mount(session).await {
                tracing::warn!(server = %link.name(), "refreshing MCP tools failed: {e}");
            }
        });
    }

    /// The session open now, if any; never connects.
    async fn open_now(&self) -> Option<Arc<Session>> {
        let slot = self.session.lock().await;
        let open = slot.as_ref().filter(|open| open.is_live())?;
        Some(Arc::clone(&open.session))
    }

    /// List the server's tools over `session` and put them in the registry
    /// in place of what it had there; the caller holds `refreshing`.
    async fn list_and_mount(&self, session: Arc<Session>) -> Result<usize, String> {
        let me = self.me.upgrade().ok_or("the MCP server's link is gone")?;
        #[cfg(feature = "mcp-oauth")]
        let sent_at = self.sign_in_generation();
        let tools: Vec<Arc<dyn Tool>> = match mount_all(&me, &session).await {
            Ok(tools) => tools,
            // Refused for want of authorization (the server moved to
            // another authorization server, or wants more scopes): sign in
            // again and list once more.
            #[cfg(feature = "mcp-oauth")]
            Err(super::tools::MountFailure {
                refusal: Some(refusal),
                ..
            }) if self.config.oauth.is_some() => {
                self.authorize_again(&refusal, sent_at).await?;
                let session = self.session().await?;
                mount_all(&me, &session).await.map_err(|f| f.message)?
            }
            Err(failure) => return Err(failure.message),
        };
        let registry = self
            .registry
            .upgrade()
            .ok_or("the registry the MCP tools belong to is gone")?;
        let names: Vec<String> = tools.iter().map(|t| t.spec().name.to_string()).collect();
        let mut mounted = self.mounted.lock().unwrap_or_else(|e| e.into_inner());
        // Checked under the lock `retire` takes out the tools under, so a
        // removed server's tools are never mounted again.
        if self.retired.load(Ordering::SeqCst) {
            return Err(format!("the MCP server `{}` was removed", self.config.name));
        }
        // The names below become this server's: one already taken by a tool
        // that is not (the host's own, another server's) is refused rather
        // than replaced.
        if let Some(taken) = names
            .iter()
            .find(|n| !mounted.contains(n) && registry.contains(n))
        {
            return Err(format!(
                "the MCP server `{}`'s tools: `{taken}` is the name of a tool already in the registry",
                self.config.name
            ));
        }
        let owned =
            |name: &str| mounted.iter().any(|n| n == name) || names.iter().any(|n| n == name);
        registry
            .replace(owned, tools)
            .map_err(|e| format!("the MCP server `{}`'s tools: {e}", self.config.name))?;
        let count = names.len();
        *mounted = names;
        Ok(count)
    }

    /// Run one request against the server, stopping when the call is
    /// cancelled. The call's time is bounded by the pipeline's timer (a
    /// mounted tool's timeout), not here; a server silent for `toolTimeout`
    /// during a tool call fails as any timeout does. A closed connection is
    /// forgotten, so the next call starts the server again; so is a server
    /// that let calls end unanswered twice in a row without a word. The end
    /// of the server's messages (a stdio server that closed its output, a
    /// connection that dropped) fails the call at once.
    ///
    /// A server with `oauth` that refuses the request for want of
    /// authorization (a `401`, or a `403` `insufficient_scope` naming more
    /// scopes) is signed in to again, and the request sent once more; a
    /// second refusal fails it. When another call has signed in since the
    /// request was sent, the request is sent once more with that sign-in's
    /// token, and the user is not asked again.
    pub(crate) async fn request<T, F, Fut>(
        &self,
        ctx: &ToolContext,
        send: F,
    ) -> Result<T, ToolError>
    where
        F: Fn(Arc<Session>) -> Fut,
        Fut: Future<Output = Result<T, ServiceError>>,
    {
        match self.request_once(ctx, &send).await {
            Ok(value) => Ok(value),
            #[cfg(feature = "mcp-oauth")]
            Err(Failure::Refused(refusal, sent_at, _)) => {
                self.authorize_again(&refusal, sent_at)
                    .await
                    .map_err(ToolError::Failed)?;
                self.request_once(ctx, &send)
                    .await
                    .map_err(Failure::into_tool_error)
            }
            Err(failure) => Err(failure.into_tool_error()),
        }
    }

    /// How many sign-ins to this server have ended well: noted when a
    /// request is sent, so that its refusal is answered by a sign-in only
    /// if no other call has signed in since.
    #[cfg(feature = "mcp-oauth")]
    fn sign_in_generation(&self) -> u64 {
        self.sign_in.get().map_or(0, |sign_in| sign_in.generation())
    }

    /// Sign in again as `refusal` asks: for more scopes after a `403`, from
    /// the start (discovering the authorization server anew) after a `401`;
    /// or not at all when another call has signed in since the refused
    /// request was sent, at sign-in generation `sent_at`.
    #[cfg(feature = "mcp-oauth")]
    async fn authorize_again(
        &self,
        refusal: &super::oauth::Refusal,
        sent_at: u64,
    ) -> Result<(), String> {
        let sign_in = self.sign_in.get().ok_or("no sign-in for this server")?;
        match refusal {
            super::oauth::Refusal::InsufficientScope(challenge) => {
                sign_in.step_up(challenge, sent_at).await
            }
            super::oauth::Refusal::Unauthorized(challenge) => {
                sign_in.sign_in(Some((challenge, sent_at))).await
            }
        }
    }

    /// One sending of a [`request`](Self::request).
    async fn request_once<T, F, Fut>(&self, ctx: &ToolContext, send: &F) -> Result<T, Failure>
    where
        F: Fn(Arc<Session>) -> Fut,
        Fut: Future<Output = Result<T, ServiceError>>,
    {
        let (session, watch) = self.open_session().await.map_err(ToolError::Failed)?;
        // The token the request goes with: a refusal tells of it, not of
        // one another call has signed in for since.
        #[cfg(feature = "mcp-oauth")]
        let sent_at = self.sign_in_generation();
        let mut call = Unanswered {
            mark: watch.call_started(),
            watch: &watch,
            session: &session,
            server: &self.config.name,
            answered: false,
        };
        let outcome = tokio::select! {
            biased;
            outcome = send(Arc::clone(&session)) => outcome,
            () = ctx.cancellation().cancelled() => {
                call.answered = true;
                return Err(ToolError::Cancelled.into());
            }
            () = watch.over() => Err(ServiceError::TransportClosed),
        };
        call.answered = !matches!(outcome, Err(ServiceError::Timeout { .. }));
        drop(call);
        match outcome {
            Ok(value) => Ok(value),
            Err(ServiceError::Timeout { timeout }) => Err(ToolError::Timeout(timeout).into()),
            Err(ref e) if let Some(why) = super::answers::unreadable(e) => Err(ToolError::Failed(
                format!("the MCP server `{}` answered, and {why}", self.config.name),
            )
            .into()),
            Err(ServiceError::McpError(e)) => Err(ToolError::Failed(format!(
                "the MCP server `{}` refused the request: {}",
                self.config.name, e.message
            ))
            .into()),
            Err(e) => {
                #[cfg(feature = "mcp-oauth")]
                if let Some(refusal) = self
                    .config
                    .oauth
                    .as_ref()
                    .and_then(|_| super::oauth::refusal_of(&e))
                {
                    if session.is_transport_closed() {
                        self.forget(&session).await;
                    }
                    let why = match refusal {
                        super::oauth::Refusal::Unauthorized(_) => "it needs authorization (401)",
                        super::oauth::Refusal::InsufficientScope(_) => {
                            "the token lacks scopes it needs (403 insufficient_scope)"
                        }
                    };
                    let message = format!(
                        "the MCP server `{}` refused the request: {why}",
                        self.config.name
                    );
                    return Err(Failure::Refused(
                        refusal,
                        sent_at,
                        ToolError::Failed(message),
                    ));
                }
                if session.is_transport_closed()
                    || matches!(
                        e,
                        ServiceError::TransportClosed | ServiceError::TransportSend(_)
                    )
                {
                    self.forget(&session).await;
                    // The next call starts the server again, so it may pass.
                    let name = &self.config.name;
                    let message = match &e {
                        // Why the request could not be sent (a redirect
                        // refused, an answer too large) is the reason to give.
                        ServiceError::TransportSend(e) => {
                            let first: &(dyn std::error::Error + 'static) = &*e.error;
                            format!(
                                "the call could not be sent to the MCP server `{name}`: {}; it will be connected again on the next call",
                                super::trust::chain(
                                    super::trust::origins_only(&e.error.to_string()),
                                    Some(first)
                                )
                            )
                        }
                        _ => format!(
                            "the MCP server `{name}` closed the connection during the call (it may have crashed); it will be started again on the next call"
                        ),
                    };
                    Err(ToolError::network(message).into())
                } else {
                    Err(ToolError::Failed(format!(
                        "the MCP server `{}` failed: {e}",
                        self.config.name
                    ))
                    .into())
                }
            }
        }
    }
}

/// Cancels a task on the server when its waiter is dropped before it ended.
struct CancelTaskOnDrop {
    peer: Peer<RoleClient>,
    task: Option<String>,
}

impl Drop for CancelTaskOnDrop {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            let peer = self.peer.clone();
            tokio::spawn(async move {
                let _ = peer.cancel_task(CancelTaskParams::new(task)).await;
            });
        }
    }
}

/// Why one sending of a request failed.
enum Failure {
    /// The server refused it for want of authorization: sign in again and
    /// send it once more; the error is what the call fails with otherwise.
    /// With the sign-in generation the request was sent at.
    #[cfg(feature = "mcp-oauth")]
    Refused(super::oauth::Refusal, u64, ToolError),
    /// Anything else.
    Failed(ToolError),
}

impl Failure {
    fn into_tool_error(self) -> ToolError {
        match self {
            #[cfg(feature = "mcp-oauth")]
            Self::Refused(_, _, error) => error,
            Self::Failed(error) => error,
        }
    }
}

impl From<ToolError> for Failure {
    fn from(error: ToolError) -> Self {
        Self::Failed(error)
    }
}

/// Why a session did not open.
enum Attempt {
    /// The server misread `server/discover`: try the handshake alone.
    Legacy(String),
    /// The server answered `401` with this `WWW-Authenticate` challenge:
    /// sign in and try again.
    #[cfg(feature = "mcp-oauth")]
    Unauthorized(String),
    /// Anything else.
    Failed(String),
}

impl Attempt {
    fn into_message(self) -> String {
        match self {
            Self::Legacy(e) | Self::Failed(e) => e,
            #[cfg(feature = "mcp-oauth")]
            Self::Unauthorized(challenge) => {
                format!("the MCP server refused the token it was signed in with: {challenge}")
            }
        }
    }
}

impl From<String> for Attempt {
    fn from(message: String) -> Self {
        Self::Failed(message)
    }
}

/// How a session starts: `server/discover` for protocol 2026-07-28, and the
/// `initialize` handshake of 2025-11-25 (or whatever older version the
/// server answers with) for a server that does not know it.
fn lifecycle() -> ClientLifecycleMode {
    ClientLifecycleMode::Auto {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        legacy_version: Some(ProtocolVersion::LATEST_WITH_INITIALIZE),
    }
}

/// A progress token as a map key.
fn token_key(token: &ProgressToken) -> String {
    serde_json::to_string(token).unwrap_or_default()
}

/// How many progress notifications for calls not routed yet are kept.
const EARLY_PROGRESS: usize = 64;

/// Where progress notifications go. The request is on its way before its
/// token is known here, so a server may report progress before the call is
/// routed: such reports wait (a bounded few) and are delivered, in order,
/// when it is. Reporting happens under the lock, which keeps the order.
#[derive(Default)]
struct ProgressRoutes {
    routes: HashMap<String, Route>,
    early: std::collections::VecDeque<(String, Progress)>,
}

/// Where one call's progress goes: to its caller's context, and a beat for
/// the timer that waits for the server's silence.
struct Route {
    ctx: ToolContext,
    beat: Arc<tokio::sync::Notify>,
}

impl Route {
    fn deliver(&self, progress: Progress) {
        self.ctx.report_progress(progress);
        self.beat.notify_one();
    }
}

impl ProgressRoutes {
    fn route(&mut self, token: String, ctx: ToolContext, beat: Arc<tokio::sync::Notify>) {
        let route = Route { ctx, beat };
        let mut kept = std::collections::VecDeque::new();
        for (early_token, progress) in self.early.drain(..) {
            if early_token == token {
                route.deliver(progress);
            } else {
                kept.push_back((early_token, progress));
            }
        }
        self.early = kept;
        self.routes.insert(token, route);
    }

    fn deliver(&mut self, token: String, progress: Progress) {
        match self.routes.get(&token) {
            Some(route) => route.deliver(progress),
            None => {
                if self.early.len() == EARLY_PROGRESS {
                    self.early.pop_front();
                }
                self.early.push_back((token, progress));
            }
        }
    }
}

/// Stops routing progress to a call when it ends.
struct ProgressRoute<'l> {
    link: &'l ServerLink,
    token: String,
}

impl Drop for ProgressRoute<'_> {
    fn drop(&mut self) {
        self.link
            .progress
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .routes
            .remove(&self.token);
    }
}

/// Counts a call that ended without an answer (timed out, or dropped by the
/// pipeline's timer) against its session: the second in a row with no word
/// from the server takes the session for dead, and stops it, so the next
/// call starts the server again.
struct Unanswered<'a> {
    watch: &'a Watch,
    mark: u64,
    session: &'a Session,
    server: &'a str,
    answered: bool,
}

impl Drop for Unanswered<'_> {
    fn drop(&mut self) {
        if self.watch.call_ended(self.mark, self.answered) {
            tracing::warn!(
                server = %self.server,
                "the MCP server let calls end unanswered without a word; it will be started again on the next call"
            );
            self.session.cancellation_token().cancel();
        }
    }
}

/// Tells the server a request was abandoned (timed out, cancelled) when the
/// call is dropped before its answer came.
struct CancelOnDrop {
    peer: Peer<RoleClient>,
    request: Option<RequestId>,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some(id) = self.request.take() else {
            return;
        };
        let peer = self.peer.clone();
        let param: CancelledNotificationParam = match serde_json::from_value(serde_json::json!({
            "requestId": id, "reason": "the caller stopped waiting"
        })) {
            Ok(param) => param,
            Err(_) => return,
        };
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let _ = peer.notify_cancelled(param).await;
            });
        }
    }
}

/// The least time between two listings a server asks for by saying its
/// lists changed: one saying so after every listing would otherwise keep
/// the host listing without pause.
const REFRESH_INTERVAL: Duration = Duration::from_secs(1);

/// The most questions a server may ask at once for one call (sampling,
/// elicitation): each is put to the host's model or user, and a server
/// asking thousands in one round would have them all asked at once.
const MAX_QUESTIONS: usize = 16;

/// The most questions a task's server may ask over the task's life.
const MAX_TASK_QUESTIONS: usize = 4 * MAX_QUESTIONS;

/// Fail a call whose server asked more than `most` questions.
fn refuse_too_many_questions(asked: usize, most: usize) -> Result<(), ServiceError> {
    if asked <= most {
        return Ok(());
    }
    Err(ServiceError::McpError(rmcp::ErrorData::invalid_request(
        format!("the server asked {asked} questions; at most {most} are answered"),
        None,
    )))
}

/// How a streamable HTTP server's event stream is resumed when it breaks:
/// once, at once. A server that cannot be reached then is gone (killed,
/// crashed), and the calls waiting on the stream fail now rather than at
/// their timeout, as the SDK's default (retry for ever, backing off) has it.
/// A stream the server ended before its answer is taken up again a second
/// later, or when the server's `retry` says.
#[derive(Debug)]
struct ResumeOnce;

impl SseRetryPolicy for ResumeOnce {
    fn retry(&self, attempts: usize) -> Option<Duration> {
        (attempts == 0).then_some(Duration::from_secs(1))
    }
}

/// An HTTP client sending the configured headers with every request, and
/// trusting the configured `caCertificate` besides the system's roots.
/// Headers going in clear (`http://`) to a host other than this one are
/// sent, as configured, with a warning: anyone on the way reads them.
fn http_client(
    url: &str,
    headers: &std::collections::BTreeMap<String, String>,
    ca_certificate: Option<&std::path::Path>,
) -> Result<reqwest::Client, String> {
    if !headers.is_empty() && in_clear_beyond_this_host(url) {
        tracing::warn!(
            url,
            "the configured headers of an MCP server go over plain HTTP to another host; use https"
        );
    }
    let mut map = reqwest::header::HeaderMap::new();
    for (name, value) in headers {
        let name = reqwest::header::HeaderName::from_bytes(name.as_bytes())
            .map_err(|e| format!("header name `{name}`: {e}"))?;
        let value = reqwest::header::HeaderValue::from_str(value)
            .map_err(|e| format!("header `{name}`: {e}"))?;
        map.insert(name, value);
    }
    let builder = reqwest::Client::builder()
        .default_headers(map)
        .redirect(same_origin_redirects())
        .pool_idle_timeout(IDLE_CONNECTION_KEPT);
    let builder = match ca_certificate {
        Some(path) => super::trust::trust(builder, path)?,
        None => builder,
    };
    builder.build().map_err(|e| e.to_string())
}

/// How long an idle connection to a server is kept for the next message.
/// Servers close a connection idle for a while: Node's HTTP server and
/// uvicorn after 5 s, and uvicorn's workers under gunicorn (a common way to
/// run a Python server) after gunicorn's `keepalive`, 2 s by default. A
/// message sent on one as it closes is lost with "connection closed before
/// message completed", and cannot be sent again safely (the server may
/// have read it). Given up sooner than any of them, an idle connection is
/// never the one they close; a client calling less often than this pays a
/// new connection per call.
const IDLE_CONNECTION_KEPT: std::time::Duration = std::time::Duration::from_millis(1500);

/// Whether `url` is plain HTTP to a host other than this machine's loopback.
fn in_clear_beyond_this_host(url: &str) -> bool {
    let Ok(url) = reqwest::Url::parse(url) else {
        return false;
    };
    let host = url.host_str().unwrap_or_default();
    let loopback = host.eq_ignore_ascii_case("localhost")
        || host
            .trim_matches(['[', ']'])
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback());
    url.scheme() == "http" && !loopback
}

/// The most redirects followed for one request.
const MAX_REDIRECTS: usize = 10;

/// Redirects are followed within the configured server's origin only (and
/// from `http` to `https` on the same host, on ports 80 and 443). The
/// configured headers (an API key) and the session id go with every request
/// the client makes, so a server that redirected to another origin would
/// hand them to whoever runs it; such a redirect fails the request instead,
/// naming where it pointed, so the configuration can name it if it is meant.
fn same_origin_redirects() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let followed = attempt
            .previous()
            .first()
            .is_some_and(|first| follows(first, attempt.url()));
        if !followed {
            let to = attempt.url().origin().ascii_serialization();
            attempt.error(format!(
                "the server redirected to another origin, `{to}`, which is not followed: the configured headers would go there"
            ))
        } else if attempt.previous().len() > MAX_REDIRECTS {
            attempt.error(format!("more than {MAX_REDIRECTS} redirects"))
        } else {
            attempt.follow()
        }
    })
}

/// Whether a redirect to `next` is followed, for a request first made to
/// `first` (the configured server's URL; every hop is judged against it,
/// not against the hop before): when `next` has the same origin (scheme,
/// host and port; not the path, query or user info), or `first` is `http`
/// on port 80 and `next` is `https` on port 443 of the same host, where
/// the headers go safer. Hosts compare as parsed: case and IDNA
/// spellings of one name, and spellings of one IPv6 address, are one host.
fn follows(first: &reqwest::Url, next: &reqwest::Url) -> bool {
    let upgrade = first.scheme() == "http"
        && first.port_or_known_default() == Some(80)
        && next.scheme() == "https"
        && next.port_or_known_default() == Some(443)
        && first.host_str() == next.host_str();
    first.origin() == next.origin() || upgrade
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::ProgressReporter;

    /// A loopback HTTP server that, like Node's and uvicorn's, closes a
    /// connection idle for longer than `idle`: here as the next request
    /// arrives on it, the race at its worst.
    async fn closing_idle(idle: std::time::Duration) -> std::net::SocketAddr {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                tokio::spawn(async move {
                    let mut answered = tokio::time::Instant::now();
                    let mut head = Vec::new();
                    let mut chunk = [0u8; 1024];
                    loop {
                        let Ok(n) = stream.read(&mut chunk).await else {
                            return;
                        };
                        if n == 0 {
                            return;
                        }
                        head.extend_from_slice(&chunk[..n]);
                        if !head.windows(4).any(|w| w == b"\r\n\r\n") {
                            continue;
                        }
                        head.clear();
                        if answered.elapsed() > idle {
                            return;
                        }
                        let answer = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok";
                        if stream.write_all(answer).await.is_err() {
                            return;
                        }
                        answered = tokio::time::Instant::now();
                    }
                });
            }
        });
        address
    }

    #[tokio::test]
    async fn an_idle_connection_is_given_up_before_the_server_closes_it() {
        let server =
            closing_idle(IDLE_CONNECTION_KEPT + std::time::Duration::from_millis(200)).await;
        let url = format!("http://{server}/mcp");
        let client = http_client(&url, &std::collections::BTreeMap::new(), None).unwrap();
        let first = client.get(&url).send().await.unwrap();
        assert_eq!(first.text().await.unwrap(), "ok");
        // Idle past what the client keeps, and past what the server does.
        tokio::time::sleep(IDLE_CONNECTION_KEPT + std::time::Duration::from_millis(500)).await;
        let second = client.get(&url).send().await;
        assert!(
            second.is_ok(),
            "sent on a connection the server closed: {second:?}"
        );
    }

    #[derive(Default)]
    struct Seen(Mutex<Vec<f64>>);

    impl ProgressReporter for Seen {
        fn report(&self, progress: Progress) {
            self.0.lock().unwrap().push(progress.progress);
        }
    }

    /// Which redirects the client follows, judged against the URL the
    /// request was first made to.
    #[test]
    fn redirects_are_followed_within_the_origin_and_to_https_on_the_same_host() {
        let url = |u: &str| reqwest::Url::parse(u).unwrap();
        let table: &[(&str, &str, bool, &str)] = &[
            (
                "http://h.test/mcp",
                "http://h.test/other?x=1",
                true,
                "same origin",
            ),
            (
                "https://h.test/mcp",
                "https://h.test:443/moved",
                true,
                "default port spelled out",
            ),
            (
                "http://h.test:8080/mcp",
                "http://h.test:8080/m",
                true,
                "same origin, own port",
            ),
            (
                "http://h.test/mcp",
                "http://h.test:8080/mcp",
                false,
                "other port",
            ),
            (
                "https://h.test/mcp",
                "https://h.test:8443/mcp",
                false,
                "other https port",
            ),
            (
                "http://h.test/mcp",
                "http://evil.test/mcp",
                false,
                "other host",
            ),
            (
                "http://h.test/mcp",
                "http://sub.h.test/mcp",
                false,
                "a subdomain",
            ),
            (
                "http://h.test/mcp",
                "ftp://h.test/mcp",
                false,
                "other scheme",
            ),
            (
                "http://h.test/mcp",
                "https://h.test/mcp",
                true,
                "http:80 to https:443",
            ),
            (
                "http://h.test:80/mcp",
                "https://h.test:443/mcp",
                true,
                "ports spelled out",
            ),
            (
                "http://h.test:8080/mcp",
                "https://h.test/mcp",
                false,
                "http:8080 to https:443",
            ),
            (
                "http://h.test/mcp",
                "https://h.test:8443/mcp",
                false,
                "https on another port",
            ),
            (
                "http://h.test/mcp",
                "https://evil.test/mcp",
                false,
                "https on another host",
            ),
            (
                "https://h.test/mcp",
                "http://h.test/mcp",
                false,
                "https to http",
            ),
            (
                "https://h.test:8080/mcp",
                "http://h.test:8080/mcp",
                false,
                "downgrade, one port",
            ),
            (
                "http://u:p@h.test/mcp",
                "http://h.test/mcp",
                true,
                "user info left behind",
            ),
            (
                "http://h.test/mcp",
                "http://u:p@h.test/mcp",
                true,
                "user info is no origin",
            ),
            (
                "http://h.test/mcp",
                "http://h.test@evil.test/mcp",
                false,
                "user info as a host",
            ),
            (
                "http://[::1]:9000/mcp",
                "http://[0:0::1]:9000/m",
                true,
                "one IPv6 address",
            ),
            (
                "http://[::1]/mcp",
                "https://[::1]/mcp",
                true,
                "IPv6 upgrade",
            ),
            (
                "http://[::1]:9000/mcp",
                "http://[::2]:9000/mcp",
                false,
                "other IPv6 address",
            ),
            (
                "http://[::1]:9000/mcp",
                "http://127.0.0.1:9000/mcp",
                false,
                "v6 and v4 loopback",
            ),
            (
                "http://H.TEST/mcp",
                "http://h.test/mcp",
                true,
                "case of the host",
            ),
            (
                "http://bücher.test/mcp",
                "http://xn--bcher-kva.test/m",
                true,
                "IDNA spellings",
            ),
            (
                "http://BÜCHER.test/mcp",
                "https://xn--bcher-kva.test/",
                true,
                "IDNA upgrade",
            ),
            (
                "http://bücher.test/mcp",
                "http://bucher.test/mcp",
                false,
                "a look-alike",
            ),
            // A second hop after an upgrade is judged against the first
            // URL: on to another path of the https origin is followed, to
            // another host or port is not.
            (
                "http://h.test/mcp",
                "https://h.test/next",
                true,
                "second hop after upgrade",
            ),
            (
                "http://h.test/mcp",
                "http://h.test/back",
                true,
                "back to the first origin",
            ),
            (
                "http://h.test/mcp",
                "https://h.test:444/next",
                false,
                "second hop, other port",
            ),
        ];
        for (first, next, followed, why) in table {
            assert_eq!(
                follows(&url(first), &url(next)),
                *followed,
                "{why}: {first} -> {next}"
            );
        }
    }

    #[test]
    fn error_messages_name_origins_not_urls() {
        let said =
            "error sending request for url (https://h.test:8443/s/SECRET/mcp?api_key=K): closed";
        let cut = super::super::trust::origins_only(said);
        assert_eq!(
            cut,
            "error sending request for url (https://h.test:8443): closed"
        );
        for text in [
            "no url here",
            "for url (",
            "for url (not a url) and for url (x",
        ] {
            assert!(!super::super::trust::origins_only(text).contains("SECRET"));
        }
        assert_eq!(
            super::super::trust::origins_only("for url (not a url)"),
            "for url (?)"
        );
    }

    #[test]
    fn headers_in_clear_are_told_apart_from_loopback_and_tls() {
        for url in [
            "http://10.0.0.1/mcp",
            "http://mcp.example/mcp",
            "http://[fe80::1]:9/x",
        ] {
            assert!(in_clear_beyond_this_host(url), "{url}");
        }
        for url in [
            "https://mcp.example/mcp",
            "http://127.0.0.1:8080/mcp",
            "http://127.3.4.5/mcp",
            "http://localhost/mcp",
            "http://LOCALHOST:1/sse",
            "http://[::1]:9/mcp",
            "not a url",
        ] {
            assert!(!in_clear_beyond_this_host(url), "{url}");
        }
    }

    #[test]
    fn progress_before_the_route_waits_for_it_in_order() {
        let mut routes = ProgressRoutes::default();
        routes.deliver("1".into(), Progress::new(0.0));
        routes.deliver("2".into(), Progress::new(7.0));
        routes.deliver("1".into(), Progress::new(1.0));
        let seen = Arc::new(Seen::default());
        routes.route(
            "1".into(),
            ToolContext::new().with_progress_reporter(seen.clone()),
            Arc::default(),
        );
        routes.deliver("1".into(), Progress::new(2.0));
        assert_eq!(*seen.0.lock().unwrap(), [0.0, 1.0, 2.0]);
        // Another call's early report stays for it.
        assert_eq!(routes.early.len(), 1);
    }

    #[test]
    fn early_progress_is_bounded() {
        let mut routes = ProgressRoutes::default();
        for i in 0..EARLY_PROGRESS * 3 {
            routes.deliver(i.to_string(), Progress::new(0.0));
        }
        assert_eq!(routes.early.len(), EARLY_PROGRESS);
    }
}

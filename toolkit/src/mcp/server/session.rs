//! What a tool served over MCP can ask of the client that called it.

// Logging and sampling are deprecated only from protocol version 2026-07-28
// on; the clients and servers of the versions we speak still use them.
#![allow(deprecated)]

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use rmcp::RoleServer;
use rmcp::model::{
    ClientCapabilities, CreateMessageResult, ElicitResult, InputRequest, InputRequests,
    ListRootsResult, ProgressNotificationParam, ProgressToken,
};
use rmcp::service::Peer;
use rmcp::task_manager::{TaskContext, TaskExit};
use serde_json::{Map, Value, json};
use tokio::sync::{Notify, mpsc};

use super::stream::StreamRelease;
use crate::context::{Progress, ProgressReporter};
use crate::error::ToolError;

/// The client a served call came from. A tool takes `&ClientSession` as a
/// parameter (it is put in the call's context) to log to the client, or to
/// ask it for a model completion (sampling), the user's input
/// (elicitation) or its roots. Absent when the tool runs outside an MCP
/// server.
///
/// How a question reaches the client depends on the call, never on the
/// tool's code:
///
/// - on a session of protocol 2025-11-25 or older, it is sent to the
///   client as a request and the answer awaited;
/// - on protocol 2026-07-28, which has no requests to the client, the call
///   ends with an input-required result naming the questions; the client
///   answers them and makes the call again, and the tool runs again from
///   the start, finding its earlier questions answered (so a tool should
///   ask the same questions, under the same keys, before doing what must
///   not be done twice). What was answered in earlier rounds travels in the
///   result's signed `requestState`, so any server process can take the
///   next round;
/// - in a task, the task waits in `input_required` until the client
///   answers with `tasks/update`;
/// - in the call of a task tool that asks first
///   ([`ToolSpec::asks_first`](crate::ToolSpec::asks_first)), in rounds
///   until the call becomes a task, then in the task;
/// - when nothing can reach the client (a stateless HTTP request of an
///   older protocol), or the client does not offer what is asked, the
///   question fails at once with an error saying why.
#[derive(Clone)]
pub struct ClientSession {
    peer: Peer<RoleServer>,
    /// The least severe level the client wants to hear (`logging/setLevel`).
    min_level: Arc<AtomicUsize>,
    /// How questions reach the client.
    channel: Channel,
    /// What the client said it can answer.
    offers: Offers,
    /// How many questions of each kind were asked without a key, for the
    /// keys they are given.
    counts: Arc<[AtomicUsize; 3]>,
    /// The event stream this call is answered on, when the client can
    /// resume it (see [`close_stream`](Self::close_stream)).
    stream: Option<StreamRelease>,
}

/// How a call's questions reach the client.
#[derive(Clone)]
pub(crate) enum Channel {
    /// Requests sent on the client's session.
    Push,
    /// Input-required results: the call is made again with the answers.
    Rounds(Arc<Rounds>),
    /// A task's input requests, answered with `tasks/update`.
    Task(TaskContext),
    /// Nothing reaches the client; the reason why.
    Closed(Arc<str>),
}

/// What a client declared it answers.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Offers {
    sampling: bool,
    elicitation: bool,
    roots: bool,
}

impl Offers {
    /// What `capabilities` declare (nothing, without them).
    pub(crate) fn from_capabilities(capabilities: Option<&ClientCapabilities>) -> Self {
        let value = capabilities
            .and_then(|c| serde_json::to_value(c).ok())
            .unwrap_or_default();
        let has = |key: &str| value.get(key).is_some_and(|v| !v.is_null());
        Self {
            sampling: has("sampling"),
            elicitation: has("elicitation"),
            roots: has("roots"),
        }
    }

    fn has(self, need: Need) -> bool {
        match need {
            Need::Sampling => self.sampling,
            Need::Elicitation => self.elicitation,
            Need::Roots => self.roots,
        }
    }
}

/// A kind of question for the client.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Need {
    Sampling,
    Elicitation,
    Roots,
}

impl Need {
    fn method(self) -> &'static str {
        match self {
            Self::Sampling => "sampling/createMessage",
            Self::Elicitation => "elicitation/create",
            Self::Roots => "roots/list",
        }
    }

    fn what(self) -> &'static str {
        match self {
            Self::Sampling => "sampling",
            Self::Elicitation => "elicitation",
            Self::Roots => "roots",
        }
    }

    fn index(self) -> usize {
        self as usize
    }

    fn from_method(method: &str) -> Option<Self> {
        [Self::Sampling, Self::Elicitation, Self::Roots]
            .into_iter()
            .find(|n| n.method() == method)
    }

    /// Whether `answer` is a result of this kind of request.
    fn answered_by(self, answer: &Value) -> bool {
        let answer = answer.clone();
        match self {
            Self::Sampling => serde_json::from_value::<CreateMessageResult>(answer).is_ok(),
            Self::Elicitation => serde_json::from_value::<ElicitResult>(answer).is_ok(),
            Self::Roots => serde_json::from_value::<ListRootsResult>(answer).is_ok(),
        }
    }
}

/// One round of a call on protocol 2026-07-28: the answers the client gave
/// (in this request and, through the signed state, in earlier ones), and
/// the questions still open. A call of a tool that asks first may become a
/// task in the middle of its round ([`Rounds::hand_over`]); its questions
/// from then on wait in the task.
#[derive(Default)]
pub(crate) struct Rounds {
    answers: Map<String, Value>,
    /// The answers the tool used this round: carried to the next one.
    used: Mutex<Map<String, Value>>,
    /// Where the next question goes; one lock, so a question and the hand
    /// over to a task never cross.
    state: Mutex<Asking>,
    /// Told when a question is left open.
    asked: Notify,
}

/// Where a round stands.
#[derive(Default)]
struct Asking {
    /// The questions without an answer, by key.
    open: InputRequests,
    /// A capability the tool needed and the client did not declare.
    missing: Option<&'static str>,
    /// The task the call became, once it did.
    task: Option<TaskContext>,
}

impl Rounds {
    /// A round knowing `answers`.
    pub(crate) fn new(answers: Map<String, Value>) -> Self {
        Self {
            answers,
            ..Self::default()
        }
    }

    /// The answer to `key`, or (never returning) the question left open;
    /// once the call is a task, the task's answer.
    async fn ask(&self, key: &str, need: Need, params: Value) -> Result<Value, ToolError> {
        if let Some(answer) = self.answers.get(key).filter(|a| need.answered_by(a)) {
            lock(&self.used).insert(key.to_owned(), answer.clone());
            return Ok(answer.clone());
        }
        let request = input_request(need, params)?;
        let task = {
            let mut state = lock(&self.state);
            if state.task.is_none() {
                state.open.insert(key.to_owned(), request.clone());
            }
            state.task.clone()
        };
        if let Some(task) = task {
            return ask_task(&task, key, request).await;
        }
        self.asked.notify_one();
        // The server ends the call here and answers with the open questions.
        std::future::pending().await
    }

    /// End the call: the tool needs what the client did not declare (once
    /// the call is a task, the question fails).
    async fn refuse(&self, need: Need) -> Result<Value, ToolError> {
        {
            let mut state = lock(&self.state);
            if state.task.is_some() {
                return Err(not_offered(need));
            }
            state.missing = Some(need.what());
        }
        self.asked.notify_one();
        std::future::pending().await
    }

    /// The capability the tool needed and the client did not declare, if
    /// that is what ended the call.
    pub(crate) fn missing(&self) -> Option<&'static str> {
        lock(&self.state).missing
    }

    /// Resolves once a question is left open.
    pub(crate) async fn asked(&self) {
        self.asked.notified().await;
    }

    /// Make the call a task with `start`, unless a question is open or a
    /// capability missing (then `None`: the round ends with them). Its
    /// later questions wait in the task `start` gives the context of.
    pub(crate) fn hand_over<T, E>(
        &self,
        start: impl FnOnce() -> Result<(T, TaskContext), E>,
    ) -> Option<Result<T, E>> {
        let mut state = lock(&self.state);
        if !state.open.is_empty() || state.missing.is_some() {
            return None;
        }
        Some(start().map(|(started, task)| {
            state.task = Some(task);
            started
        }))
    }

    /// The questions left open, and the answers to carry to the next round.
    pub(crate) fn take(&self) -> (InputRequests, Map<String, Value>) {
        (
            std::mem::take(&mut lock(&self.state).open),
            std::mem::take(&mut *lock(&self.used)),
        )
    }
}

/// `need`'s request with `params`, as an input request names it.
fn input_request(need: Need, params: Value) -> Result<InputRequest, ToolError> {
    let request = if need == Need::Roots {
        json!({"method": need.method()})
    } else {
        json!({"method": need.method(), "params": params})
    };
    serde_json::from_value(request)
        .map_err(|e| ToolError::internal(format!("the {} request is malformed: {e}", need.what())))
}

/// Ask through `task`: it waits in `input_required` for `tasks/update`.
async fn ask_task(
    task: &TaskContext,
    key: &str,
    request: InputRequest,
) -> Result<Value, ToolError> {
    task.request_input(key, request)
        .await
        .map_err(|exit| match exit {
            TaskExit::Cancelled => ToolError::Cancelled,
            TaskExit::Error(e) => {
                ToolError::failed(format!("the client did not answer: {}", e.message))
            }
        })
}

/// The failure of a question the client said it does not answer.
fn not_offered(need: Need) -> ToolError {
    ToolError::failed(format!(
        "the client does not offer {}, so it cannot be asked",
        need.what()
    ))
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// MCP's log levels, least severe first.
pub(crate) const LEVELS: [&str; 8] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

/// The rank of a level in [`LEVELS`]; an unknown level counts as `info`.
pub(crate) fn level_rank(level: &str) -> usize {
    LEVELS.iter().position(|l| *l == level).unwrap_or(1)
}

impl std::fmt::Debug for ClientSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ClientSession")
    }
}

impl ClientSession {
    /// The client of `peer`'s session, asked with requests on it.
    pub(crate) fn new(peer: Peer<RoleServer>, min_level: Arc<AtomicUsize>) -> Self {
        let info = peer.peer_info();
        let offers = Offers::from_capabilities(info.as_ref().map(|i| &i.capabilities));
        Self {
            peer,
            min_level,
            channel: Channel::Push,
            offers,
            counts: Arc::default(),
            stream: None,
        }
    }

    /// The same client, answered on a stream it can resume once ended.
    pub(crate) fn on_stream(mut self, stream: Option<StreamRelease>) -> Self {
        self.stream = stream;
        self
    }

    /// The stream this call is answered on, when it can be ended.
    pub(crate) fn stream(&self) -> Option<&StreamRelease> {
        self.stream.as_ref()
    }

    /// End the HTTP event stream this call is answered on, now, and go on
    /// working: the client comes back for the rest (protocol 2025-11-25
    /// `GET` with `Last-Event-ID`, after the `retry` delay the stream
    /// carried) and receives what was sent since from the session's cache;
    /// the result is held back until the client has come back for it (30
    /// seconds at most). A long call then holds no connection while
    /// it works, and a client or a proxy that drops idle connections loses
    /// nothing. Returns whether there was such a stream: `false` over stdio,
    /// on a stateless server, and on protocol 2026-07-28 (whose calls carry
    /// no session to resume).
    pub fn close_stream(&self) -> bool {
        match &self.stream {
            Some(stream) => {
                stream.release();
                true
            }
            None => false,
        }
    }

    /// The same client, asked through `channel`, offering `offers`.
    pub(crate) fn asking(mut self, channel: Channel, offers: Offers) -> Self {
        self.channel = channel;
        self.offers = offers;
        self
    }

    /// Send a log message (`notifications/message`) at `level` (`debug`,
    /// `info`, `warning`, `error`...), unless the client asked for only more
    /// severe ones. Failing to send is not the tool's problem.
    pub async fn log(&self, level: &str, data: impl Into<Value>) {
        if level_rank(level) < self.min_level.load(Ordering::Relaxed) {
            return;
        }
        let params = json!({"level": level, "data": data.into()});
        if let Ok(params) = serde_json::from_value(params) {
            let _ = self.peer.notify_logging_message(params).await;
        }
    }

    /// Tell the client the list of tools changed (after tools were added to
    /// or removed from the served registry), so it lists them again.
    pub async fn notify_tool_list_changed(&self) -> Result<(), ToolError> {
        self.peer
            .notify_tool_list_changed()
            .await
            .map_err(|e| ToolError::failed(format!("the client could not be told: {e}")))
    }

    /// Ask the client's model for a completion (`sampling/createMessage`
    /// params in, its result out, as JSON). The question's key is
    /// `sampling-1`, `sampling-2`... in the order asked (see
    /// [`ask`](Self::ask)).
    ///
    /// Params that are not such a request are [`ToolError::Internal`]: the
    /// tool built them, so they are no fault of the model's arguments.
    pub async fn sample(&self, params: Value) -> Result<Value, ToolError> {
        let key = self.next_key(Need::Sampling);
        self.ask_for(&key, Need::Sampling, params).await
    }

    /// Ask the client's user to fill in a form or visit a URL
    /// (`elicitation/create` params in, its result out, as JSON). The
    /// question's key is `elicitation-1`, `elicitation-2`... in the order
    /// asked (see [`ask`](Self::ask)).
    ///
    /// Params that are not such a request are [`ToolError::Internal`], as
    /// for [`sample`](Self::sample).
    pub async fn elicit(&self, params: Value) -> Result<Value, ToolError> {
        let key = self.next_key(Need::Elicitation);
        self.ask_for(&key, Need::Elicitation, params).await
    }

    /// Ask the client for its roots (`roots/list`; its result out, as JSON).
    /// The question's key is `roots-1`, `roots-2`...
    pub async fn list_roots(&self) -> Result<Value, ToolError> {
        let key = self.next_key(Need::Roots);
        self.ask_for(&key, Need::Roots, Value::Null).await
    }

    /// Ask the client a question under a key of the tool's choosing:
    /// `method` is `sampling/createMessage`, `elicitation/create` or
    /// `roots/list`, `params` its params; the client's result comes out as
    /// JSON.
    ///
    /// On protocol 2026-07-28 the key names the question in the
    /// input-required result and across the rounds of the call: a tool
    /// asks each question under the same key every time it runs, and no two
    /// questions of one call share a key.
    pub async fn ask(&self, key: &str, method: &str, params: Value) -> Result<Value, ToolError> {
        let need = Need::from_method(method).ok_or_else(|| {
            ToolError::internal(format!("`{method}` is not a request a client answers"))
        })?;
        self.ask_for(key, need, params).await
    }

    /// Whether the client can be asked `method` (`sampling/createMessage`,
    /// `elicitation/create`, `roots/list`) in this call: it declared the
    /// capability, and something can carry the question to it.
    pub fn can_ask(&self, method: &str) -> bool {
        Need::from_method(method).is_some_and(|need| self.offers.has(need))
            && !matches!(self.channel, Channel::Closed(_))
    }

    fn next_key(&self, need: Need) -> String {
        let n = self.counts[need.index()].fetch_add(1, Ordering::Relaxed) + 1;
        format!("{}-{n}", need.what())
    }

    async fn ask_for(&self, key: &str, need: Need, params: Value) -> Result<Value, ToolError> {
        if let Channel::Closed(reason) = &self.channel {
            return Err(ToolError::failed(reason.to_string()));
        }
        if !self.offers.has(need) {
            // Protocol 2026-07-28: the request fails with -32021, naming
            // the capability.
            if let Channel::Rounds(rounds) = &self.channel {
                return rounds.refuse(need).await;
            }
            return Err(not_offered(need));
        }
        let malformed = |e: serde_json::Error| {
            ToolError::internal(format!("the {} request is malformed: {e}", need.what()))
        };
        match &self.channel {
            Channel::Closed(_) => unreachable!("handled above"),
            Channel::Rounds(rounds) => rounds.ask(key, need, params).await,
            Channel::Task(task) => ask_task(task, key, input_request(need, params)?).await,
            Channel::Push => {
                let failed = |e: rmcp::ServiceError| {
                    ToolError::failed(format!("the client did not answer: {e}"))
                };
                let result = match need {
                    Need::Sampling => {
                        let params = serde_json::from_value(params).map_err(malformed)?;
                        let result = self.peer.create_message(params).await.map_err(failed)?;
                        serde_json::to_value(result)
                    }
                    Need::Elicitation => {
                        let params = serde_json::from_value(params).map_err(malformed)?;
                        let result = self.peer.create_elicitation(params).await.map_err(failed)?;
                        serde_json::to_value(result)
                    }
                    Need::Roots => {
                        let result = self.peer.list_roots().await.map_err(failed)?;
                        serde_json::to_value(result)
                    }
                };
                Ok(result.unwrap_or_default())
            }
        }
    }
}

/// The answers in `responses` that are results (ignoring anything else).
pub(crate) fn answers(responses: Option<BTreeMap<String, Value>>) -> Map<String, Value> {
    responses.unwrap_or_default().into_iter().collect()
}

/// Sends a tool's progress to the client, in order, as progress notifications.
pub(crate) struct ProgressRelay {
    tx: mpsc::UnboundedSender<Progress>,
}

/// Ends a relay's task once the call is over, after it has sent what was reported.
pub(crate) struct RelayTask {
    done: tokio_util::sync::CancellationToken,
    task: tokio::task::JoinHandle<()>,
}

impl RelayTask {
    /// Send what is still queued, then stop.
    pub(crate) async fn finish(self) {
        self.done.cancel();
        let _ = self.task.await;
    }
}

impl ProgressRelay {
    /// A relay for the request that carried `token`, and the task sending its
    /// notifications. A clone of the context may outlive the call, so the
    /// task ends when told, not when the last relay is dropped.
    pub(crate) fn start(peer: Peer<RoleServer>, token: ProgressToken) -> (Arc<Self>, RelayTask) {
        let (tx, mut rx) = mpsc::unbounded_channel::<Progress>();
        let done = tokio_util::sync::CancellationToken::new();
        let finished = done.clone();
        let task = tokio::spawn(async move {
            let send = |progress: Progress| {
                let mut param = ProgressNotificationParam::new(token.clone(), progress.progress);
                param.total = progress.total;
                param.message = progress.message;
                let peer = peer.clone();
                async move { peer.notify_progress(param).await.is_ok() }
            };
            loop {
                tokio::select! {
                    biased;
                    progress = rx.recv() => match progress {
                        Some(progress) => if !send(progress).await { return },
                        None => return,
                    },
                    () = finished.cancelled() => break,
                }
            }
            while let Ok(progress) = rx.try_recv() {
                if !send(progress).await {
                    return;
                }
            }
        });
        (Arc::new(Self { tx }), RelayTask { done, task })
    }
}

impl ProgressReporter for ProgressRelay {
    fn report(&self, progress: Progress) {
        let _ = self.tx.send(progress);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offers_come_from_the_declared_capabilities() {
        let caps: ClientCapabilities =
            serde_json::from_value(json!({"sampling": {}, "roots": {"listChanged": true}}))
                .unwrap();
        let offers = Offers::from_capabilities(Some(&caps));
        assert!(offers.has(Need::Sampling) && offers.has(Need::Roots));
        assert!(!offers.has(Need::Elicitation));
        assert!(!Offers::from_capabilities(None).has(Need::Sampling));
    }

    #[tokio::test]
    async fn a_round_answers_what_it_knows_and_leaves_the_rest_open() {
        let mut known = Map::new();
        known.insert(
            "name".into(),
            json!({"action": "accept", "content": {"name": "Ada"}}),
        );
        known.insert("bad".into(), json!(42));
        let rounds = Rounds::new(known);
        let form = json!({"message": "?", "requestedSchema": {"type": "object", "properties": {}}});
        let answer = rounds
            .ask("name", Need::Elicitation, form.clone())
            .await
            .unwrap();
        assert_eq!(answer["content"]["name"], "Ada");
        // Not a result of the request: asked again.
        let open = tokio::time::timeout(
            std::time::Duration::from_millis(20),
            rounds.ask("bad", Need::Elicitation, form),
        )
        .await;
        assert!(open.is_err(), "an open question never returns");
        tokio::time::timeout(std::time::Duration::from_secs(1), rounds.asked())
            .await
            .expect("the server is told");
        let (open, used) = rounds.take();
        assert_eq!(open.keys().collect::<Vec<_>>(), ["bad"]);
        assert_eq!(used.keys().collect::<Vec<_>>(), ["name"]);
    }

    #[test]
    fn levels_rank_from_debug_to_emergency() {
        assert_eq!(level_rank("debug"), 0);
        assert!(level_rank("warning") > level_rank("info"));
        assert_eq!(level_rank("emergency"), LEVELS.len() - 1);
        assert_eq!(level_rank("chatty"), level_rank("info"));
    }
}

//! A bound on the sessions open at once over HTTP, and on the requests of
//! each being answered at once.
//!
//! Each session holds a handler and a worker task (about 64 KiB), and a
//! client makes one per `initialize`. Idle sessions close after five
//! minutes, but a client that initializes in a loop opens hundreds a second
//! before the first closes: without a bound, memory grows by gigabytes.
//!
//! Each request of a session comes in an HTTP request of its own, which a
//! client may drop at once: the handler runs on. Without a bound, a client
//! posting requests (and cancelling them) in a loop to a handler that does
//! not stop when cancelled had hundreds running at once in one session. A
//! request now waits for one of the session's slots before it is handed to
//! the session (see [`Admission`]).
//!
//! While the server has room, any client opens a session: every local
//! client, and every client behind a proxy, is one [`Peer`], and one of
//! them alone may use them all. Once it is full, a client under its part
//! of the sessions is given room by closing a session of a client over
//! its part: the oldest idle one (no request running or waiting, no stream
//! open), else the oldest with no request running (a stream open, or a
//! request waiting for its shares, costs nothing to hold, and would let a
//! client keep every session). A client opening sessions in a loop, or
//! keeping a stream open in each, cannot keep them all from the others,
//! and the one whose session went is answered 404 there, as the MCP spec
//! allows, and opens another. A client at its part, or with no such
//! session of a client over its part to close, is refused. The
//! SDK's session manager is not told who opens a session: the
//! SDK makes it inline, in the future that answers the `initialize`, so
//! the server runs that future in a task-local scope ([`answering`]) that
//! names the client, and in which a refusal is marked, for the server to
//! answer it as such (the SDK answers every failure to make a session as
//! an internal error, 500).

use std::cell::Cell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use futures_util::Stream;
use rmcp::RoleServer;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::session::{
    EventStore, RestoreOutcome, ServerSseMessage, SessionId, SessionManager,
};

use super::peer::Peer;
use crate::mcp::in_flight::{Admission, Admitted, Refused, ServerWide, refusal};

tokio::task_local! {
    /// The request being answered in this task: who sent it, and why a
    /// session it would open was refused, if it was.
    static ANSWERING: Answering;
}

struct Answering {
    peer: Peer,
    refused: Cell<Option<NoSession>>,
    /// The session the request named closed before it was reached (its
    /// client deleted it, it idled out, or it was given to another
    /// client): the SDK makes that a 500, the server answers 404.
    gone: Cell<bool>,
}

/// How a request's answering went, for the server to correct the SDK's
/// answer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Answered {
    /// Why a session it would open was refused, if it was.
    pub(super) refused: Option<NoSession>,
    /// Whether the session it named had closed.
    pub(super) gone: bool,
}

/// Why a new session was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum NoSession {
    /// As many sessions are open as the server keeps (this many).
    Full(usize),
    /// The client has as many sessions open as one client may (this many).
    ClientFull(usize),
}

/// Run `answer`, the answering of a request of `peer`, telling the session
/// manager who opens a session in it (the SDK awaits the making of a
/// session in the request's own future); returns its output and why a
/// session was refused in it, if one was.
pub(super) async fn answering<F: Future>(peer: Peer, answer: F) -> (F::Output, Answered) {
    let scope = Answering {
        peer,
        refused: Cell::new(None),
        gone: Cell::new(false),
    };
    ANSWERING
        .scope(scope, async move {
            let output = answer.await;
            let answered = ANSWERING.with(|answering| Answered {
                refused: answering.refused.take(),
                gone: answering.gone.get(),
            });
            (output, answered)
        })
        .await
}

/// `result` of an operation on a session, marked for the server to answer
/// 404 if it failed because the session had closed.
fn gone_if_closed<T>(result: Result<T, SessionsError>) -> Result<T, SessionsError> {
    if let Err(
        SessionsError::Local(LocalSessionManagerError::SessionNotFound(_))
        | SessionsError::Refused(Refused::Closed),
    ) = &result
    {
        let _ = ANSWERING.try_with(|answering| answering.gone.set(true));
    }
    result
}

/// The client opening a session now, if known.
fn opener() -> Option<Peer> {
    ANSWERING.try_with(|answering| answering.peer).ok()
}

/// Refuse a new session for `why`, marked for the server to answer.
fn refuse(why: NoSession) -> SessionsError {
    let _ = ANSWERING.try_with(|answering| answering.refused.set(Some(why)));
    why.into()
}

impl From<NoSession> for SessionsError {
    fn from(why: NoSession) -> Self {
        match why {
            NoSession::Full(max) => Self::Full(max),
            NoSession::ClientFull(max) => Self::ClientFull(max),
        }
    }
}

/// Who opened each open session, and when (in order), and how many each
/// client has open.
#[derive(Default)]
struct Owners {
    by_session: HashMap<SessionId, (Peer, u64)>,
    open: HashMap<Peer, usize>,
    next: u64,
}

impl Owners {
    fn open_by(&self, peer: Peer) -> usize {
        self.open.get(&peer).copied().unwrap_or(0)
    }

    fn add(&mut self, id: SessionId, peer: Peer) {
        if let std::collections::hash_map::Entry::Vacant(entry) = self.by_session.entry(id) {
            entry.insert((peer, self.next));
            self.next += 1;
            *self.open.entry(peer).or_default() += 1;
        }
    }

    /// The sessions of the clients with more than `part` open, oldest
    /// first.
    fn over(&self, part: usize) -> Vec<SessionId> {
        let mut over: Vec<(u64, &SessionId)> = self
            .by_session
            .iter()
            .filter(|(_, (peer, _))| self.open_by(*peer) > part)
            .map(|(id, (_, opened))| (*opened, id))
            .collect();
        over.sort_unstable_by_key(|(opened, _)| *opened);
        over.into_iter().map(|(_, id)| id.clone()).collect()
    }

    /// Session `id` closed (told once or more).
    fn remove(&mut self, id: &SessionId) {
        let Some((peer, _)) = self.by_session.remove(id) else {
            return;
        };
        if let Some(open) = self.open.get_mut(&peer) {
            *open -= 1;
            if *open == 0 {
                self.open.remove(&peer);
            }
        }
    }
}

/// What to do once a session has closed (forget its owner).
pub(super) type OnClose = Box<dyn Fn(&str) + Send + Sync>;

/// What the server knows of an open session's use: its requests' slots,
/// and its event streams (GET) open.
struct InUse {
    admission: Admission,
    streams: Arc<AtomicUsize>,
}

/// One open event stream of a session, counted until it is dropped.
struct StreamOpen(Arc<AtomicUsize>);

impl Drop for StreamOpen {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The in-memory sessions, at most `max` of them at once; once full, a
/// client with fewer than `per_client` open is given a session with no
/// request running (an idle one first) of a client with more.
pub(super) struct BoundedSessions {
    inner: LocalSessionManager,
    max: usize,
    per_client: usize,
    /// Who opened each session, when known.
    owners: Mutex<Owners>,
    /// Held from the count to the new session's making, so that sessions
    /// made at once cannot all see room for one more.
    making: tokio::sync::Mutex<()>,
    /// The slots of each open session's requests, and its streams.
    admissions: Mutex<HashMap<SessionId, InUse>>,
    /// The requests of all sessions answered at once, a session holding
    /// at most half of them, a client its share.
    overall: ServerWide,
    closed: OnClose,
}

impl BoundedSessions {
    /// At most `max` sessions of `inner`, `per_client` of one client once
    /// they are all open (when the client is known: see [`answering`]),
    /// answering as many requests
    /// at once in all as `requests` has permits; `closed` is told of each
    /// session that closes (deleted by its client, idle too long, or
    /// ended).
    pub(super) fn new(
        inner: LocalSessionManager,
        (max, per_client): (usize, usize),
        requests: ServerWide,
        closed: OnClose,
    ) -> Self {
        Self {
            inner,
            max,
            per_client,
            owners: Mutex::default(),
            making: tokio::sync::Mutex::new(()),
            admissions: Mutex::default(),
            overall: requests,
            closed,
        }
    }

    /// A new session's transport, its requests let in by an admission of
    /// its own.
    fn admitted(
        &self,
        id: &SessionId,
        transport: LocalTransport,
    ) -> Admitted<LocalTransport, RoleServer> {
        let admission = Admission::new(Some(&self.overall));
        let transport = admission.transport(transport);
        let in_use = InUse {
            admission,
            streams: Arc::default(),
        };
        self.admissions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id.clone(), in_use);
        transport
    }

    /// `stream`, an event stream of session `id`, counted as open while
    /// it lives: a session with one open is not idle.
    fn counted<S: Stream + Send + Sync + 'static>(
        &self,
        id: &SessionId,
        stream: S,
    ) -> impl Stream<Item = S::Item> + Send + Sync + 'static {
        use futures_util::StreamExt;
        let open = self
            .admissions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(id)
            .map(|in_use| {
                in_use.streams.fetch_add(1, Ordering::SeqCst);
                StreamOpen(Arc::clone(&in_use.streams))
            });
        stream.map(move |item| {
            let _open = &open;
            item
        })
    }

    /// Whether session `id` is open and idle: no request running, being
    /// written out or waiting, and no event stream open.
    fn is_idle(&self, id: &SessionId) -> bool {
        self.admissions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(id)
            .is_some_and(|in_use| {
                in_use.admission.is_idle() && in_use.streams.load(Ordering::SeqCst) == 0
            })
    }

    /// Whether session `id` is open and none of its requests holds a
    /// server-wide permit: at most an event stream open, or requests
    /// waiting for their shares. Such a session costs the client nothing
    /// to keep, so it does not keep it from being given to another.
    fn is_not_running(&self, id: &SessionId) -> bool {
        self.admissions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(id)
            .is_some_and(|in_use| !in_use.admission.is_running())
    }

    /// Wait until `message` to session `id`, if a request, may be handed
    /// on (see [`Admission::admit`]).
    async fn admit(
        &self,
        id: &SessionId,
        message: &mut ClientJsonRpcMessage,
    ) -> Result<(), SessionsError> {
        let admission = self
            .admissions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(id)
            .map(|in_use| in_use.admission.clone());
        match admission {
            Some(admission) => Ok(admission.admit::<RoleServer>(message).await?),
            // Not open: the session manager says so.
            None => Ok(()),
        }
    }

    /// Room for a new session of the client opening it (returned, if
    /// known): while the server has room, any client has it. Once full, a
    /// client under its part is given a session of a client over its part,
    /// closed: the oldest idle one, else the oldest with no request
    /// running. A client at its part, or one for which no such session
    /// exists, is refused.
    async fn make_room(&self) -> Result<Option<Peer>, SessionsError> {
        let peer = opener();
        if self.inner.sessions.read().await.len() < self.max {
            return Ok(peer);
        }
        let Some(peer) = peer else {
            return Err(refuse(NoSession::Full(self.max)));
        };
        if self.owners().open_by(peer) >= self.per_client {
            return Err(refuse(NoSession::ClientFull(self.per_client)));
        }
        // An idle session first; else one with no request running (an
        // event stream open, or requests waiting for their shares, cost
        // nothing to hold: were they enough to keep a session, one client
        // could keep every session with a stream open in each).
        let over = self.owners().over(self.per_client);
        let idle = over.iter().find(|id| self.is_idle(id));
        let taken = idle.or_else(|| over.iter().find(|id| self.is_not_running(id)));
        let Some(id) = taken else {
            return Err(refuse(NoSession::Full(self.max)));
        };
        tracing::info!(
            session = %id,
            "closing a session of a client over its part of the sessions, for another client"
        );
        self.close_now(id).await;
        Ok(Some(peer))
    }

    /// Close session `id` for another client's: forgotten at once, its
    /// waiting requests refused and its streams ended, while its worker is
    /// told to stop in a task of its own (a worker writing to a client that
    /// does not read would otherwise hold up every new session).
    async fn close_now(&self, id: &SessionId) {
        let handle = self.inner.sessions.write().await.remove(id);
        self.forget(id);
        if let Some(handle) = handle {
            tokio::spawn(async move {
                let _ = handle.close().await;
            });
        }
    }

    /// What the server keeps of session `id`, which has closed: its
    /// admission (its waiting requests refused), its owner, and the gate's
    /// record of it.
    fn forget(&self, id: &SessionId) {
        let admission = self
            .admissions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(id);
        if let Some(in_use) = admission {
            in_use.admission.close();
        }
        self.owners().remove(id);
        (self.closed)(id);
    }

    fn owners(&self) -> std::sync::MutexGuard<'_, Owners> {
        self.owners.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Session `id` was opened by `peer`, if known.
    fn opened(&self, id: &SessionId, peer: Option<Peer>) {
        if let Some(peer) = peer {
            self.owners().add(id.clone(), peer);
        }
    }
}

/// Why a session operation failed.
#[derive(Debug, thiserror::Error)]
pub(super) enum SessionsError {
    /// As many sessions are open as the server keeps.
    #[error("{0} sessions are open, as many as this server keeps; try again later")]
    Full(usize),
    /// The server is full, and the client has as many sessions open as
    /// one client keeps then.
    #[error(
        "this client has {0} sessions open, as many as one client may while the server is full; close one (DELETE) or try again later"
    )]
    ClientFull(usize),
    #[error(transparent)]
    Local(#[from] LocalSessionManagerError),
    #[error(transparent)]
    Refused(#[from] Refused),
}

/// The transport of a session of the in-memory manager.
type LocalTransport = <LocalSessionManager as SessionManager>::Transport;

impl SessionManager for BoundedSessions {
    type Error = SessionsError;
    type Transport = Admitted<LocalTransport, RoleServer>;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let _making = self.making.lock().await;
        let peer = self.make_room().await?;
        let (id, transport) = self.inner.create_session().await?;
        self.opened(&id, peer);
        let transport = self.admitted(&id, transport);
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        Ok(self.inner.initialize_session(id, message).await?)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        Ok(self.inner.has_session(id).await?)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        let closed = self.inner.close_session(id).await;
        self.forget(id);
        Ok(closed?)
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        mut message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        use futures_util::StreamExt;
        let request = match &message {
            ClientJsonRpcMessage::Request(request) => Some(request.id.clone()),
            _ => None,
        };
        match (self.admit(id, &mut message).await, request) {
            // Answered at once with an error, as over a byte stream.
            (Err(SessionsError::Refused(Refused::Busy)), Some(request)) => {
                let refused = ServerSseMessage::from_message(refusal::<RoleServer>(request));
                Ok(futures_util::stream::iter(Some(refused)).left_stream())
            }
            // Cancelled while it waited: never run, and, as a cancelled
            // request, not answered (its event stream ends empty).
            (Err(SessionsError::Refused(Refused::Cancelled)), Some(_)) => {
                Ok(futures_util::stream::iter(None).left_stream())
            }
            (Err(other), _) => gone_if_closed(Err(other)),
            (Ok(()), _) => {
                let stream = gone_if_closed(Ok(self.inner.create_stream(id, message).await?))?;
                Ok(stream.right_stream())
            }
        }
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        mut message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        // Requests come by `create_stream`; one here is let in all the same.
        gone_if_closed(self.admit(id, &mut message).await)?;
        gone_if_closed(Ok(self.inner.accept_message(id, message).await?))
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let stream = gone_if_closed(Ok(self.inner.create_standalone_stream(id).await?))?;
        Ok(self.counted(id, stream))
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let stream = gone_if_closed(Ok(self.inner.resume(id, last_event_id).await?))?;
        Ok(self.counted(id, stream))
    }

    async fn restore_session(
        &self,
        id: SessionId,
    ) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        let _making = self.making.lock().await;
        let peer = if self.inner.has_session(&id).await? {
            None
        } else {
            self.make_room().await?
        };
        Ok(match self.inner.restore_session(id.clone()).await? {
            RestoreOutcome::Restored(transport) => {
                self.opened(&id, peer);
                RestoreOutcome::Restored(self.admitted(&id, transport))
            }
            RestoreOutcome::AlreadyPresent => RestoreOutcome::AlreadyPresent,
            _ => RestoreOutcome::NotSupported,
        })
    }

    fn event_store(&self) -> Option<Arc<dyn EventStore>> {
        self.inner.event_store()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A session that closes is told of at once, by its id, and its
    /// requests' slots go with it.
    #[tokio::test]
    async fn a_closed_session_is_told_of_and_its_slots_go() {
        let closed = Arc::new(Mutex::new(Vec::<String>::new()));
        let told = Arc::clone(&closed);
        let sessions = BoundedSessions::new(
            LocalSessionManager::default(),
            (4, 4),
            ServerWide::new(64, 64),
            Box::new(move |id| told.lock().unwrap().push(id.to_owned())),
        );
        let (kept, _kept_transport) = sessions.create_session().await.unwrap();
        let (id, transport) = sessions.create_session().await.unwrap();
        assert_eq!(sessions.admissions.lock().unwrap().len(), 2);
        drop(transport);
        sessions.close_session(&id).await.unwrap();
        assert_eq!(*closed.lock().unwrap(), [id.to_string()]);
        let admissions = sessions.admissions.lock().unwrap();
        assert!(!admissions.contains_key(&id));
        assert!(admissions.contains_key(&kept));
    }

    fn peer(n: u8) -> Peer {
        Peer::of(std::net::IpAddr::from([127, 0, 0, n]))
    }

    fn bounded(max: usize, per_client: usize) -> BoundedSessions {
        BoundedSessions::new(
            LocalSessionManager::default(),
            (max, per_client),
            ServerWide::new(64, 64),
            Box::new(|_| {}),
        )
    }

    /// While there is room, one client opens every session. Once full, a
    /// client under its part is given the oldest idle session of the one
    /// over it; a client at its part is refused, and told so in its
    /// answering's scope. A session closed twice counts once.
    #[tokio::test]
    async fn once_full_a_client_under_its_part_takes_an_idle_session() {
        let sessions = bounded(4, 2);
        let mut first = Vec::new();
        for _ in 0..4 {
            let (made, Answered { refused, .. }) =
                answering(peer(2), sessions.create_session()).await;
            assert_eq!(refused, None);
            first.push(made.unwrap());
        }
        let (made, Answered { refused, .. }) = answering(peer(2), sessions.create_session()).await;
        assert!(matches!(made, Err(SessionsError::ClientFull(2))));
        assert_eq!(refused, Some(NoSession::ClientFull(2)));
        let mut second = Vec::new();
        for _ in 0..2 {
            let (made, Answered { refused, .. }) =
                answering(peer(3), sessions.create_session()).await;
            assert_eq!(refused, None);
            second.push(made.unwrap());
        }
        let inner = &sessions.inner;
        assert!(!inner.has_session(&first[0].0).await.unwrap());
        assert!(!inner.has_session(&first[1].0).await.unwrap());
        assert!(inner.has_session(&first[2].0).await.unwrap());
        let (made, _) = answering(peer(3), sessions.create_session()).await;
        assert!(matches!(made, Err(SessionsError::ClientFull(2))));
        // No client is over its part: nothing to take.
        let (made, Answered { refused, .. }) = answering(peer(4), sessions.create_session()).await;
        assert!(matches!(made, Err(SessionsError::Full(4))));
        assert_eq!(refused, Some(NoSession::Full(4)));
        let (id, transport) = second.pop().unwrap();
        drop(transport);
        sessions.close_session(&id).await.unwrap();
        // Told twice (deleted, then its worker ended): counted once.
        let _ = sessions.close_session(&id).await;
        assert_eq!(sessions.owners().open_by(peer(3)), 1);
        let (made, Answered { refused, .. }) = answering(peer(4), sessions.create_session()).await;
        assert!(made.is_ok());
        assert_eq!(refused, None);
    }

    /// A full server refuses every client, and says so in the scope; made
    /// outside any scope, a session is bounded by the server's count alone.
    #[tokio::test]
    async fn a_full_server_refuses_and_says_why() {
        let sessions = bounded(2, 1);
        let _kept = [
            sessions.create_session().await.unwrap(),
            sessions.create_session().await.unwrap(),
        ];
        let (made, Answered { refused, .. }) = answering(peer(4), sessions.create_session()).await;
        assert!(matches!(made, Err(SessionsError::Full(2))));
        assert_eq!(refused, Some(NoSession::Full(2)));
    }
}

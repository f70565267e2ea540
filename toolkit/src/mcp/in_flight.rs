//! A bound on the requests of one peer that are being answered at once,
//! for either side of a session: the server answering a client, the client
//! answering a server (its sampling, elicitation and ping requests).
//!
//! The SDK reads a peer's requests as fast as they come and answers each in
//! a task of its own. A peer that sends requests in a loop, and worse, one
//! that never reads the answers, would have us hold every request and every
//! unsent answer: gigabytes in seconds. Here a request is handed on only
//! while fewer than [`MAX_IN_FLIGHT`] are being answered. A request counts
//! until its handler has ended and its answer is written out, or, when the
//! peer cancels it, until its handler has ended (the answer of a cancelled
//! request is not sent; where the SDK sends it all the same, its writing
//! takes a slot again). The SDK only tells a handler of a cancel through
//! its cancellation token, and a handler need not watch it: were the slot
//! free at the cancel, a peer sending "request, cancel" in a loop would
//! have as many handlers running at once as it likes. So the slot goes
//! with the request to its handler ([`Slot`], in the request's extensions,
//! which the SDK hands to the handler in its context) and comes free only
//! when the handler's future is done with it, completed or dropped.
//! Past that, up to [`MAX_WAITING`] more requests
//! are read and held. Beyond those, a request is refused at once with an
//! error ([`BUSY`], -32029) and reading goes on, so the answers and
//! notifications the peer sends behind its requests always come through:
//! a request of ours waiting for the peer's answer to its own question
//! holds a slot, and were the answers left unread behind requests we no
//! longer read, the slots would never come free (300 calls sent at once,
//! each asking the client a question, had every call wait for ever; a
//! `ping` or cancel behind 128 such calls was never read). While a
//! refusal is written nothing more is read, so a peer that floods requests
//! and never reads the answers is held back by the pipe or the connection,
//! where the kernel bounds what waits.

use std::collections::HashMap;
use std::collections::VecDeque;
use std::sync::Mutex;
use std::sync::{Arc, Weak};

use rmcp::model::{
    ClientNotification, ErrorCode, ErrorData, GetExtensions, JsonRpcMessage, RequestId,
    ServerNotification,
};
use rmcp::service::{RxJsonRpcMessage, ServiceRole, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::{RoleClient, RoleServer};

use crate::mcp::server::peer::Peer;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, TryAcquireError};

/// Requests of one peer answered at once.
const MAX_IN_FLIGHT: usize = 64;

/// Requests of one peer read and held while all slots are taken.
const MAX_WAITING: usize = 64;

/// A side of a session: how it reads the peer's cancelling of a request.
pub(crate) trait Side: ServiceRole {
    /// The request a notification from the peer cancels, if it is a
    /// cancel.
    fn cancelled(notification: &Self::PeerNot) -> Option<&RequestId>;
}

impl Side for RoleServer {
    fn cancelled(notification: &ClientNotification) -> Option<&RequestId> {
        match notification {
            ClientNotification::CancelledNotification(cancelled) => {
                cancelled.params.request_id.as_ref()
            }
            _ => None,
        }
    }
}

impl Side for RoleClient {
    fn cancelled(notification: &ServerNotification) -> Option<&RequestId> {
        match notification {
            ServerNotification::CancelledNotification(cancelled) => {
                cancelled.params.request_id.as_ref()
            }
            _ => None,
        }
    }
}

/// `T`, reading a request only while fewer than [`MAX_IN_FLIGHT`] are
/// being answered.
pub(crate) struct InFlight<T, R: ServiceRole> {
    inner: T,
    slots: Arc<Slots>,
    /// Requests read and not yet handed on, oldest first. Kept here, not in
    /// `receive`'s future: that may be dropped while it waits, and a
    /// message must not be lost.
    waiting: VecDeque<RxJsonRpcMessage<R>>,
    /// The refusal of a request past the queue, while it is written. Kept
    /// here for the same reason.
    refusing: Option<Refusal>,
}

/// The writing of a refusal.
type Refusal = std::pin::Pin<Box<dyn Future<Output = ()> + Send>>;

/// What [`InFlight::receive`] waited for.
enum Next<M> {
    /// A slot came free for the oldest waiting request.
    Slot,
    /// A refusal was written.
    Refused,
    /// The peer sent a message.
    Read(M),
}

/// The error code of a request refused because too many are answered and
/// waiting at once: the one for "rate limited" the client uses too.
const BUSY: i32 = -32029;

/// The error a request past the slots and the queue is answered with.
fn busy() -> ErrorData {
    ErrorData::new(
        ErrorCode(BUSY),
        format!(
            "too many requests at once: {MAX_IN_FLIGHT} are being answered and {MAX_WAITING} wait; send it again once one is answered"
        ),
        None,
    )
}

struct Slots {
    /// Shared with every [`Slot`], which gives its permit back here.
    free: Arc<Semaphore>,
    /// The requests handed on whose answer is still to be written, each
    /// holding its slot. Only these are let go by an answer: an error the
    /// server sends unasked (for a line it could not read) must not free a
    /// slot, and a request the peer cancels (whose answer is never sent)
    /// must not keep one past its handler.
    taken: Mutex<HashMap<RequestId, Slot>>,
}

/// The slot of one request being answered: it comes free when the last
/// clone is dropped, that is when both the request's handler has ended
/// (the clone in the request's extensions, which the handler's context
/// holds) and its answer is written out or will never be (the clone in
/// [`Slots::taken`]).
///
/// A handler that panics sends no answer, and would leave the clone in
/// [`Slots::taken`] there for ever: a clone dropped while its thread
/// panics (the handler's, as its future is dropped) takes that one too.
#[derive(Clone)]
pub(crate) struct Slot {
    held: Arc<Held>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        if std::thread::panicking()
            && let Some(id) = &self.held.id
            && let Some(slots) = self.held.slots.upgrade()
        {
            slots.give_back_held(id, &self.held);
        }
    }
}

/// What a [`Slot`]'s last clone gives back when it goes.
struct Held {
    /// The request holding the slot, if any, and where its answer's
    /// clone is kept.
    id: Option<RequestId>,
    slots: std::sync::Weak<Slots>,
    free: Arc<Semaphore>,
    /// The permits of a request let in by an [`Admission`] bounded
    /// server-wide, given back with the slot.
    _overall: Option<ServerPermits>,
}

impl Drop for Held {
    fn drop(&mut self) {
        self.free.add_permits(1);
    }
}

impl Slots {
    /// A slot for a permit of `free` just acquired and forgotten (and
    /// the `overall` permits, if any), for the request `id`: the
    /// [`Slot`]'s last clone gives them back.
    fn slot(self: &Arc<Self>, id: Option<RequestId>, overall: Option<ServerPermits>) -> Slot {
        Slot {
            held: Arc::new(Held {
                id,
                slots: Arc::downgrade(self),
                free: Arc::clone(&self.free),
                _overall: overall,
            }),
        }
    }

    /// The request `id` is answered or cancelled: its answer holds its
    /// slot no more (its handler may still).
    fn give_back(&self, id: &RequestId) {
        // Dropped outside the lock: it may be the last clone.
        drop(self.take_out(id));
    }

    /// The slot the request `id` holds for its answer, taken out: the id
    /// is free for another request, and the caller holds the slot.
    fn take_out(&self, id: &RequestId) -> Option<Slot> {
        self.taken
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(id)
    }

    /// [`give_back`](Self::give_back), if the slot `id` holds is `held`
    /// (not that of a later request reusing the id).
    fn give_back_held(&self, id: &RequestId, held: &Arc<Held>) {
        let mut taken = self.taken.lock().unwrap_or_else(|e| e.into_inner());
        let mine = taken
            .get(id)
            .is_some_and(|slot| Arc::ptr_eq(&slot.held, held));
        let slot = if mine { taken.remove(id) } else { None };
        drop(taken);
        // Dropped outside the lock: it may be the last clone.
        drop(slot);
    }

    /// Whether the request `id` holds a slot until its answer is written.
    fn holds(&self, id: &RequestId) -> bool {
        self.taken
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains_key(id)
    }

    /// The request `id` holds `slot` until it is answered or cancelled. A
    /// request of the same id holding one already (its answer would
    /// answer both) lets its entry go; its handler keeps its own.
    fn take(&self, id: RequestId, slot: Slot) {
        let before = self
            .taken
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id, slot);
        drop(before);
    }
}

impl<T, R: ServiceRole> InFlight<T, R> {
    /// Hand on the oldest waiting request, in a slot just acquired (whose
    /// permit was forgotten: the [`Slot`] made here gives it back).
    fn hand_on(&mut self) -> Option<RxJsonRpcMessage<R>> {
        let request = self.waiting.pop_front();
        let id = match &request {
            Some(JsonRpcMessage::Request(request)) => Some(request.id.clone()),
            _ => None,
        };
        let slot = self.slots.slot(id, None);
        let mut request = request?;
        if let JsonRpcMessage::Request(request) = &mut request {
            self.slots.take(request.id.clone(), slot.clone());
            // The SDK moves a request's extensions into its handler's
            // context: the handler holds the slot until its future ends.
            request.request.extensions_mut().insert(slot);
        }
        Some(request)
    }

    /// Whether a request of this id is being answered or waits to be.
    fn is_pending(&self, id: &RequestId) -> bool {
        self.slots.holds(id)
            || self
                .waiting
                .iter()
                .any(|waiting| matches!(waiting, JsonRpcMessage::Request(r) if &r.id == id))
    }

    pub(crate) fn new(inner: T) -> Self {
        Self {
            inner,
            slots: Arc::new(Slots {
                free: Arc::new(Semaphore::new(MAX_IN_FLIGHT)),
                taken: Mutex::new(HashMap::new()),
            }),
            waiting: VecDeque::new(),
            refusing: None,
        }
    }
}

/// Send `item` on `inner`, an answer giving back its request's slot once
/// written.
fn send_holding<T: Transport<R>, R: ServiceRole>(
    slots: &Arc<Slots>,
    inner: &mut T,
    item: TxJsonRpcMessage<R>,
) -> impl Future<Output = Result<(), T::Error>> + Send + 'static {
    let answered = match &item {
        JsonRpcMessage::Response(response) => Some(response.id.clone()),
        JsonRpcMessage::Error(error) => error.id.clone(),
        _ => None,
    };
    // An answer to a request that holds no slot any more: the peer
    // cancelled it, and the SDK answers it all the same (a client's SDK
    // does on protocol 2026-07-28, where a cancel does not stop a
    // server's request). Its writing takes a slot of its own, or a peer
    // asking, cancelling and never reading would have us hold answers
    // without end.
    //
    // The answer's slot is taken out of `taken` before the answer is handed
    // on, and held until it is written: the id is free again before the
    // peer can read the answer (a peer may reuse an answered id, and one
    // quick to do so was refused as reusing an id in use), and a request
    // reusing it later keeps its own slot.
    let holding = answered.as_ref().and_then(|id| slots.take_out(id));
    let free = (answered.is_some() && holding.is_none()).then(|| Arc::clone(&slots.free));
    let sent = inner.send(item);
    async move {
        let _writing = match free {
            Some(free) => free.acquire_owned().await.ok(),
            None => None,
        };
        let result = sent.await;
        // Dropped once written: it may be the last clone.
        drop(holding);
        result
    }
}

impl<T: Transport<R>, R: Side> Transport<R> for InFlight<T, R> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<R>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        send_holding(&self.slots, &mut self.inner, item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<R>> {
        loop {
            let slots = Arc::clone(&self.slots);
            let waiting = !self.waiting.is_empty();
            if waiting && let Ok(permit) = slots.free.try_acquire() {
                permit.forget();
                return self.hand_on();
            }
            let inner = &mut self.inner;
            let refusing = self.refusing.as_mut();
            let is_refusing = refusing.is_some();
            // Cancel-safe: a permit is forgotten only where a request is
            // handed on, what is read is handed on or queued at once, and
            // a refusal being written is kept in `self`.
            let next = tokio::select! {
                permit = slots.free.acquire(), if waiting => match permit {
                    Ok(permit) => {
                        permit.forget();
                        Next::Slot
                    }
                    Err(_) => return None,
                },
                () = async { if let Some(refusal) = refusing { refusal.await } }, if is_refusing => {
                    Next::Refused
                }
                // While a refusal is written nothing more is read: a peer
                // that floods requests and never reads is held back by
                // the pipe.
                message = inner.receive(), if !is_refusing => Next::Read(message?),
            };
            let message = match next {
                Next::Slot => return self.hand_on(),
                Next::Refused => {
                    self.refusing = None;
                    continue;
                }
                Next::Read(message) => message,
            };
            match message {
                // A request reusing the id of one not yet answered is
                // refused, not run: the SDK would start a handler for each,
                // and its one answer would answer both. It is answered, as
                // JSON-RPC wants every request to be, though its answer
                // bears the id of the other too: the peer broke the rule.
                JsonRpcMessage::Request(request) if self.is_pending(&request.id) => {
                    tracing::warn!(id = %request.id, "refusing a request whose id is already in use");
                    let sent = self.inner.send(id_in_use::<R>(request.id));
                    self.refusing = Some(Box::pin(async move {
                        let _ = sent.await;
                    }));
                }
                // Past the slots and the queue, a request is refused, so
                // what the peer sends behind it is still read.
                JsonRpcMessage::Request(request) if self.waiting.len() >= MAX_WAITING => {
                    tracing::warn!(id = %request.id, "refusing a request past the bound");
                    let sent = self.inner.send(refusal::<R>(request.id));
                    self.refusing = Some(Box::pin(async move {
                        let _ = sent.await;
                    }));
                }
                request @ JsonRpcMessage::Request(_) => self.waiting.push_back(request),
                // Answers and notifications are never held back. A request
                // cancelled is never answered: its slot comes free when its
                // handler ends (the SDK tells the handler of the cancel).
                other => {
                    if let JsonRpcMessage::Notification(notification) = &other
                        && let Some(id) = R::cancelled(&notification.notification)
                    {
                        self.slots.give_back(id);
                        self.waiting.retain(
                            |waiting| !matches!(waiting, JsonRpcMessage::Request(r) if &r.id == id),
                        );
                    }
                    return Some(other);
                }
            }
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

/// The slots of one session whose requests are let in before they reach
/// its transport: the HTTP server's. There a session's transport is fed by
/// a worker that also carries the session's answers out, so holding
/// requests back in the transport, as [`InFlight`] does, would stop the
/// answers that free the slots. Instead a request waits for its slot where
/// it arrives, before it is handed to the session (its HTTP request
/// waits), and the slot goes with it to its handler, held as in
/// [`InFlight`]: until the handler has ended and its answer is handed out,
/// or, cancelled, until its handler has ended.
#[derive(Clone)]
pub(crate) struct Admission {
    slots: Arc<Slots>,
    /// Requests waiting for a slot or a server-wide permit: past
    /// [`MAX_WAITING`], a request is refused at once, as over a byte
    /// stream.
    waiting: Arc<std::sync::atomic::AtomicUsize>,
    /// The permits shared by every session of the server, if bounded: a
    /// request holds one besides its session's slot, given back with it.
    overall: Option<SessionShare>,
    /// Cancelled when the session closes: a request waiting for a permit
    /// of the server's (which the closing does not close) stops waiting.
    closed: tokio_util::sync::CancellationToken,
    /// The requests waiting, by id: a cancel of one stops its wait, and it
    /// never runs.
    cancels: Arc<Mutex<Cancels>>,
    /// The session's requests holding a server-wide permit: running, or
    /// their answers being written.
    running: Arc<std::sync::atomic::AtomicUsize>,
}

/// One request of a session counted as running while it holds its
/// server-wide permit.
struct Running(Arc<std::sync::atomic::AtomicUsize>);

impl Running {
    fn new(count: &Arc<std::sync::atomic::AtomicUsize>) -> Self {
        count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Self(Arc::clone(count))
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.0.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

/// The requests of a session waiting to be let in, each with what stops
/// its wait when the peer cancels it.
#[derive(Default)]
struct Cancels {
    next: u64,
    waiting: HashMap<u64, (RequestId, tokio_util::sync::CancellationToken)>,
}

/// The permits every session of a server shares, with the most one
/// session, and one client in all its sessions, may hold at once.
#[derive(Clone)]
pub(crate) struct ServerWide {
    permits: Arc<Semaphore>,
    per_session: usize,
    per_client: usize,
    /// Each client's share of them, by the address it connects from, kept
    /// while one of its requests holds or waits for a permit of it: every
    /// session the client opens takes from the same share.
    shares: Arc<Mutex<HashMap<Peer, Weak<Semaphore>>>>,
    /// Each client's requests answered outside every session of a server
    /// that keeps sessions hold at most a session's share, as if they were
    /// one session of their own: behind a proxy (one client that may hold
    /// every permit) a flood of them leaves the sessions the rest, and
    /// clients that use no session are as fair to each other as sessions
    /// are. Kept as [`shares`](Self::shares) are.
    outside: Arc<Mutex<HashMap<Peer, Weak<Semaphore>>>>,
}

/// What a request holds of a server's permits, given back with it.
pub(crate) struct ServerPermits {
    /// One of its session's share, or, outside every session, of its
    /// client's requests outside sessions.
    _session: Option<OwnedSemaphorePermit>,
    _client: Option<OwnedSemaphorePermit>,
    _permit: OwnedSemaphorePermit,
    /// In a session, the request counted as running.
    _running: Option<Running>,
}

impl ServerWide {
    /// `permits` permits (at least 1) in all. One session holds at most
    /// half of them, rounded up, and one client `per_client` (at least 1):
    /// the others always have the rest, however long one client's handlers
    /// run (they need not end when cancelled), while a client alone still
    /// has most of them.
    pub(crate) fn new(permits: usize, per_client: usize) -> Self {
        let permits = permits.max(1);
        Self {
            permits: Arc::new(Semaphore::new(permits)),
            per_session: permits.div_ceil(2),
            per_client: per_client.clamp(1, permits),
            shares: Arc::default(),
            outside: Arc::default(),
        }
    }

    /// The share of `peer` in `shares`, of `size` permits: the one its
    /// other requests take from, or a new one if none of them holds or
    /// waits for a permit.
    fn share_in(
        shares: &Mutex<HashMap<Peer, Weak<Semaphore>>>,
        peer: Peer,
        size: usize,
    ) -> Arc<Semaphore> {
        let mut shares = shares.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(share) = shares.get(&peer).and_then(Weak::upgrade) {
            return share;
        }
        // Forget the clients that hold nothing now: the map holds at most
        // the clients with a request holding or waiting for a permit.
        shares.retain(|_, share| share.strong_count() > 0);
        let share = Arc::new(Semaphore::new(size));
        shares.insert(peer, Arc::downgrade(&share));
        share
    }

    /// The share of `peer`, all its requests'.
    fn share_of(&self, peer: Peer) -> Arc<Semaphore> {
        Self::share_in(&self.shares, peer, self.per_client)
    }

    /// Permits for a request of `peer` outside any session (a stateless
    /// server's), waited for: one of its client's share, then one of all.
    /// `None` if the permits are closed.
    pub(crate) async fn permits_for(&self, peer: Peer) -> Option<ServerPermits> {
        self.permits_of(Some(peer), false).await
    }

    /// [`permits_for`](Self::permits_for), the client's shares only when
    /// the request came with an address; if `outside` (a request outside
    /// every session of a server that keeps sessions), one of the client's
    /// [`outside`](Self::outside) share too, taken after its share of all,
    /// so a request waiting for that holds none of it.
    async fn permits_of(&self, peer: Option<Peer>, outside: bool) -> Option<ServerPermits> {
        let client = match peer {
            Some(peer) => Some(self.share_of(peer).acquire_owned().await.ok()?),
            None => None,
        };
        let pool = match peer {
            Some(peer) if outside => {
                let share = Self::share_in(&self.outside, peer, self.per_session);
                Some(share.acquire_owned().await.ok()?)
            }
            _ => None,
        };
        let permit = Arc::clone(&self.permits).acquire_owned().await.ok()?;
        Some(ServerPermits {
            _session: pool,
            _client: client,
            _permit: permit,
            _running: None,
        })
    }
}

/// The server-wide permits of a request answered outside every session,
/// taken by its handler: a request of protocol 2026-07-28 (its version in
/// its `_meta`, no session named) posted to a server that keeps sessions.
/// The SDK answers it in a handler of its own, outside every session, and
/// tells it from an `initialize` only by its body; an `initialize`'s HTTP
/// head (with its extensions) is kept for its session's whole life, so a
/// permit put there would be held for ever. The server puts a handle to
/// its permits ([`ServerWide`], not a permit) in every request's head;
/// here, where the request is known, the handler of one that holds no
/// session's [`Slot`] waits for its client's share, its client's share of
/// requests outside sessions (half of the permits, as one session has) and
/// a permit, and holds them until its future is done (completed or dropped): one that
/// does not watch its cancellation keeps counting while it runs.
///
/// `None` for a session's request (its [`Slot`] holds its permits), for a
/// stateless server's (its permits were taken before it was read; its head
/// carries no handle) and for a request that did not come over HTTP. A
/// request cancelled while it waits (its client left: the SDK cancels it)
/// stops waiting and is never run.
pub(crate) async fn outside_sessions(
    context: &rmcp::service::RequestContext<RoleServer>,
) -> Result<Option<ServerPermits>, ErrorData> {
    if context.extensions.get::<Slot>().is_some() {
        return Ok(None);
    }
    let Some(head) = context.extensions.get::<hyper::http::request::Parts>() else {
        return Ok(None);
    };
    let Some(server) = head.extensions.get::<ServerWide>() else {
        return Ok(None);
    };
    let peer = head.extensions.get::<Peer>().copied();
    // Cancelled first: a request its client left is not run, even when
    // permits come free at the same moment.
    tokio::select! {
        biased;
        () = context.ct.cancelled() => Err(ErrorData::internal_error(
            "the request was cancelled while it waited to be answered",
            None,
        )),
        permits = server.permits_of(peer, true) => match permits {
            Some(permits) => Ok(Some(permits)),
            None => Err(ErrorData::internal_error("the server is stopping", None)),
        },
    }
}

/// One session's way to the [`ServerWide`] permits.
#[derive(Clone)]
struct SessionShare {
    /// How many of them the session may still take.
    share: Arc<Semaphore>,
    server: ServerWide,
}

/// One request counted in [`Admission::waiting`] and listed in
/// [`Admission::cancels`] while it waits, however its wait ends (its HTTP
/// request may be dropped).
struct Waiting {
    count: Arc<std::sync::atomic::AtomicUsize>,
    cancels: Arc<Mutex<Cancels>>,
    key: u64,
    /// Cancelled when the peer cancels the request.
    cancelled: tokio_util::sync::CancellationToken,
}

impl Drop for Waiting {
    fn drop(&mut self) {
        self.count.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
        self.cancels
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .waiting
            .remove(&self.key);
    }
}

/// Why a request was not let in.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Refused {
    /// The session closed while the request waited.
    #[error("the session closed")]
    Closed,
    /// As many requests are answered and waiting as the session takes.
    #[error("too many requests at once")]
    Busy,
    /// The peer cancelled the request while it waited: it is not run, and
    /// not answered.
    #[error("the request was cancelled")]
    Cancelled,
}

/// Work of a session that outlives the request that started it (a task),
/// counted as one of the session's requests running until it is dropped:
/// a session with one is not idle, and is never given to another client.
pub(crate) struct SessionWork {
    _running: Running,
}

/// A [`SessionWork`] of the session of the request whose `extensions` these
/// are, if it came in a session bounded server-wide (over HTTP).
pub(crate) fn session_work(extensions: &rmcp::model::Extensions) -> Option<SessionWork> {
    let slot = extensions.get::<Slot>()?;
    let running = slot.held._overall.as_ref()?._running.as_ref()?;
    Some(SessionWork {
        _running: Running::new(&running.0),
    })
}

/// The client a request came from, if it came over HTTP: the server puts
/// its connection's [`Peer`] in the request's head, which the SDK hands on
/// with the request.
pub(crate) fn peer_of(extensions: &rmcp::model::Extensions) -> Option<Peer> {
    extensions
        .get::<hyper::http::request::Parts>()
        .and_then(|head| head.extensions.get::<Peer>())
        .copied()
}

/// The answer to a request reusing the id of one not yet answered
/// (JSON-RPC's "invalid request").
fn id_in_use<R: ServiceRole>(id: RequestId) -> TxJsonRpcMessage<R> {
    let message = format!("the id {id} is in use by a request not yet answered");
    TxJsonRpcMessage::<R>::error(ErrorData::invalid_request(message, None), Some(id))
}

/// The answer to a request refused because too many are answered and
/// waiting at once.
pub(crate) fn refusal<R: ServiceRole>(id: RequestId) -> TxJsonRpcMessage<R> {
    TxJsonRpcMessage::<R>::error(busy(), Some(id))
}

impl Admission {
    /// The admission of a new session, its requests holding a permit of
    /// `overall` too, if given, up to the session's share of them.
    pub(crate) fn new(overall: Option<&ServerWide>) -> Self {
        Self {
            slots: Arc::new(Slots {
                free: Arc::new(Semaphore::new(MAX_IN_FLIGHT)),
                taken: Mutex::new(HashMap::new()),
            }),
            waiting: Arc::default(),
            overall: overall.map(|overall| SessionShare {
                share: Arc::new(Semaphore::new(overall.per_session)),
                server: overall.clone(),
            }),
            closed: tokio_util::sync::CancellationToken::new(),
            cancels: Arc::default(),
            running: Arc::default(),
        }
    }

    /// Wait until `message`, if a request, can be answered, and give it
    /// its slot; past [`MAX_WAITING`] requests waiting, refuse it at once.
    /// Anything else passes at once; a cancel stops the wait of the
    /// request it cancels, which is then refused ([`Refused::Cancelled`]).
    ///
    /// A request reusing the id of one being answered is let in, in a slot
    /// of its own (the session routes answers by id, as it always has):
    /// each handler holds its slot until it ends, so the bound holds, and
    /// an answer past the first of an id takes a slot while it is written,
    /// as an answer to a cancelled request does.
    pub(crate) async fn admit<R: Side>(
        &self,
        message: &mut RxJsonRpcMessage<R>,
    ) -> Result<(), Refused> {
        let request = match message {
            JsonRpcMessage::Request(request) => request,
            JsonRpcMessage::Notification(notification) => {
                if let Some(id) = R::cancelled(&notification.notification) {
                    self.cancel(id);
                }
                return Ok(());
            }
            _ => return Ok(()),
        };
        let id = request.id.clone();
        let peer = peer_of(request.request.extensions());
        // The session's slot first, then its share of the server-wide
        // permits, then its client's (when the request came with an
        // address), then one of them: a request waiting for its session or
        // its client holds no permit another client could use.
        let mut waiting = None;
        let permit = self.take(&self.slots.free, &id, &mut waiting).await?;
        let overall = match &self.overall {
            None => None,
            Some(overall) => {
                let session = self.take(&overall.share, &id, &mut waiting).await?;
                let client = match peer {
                    Some(peer) => {
                        let share = overall.server.share_of(peer);
                        Some(self.take(&share, &id, &mut waiting).await?)
                    }
                    None => None,
                };
                let permit = self
                    .take(&overall.server.permits, &id, &mut waiting)
                    .await?;
                Some(ServerPermits {
                    _session: Some(session),
                    _client: client,
                    _permit: permit,
                    _running: Some(Running::new(&self.running)),
                })
            }
        };
        drop(waiting);
        permit.forget();
        // Only in the request's extensions until the session's transport
        // hands it to the SDK (`Admitted::receive`): a request dropped on
        // its way there (its connection closed while the session was
        // reached) gives its slot back with itself.
        let slot = self.slots.slot(Some(id), overall);
        request.request.extensions_mut().insert(slot);
        Ok(())
    }

    /// A permit of `semaphore`, at once if one is free; else counted in
    /// `waiting` (refused past [`MAX_WAITING`]) while it waits for one.
    /// Refused once the session has closed, whatever it waits for, or
    /// once the peer cancels the request `id`.
    async fn take(
        &self,
        semaphore: &Arc<Semaphore>,
        id: &RequestId,
        waiting: &mut Option<Waiting>,
    ) -> Result<OwnedSemaphorePermit, Refused> {
        if self.closed.is_cancelled() {
            return Err(Refused::Closed);
        }
        match Arc::clone(semaphore).try_acquire_owned() {
            Ok(permit) => Ok(permit),
            Err(TryAcquireError::Closed) => Err(Refused::Closed),
            Err(TryAcquireError::NoPermits) => {
                let cancelled = match waiting {
                    Some(waiting) => waiting.cancelled.clone(),
                    None => waiting.insert(self.wait(id)?).cancelled.clone(),
                };
                tokio::select! {
                    permit = Arc::clone(semaphore).acquire_owned() => {
                        permit.map_err(|_| Refused::Closed)
                    }
                    () = self.closed.cancelled() => Err(Refused::Closed),
                    () = cancelled.cancelled() => Err(Refused::Cancelled),
                }
            }
        }
    }

    /// Count one more request waiting, `id`, for as long as the returned
    /// guard lives; past [`MAX_WAITING`] waiting, refuse it.
    fn wait(&self, id: &RequestId) -> Result<Waiting, Refused> {
        let now = self
            .waiting
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let cancelled = tokio_util::sync::CancellationToken::new();
        let key = {
            let mut cancels = self.cancels.lock().unwrap_or_else(|e| e.into_inner());
            let key = cancels.next;
            cancels.next += 1;
            cancels.waiting.insert(key, (id.clone(), cancelled.clone()));
            key
        };
        let waiting = Waiting {
            count: Arc::clone(&self.waiting),
            cancels: Arc::clone(&self.cancels),
            key,
            cancelled,
        };
        if now >= MAX_WAITING {
            return Err(Refused::Busy);
        }
        Ok(waiting)
    }

    /// The peer cancelled the request `id`: if it waits, it stops waiting
    /// and is not run (a request reusing the id stops too: the cancel
    /// names them all).
    fn cancel(&self, id: &RequestId) {
        let cancels = self.cancels.lock().unwrap_or_else(|e| e.into_inner());
        for (waiting, cancelled) in cancels.waiting.values() {
            if waiting == id {
                cancelled.cancel();
            }
        }
    }

    /// Whether no request of the session is being answered, written out
    /// or waiting to be let in, and no task of it runs.
    pub(crate) fn is_idle(&self) -> bool {
        self.waiting.load(std::sync::atomic::Ordering::SeqCst) == 0
            && self.slots.free.available_permits() == MAX_IN_FLIGHT
            && !self.is_running()
    }

    /// Whether a request of the session holds a server-wide permit (one
    /// running, or its answer being written) or a task of it runs
    /// ([`SessionWork`]). (A request waiting for its shares holds a slot
    /// but none of the server's.)
    pub(crate) fn is_running(&self) -> bool {
        self.running.load(std::sync::atomic::Ordering::SeqCst) > 0
    }

    /// Let no more requests in: those waiting are refused.
    pub(crate) fn close(&self) {
        self.closed.cancel();
        self.slots.free.close();
    }

    /// `inner`, the session's transport, giving back a request's slot when
    /// its answer is handed out or its cancel comes.
    pub(crate) fn transport<T, R: ServiceRole>(&self, inner: T) -> Admitted<T, R> {
        Admitted {
            inner,
            slots: Arc::clone(&self.slots),
            _role: std::marker::PhantomData,
        }
    }
}

/// A session's transport whose requests were let in by an [`Admission`].
pub(crate) struct Admitted<T, R> {
    inner: T,
    slots: Arc<Slots>,
    _role: std::marker::PhantomData<fn() -> R>,
}

impl<T: Transport<R>, R: Side> Transport<R> for Admitted<T, R> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<R>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        send_holding(&self.slots, &mut self.inner, item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<R>> {
        let message = self.inner.receive().await?;
        match &message {
            // Handed to the SDK now: its answer holds its slot too, until
            // it is written out.
            JsonRpcMessage::Request(request) => {
                if let Some(slot) = request.request.extensions().get::<Slot>() {
                    self.slots.take(request.id.clone(), slot.clone());
                }
            }
            // A request cancelled is never answered: its slot comes free
            // when its handler ends.
            JsonRpcMessage::Notification(notification) => {
                if let Some(id) = R::cancelled(&notification.notification) {
                    self.slots.give_back(id);
                }
            }
            _ => {}
        }
        Some(message)
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use futures_util::FutureExt;
    use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
    use serde_json::json;
    use tokio::sync::mpsc;
    use tokio_util::sync::CancellationToken;

    /// A client's side of a pipe: what the test feeds it is read, and what
    /// is sent is written once `written` is cancelled.
    struct Pipe {
        feed: mpsc::UnboundedReceiver<RxJsonRpcMessage<RoleServer>>,
        written: CancellationToken,
    }

    impl Transport<RoleServer> for Pipe {
        type Error = std::io::Error;

        fn send(
            &mut self,
            _item: TxJsonRpcMessage<RoleServer>,
        ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
            let written = self.written.clone();
            async move {
                written.cancelled().await;
                Ok(())
            }
        }

        async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
            self.feed.recv().await
        }

        async fn close(&mut self) -> Result<(), Self::Error> {
            Ok(())
        }
    }

    fn ping(id: u64) -> RxJsonRpcMessage<RoleServer> {
        serde_json::from_value(json!({"jsonrpc": "2.0", "id": id, "method": "ping"})).unwrap()
    }

    fn cancel(id: u64) -> RxJsonRpcMessage<RoleServer> {
        serde_json::from_value(
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": id}}),
        )
        .unwrap()
    }

    fn answer(id: u64) -> TxJsonRpcMessage<RoleServer> {
        serde_json::from_value(json!({"jsonrpc": "2.0", "id": id, "result": {}})).unwrap()
    }

    /// A pipe bound in flight, the feed of what it reads, and the token
    /// that writes what it sends.
    fn pipe() -> (
        InFlight<Pipe, RoleServer>,
        mpsc::UnboundedSender<RxJsonRpcMessage<RoleServer>>,
        CancellationToken,
    ) {
        let (feed, read) = mpsc::unbounded_channel();
        let written = CancellationToken::new();
        let pipe = Pipe {
            feed: read,
            written: written.clone(),
        };
        (InFlight::new(pipe), feed, written)
    }

    /// Read everything fed so far: what was handed on, in order.
    fn read_all(in_flight: &mut InFlight<Pipe, RoleServer>) -> Vec<RxJsonRpcMessage<RoleServer>> {
        let mut read = Vec::new();
        while let Some(Some(message)) = in_flight.receive().now_or_never() {
            read.push(message);
        }
        read
    }

    fn requests(read: &[RxJsonRpcMessage<RoleServer>]) -> usize {
        read.iter()
            .filter(|m| matches!(m, JsonRpcMessage::Request(_)))
            .count()
    }

    /// A cancelled request's slot stays taken while its handler (what
    /// holds the request's extensions) is alive, and comes free when the
    /// handler is dropped.
    #[test]
    fn a_cancelled_request_holds_its_slot_until_its_handler_ends() {
        let (mut in_flight, feed, _written) = pipe();
        for id in 0..MAX_IN_FLIGHT as u64 {
            feed.send(ping(id)).unwrap();
            feed.send(cancel(id)).unwrap();
        }
        feed.send(ping(1000)).unwrap();
        let handlers = read_all(&mut in_flight);
        assert_eq!(requests(&handlers), MAX_IN_FLIGHT, "the 65th waits");
        // The handlers end: their slots come free, and the 65th is read.
        drop(handlers);
        let read = read_all(&mut in_flight);
        assert!(
            matches!(&read[..], [JsonRpcMessage::Request(r)] if r.id == RequestId::Number(1000)),
            "{read:?}"
        );
    }

    /// Past the slots and the queue, a request is refused and reading
    /// goes on once the refusal is written: a cancel behind it comes
    /// through.
    #[test]
    fn a_request_past_the_queue_is_refused_and_reading_goes_on() {
        let (mut in_flight, feed, written) = pipe();
        for id in 0..(MAX_IN_FLIGHT + MAX_WAITING) as u64 {
            feed.send(ping(id)).unwrap();
        }
        feed.send(ping(1000)).unwrap();
        feed.send(cancel(0)).unwrap();
        let handlers = read_all(&mut in_flight);
        assert_eq!(requests(&handlers), MAX_IN_FLIGHT);
        assert_eq!(in_flight.waiting.len(), MAX_WAITING);
        // The 129th is being refused: nothing more is read until written.
        assert!(in_flight.refusing.is_some());
        written.cancel();
        let read = read_all(&mut in_flight);
        assert!(
            matches!(&read[..], [JsonRpcMessage::Notification(_)]),
            "{read:?}"
        );
        assert!(in_flight.refusing.is_none());
        drop(handlers);
    }

    /// An answer the SDK writes although the request was cancelled takes a
    /// slot while it is written: answers the peer never reads cannot pile
    /// up without bound.
    #[tokio::test]
    async fn an_answer_to_a_cancelled_request_holds_a_slot_while_written() {
        let (mut in_flight, feed, written) = pipe();
        for id in 0..MAX_IN_FLIGHT as u64 {
            feed.send(ping(id)).unwrap();
            feed.send(cancel(id)).unwrap();
        }
        feed.send(ping(1000)).unwrap();
        let handlers = read_all(&mut in_flight);
        assert_eq!(requests(&handlers), MAX_IN_FLIGHT);
        // Each handler answers, then ends; the answers wait to be written.
        let mut sends = tokio::task::JoinSet::new();
        for id in 0..MAX_IN_FLIGHT as u64 {
            sends.spawn(in_flight.send(answer(id)));
        }
        drop(handlers);
        tokio::task::yield_now().await;
        // Either the answers hold the slots or the 65th takes one: wait
        // until a slot-holder is settled, bounded.
        let waited = tokio::time::timeout(std::time::Duration::from_secs(10), async {
            while in_flight.slots.free.available_permits() > 0 {
                tokio::task::yield_now().await;
            }
        })
        .await;
        assert!(waited.is_ok(), "the answers took no slots");
        assert_eq!(requests(&read_all(&mut in_flight)), 0, "the 65th waits");
        written.cancel();
        while sends.join_next().await.is_some() {}
        assert_eq!(requests(&read_all(&mut in_flight)), 1);
    }

    /// A handler that holds `message` (as the SDK's handler holds its
    /// request's extensions in its context) and panics, in a task of its
    /// own, as the SDK runs it.
    async fn panicking_handler(message: RxJsonRpcMessage<RoleServer>) {
        let handler = tokio::spawn(async move {
            let _context = message;
            panic!("a handler broke");
        });
        assert!(handler.await.is_err_and(|e| e.is_panic()));
    }

    /// Handlers that panic send no answer: their slots come back all the
    /// same, over a byte stream.
    #[tokio::test]
    async fn a_panicking_handler_gives_its_slot_back() {
        let (mut in_flight, feed, _written) = pipe();
        for id in 0..MAX_IN_FLIGHT as u64 {
            feed.send(ping(id)).unwrap();
        }
        for handler in read_all(&mut in_flight) {
            panicking_handler(handler).await;
        }
        assert_eq!(in_flight.slots.free.available_permits(), MAX_IN_FLIGHT);
        assert!(in_flight.slots.taken.lock().unwrap().is_empty());
    }

    /// The same for a request let in by an [`Admission`], with its
    /// server-wide permits.
    #[tokio::test]
    async fn a_panicking_handler_gives_its_admission_back() {
        let overall = ServerWide::new(4, 4);
        let admission = Admission::new(Some(&overall));
        let (feed, read) = mpsc::unbounded_channel();
        let mut admitted = admission.transport::<_, RoleServer>(Pipe {
            feed: read,
            written: CancellationToken::new(),
        });
        let mut message = ping(7);
        admission.admit::<RoleServer>(&mut message).await.unwrap();
        feed.send(message).unwrap();
        let handler = admitted.receive().await.unwrap();
        assert_eq!(overall.permits.available_permits(), 3);
        panicking_handler(handler).await;
        assert_eq!(admission.slots.free.available_permits(), MAX_IN_FLIGHT);
        assert_eq!(overall.permits.available_permits(), 4);
    }
}

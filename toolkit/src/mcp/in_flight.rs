//! A bound on the requests of one peer that are being answered at once,
//! for either side of a session: the server answering a client, the client
//! answering a server (its sampling, elicitation and ping requests).
//!
//! The SDK reads a peer's requests as fast as they come and answers each in
//! a task of its own. A peer that sends requests in a loop, and worse, one
//! that never reads the answers, would have us hold every request and every
//! unsent answer: gigabytes in seconds. Here a request is handed on only
//! while fewer than [`MAX_IN_FLIGHT`] are being answered, an answer counting
//! until it is written out. Past that, up to [`MAX_WAITING`] more requests
//! are read and held, so the answers and notifications the peer sends
//! behind them still come through (a request of ours waiting for the peer's
//! answer to its own question holds a slot: were they not read, the slots
//! would never come free); beyond those, nothing more is read, and what the
//! peer sends waits in the pipe or the connection, where the kernel bounds
//! it.

use std::collections::HashSet;
use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::Mutex;

use rmcp::model::{ClientNotification, JsonRpcMessage, RequestId, ServerNotification};
use rmcp::service::{RxJsonRpcMessage, ServiceRole, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::{RoleClient, RoleServer};
use tokio::sync::Semaphore;

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
}

struct Slots {
    free: Semaphore,
    /// The ids of the requests handed on and not yet answered, each
    /// holding a slot. Only these give one back: an error the server sends
    /// unasked (for a line it could not read) must not add a slot, and a
    /// request the client cancels (whose answer is never sent) must not
    /// keep one.
    taken: Mutex<HashSet<RequestId>>,
}

impl Slots {
    /// The request `id` is answered or cancelled: its slot comes free.
    fn give_back(&self, id: &RequestId) {
        let held = self
            .taken
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(id);
        if held {
            self.free.add_permits(1);
        }
    }

    /// The request `id` takes the slot just acquired, unless a request of
    /// the same id holds one already (its answer would answer both).
    fn take(&self, id: RequestId) {
        let new = self
            .taken
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id);
        if !new {
            self.free.add_permits(1);
        }
    }
}

impl<T, R: ServiceRole> InFlight<T, R> {
    /// Hand on the oldest waiting request, in a slot just acquired.
    fn hand_on(&mut self) -> Option<RxJsonRpcMessage<R>> {
        let request = self.waiting.pop_front()?;
        if let JsonRpcMessage::Request(request) = &request {
            self.slots.take(request.id.clone());
        }
        Some(request)
    }

    /// Whether a request of this id is being answered or waits to be.
    fn is_pending(&self, id: &RequestId) -> bool {
        let taken = self.slots.taken.lock().unwrap_or_else(|e| e.into_inner());
        taken.contains(id)
            || self
                .waiting
                .iter()
                .any(|waiting| matches!(waiting, JsonRpcMessage::Request(r) if &r.id == id))
    }

    pub(crate) fn new(inner: T) -> Self {
        Self {
            inner,
            slots: Arc::new(Slots {
                free: Semaphore::new(MAX_IN_FLIGHT),
                taken: Mutex::new(HashSet::new()),
            }),
            waiting: VecDeque::new(),
        }
    }
}

impl<T: Transport<R>, R: Side> Transport<R> for InFlight<T, R> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<R>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let answered = match &item {
            JsonRpcMessage::Response(response) => Some(response.id.clone()),
            JsonRpcMessage::Error(error) => error.id.clone(),
            _ => None,
        };
        let sent = self.inner.send(item);
        let slots = Arc::clone(&self.slots);
        async move {
            let result = sent.await;
            if let Some(id) = answered {
                slots.give_back(&id);
            }
            result
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<R>> {
        loop {
            let slots = Arc::clone(&self.slots);
            let waiting = !self.waiting.is_empty();
            if waiting && let Ok(permit) = slots.free.try_acquire() {
                permit.forget();
                return self.hand_on();
            }
            let room = self.waiting.len() < MAX_WAITING;
            let inner = &mut self.inner;
            // Cancel-safe: a permit is forgotten only where a request is
            // handed on, and what is read is handed on or queued at once.
            let next = tokio::select! {
                permit = slots.free.acquire(), if waiting => match permit {
                    Ok(permit) => {
                        permit.forget();
                        None
                    }
                    Err(_) => return None,
                },
                message = inner.receive(), if room => Some(message?),
            };
            match next {
                None => return self.hand_on(),
                // A request reusing the id of one not yet answered is
                // dropped: the SDK would start a handler for each, and its
                // one answer would answer both.
                Some(JsonRpcMessage::Request(request)) if self.is_pending(&request.id) => {
                    tracing::warn!(id = %request.id, "dropping a request whose id is already in use");
                }
                Some(request @ JsonRpcMessage::Request(_)) => self.waiting.push_back(request),
                // Answers and notifications are never held back. A request
                // cancelled is never answered: its slot comes free now.
                Some(other) => {
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

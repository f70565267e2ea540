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
//! request is never sent). The SDK only tells a handler of a cancel through
//! its cancellation token, and a handler need not watch it: were the slot
//! free at the cancel, a peer sending "request, cancel" in a loop would
//! have as many handlers running at once as it likes. So the slot goes
//! with the request to its handler ([`Slot`], in the request's extensions,
//! which the SDK hands to the handler in its context) and comes free only
//! when the handler's future is done with it, completed or dropped.
//! Past that, up to [`MAX_WAITING`] more requests
//! are read and held, so the answers and notifications the peer sends
//! behind them still come through (a request of ours waiting for the peer's
//! answer to its own question holds a slot: were they not read, the slots
//! would never come free); beyond those, nothing more is read, and what the
//! peer sends waits in the pipe or the connection, where the kernel bounds
//! it.

use std::collections::HashMap;
use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::Mutex;

use rmcp::model::{
    ClientNotification, GetExtensions, JsonRpcMessage, RequestId, ServerNotification,
};
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
#[derive(Clone)]
pub(crate) struct Slot {
    _held: Arc<Held>,
}

/// What a [`Slot`]'s last clone gives back when it goes.
struct Held {
    free: Arc<Semaphore>,
}

impl Drop for Held {
    fn drop(&mut self) {
        self.free.add_permits(1);
    }
}

impl Slots {
    /// The request `id` is answered or cancelled: its answer holds its
    /// slot no more (its handler may still).
    fn give_back(&self, id: &RequestId) {
        let held = self
            .taken
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(id);
        // Dropped outside the lock: it may be the last clone.
        drop(held);
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
        let slot = Slot {
            _held: Arc::new(Held {
                free: Arc::clone(&self.slots.free),
            }),
        };
        let mut request = self.waiting.pop_front()?;
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
        let taken = self.slots.taken.lock().unwrap_or_else(|e| e.into_inner());
        taken.contains_key(id)
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
                // cancelled is never answered: its slot comes free when its
                // handler ends (the SDK tells the handler of the cancel).
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

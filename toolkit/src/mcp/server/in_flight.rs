//! A bound on the requests of one client over a byte stream that are being
//! answered at once.
//!
//! The server reads a client's requests as fast as they come and answers
//! each in a task of its own. A client that sends requests in a loop, and
//! worse, one that never reads the answers, would have the server hold
//! every request and every unsent answer: gigabytes in seconds. Here the
//! next request is read only once fewer than [`MAX_IN_FLIGHT`] are being
//! answered, an answer counting until it is written out; what the client
//! sends meanwhile waits in the pipe, where the kernel bounds it.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use rmcp::RoleServer;
use rmcp::model::JsonRpcMessage;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::sync::Semaphore;

/// Requests of one client answered at once.
pub(super) const MAX_IN_FLIGHT: usize = 64;

/// `T`, reading a request only while fewer than [`MAX_IN_FLIGHT`] are
/// being answered.
pub(super) struct InFlight<T> {
    inner: T,
    slots: Arc<Slots>,
    /// A message read but not yet handed on: `receive` may be dropped
    /// while it waits for a slot, and the message must not be lost.
    pending: Option<RxJsonRpcMessage<RoleServer>>,
}

struct Slots {
    free: Semaphore,
    /// Requests handed on and not yet answered. Only these give a slot
    /// back: an error the server sends unasked (for a line it could not
    /// read) must not add one.
    taken: AtomicUsize,
}

impl Slots {
    fn give_back(&self) {
        let taken = self
            .taken
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1));
        if taken.is_ok() {
            self.free.add_permits(1);
        }
    }
}

impl<T> InFlight<T> {
    pub(super) fn new(inner: T) -> Self {
        Self {
            inner,
            slots: Arc::new(Slots {
                free: Semaphore::new(MAX_IN_FLIGHT),
                taken: AtomicUsize::new(0),
            }),
            pending: None,
        }
    }
}

impl<T: Transport<RoleServer>> Transport<RoleServer> for InFlight<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let answer = matches!(item, JsonRpcMessage::Response(_) | JsonRpcMessage::Error(_));
        let sent = self.inner.send(item);
        let slots = Arc::clone(&self.slots);
        async move {
            let result = sent.await;
            if answer {
                slots.give_back();
            }
            result
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        if self.pending.is_none() {
            self.pending = Some(self.inner.receive().await?);
        }
        if matches!(self.pending, Some(JsonRpcMessage::Request(_))) {
            // Cancel-safe: dropped here, the message stays pending.
            let permit = self.slots.free.acquire().await.ok()?;
            permit.forget();
            self.slots.taken.fetch_add(1, Ordering::AcqRel);
        }
        self.pending.take()
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

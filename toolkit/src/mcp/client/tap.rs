//! Progress notifications taken off the wire in the order they arrive.
//!
//! The SDK handles notifications beside responses, so a call's last progress
//! report could be handled after the call has returned. Looking at each
//! message as the transport hands it over delivers every report a server
//! sent before its answer, before that answer is seen.

use std::borrow::Cow;
use std::future::Future;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Weak};

use rmcp::RoleClient;
use rmcp::model::{JsonRpcMessage, ServerNotification};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio_util::sync::CancellationToken;

use super::link::ServerLink;
use crate::context::Progress;
use crate::mcp::config::FloorCharBoundary;

/// How many calls in a row may end without a word from the server (timed
/// out, or dropped unanswered) before its session is taken for dead: a
/// stdio server that stopped reading its input answers nothing more, and is
/// started again.
const SILENT_CALLS: u32 = 2;

/// The longest progress message passed on, in bytes: a status line, not a
/// document.
const MAX_PROGRESS_MESSAGE: usize = 4 << 10;

/// What the link learns of a session's connection from its transport.
#[derive(Debug, Default)]
pub(crate) struct Watch {
    /// Cancelled when the server's messages end (a stdio server closed its
    /// output, an event stream ended for good) or the session is taken for
    /// dead: calls waiting fail at once instead of at their timeout.
    ended: CancellationToken,
    /// Cancelled when the transport is dropped (see [`ProgressTap`]).
    dropped: CancellationToken,
    /// How many messages have come from the server.
    heard: AtomicU64,
    /// Calls in a row that ended without a word from the server.
    silent_calls: AtomicU32,
}

impl Watch {
    /// Whether the connection is over (see [`ended`](Self::ended)).
    pub(crate) fn is_over(&self) -> bool {
        self.ended.is_cancelled()
    }

    /// Resolves when the connection is over.
    pub(crate) async fn over(&self) {
        self.ended.cancelled().await;
    }

    /// A guard that tells [`dropped`](Self::dropped) when it is dropped.
    pub(crate) fn drop_guard(&self) -> tokio_util::sync::DropGuard {
        self.dropped.clone().drop_guard()
    }

    /// Resolves once the transport is dropped.
    pub(crate) async fn dropped(&self) {
        self.dropped.cancelled().await;
    }

    /// Take the connection for dead.
    pub(crate) fn end(&self) {
        self.ended.cancel();
    }

    /// Mark the start of a call, for [`call_ended`](Self::call_ended).
    pub(crate) fn call_started(&self) -> u64 {
        self.heard.load(Ordering::SeqCst)
    }

    /// A call started at `mark` ended, answered or not. A server that said
    /// anything since is alive; one silent through [`SILENT_CALLS`]
    /// unanswered calls in a row is taken for dead (returns true).
    pub(crate) fn call_ended(&self, mark: u64, answered: bool) -> bool {
        if answered || self.heard.load(Ordering::SeqCst) != mark {
            self.silent_calls.store(0, Ordering::SeqCst);
            return false;
        }
        let silent = self.silent_calls.fetch_add(1, Ordering::SeqCst) + 1;
        if silent >= SILENT_CALLS {
            self.end();
            return true;
        }
        false
    }
}

/// A watch reads as the token cancelled when the transport is dropped, for
/// whatever should stop when the session's connection is gone.
impl std::ops::Deref for Watch {
    type Target = CancellationToken;

    fn deref(&self) -> &CancellationToken {
        &self.dropped
    }
}

/// A transport that hands progress notifications to the link as they
/// arrive, and tells the [`Watch`] of every message and of the end of them.
pub(crate) struct ProgressTap<T> {
    pub(crate) inner: T,
    pub(crate) link: Weak<ServerLink>,
    pub(crate) watch: Arc<Watch>,
    /// Dropped after `inner` (fields drop in order), so whoever waits on its
    /// token learns the connection is gone only once it is: a stdio
    /// server's process has exited by then.
    pub(crate) _closed: tokio_util::sync::DropGuard,
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for ProgressTap<T> {
    type Error = T::Error;

    fn name() -> Cow<'static, str> {
        T::name()
    }

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        let Some(message) = self.inner.receive().await else {
            // The SDK closes the transport after this (a stdio server is
            // stopped, which may take seconds): calls fail now.
            self.watch.end();
            return None;
        };
        self.watch.heard.fetch_add(1, Ordering::SeqCst);
        if let JsonRpcMessage::Notification(notification) = &message
            && let ServerNotification::ProgressNotification(progress) = &notification.notification
            && let Some(link) = self.link.upgrade()
        {
            let params = &progress.params;
            let mut report = Progress::new(params.progress);
            report.total = params.total;
            // The message as far as [`MAX_PROGRESS_MESSAGE`]: reports may
            // wait in a queue until their call is known (see the link).
            report.message = params.message.as_deref().map(|message| {
                message[..message.floor_char_boundary_compat(MAX_PROGRESS_MESSAGE)].to_owned()
            });
            link.progress(&params.progress_token, report);
        }
        Some(message)
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

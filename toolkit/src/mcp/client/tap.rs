//! Progress notifications taken off the wire in the order they arrive.
//!
//! The SDK handles notifications beside responses, so a call's last progress
//! report could be handled after the call has returned. Looking at each
//! message as the transport hands it over delivers every report a server
//! sent before its answer, before that answer is seen.

use std::borrow::Cow;
use std::future::Future;
use std::sync::Weak;

use rmcp::RoleClient;
use rmcp::model::{JsonRpcMessage, ServerNotification};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;

use super::link::ServerLink;
use crate::context::Progress;

/// A transport that hands progress notifications to the link as they arrive.
pub(crate) struct ProgressTap<T> {
    pub(crate) inner: T,
    pub(crate) link: Weak<ServerLink>,
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
        let message = self.inner.receive().await?;
        if let JsonRpcMessage::Notification(notification) = &message
            && let ServerNotification::ProgressNotification(progress) = &notification.notification
            && let Some(link) = self.link.upgrade()
        {
            let params = &progress.params;
            let mut report = Progress::new(params.progress);
            report.total = params.total;
            report.message = params.message.clone();
            link.progress(&params.progress_token, report);
        }
        Some(message)
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

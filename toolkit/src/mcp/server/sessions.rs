//! A bound on the sessions open at once over HTTP.
//!
//! Each session holds a handler and a worker task (about 64 KiB), and a
//! client makes one per `initialize`. Idle sessions close after five
//! minutes, but a client that initializes in a loop opens hundreds a second
//! before the first closes: without a bound, memory grows by gigabytes.

use std::sync::Arc;

use futures_util::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::session::{
    EventStore, RestoreOutcome, ServerSseMessage, SessionId, SessionManager,
};

/// The in-memory sessions, at most `max` of them at once.
pub(super) struct BoundedSessions {
    inner: LocalSessionManager,
    max: usize,
    /// Held from the count to the new session's making, so that sessions
    /// made at once cannot all see room for one more.
    making: tokio::sync::Mutex<()>,
}

impl BoundedSessions {
    pub(super) fn new(inner: LocalSessionManager, max: usize) -> Self {
        Self {
            inner,
            max,
            making: tokio::sync::Mutex::new(()),
        }
    }

    async fn refuse_if_full(&self) -> Result<(), SessionsError> {
        let open = self.inner.sessions.read().await.len();
        if open >= self.max {
            return Err(SessionsError::Full(self.max));
        }
        Ok(())
    }
}

/// Why a session operation failed.
#[derive(Debug, thiserror::Error)]
pub(super) enum SessionsError {
    /// As many sessions are open as the server keeps.
    #[error("{0} sessions are open, as many as this server keeps; try again later")]
    Full(usize),
    #[error(transparent)]
    Local(#[from] LocalSessionManagerError),
}

impl SessionManager for BoundedSessions {
    type Error = SessionsError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let _making = self.making.lock().await;
        self.refuse_if_full().await?;
        Ok(self.inner.create_session().await?)
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
        Ok(self.inner.close_session(id).await?)
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.inner.create_stream(id, message).await?)
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        Ok(self.inner.accept_message(id, message).await?)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.inner.create_standalone_stream(id).await?)
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.inner.resume(id, last_event_id).await?)
    }

    async fn restore_session(
        &self,
        id: SessionId,
    ) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        let _making = self.making.lock().await;
        if !self.inner.has_session(&id).await? {
            self.refuse_if_full().await?;
        }
        Ok(self.inner.restore_session(id).await?)
    }

    fn event_store(&self) -> Option<Arc<dyn EventStore>> {
        self.inner.event_store()
    }
}

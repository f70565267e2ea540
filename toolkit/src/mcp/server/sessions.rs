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

use std::collections::HashMap;
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

use crate::mcp::in_flight::{Admission, Admitted, Refused, ServerWide, refusal};

/// What to do once a session has closed (forget its owner).
pub(super) type OnClose = Box<dyn Fn(&str) + Send + Sync>;

/// The in-memory sessions, at most `max` of them at once.
pub(super) struct BoundedSessions {
    inner: LocalSessionManager,
    max: usize,
    /// Held from the count to the new session's making, so that sessions
    /// made at once cannot all see room for one more.
    making: tokio::sync::Mutex<()>,
    /// The slots of each open session's requests.
    admissions: Mutex<HashMap<SessionId, Admission>>,
    /// The requests of all sessions answered at once, a session holding
    /// at most half of them, a client its share.
    overall: ServerWide,
    closed: OnClose,
}

impl BoundedSessions {
    /// At most `max` sessions of `inner`, answering as many requests at
    /// once in all as `requests` has permits; `closed` is told of each
    /// session that
    /// closes (deleted by its client, idle too long, or ended).
    pub(super) fn new(
        inner: LocalSessionManager,
        max: usize,
        requests: ServerWide,
        closed: OnClose,
    ) -> Self {
        Self {
            inner,
            max,
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
        self.admissions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id.clone(), admission);
        transport
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
            .cloned();
        match admission {
            Some(admission) => Ok(admission.admit::<RoleServer>(message).await?),
            // Not open: the session manager says so.
            None => Ok(()),
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
        self.refuse_if_full().await?;
        let (id, transport) = self.inner.create_session().await?;
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
        let admission = self
            .admissions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(id);
        if let Some(admission) = admission {
            admission.close();
        }
        (self.closed)(id);
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
            (Err(other), _) => Err(other),
            (Ok(()), _) => Ok(self.inner.create_stream(id, message).await?.right_stream()),
        }
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        mut message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        // Requests come by `create_stream`; one here is let in all the same.
        self.admit(id, &mut message).await?;
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
        Ok(match self.inner.restore_session(id.clone()).await? {
            RestoreOutcome::Restored(transport) => {
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
            4,
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
}

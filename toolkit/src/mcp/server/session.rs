//! What a tool served over MCP can ask of the client that called it.

// Logging and sampling are deprecated only from protocol version 2026-07-28
// on; the clients and servers of the versions we speak still use them.
#![allow(deprecated)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use rmcp::RoleServer;
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::Peer;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::context::{Progress, ProgressReporter};
use crate::error::ToolError;

/// The client a served call came from. A tool takes `&ClientSession` as a
/// parameter (it is put in the call's context) to log to the client, or to
/// ask it for a model completion (sampling) or for the user's input
/// (elicitation). Absent when the tool runs outside an MCP server.
#[derive(Clone)]
pub struct ClientSession {
    peer: Peer<RoleServer>,
    /// The least severe level the client wants to hear (`logging/setLevel`).
    min_level: Arc<AtomicUsize>,
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
    pub(crate) fn new(peer: Peer<RoleServer>, min_level: Arc<AtomicUsize>) -> Self {
        Self { peer, min_level }
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
    /// params in, its result out, as JSON).
    ///
    /// Params that are not such a request are [`ToolError::Internal`]: the
    /// tool built them, so they are no fault of the model's arguments.
    pub async fn sample(&self, params: Value) -> Result<Value, ToolError> {
        let params = serde_json::from_value(params)
            .map_err(|e| ToolError::internal(format!("the sampling request is malformed: {e}")))?;
        let result = self
            .peer
            .create_message(params)
            .await
            .map_err(|e| ToolError::failed(format!("the client did not sample: {e}")))?;
        Ok(serde_json::to_value(result).unwrap_or_default())
    }

    /// Ask the client's user to fill in a form (`elicitation/create` params
    /// in, its result out, as JSON).
    ///
    /// Params that are not such a request are [`ToolError::Internal`], as
    /// for [`sample`](Self::sample).
    pub async fn elicit(&self, params: Value) -> Result<Value, ToolError> {
        let params = serde_json::from_value(params).map_err(|e| {
            ToolError::internal(format!("the elicitation request is malformed: {e}"))
        })?;
        let result = self
            .peer
            .create_elicitation(params)
            .await
            .map_err(|e| ToolError::failed(format!("the client did not answer: {e}")))?;
        Ok(serde_json::to_value(result).unwrap_or_default())
    }
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
    fn levels_rank_from_debug_to_emergency() {
        assert_eq!(level_rank("debug"), 0);
        assert!(level_rank("warning") > level_rank("info"));
        assert_eq!(level_rank("emergency"), LEVELS.len() - 1);
        assert_eq!(level_rank("chatty"), level_rank("info"));
    }
}

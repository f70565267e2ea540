//! The `subscriptions/listen` streams of protocol 2026-07-28 that asked to
//! hear when resources change. That protocol has no `resources/subscribe`:
//! a client names the resources on its stream, and
//! [`McpServer::resource_updated`](super::McpServer::resource_updated)
//! tells the streams that named one, as it tells older sessions that
//! subscribed.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::service::SubscriptionSink;

/// The open streams that accepted at least one resource, shared by every
/// copy of a server.
#[derive(Clone, Default)]
pub(super) struct ResourceListeners {
    next: Arc<AtomicU64>,
    streams: Arc<Mutex<HashMap<u64, SubscriptionSink>>>,
}

/// A stream kept among the listeners until this is dropped (when the
/// stream's `listen` ends, however it ends).
pub(super) struct Kept {
    id: u64,
    streams: Arc<Mutex<HashMap<u64, SubscriptionSink>>>,
}

impl Drop for Kept {
    fn drop(&mut self) {
        self.streams
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&self.id);
    }
}

impl ResourceListeners {
    /// Keep `sink` while the returned guard lives, if it accepted resources.
    pub(super) fn keep(&self, sink: &SubscriptionSink) -> Option<Kept> {
        let uris = sink.accepted().resource_subscriptions.as_ref()?;
        if uris.is_empty() {
            return None;
        }
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        self.streams
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id, sink.clone());
        Some(Kept {
            id,
            streams: Arc::clone(&self.streams),
        })
    }

    /// Tell every stream that accepted `uri`, all at once; a stream that
    /// does not take it within `limit` is passed over. Returns how many took it.
    pub(super) async fn tell(&self, uri: &str, limit: Duration) -> usize {
        let sinks: Vec<SubscriptionSink> = self
            .streams
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .filter(|sink| {
                let accepted = &sink.accepted().resource_subscriptions;
                accepted
                    .as_ref()
                    .is_some_and(|uris| uris.iter().any(|u| u == uri))
            })
            .cloned()
            .collect();
        let sends = sinks.iter().map(|sink| async move {
            let update = sink.notify_resource_updated(uri);
            matches!(tokio::time::timeout(limit, update).await, Ok(Ok(())))
        });
        let told = futures_util::future::join_all(sends).await;
        told.into_iter().filter(|&ok| ok).count()
    }
}

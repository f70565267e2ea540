//! Every request the page makes goes through the guard: the first URL,
//! each redirect, iframes, scripts, images, fetches from scripts.
//!
//! The DevTools `Fetch` domain pauses each request before Chromium sends it;
//! a task here checks its URL and lets it continue or fails it, and keeps a
//! log of what it refused so an action can name the refused address.

use std::sync::{Arc, Mutex, PoisonError};

use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::fetch::{
    ContinueRequestParams, EnableParams, EventRequestPaused, FailRequestParams, RequestPattern,
    RequestStage,
};
use chromiumoxide::cdp::browser_protocol::network::{ErrorReason, ResourceType};
use futures_util::StreamExt;
use tokio::task::JoinHandle;

use super::guard::{Refusal, check};
use crate::net::NetPolicy;

/// A request the guard refused.
#[derive(Debug, Clone)]
pub(crate) struct Blocked {
    pub(crate) refusal: Refusal,
    /// Whether it was a page or frame navigation, not a sub-resource.
    pub(crate) document: bool,
}

/// What the interception refused, drained by each action.
#[derive(Debug, Clone, Default)]
pub(crate) struct BlockedLog(Arc<Mutex<Vec<Blocked>>>);

impl BlockedLog {
    pub(crate) fn push(&self, blocked: Blocked) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(blocked);
    }

    /// Everything refused since the last call.
    pub(crate) fn take(&self) -> Vec<Blocked> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

/// Starts checking every request of `page`; the returned task runs until the
/// page goes away or it is aborted.
pub(crate) async fn intercept(
    page: &Page,
    guard: Arc<NetPolicy>,
    log: BlockedLog,
) -> chromiumoxide::Result<JoinHandle<()>> {
    let mut paused = page.event_listener::<EventRequestPaused>().await?;
    // Requests that go to the network, and only those: a `file:` or
    // `chrome:` frame paused here could be neither continued nor failed
    // (its page would never finish loading); Chromium refuses those schemes
    // to web pages itself, and they are tested refused.
    let pattern = |url: &str| {
        RequestPattern::builder()
            .url_pattern(url)
            .request_stage(RequestStage::Request)
            .build()
    };
    page.execute(
        EnableParams::builder()
            .pattern(pattern("http://*"))
            .pattern(pattern("https://*"))
            .build(),
    )
    .await?;
    let page = page.clone();
    Ok(tokio::spawn(async move {
        while let Some(event) = paused.next().await {
            // One task per request: a slow name lookup must not hold up the
            // page's other requests.
            let (page, guard, log) = (page.clone(), Arc::clone(&guard), log.clone());
            tokio::spawn(async move {
                let id = event.request_id.clone();
                let outcome = match check(&guard, &event.request.url).await {
                    Ok(()) => page.execute(ContinueRequestParams::new(id)).await.map(drop),
                    Err(refusal) => {
                        log.push(Blocked {
                            refusal,
                            document: event.resource_type == ResourceType::Document,
                        });
                        page.execute(FailRequestParams::new(id, ErrorReason::BlockedByClient))
                            .await
                            .map(drop)
                    }
                };
                if let Err(error) = outcome {
                    // The request was cancelled or the page closed meanwhile.
                    tracing::debug!(%error, "could not resolve a paused request");
                }
            });
        }
    }))
}

//! One page: every other window a page opens (a `target=_blank` link, a
//! `window.open`) is closed as soon as Chromium announces it.
//!
//! The request interception watches the tool's page only; a new window
//! would run its scripts unwatched (its connections still meet the
//! guarded proxy), and the tool's page could then wait on it until the
//! action's timeout. `--block-new-web-contents` lets such windows open.

use std::sync::{Arc, Mutex, PoisonError};

use chromiumoxide::cdp::browser_protocol::browser::BrowserContextId;
use chromiumoxide::cdp::browser_protocol::target::{
    CloseTargetParams, EventTargetCreated, GetTargetsParams, TargetInfo,
};
use chromiumoxide::{Browser, Page};
use futures_util::StreamExt;
use tokio::task::JoinHandle;

/// The windows closed since the last action, by the URL they opened with.
#[derive(Debug, Clone, Default)]
pub(crate) struct ClosedWindows(Arc<Mutex<Vec<String>>>);

impl ClosedWindows {
    fn push(&self, url: String) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(url);
    }

    /// Everything closed since the last call, as a note for the model;
    /// empty when nothing was.
    pub(crate) fn take_note(&self) -> String {
        let closed = std::mem::take(&mut *self.0.lock().unwrap_or_else(PoisonError::into_inner));
        if closed.is_empty() {
            return String::new();
        }
        let urls: Vec<&str> = closed
            .iter()
            .map(String::as_str)
            .filter(|url| !url.is_empty() && *url != "about:blank")
            .take(5)
            .collect();
        let named = if urls.is_empty() {
            String::new()
        } else {
            format!(" ({})", urls.join(", "))
        };
        format!(
            "\nNote: the page tried to open {} new window{}{named}; closed: the browser keeps one page (navigate to a link's URL instead).",
            closed.len(),
            if closed.len() == 1 { "" } else { "s" }
        )
    }
}

/// Closes every page target in `context` other than `page`, those open now
/// (one a page opened while the previous task was stopped) and those
/// created until the returned task is aborted, and lists them in `closed`.
/// Start it after `page` is open and stop the previous one before opening
/// another: a page the tool opens is not one to close.
pub(crate) async fn close_other_windows(
    browser: &Browser,
    page: &Page,
    context: &BrowserContextId,
    closed: ClosedWindows,
) -> chromiumoxide::Result<JoinHandle<()>> {
    let mut created = browser.event_listener::<EventTargetCreated>().await?;
    let open = page.execute(GetTargetsParams::default()).await?;
    let (page, context) = (page.clone(), context.clone());
    let close = move |target: TargetInfo| {
        let (page, context, closed) = (page.clone(), context.clone(), closed.clone());
        async move {
            let another_page = target.r#type == "page"
                && target.browser_context_id.as_ref() == Some(&context)
                && target.target_id != *page.target_id();
            if !another_page {
                return;
            }
            closed.push(target.url);
            // Sent through the tool's page: a session the remote-debugging
            // client opened may close any target.
            if let Err(error) = page.execute(CloseTargetParams::new(target.target_id)).await {
                tracing::warn!(%error, "a window the page opened could not be closed");
            }
        }
    };
    for target in open.result.target_infos {
        close(target).await;
    }
    Ok(tokio::spawn(async move {
        while let Some(event) = created.next().await {
            close(event.target_info.clone()).await;
        }
    }))
}

//! What each action does to the page, and what the request guard refused
//! while it ran. The tool bounds every action by its timeout; navigations
//! and waits also bound themselves, to say precisely what did not finish.

use std::future::Future;
use std::time::Duration;

use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::page::{
    CaptureScreenshotFormat, CaptureScreenshotParams, GetNavigationHistoryParams,
    NavigateToHistoryEntryParams, StopLoadingParams,
};
use chromiumoxide::cdp::js_protocol::runtime::EvaluateParams;
use chromiumoxide::element::Element;
use chromiumoxide::error::CdpError;
use toolsmith::ToolOutput;
use toolsmith::serde::de::DeserializeOwned;

use super::content::{HTML_PER_OUTPUT_CHAR, bound, frame, html_to_markdown};
use super::guard::check;
use super::intercept::Blocked;
use super::session::{BrowserSession, Running};

/// How `read` renders the page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    Markdown,
    Text,
}

/// An action that could not be done, in words for the model.
pub(crate) type ActionResult = Result<ToolOutput, String>;

/// How often `wait_for` and the settling after a click look at the page.
const POLL: Duration = Duration::from_millis(100);

pub(crate) async fn navigate(
    session: &BrowserSession,
    running: &mut Running,
    url: &str,
    timeout: Duration,
) -> ActionResult {
    check(session.policy(), url)
        .await
        .map_err(|r| r.to_string())?;
    running.blocked.take();
    let page = &running.page;
    let loaded = match bounded(page, timeout, "loading the page", page.goto(url)).await {
        Ok(loaded) => loaded,
        Err(timed_out) => {
            running.blocked.take();
            running
                .replace_page(std::sync::Arc::clone(session.policy()))
                .await
                .map_err(|e| format!("{timed_out}; the browser could not open a new page: {e}"))?;
            return Err(format!("{timed_out}; a new blank page replaces it"));
        }
    };
    let page = &running.page;
    let blocked = running.blocked.take();
    if let Err(error) = loaded {
        if let Some(refused) = blocked.iter().find(|b| b.document) {
            return Err(format!(
                "the navigation to {url} was stopped: {}",
                refused.refusal
            ));
        }
        return Err(format!("could not load {url}: {}", describe(&error)));
    }
    Ok(ToolOutput::text(summary(page, "Opened", &blocked).await))
}

pub(crate) async fn read(running: &Running, format: Format, max_chars: usize) -> ActionResult {
    let page = &running.page;
    let limit = max_chars.saturating_mul(HTML_PER_OUTPUT_CHAR);
    let body = match format {
        Format::Text => {
            eval::<String>(
                page,
                format!("(document.body ? document.body.innerText : '').slice(0, {limit})"),
            )
            .await?
        }
        Format::Markdown => html_to_markdown(
            &eval::<String>(
                page,
                format!(
                    "(document.documentElement ? document.documentElement.outerHTML : '').slice(0, {limit})"
                ),
            )
            .await?,
        ),
    };
    let (url, title) = location(page).await;
    let text = frame(&url, &title, &bound(body.trim(), max_chars));
    Ok(ToolOutput::text(with_blocked(
        text,
        &running.blocked.take(),
    )))
}

pub(crate) async fn click(running: &Running, selector: &str) -> ActionResult {
    let page = &running.page;
    let element = element(page, selector).await?;
    element
        .click()
        .await
        .map_err(|e| format!("cannot click `{selector}`: {}", describe(&e)))?;
    settle(page).await;
    after_interaction(running, &format!("Clicked `{selector}`.")).await
}

pub(crate) async fn type_text(running: &Running, selector: &str, text: &str) -> ActionResult {
    let page = &running.page;
    let element = element(page, selector).await?;
    element
        .focus()
        .await
        .map_err(|e| format!("cannot focus `{selector}`: {}", describe(&e)))?
        .type_str(text)
        .await
        .map_err(|e| format!("cannot type into `{selector}`: {}", describe(&e)))?;
    let typed = text.chars().count();
    after_interaction(
        running,
        &format!("Typed {typed} characters into `{selector}`."),
    )
    .await
}

pub(crate) async fn wait_for(running: &Running, selector: &str, timeout: Duration) -> ActionResult {
    let page = &running.page;
    match tokio::time::timeout(timeout, find(page, selector)).await {
        Ok(found) => found?,
        Err(_) => {
            return Err(format!(
                "no element matched `{selector}` within {}",
                seconds(timeout)
            ));
        }
    }
    after_interaction(running, &format!("`{selector}` is on the page.")).await
}

pub(crate) async fn back(running: &Running, timeout: Duration) -> ActionResult {
    let page = &running.page;
    bounded(page, timeout, "going back", async {
        let history = page
            .execute(GetNavigationHistoryParams::default())
            .await
            .map_err(|e| describe(&e))?;
        let current = usize::try_from(history.current_index).unwrap_or(0);
        let Some(previous) = current.checked_sub(1).and_then(|i| history.entries.get(i)) else {
            return Err("there is no previous page to go back to".to_owned());
        };
        page.execute(NavigateToHistoryEntryParams::new(previous.id))
            .await
            .map_err(|e| describe(&e))?;
        // Done when the previous entry is the current one and has loaded.
        loop {
            let now = page
                .execute(GetNavigationHistoryParams::default())
                .await
                .map_err(|e| describe(&e))?;
            if now.current_index + 1 == history.current_index && ready(page).await {
                return Ok(());
            }
            tokio::time::sleep(POLL).await;
        }
    })
    .await??;
    after_interaction(running, "Went back.").await
}

pub(crate) async fn screenshot(running: &Running) -> ActionResult {
    let page = &running.page;
    let shot = page
        .execute(
            CaptureScreenshotParams::builder()
                .format(CaptureScreenshotFormat::Png)
                .build(),
        )
        .await
        .map_err(|e| format!("cannot take a screenshot: {}", describe(&e)))?;
    let (url, title) = location(page).await;
    let data: String = shot.result.data.into();
    Ok(
        ToolOutput::text(format!("Screenshot of {url} ({title}), PNG attached."))
            .with_image(data, "image/png"),
    )
}

/// Runs `work` for at most `timeout`; past it, stops whatever the page is
/// loading so the next action starts from a quiet page.
async fn bounded<T>(
    page: &Page,
    timeout: Duration,
    what: &str,
    work: impl Future<Output = T>,
) -> Result<T, String> {
    match tokio::time::timeout(timeout, work).await {
        Ok(done) => Ok(done),
        Err(_) => {
            let _ = tokio::time::timeout(
                Duration::from_secs(2),
                page.execute(StopLoadingParams::default()),
            )
            .await;
            Err(format!(
                "{what} did not finish within {}; the page may be hanging (stopped it)",
                seconds(timeout)
            ))
        }
    }
}

/// The element `selector` matches, once there is one; the caller bounds the wait.
async fn element(page: &Page, selector: &str) -> Result<Element, String> {
    find(page, selector).await?;
    page.find_element(selector)
        .await
        .map_err(|e| format!("cannot find `{selector}`: {}", describe(&e)))
}

/// Waits until `selector` matches an element; the caller bounds the wait.
async fn find(page: &Page, selector: &str) -> Result<(), String> {
    let quoted = toolsmith::serde_json::to_string(selector).unwrap_or_default();
    let probe = format!("document.querySelector({quoted}) !== null");
    loop {
        match eval::<bool>(page, probe.clone()).await {
            Ok(true) => return Ok(()),
            Ok(false) => {}
            Err(e) if e.contains("SyntaxError") => {
                return Err(format!("`{selector}` is not a valid CSS selector"));
            }
            // The page is between documents; look again.
            Err(_) => {}
        }
        tokio::time::sleep(POLL).await;
    }
}

/// After a click, gives a navigation the click started the time to begin,
/// then waits for whatever document is current to finish loading.
async fn settle(page: &Page) {
    tokio::time::sleep(Duration::from_millis(300)).await;
    while !ready(page).await {
        tokio::time::sleep(POLL).await;
    }
}

async fn ready(page: &Page) -> bool {
    matches!(
        eval::<String>(page, "document.readyState".to_owned())
            .await
            .as_deref(),
        Ok("complete")
    )
}

/// The result of an action that may have made the page navigate: an error
/// when a navigation was refused, else where the page is now.
async fn after_interaction(running: &Running, done: &str) -> ActionResult {
    let blocked = running.blocked.take();
    if let Some(refused) = blocked.iter().find(|b| b.document) {
        return Err(format!(
            "{done} The page then tried to navigate, which was stopped: {}",
            refused.refusal
        ));
    }
    Ok(ToolOutput::text(
        summary(&running.page, done, &blocked).await,
    ))
}

async fn summary(page: &Page, done: &str, blocked: &[Blocked]) -> String {
    let (url, title) = location(page).await;
    with_blocked(format!("{done} Now at {url} (title: {title})."), blocked)
}

fn with_blocked(mut text: String, blocked: &[Blocked]) -> String {
    if !blocked.is_empty() {
        text.push_str("\nRequests the page made that were refused:");
        for b in blocked.iter().take(10) {
            text.push_str("\n- ");
            text.push_str(&b.refusal.to_string());
        }
        if blocked.len() > 10 {
            text.push_str(&format!("\n- and {} more", blocked.len() - 10));
        }
    }
    text
}

async fn location(page: &Page) -> (String, String) {
    let url = eval::<String>(page, "location.href".to_owned())
        .await
        .unwrap_or_default();
    let title = eval::<String>(page, "document.title".to_owned())
        .await
        .unwrap_or_default();
    (url, title)
}

async fn eval<T: DeserializeOwned>(page: &Page, expression: String) -> Result<T, String> {
    page.evaluate_expression(EvaluateParams::new(expression))
        .await
        .map_err(|e| describe(&e))?
        .into_value()
        .map_err(|e| format!("unexpected value from the page: {e}"))
}

fn describe(error: &CdpError) -> String {
    match error {
        CdpError::JavascriptException(details) => details
            .exception
            .as_ref()
            .and_then(|e| e.description.clone())
            .unwrap_or_else(|| details.text.clone()),
        other => other.to_string(),
    }
}

fn seconds(d: Duration) -> String {
    format!("{} s", d.as_secs_f64())
}

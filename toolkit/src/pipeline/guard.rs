//! The guard around a tool: a timeout, cancellation and panic containment.
//!
//! Most calls finish on their first poll (a tool that computes, or reads
//! what is already at hand), so the guard polls the tool once before it
//! sets anything up: the timer and the watch on the cancellation token are
//! made only when the tool has to wait. The timeout is then counted from
//! that first wait; a first poll that blocks would not be stopped by a
//! timer anyway.
//!
//! On a timeout or a cancellation the tool's future is dropped, which stops
//! its async work at the await it is in. A synchronous tool's body is told
//! through its own token, which dropping its future cancels (see
//! `run_blocking`); a thread cannot be stopped from outside, so a body that
//! never looks keeps its thread until it returns, and its result is thrown
//! away.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::pin;
use std::task::Poll;
use std::time::Duration;

use futures_util::FutureExt;
use tokio_util::sync::CancellationToken;

use crate::error::ToolError;
use crate::output::ToolOutput;

/// Run `work` until it finishes, `timeout` passes, or `token` is cancelled.
pub(super) async fn run(
    work: impl Future<Output = Result<ToolOutput, ToolError>>,
    token: &CancellationToken,
    timeout: Duration,
) -> Result<ToolOutput, ToolError> {
    if token.is_cancelled() {
        return Err(ToolError::Cancelled);
    }
    let mut work = pin!(AssertUnwindSafe(work).catch_unwind());
    let first = std::future::poll_fn(|cx| Poll::Ready(work.as_mut().poll(cx))).await;
    if let Poll::Ready(finished) = first {
        return contained(finished);
    }
    let Some(timer) = timer(timeout) else {
        // No timer in this runtime: wait for the tool or the token only.
        return tokio::select! {
            biased;
            finished = work => contained(finished),
            () = token.cancelled() => Err(ToolError::Cancelled),
        };
    };
    // The tool first: one that stops as soon as it sees its token cancelled
    // reports what it did, rather than being dropped half way.
    tokio::select! {
        biased;
        finished = work => contained(finished),
        () = token.cancelled() => Err(ToolError::Cancelled),
        () = timer => Err(ToolError::Timeout(timeout)),
    }
}

/// A panic as an error for this call alone.
fn contained(
    finished: Result<Result<ToolOutput, ToolError>, Box<dyn std::any::Any + Send>>,
) -> Result<ToolOutput, ToolError> {
    finished.unwrap_or_else(|panic| Err(ToolError::Panicked(panic_message(panic.as_ref()))))
}

/// What a panic said.
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_owned()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "a panic without a message".to_owned()
    }
}

/// A timer for `timeout`, or `None` in a runtime built without tokio's
/// time driver, where making one panics. A timeout too large for the clock
/// never fires.
fn timer(timeout: Duration) -> Option<tokio::time::Sleep> {
    use std::sync::atomic::{AtomicBool, Ordering};
    static WARNED: AtomicBool = AtomicBool::new(false);
    let deadline = tokio::time::Instant::now().checked_add(timeout)?;
    match std::panic::catch_unwind(|| tokio::time::sleep_until(deadline)) {
        Ok(timer) => Some(timer),
        Err(_) => {
            if !WARNED.swap(true, Ordering::Relaxed) {
                tracing::warn!(
                    "tool calls run without timeouts: this tokio runtime was built without its time driver (enable it with `enable_time` or `enable_all`)"
                );
            }
            None
        }
    }
}

//! [`Retry`]: run a call again when it failed in a way that may pass, for
//! tools that are safe to run twice.

use std::time::Duration;

use async_trait::async_trait;

use super::{Call, Layer, Next, Stage, error_output};
use crate::error::{CallError, ErrorKind, ToolError};
use crate::exec::shape::meta;
use crate::output::ToolOutput;
use crate::tool::ToolSpec;

/// Runs a call again when it failed in a way that may pass on a later try
/// (a [transient](ErrorKind::is_transient) kind: a network error, a rate
/// limit, a service that is down, a timeout), for tools whose spec says
/// they are read-only or idempotent. Any other tool runs once, whatever
/// happens: running a write twice could do it twice.
///
/// Between tries it waits an exponential backoff (`base`, `2 × base`, …,
/// at most `max_delay`), by default with jitter (up to half of each wait
/// is dropped at random, so calls that failed together do not all come
/// back together). When the failure says when to try again (a
/// `retry_after`), the wait is at least that long; a `retry_after` longer
/// than [`with_max_retry_after`](Self::with_max_retry_after) allows is not
/// waited for, and the failure is returned at once. A cancelled call stops
/// at once, even in the middle of a wait. A timeout counts as a failure
/// that may pass, so a tool that keeps timing out takes up to
/// `max_attempts` times its timeout.
///
/// A result that took more than one try carries the number under
/// [`meta::ATTEMPTS`]; a failure that was retried comes back as the
/// result the model reads (as [`error_output`](super::error_output)
/// makes it, with the kind under [`meta::ERROR_KIND`]), so that it can
/// carry that number. A failure that was not retried comes back as it was.
///
/// It sits at [`Stage::Execute`], so the retries run the guard and the
/// tool again, not the check, the limits or approval: one call of the
/// model counts once against a limit, however many tries it takes.
///
/// ```
/// use std::time::Duration;
/// use toolsmith::pipeline::{Pipeline, Retry};
///
/// let pipeline = Pipeline::new().layer(
///     Retry::new()
///         .with_max_attempts(4)
///         .with_backoff(Duration::from_millis(100), Duration::from_secs(2)),
/// );
/// # let _ = pipeline;
/// ```
#[derive(Debug, Clone)]
pub struct Retry {
    max_attempts: u32,
    base: Duration,
    max_delay: Duration,
    max_retry_after: Duration,
    jitter: bool,
}

impl Default for Retry {
    fn default() -> Self {
        Self::new()
    }
}

impl Retry {
    /// At most 3 tries, waits of 250 ms then 500 ms (at most 5 s), with
    /// jitter; a `retry_after` of up to 30 s is waited for.
    pub fn new() -> Self {
        Self {
            max_attempts: 3,
            base: Duration::from_millis(250),
            max_delay: Duration::from_secs(5),
            max_retry_after: Duration::from_secs(30),
            jitter: true,
        }
    }

    /// Try at most `attempts` times in all (1 turns retrying off).
    pub fn with_max_attempts(mut self, attempts: u32) -> Self {
        self.max_attempts = attempts.max(1);
        self
    }

    /// Wait `base` before the first retry, twice as long before each next
    /// one, never longer than `max_delay`.
    pub fn with_backoff(mut self, base: Duration, max_delay: Duration) -> Self {
        self.base = base;
        self.max_delay = max_delay;
        self
    }

    /// Wait for a `retry_after` up to this long; a longer one is not waited
    /// for and the failure is returned at once.
    pub fn with_max_retry_after(mut self, longest: Duration) -> Self {
        self.max_retry_after = longest;
        self
    }

    /// Whether a random part of each backoff is dropped (on by default).
    pub fn with_jitter(mut self, jitter: bool) -> Self {
        self.jitter = jitter;
        self
    }

    /// The most tries a call gets.
    pub fn max_attempts(&self) -> u32 {
        self.max_attempts
    }

    /// The wait before retry number `retry` (1 for the first retry), when
    /// the failure asked for `retry_after`; `None` when that is longer than
    /// the layer waits for.
    pub fn delay(&self, retry: u32, retry_after: Option<Duration>) -> Option<Duration> {
        let doubled = self
            .base
            .saturating_mul(1u32 << retry.saturating_sub(1).min(31));
        let mut backoff = doubled.min(self.max_delay);
        if self.jitter && !backoff.is_zero() {
            let half = backoff / 2;
            backoff = half + half.mul_f64(random_fraction());
        }
        match retry_after {
            Some(asked) if asked > self.max_retry_after => None,
            Some(asked) => Some(backoff.max(asked)),
            None => Some(backoff),
        }
    }
}

/// Whether a tool may be run again with the same arguments: its spec says
/// it is read-only or idempotent.
pub(super) fn safe_to_repeat(spec: Option<&ToolSpec>) -> bool {
    spec.is_some_and(|spec| spec.annotations.read_only || spec.annotations.idempotent)
}

/// What kind of failure a result is, if it is one: an error's kind, or the
/// kind an error result carries (a layer inside may have made the error a
/// result). A result the tool itself wrote as an error has no kind.
pub(super) fn failure_kind(result: &Result<ToolOutput, CallError>) -> Option<ErrorKind> {
    match result {
        Err(error) => Some(error.kind()),
        Ok(output) if output.is_error => output.metadata.read(&meta::ERROR_KIND),
        Ok(_) => None,
    }
}

/// `result` with the number of tries under [`meta::ATTEMPTS`] when there
/// was more than one.
fn counted(result: Result<ToolOutput, CallError>, attempts: u32) -> Result<ToolOutput, CallError> {
    if attempts < 2 {
        return result;
    }
    let mut output = result.unwrap_or_else(|error| error_output(&error));
    output.metadata.write(&meta::ATTEMPTS, &attempts);
    Ok(output)
}

/// A number in `[0, 1)` from the standard library's per-process random keys.
fn random_fraction() -> f64 {
    use std::hash::BuildHasher;
    let bits = std::collections::hash_map::RandomState::new().hash_one(0u8);
    (bits >> 11) as f64 / (1u64 << 53) as f64
}

/// A wait of `delay`, or `None` in a runtime without tokio's time driver.
fn sleep(delay: Duration) -> Option<tokio::time::Sleep> {
    let deadline = tokio::time::Instant::now().checked_add(delay)?;
    std::panic::catch_unwind(|| tokio::time::sleep_until(deadline)).ok()
}

#[async_trait]
impl Layer for Retry {
    fn stage(&self) -> Stage {
        Stage::Execute
    }

    async fn handle(&self, call: &mut Call<'_>, next: Next<'_>) -> Result<ToolOutput, CallError> {
        if self.max_attempts < 2 || !safe_to_repeat(call.spec()) {
            return next.run(call).await;
        }
        let arguments = call.arguments().clone();
        let mut attempts = 1;
        loop {
            let result = next.run(call).await;
            let transient = failure_kind(&result).is_some_and(ErrorKind::is_transient);
            if !transient || attempts >= self.max_attempts || call.context().is_cancelled() {
                return counted(result, attempts);
            }
            let retry_after = match &result {
                Err(CallError::Tool {
                    error: ToolError::Transient { retry_after, .. },
                    ..
                }) => *retry_after,
                _ => None,
            };
            let Some(wait) = self.delay(attempts, retry_after).and_then(sleep) else {
                // Asked to wait longer than the layer waits, or no timer.
                return counted(result, attempts);
            };
            tracing::debug!(
                tool = call.tool_name(),
                attempt = attempts,
                error.type = failure_kind(&result).map(ErrorKind::as_str),
                "retrying a call that failed in a way that may pass"
            );
            let cancelled = call.context().cancellation().clone();
            tokio::select! {
                biased;
                () = cancelled.cancelled() => return Err(call.fail(ToolError::Cancelled)),
                () = wait => {}
            }
            *call.arguments_mut() = arguments.clone();
            attempts += 1;
        }
    }
}

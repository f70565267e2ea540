//! How fast one server may have the host's model sample, or the host's
//! user answer: the host pays for each (a model call, a question put to a
//! person), and a server that asks in a loop, or asks and cancels at once,
//! would otherwise have the host do so thousands of times a second.

use std::sync::Mutex;
use std::time::Duration;

use rmcp::ErrorData;
use rmcp::model::ErrorCode;
use serde_json::json;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// The JSON-RPC error code of a server's request refused by its
/// [`QuestionRate`]: an implementation-defined code (-32000 to -32099),
/// 429's digits for a reminder.
const RATE_LIMITED: ErrorCode = ErrorCode(-32029);

/// How fast one server may ask the host's model to sample
/// (`sampling/createMessage`), and, on its own count, how fast it may ask
/// the host's user (`elicitation/create`): a token bucket holding
/// [`burst`](Self::burst) questions, which come back one every
/// [`every`](Self::every). So `burst` questions may come at once, then one
/// every `every`.
///
/// The default, [`QuestionRate::DEFAULT`], is 8 at once, then one a second:
/// room for a tool that asks a few questions in a row, and at most about
/// 3,600 model calls an hour from a server that asks without end (without a
/// bound, a server asking and cancelling in a loop had the host's sampler
/// called 10,005 times in 3.7 s).
///
/// A server's request past its rate is answered at once with a JSON-RPC
/// error, code -32029, whose message says the client is rate limited and
/// when to try again (`data.retryAfterMs`); it is never queued. The
/// questions of a call of the host's (protocol 2026-07-28's input-required
/// results, a task's questions) wait for their turn instead, within the
/// call's time. A server keeps its buckets across reconnections: a server
/// that crashes is not given a fresh burst.
///
/// ```
/// use std::time::Duration;
/// use toolsmith::mcp::QuestionRate;
///
/// let rate = QuestionRate::new(4, Duration::from_secs(10));
/// assert_eq!((rate.burst(), rate.every()), (4, Duration::from_secs(10)));
/// assert_eq!(QuestionRate::default(), QuestionRate::DEFAULT);
/// assert_eq!(QuestionRate::DEFAULT.burst(), 8);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuestionRate {
    burst: u32,
    every: Duration,
}

impl QuestionRate {
    /// 8 questions at once, then one a second.
    pub const DEFAULT: Self = Self {
        burst: 8,
        every: Duration::from_secs(1),
    };

    /// `burst` questions at once (at least 1), then one every `every`. An
    /// `every` of zero puts no bound on the rate.
    pub fn new(burst: u32, every: Duration) -> Self {
        Self {
            burst: burst.max(1),
            every,
        }
    }

    /// How many questions may come at once.
    pub fn burst(&self) -> u32 {
        self.burst
    }

    /// How long one question takes to come back.
    pub fn every(&self) -> Duration {
        self.every
    }
}

impl Default for QuestionRate {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// A token bucket of a [`QuestionRate`].
#[derive(Debug)]
pub(crate) struct Bucket {
    rate: QuestionRate,
    /// Tokens left, and when they were counted.
    state: Mutex<(f64, Instant)>,
}

impl Bucket {
    /// A full bucket.
    pub(crate) fn new(rate: QuestionRate) -> Self {
        Self {
            rate,
            state: Mutex::new((f64::from(rate.burst), Instant::now())),
        }
    }

    /// Take a token at `now`, or say how long until one is there.
    fn take_at(&self, now: Instant) -> Result<(), Duration> {
        let every = self.rate.every.as_secs_f64();
        if every <= 0.0 {
            return Ok(());
        }
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let (tokens, at) = &mut *state;
        let gained = now.saturating_duration_since(*at).as_secs_f64() / every;
        *tokens = (*tokens + gained).min(f64::from(self.rate.burst));
        *at = now;
        if *tokens >= 1.0 {
            *tokens -= 1.0;
            return Ok(());
        }
        // Never more than one `every`: a token is all that is missing.
        let wait = Duration::try_from_secs_f64(every * (1.0 - *tokens))
            .map_or(self.rate.every, |wait| wait.min(self.rate.every));
        Err(wait)
    }

    /// Take a token for a server's request, or the error that answers it:
    /// `what` names the questions (`sampling requests`) for its message.
    pub(crate) fn admit(&self, what: &str) -> Result<(), ErrorData> {
        self.take_at(Instant::now()).map_err(|wait| {
            let rate = self.rate;
            ErrorData::new(
                RATE_LIMITED,
                format!(
                    "rate limited: this client answers at most {} {what} at once, then one \
                     every {} ms; try again in {} ms",
                    rate.burst,
                    rate.every.as_millis(),
                    wait.as_millis().max(1)
                ),
                Some(json!({"retryAfterMs": wait.as_millis().max(1)})),
            )
        })
    }

    /// Take a token, waiting for one if need be, unless `ct` is cancelled
    /// first (then `false`): for the questions of the host's own calls,
    /// which are bounded in number and in time by the call.
    pub(crate) async fn wait_turn(&self, ct: &CancellationToken) -> bool {
        loop {
            match self.take_at(Instant::now()) {
                Ok(()) => return true,
                Err(wait) => tokio::select! {
                    () = tokio::time::sleep(wait) => {}
                    () = ct.cancelled() => return false,
                },
            }
        }
    }
}

/// A server's buckets: one for sampling, one for elicitation.
#[derive(Debug)]
pub(crate) struct Questions {
    /// For `sampling/createMessage`.
    pub(crate) sampling: Bucket,
    /// For `elicitation/create`.
    pub(crate) elicitation: Bucket,
}

impl Questions {
    /// Full buckets of `rate`.
    pub(crate) fn new(rate: QuestionRate) -> Self {
        Self {
            sampling: Bucket::new(rate),
            elicitation: Bucket::new(rate),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_then_one_every_period() {
        let bucket = Bucket::new(QuestionRate::new(3, Duration::from_secs(1)));
        let start = Instant::now();
        for _ in 0..3 {
            assert_eq!(bucket.take_at(start), Ok(()));
        }
        assert_eq!(bucket.take_at(start), Err(Duration::from_secs(1)));
        let half = start + Duration::from_millis(500);
        assert_eq!(bucket.take_at(half), Err(Duration::from_millis(500)));
        let one = start + Duration::from_secs(1);
        assert_eq!(bucket.take_at(one), Ok(()));
        assert!(bucket.take_at(one).is_err());
        // A long pause fills the bucket up to its burst, never past it.
        let later = one + Duration::from_secs(3600);
        let taken = (0..10).filter(|_| bucket.take_at(later).is_ok()).count();
        assert_eq!(taken, 3);
    }

    #[test]
    fn a_refusal_is_a_rate_limited_error_saying_when_to_retry() {
        let bucket = Bucket::new(QuestionRate::new(1, Duration::from_secs(60)));
        assert!(bucket.admit("sampling requests").is_ok());
        let refused = bucket.admit("sampling requests").unwrap_err();
        assert_eq!(refused.code, RATE_LIMITED);
        assert!(
            refused.message.starts_with("rate limited: "),
            "{}",
            refused.message
        );
        let retry = refused.data.as_ref().unwrap()["retryAfterMs"]
            .as_u64()
            .unwrap();
        assert!(retry > 0 && retry <= 60_000, "{retry}");
    }

    #[test]
    fn a_zero_period_bounds_nothing_and_the_burst_is_at_least_one() {
        let bucket = Bucket::new(QuestionRate::new(0, Duration::ZERO));
        assert!((0..1000).all(|_| bucket.take_at(Instant::now()).is_ok()));
        assert_eq!(QuestionRate::new(0, Duration::from_secs(1)).burst(), 1);
    }

    #[tokio::test]
    async fn a_call_waits_its_turn_or_its_cancel() {
        let bucket = Bucket::new(QuestionRate::new(1, Duration::from_millis(20)));
        let ct = CancellationToken::new();
        let limit = Duration::from_secs(10);
        assert!(
            tokio::time::timeout(limit, bucket.wait_turn(&ct))
                .await
                .unwrap()
        );
        // The bucket is empty: this one waits for the token to come back.
        assert!(
            tokio::time::timeout(limit, bucket.wait_turn(&ct))
                .await
                .unwrap()
        );
        let slow = Bucket::new(QuestionRate::new(1, Duration::from_secs(3600)));
        assert!(slow.wait_turn(&ct).await);
        ct.cancel();
        assert!(
            !tokio::time::timeout(limit, slow.wait_turn(&ct))
                .await
                .unwrap()
        );
    }
}

//! Where the file and search tools do their work: on tokio's blocking pool,
//! never on an async worker thread, within the context's bound on blocking
//! work ([`BlockingLimit`](toolsmith::exec::BlockingLimit)), the same bound
//! synchronous `#[tool]`s take their slots from.
//!
//! A file-system call can block for as long as the kernel likes (a stalled
//! network mount, a huge tree); on an async worker it would stall every task
//! of that thread, and a host's `tokio::time::timeout` around the call could
//! not fire on a `current_thread` runtime. Here the caller awaits a blocking
//! task, so a timeout (the runner's or the host's) always returns on time.
//!
//! What keeps running after the caller gave up: the blocking thread, until
//! its current system call returns. The work is told to stop ([`Stop`]):
//! walks and searches check it between files and quit, so a cancelled search
//! ends after the file it is in. A thread stuck in one system call keeps its
//! slot until that call returns, so stuck threads never exceed the limit;
//! later calls wait a while for a slot, then fail with an error that says
//! why (and their own timeouts still return).

use toolsmith::exec::run_blocking;
use toolsmith::{ToolContext, ToolError};

/// Set when the caller stopped waiting (a timeout, a cancellation); the
/// work checks it and quits early.
#[derive(Debug, Clone, Default)]
pub struct Stop(ToolContext);

impl Stop {
    /// Whether the caller stopped waiting.
    pub fn is_set(&self) -> bool {
        self.0.is_cancelled()
    }
}

/// Run `body` on the blocking pool once a slot of `ctx`'s blocking limit is
/// free, and wait for it. The body gets the call's context (with a token
/// of its own) and the [`Stop`] that tells it the caller left. A panic in
/// `body` is raised again here, as the tool's own.
pub async fn run<R: Send + 'static>(
    ctx: &ToolContext,
    body: impl FnOnce(&ToolContext, &Stop) -> R + Send + 'static,
) -> Result<R, ToolError> {
    run_blocking(ctx, move |ctx| body(ctx, &Stop(ctx.clone()))).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    use rustix::fs::{FileType, Mode};

    /// A FIFO opened without `O_NONBLOCK` blocks until a writer comes: the
    /// worst a blocking call can do. A timeout around it returns anyway on a
    /// single-threaded runtime, and the work learns it should stop.
    #[tokio::test(flavor = "current_thread")]
    async fn a_blocked_call_returns_at_the_callers_deadline() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            FileType::Fifo,
            Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        let (told, seen) = std::sync::mpsc::channel();
        let path = fifo.clone();
        let ctx = ToolContext::new();
        let call = run(&ctx, move |_, stop| {
            let opened = std::fs::File::open(&path).map(|_| ());
            told.send(stop.clone()).unwrap();
            opened
        });
        let timed = tokio::time::timeout(Duration::from_millis(200), call).await;
        assert!(timed.is_err(), "the call cannot have finished");
        // Release the blocked thread: open the write end (non-blocking
        // would fail without a reader; the reader is waiting, so this opens).
        let writer = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
        let stop = seen.recv_timeout(Duration::from_secs(10)).unwrap();
        assert!(stop.is_set(), "the work is told the caller left");
        drop(writer);
    }

    #[tokio::test(flavor = "current_thread")]
    async fn results_and_panics_come_back() {
        let ctx = ToolContext::new();
        assert_eq!(run(&ctx, |_, _| 7).await.unwrap(), 7);
        let panicked =
            tokio::spawn(async move { run(&ctx, |_, _| -> u8 { panic!("boom") }).await }).await;
        assert!(panicked.unwrap_err().is_panic());
    }
}

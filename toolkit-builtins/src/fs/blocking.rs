//! Where the file and search tools do their work: on tokio's blocking pool,
//! never on an async worker thread, with a bound on how many run at once.
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
//! permit until that call returns, so stuck threads can never exceed
//! [`MAX_CONCURRENT`]; later calls wait for a permit (and their own
//! timeouts still return).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::Semaphore;
use toolsmith::ToolError;

/// File and search calls running at once, across the process.
pub const MAX_CONCURRENT: usize = 16;

static PERMITS: Semaphore = Semaphore::const_new(MAX_CONCURRENT);

/// Set when the caller stopped waiting; the work checks it and quits early.
#[derive(Debug, Clone, Default)]
pub struct Stop(Arc<AtomicBool>);

impl Stop {
    /// Whether the caller stopped waiting.
    pub fn is_set(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    fn set(&self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Sets the flag when dropped: when the awaiting future is dropped
/// (timeout, cancellation) or finishes.
struct StopOnDrop(Stop);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.set();
    }
}

/// Run `body` on the blocking pool once a permit is free, and wait for it.
/// A panic in `body` is raised again here, as the tool's own.
pub async fn run<R: Send + 'static>(
    body: impl FnOnce(&Stop) -> R + Send + 'static,
) -> Result<R, ToolError> {
    let permit = PERMITS
        .acquire()
        .await
        .map_err(|_| ToolError::internal("the file tools' permits are closed"))?;
    let stop = Stop::default();
    let _guard = StopOnDrop(stop.clone());
    // The permit travels with the work: released when the thread is done,
    // not when the caller stops waiting.
    let permit = permit;
    let task = tokio::task::spawn_blocking(move || {
        let _permit = permit;
        body(&stop)
    });
    match task.await {
        Ok(value) => Ok(value),
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        Err(_) => Err(ToolError::Cancelled),
    }
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
        let call = run(move |stop| {
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
        assert_eq!(run(|_| 7).await.unwrap(), 7);
        let panicked = tokio::spawn(run(|_| -> u8 { panic!("boom") })).await;
        assert!(panicked.unwrap_err().is_panic());
    }
}

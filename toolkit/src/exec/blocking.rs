//! How many synchronous tools may run at once.
//!
//! A synchronous tool (a plain `fn` with `#[tool]`) runs on tokio's
//! blocking pool. A timeout or a cancellation stops waiting for it, but a
//! thread cannot be stopped from outside: a body that never looks at its
//! context's token keeps its thread until it returns. Without a bound, a
//! model that keeps calling a tool that hangs would take one more thread
//! each time, until the pool (512 threads by default) is used up and every
//! other blocking task of the process waits.
//!
//! So each synchronous call first takes a slot of a [`BlockingLimit`], and
//! keeps it on its thread until the body returns, timed out or not. When
//! every slot is held, a new call waits for one for a while, within its own
//! timeout, then fails with an error that says why, instead of taking
//! another thread.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::{ToolContext, ToolError};

/// Run `body` on tokio's blocking pool, so it never stalls the async
/// threads, once a slot of the context's [`BlockingLimit`] is free (failing
/// with that limit's error when none comes free in time). This is how a
/// synchronous `#[tool]` runs; tools that do blocking work inside an
/// `async fn` (file system calls, a blocking library) use it the same way.
///
/// The slot stays with the body until it returns, even when the caller has
/// stopped waiting. A panic in `body` is raised again here, where the
/// caller's panic handling sees it as the tool's own.
///
/// The body gets a context with a token of its own, cancelled when the
/// caller's is and when the caller stops waiting (a timeout drops this
/// future): a thread cannot be stopped from outside, so the token is how a
/// body that checks [`ToolContext::is_cancelled`] learns to stop.
///
/// ```
/// use toolsmith::ToolContext;
/// use toolsmith::exec::run_blocking;
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let ctx = ToolContext::new();
/// let len = run_blocking(&ctx, |ctx| {
///     if ctx.is_cancelled() { return 0; }
///     std::fs::read_dir(".").map(|d| d.count()).unwrap_or(0)
/// })
/// .await
/// .unwrap();
/// # let _ = len; }
/// ```
pub async fn run_blocking<R: Send + 'static>(
    ctx: &ToolContext,
    body: impl FnOnce(&ToolContext) -> R + Send + 'static,
) -> Result<R, ToolError> {
    let permit = BlockingLimit::of(ctx).slot().await?;
    let token = ctx.cancellation().child_token();
    let ctx = ctx.clone().with_cancellation(token.clone());
    // Cancels the body's token if this future is dropped before it returns.
    let stop = token.drop_guard();
    let body = move || {
        let _permit = permit;
        body(&ctx)
    };
    let outcome = tokio::task::spawn_blocking(body).await;
    stop.disarm();
    match outcome {
        Ok(value) => Ok(value),
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        Err(_) => Err(ToolError::Cancelled),
    }
}

/// A bound on the synchronous tool bodies that run at once, shared by
/// every call whose context holds it.
///
/// A synchronous tool runs on tokio's blocking pool and holds one slot
/// from the moment its body is handed to the pool until the body returns.
/// A call that times out, or is cancelled, is answered at once, but **its
/// thread is not stopped**: Rust cannot stop a thread from outside. The
/// body goes on running, with its context's token cancelled (a body that
/// checks [`ToolContext::is_cancelled`] can stop early), and keeps its
/// thread and its slot until it returns; what it returns then is dropped.
/// A body that never returns holds both for the life of the process.
///
/// So repeated timeouts use up the slots, never the pool: when every slot
/// is held, a new call waits up to [`wait`](Self::wait) for one (its own
/// timeout still applies while it waits), then fails with an
/// [`ErrorKind::Unavailable`](crate::ErrorKind::Unavailable) error telling
/// the model that the tool cannot start now and why. Asynchronous tools
/// take no slot, except for the blocking work they hand to
/// [`run_blocking`] (the built-in file and search tools do).
///
/// Put one in the context's state to give the calls made with that
/// context (and its clones: every call of a runner, a registry or an MCP
/// server built on it) a bound of their own. Without one, calls share a
/// process-wide limit of 64 slots and a wait of 10 seconds.
///
/// ```
/// use std::time::Duration;
/// use toolsmith::ToolContext;
/// use toolsmith::exec::BlockingLimit;
///
/// let ctx = ToolContext::new()
///     .with_state(BlockingLimit::new(8).with_wait(Duration::from_secs(2)));
/// let limit = ctx.state::<BlockingLimit>().unwrap();
/// assert_eq!((limit.max(), limit.available()), (8, 8));
/// ```
#[derive(Debug, Clone)]
pub struct BlockingLimit {
    slots: Arc<Semaphore>,
    max: usize,
    wait: Duration,
}

/// The limit of calls whose context holds no [`BlockingLimit`].
const DEFAULT_MAX: usize = 64;
/// How long a call waits for a slot unless told otherwise.
const DEFAULT_WAIT: Duration = Duration::from_secs(10);

impl BlockingLimit {
    /// At most `max` synchronous bodies at once (at least 1), and a wait of
    /// 10 seconds for a slot.
    pub fn new(max: usize) -> Self {
        let max = max.clamp(1, Semaphore::MAX_PERMITS);
        Self {
            slots: Arc::new(Semaphore::new(max)),
            max,
            wait: DEFAULT_WAIT,
        }
    }

    /// Wait at most `wait` for a slot before failing (zero: fail at once
    /// when none is free). The call's own timeout applies as well: whichever
    /// ends first ends the wait.
    pub fn with_wait(mut self, wait: Duration) -> Self {
        self.wait = wait;
        self
    }

    /// How many bodies may run at once.
    pub fn max(&self) -> usize {
        self.max
    }

    /// How long a call waits for a slot.
    pub fn wait(&self) -> Duration {
        self.wait
    }

    /// How many slots are free now.
    pub fn available(&self) -> usize {
        self.slots.available_permits()
    }

    /// The limit for a call made with `ctx`: its own, or the process-wide one.
    pub(crate) fn of(ctx: &ToolContext) -> &BlockingLimit {
        static DEFAULT: OnceLock<BlockingLimit> = OnceLock::new();
        ctx.state::<BlockingLimit>()
            .unwrap_or_else(|| DEFAULT.get_or_init(|| BlockingLimit::new(DEFAULT_MAX)))
    }

    /// A slot for one body, once one is free within the wait.
    pub(crate) async fn slot(&self) -> Result<Slot, ToolError> {
        let slots = Arc::clone(&self.slots);
        let acquired = if self.wait.is_zero() {
            slots.try_acquire_owned().ok()
        } else {
            // The semaphore is never closed: an error cannot come back.
            tokio::time::timeout(self.wait, slots.acquire_owned())
                .await
                .ok()
                .and_then(Result::ok)
        };
        acquired
            .map(|permit| Slot { _permit: permit })
            .ok_or_else(|| self.busy())
    }

    /// What the model reads when no slot came free.
    fn busy(&self) -> ToolError {
        let threads = if self.max == 1 { "thread" } else { "threads" };
        ToolError::unavailable(format!(
            "this tool cannot start now: blocking work (synchronous tools, file access) may use {} {threads} at once, and \
             earlier calls that have not returned hold them all (a call that timed out keeps \
             its thread until it finishes). Try again later, or use another tool.",
            self.max
        ))
    }
}

/// A running synchronous body's slot, given back when the body returns.
pub(crate) struct Slot {
    _permit: OwnedSemaphorePermit,
}

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
//! So each synchronous call first takes a permit, and keeps it on its
//! thread until the body returns, timed out or not. When all permits are
//! held, a new call waits for one, and its own timeout still applies: the
//! call fails with a timeout instead of taking another thread.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// How many synchronous tool bodies may run at once unless the host says
/// otherwise with [`set_blocking_tool_limit`]: 64.
const DEFAULT_BLOCKING_TOOL_LIMIT: usize = 64;

struct Limit {
    permits: Arc<Semaphore>,
    /// The limit as last set; permits in use are part of it.
    size: AtomicUsize,
    /// Serializes changes of the limit.
    changing: Mutex<()>,
}

fn limit() -> &'static Limit {
    static LIMIT: OnceLock<Limit> = OnceLock::new();
    LIMIT.get_or_init(|| Limit {
        permits: Arc::new(Semaphore::new(DEFAULT_BLOCKING_TOOL_LIMIT)),
        size: AtomicUsize::new(DEFAULT_BLOCKING_TOOL_LIMIT),
        changing: Mutex::new(()),
    })
}

/// Let at most `max` synchronous tool bodies run at once in this process
/// (at least 1; 64 until this is called). Lowering the limit takes effect as running bodies return.
pub fn set_blocking_tool_limit(max: usize) {
    let max = max.max(1);
    let limit = limit();
    let _changing = limit.changing.lock().unwrap_or_else(|e| e.into_inner());
    let current = limit.size.load(Ordering::Acquire);
    if max > current {
        limit.permits.add_permits(max - current);
    } else if max < current {
        // Free permits go at once; the rest are taken back as they are
        // returned, by forgetting them on the way (see `Permit::drop`).
        let forgotten = limit.permits.forget_permits(current - max);
        OWED.fetch_add(current - max - forgotten, Ordering::AcqRel);
    }
    limit.size.store(max, Ordering::Release);
}

/// Permits to drop instead of returning, after the limit was lowered below
/// the number in use.
static OWED: AtomicUsize = AtomicUsize::new(0);

/// A running synchronous body's permit.
pub(crate) struct Permit(Option<OwnedSemaphorePermit>);

impl Drop for Permit {
    fn drop(&mut self) {
        let owed = OWED.fetch_update(Ordering::AcqRel, Ordering::Acquire, |owed| {
            owed.checked_sub(1)
        });
        if owed.is_ok()
            && let Some(permit) = self.0.take()
        {
            permit.forget();
        }
    }
}

/// Wait for a permit to run a synchronous body.
pub(crate) async fn permit() -> Permit {
    let permits = Arc::clone(&limit().permits);
    // The semaphore is never closed.
    Permit(permits.acquire_owned().await.ok())
}

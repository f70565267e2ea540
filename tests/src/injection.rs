//! Injected parameters: the context (through a renamed import), the
//! cancellation token, and shared state the host put in the context.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::Duration;

use tk::ToolContext as Ctx;
use tk::{CancellationToken, tool};

/// Shared state: a visit counter the host owns.
#[derive(Debug, Default)]
pub struct Counter {
    /// Visits so far.
    pub hits: AtomicU64,
}

/// Describe where the call came from.
#[tool(read_only)]
pub async fn whoami(ctx: &Ctx) -> String {
    format!(
        "channel={} chat={} workspace={}",
        ctx.channel().unwrap_or("-"),
        ctx.chat_id().unwrap_or("-"),
        ctx.workspace()
            .map_or("-".into(), |p| p.display().to_string())
    )
}

/// Add to the shared visit counter.
#[tool]
pub async fn count_visit(
    counter: &Counter,
    /// How many visits to add.
    #[arg(default = 1)]
    by: u64,
) -> String {
    let now = counter.hits.fetch_add(by, Ordering::SeqCst) + by;
    format!("visits={now}")
}

/// Wait until the call is cancelled, then say so.
#[tool(read_only)]
pub async fn wait_for_cancel(token: &CancellationToken) -> String {
    token.cancelled().await;
    "stopped by cancellation".to_owned()
}

/// Report whether the call is cancelled, through both injected forms.
#[tool(read_only)]
pub async fn cancel_status(ctx: &Ctx, token: &CancellationToken) -> String {
    format!(
        "context={} token={}",
        ctx.is_cancelled(),
        token.is_cancelled()
    )
}

/// Which thread ran the tool's body, for checking where sync tools run.
#[tool(read_only)]
pub fn sync_thread(
    /// Echoed back.
    tag: String,
    counter: &Counter,
) -> String {
    counter.hits.fetch_add(1, Ordering::SeqCst);
    format!("{tag} {:?}", std::thread::current().id())
}

/// Which thread ran the async tool's body.
#[tool(read_only)]
pub async fn async_thread() -> String {
    format!("{:?}", std::thread::current().id())
}

/// Shared state for [`block_until_released`]: the tool says it started,
/// then blocks its thread until the test releases it.
#[derive(Debug)]
pub struct Gate {
    /// Set by the tool once its body runs.
    pub started: AtomicBool,
    /// The release signal.
    pub release: Mutex<Receiver<()>>,
}

/// Block this thread until released. A sync tool, so it must not block the runtime.
#[tool]
pub fn block_until_released(gate: &Gate) -> Result<String, String> {
    gate.started.store(true, Ordering::SeqCst);
    let release = gate.release.lock().map_err(|e| e.to_string())?;
    // Only a guard against hanging the test run if the tool ever blocked the
    // runtime (then the releasing task could never run); not a timing check.
    match release.recv_timeout(Duration::from_secs(60)) {
        Ok(()) => Ok("released".to_owned()),
        Err(RecvTimeoutError::Timeout) => Err("never released: the runtime was blocked".to_owned()),
        Err(RecvTimeoutError::Disconnected) => Err("the releasing side went away".to_owned()),
    }
}

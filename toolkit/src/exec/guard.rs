//! Run one prepared call so that nothing it does can hurt the batch: a
//! timeout that stops the work, cancellation, and a panic contained as an
//! error for that call alone.

use std::any::Any;
use std::panic::AssertUnwindSafe;
use std::time::Duration;

use futures_util::FutureExt;

use crate::context::ToolContext;
use crate::error::{CallError, ToolError};
use crate::output::ToolOutput;
use crate::registry::PreparedCall;

/// Run `prepared` with `ctx`, for at most `timeout`.
///
/// On timeout or cancellation the call's future is dropped, which stops any
/// async work at its next await, and the context's token is cancelled, so a
/// synchronous tool that checks it can stop too. (A synchronous tool that
/// never checks keeps its blocking thread until it returns; its result is
/// then discarded.)
pub(crate) async fn run_guarded(
    prepared: PreparedCall,
    ctx: &ToolContext,
    timeout: Duration,
) -> Result<ToolOutput, ToolError> {
    let work = AssertUnwindSafe(prepared.run(ctx)).catch_unwind();
    let outcome = tokio::select! {
        biased;
        _ = ctx.cancellation().cancelled() => Err(ToolError::Cancelled),
        finished = tokio::time::timeout(timeout, work) => match finished {
            Err(_elapsed) => Err(ToolError::Timeout(timeout)),
            Ok(Err(panic)) => Err(ToolError::Panicked(panic_message(panic.as_ref()))),
            Ok(Ok(Ok(output))) => Ok(output),
            Ok(Ok(Err(CallError::Tool { error, .. }))) => Err(error),
            Ok(Ok(Err(other))) => Err(ToolError::Failed(other.to_string())),
        },
    };
    if outcome.is_err() {
        ctx.cancellation().cancel();
    }
    outcome
}

fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_owned()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "a panic without a message".to_owned()
    }
}

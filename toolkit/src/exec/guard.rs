//! Run one prepared call so that nothing it does can hurt the batch: a
//! timeout that stops the work and cancellation. (A panic is contained by
//! [`PreparedCall::run`] itself, as an error for that call alone.)

use std::time::Duration;

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
    // `run` already turns a panic into an error for this call.
    let work = prepared.run(ctx);
    let outcome = tokio::select! {
        biased;
        _ = ctx.cancellation().cancelled() => Err(ToolError::Cancelled),
        finished = tokio::time::timeout(timeout, work) => match finished {
            Err(_elapsed) => Err(ToolError::Timeout(timeout)),
            Ok(Ok(output)) => Ok(output),
            Ok(Err(CallError::Tool { error, .. })) => Err(error),
            // `run` reports only the tool's own errors; keep any other whole.
            Ok(Err(other)) => Err(ToolError::Internal(other.to_string())),
        },
    };
    if outcome.is_err() {
        ctx.cancellation().cancel();
    }
    outcome
}

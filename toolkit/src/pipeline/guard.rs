//! The guard around a tool: a timeout, cancellation and panic containment.
//!
//! Most calls finish on their first poll (a tool that computes, or reads
//! what is already at hand), so the guard sets nothing up until the tool
//! has to wait: then it makes the timer and the watch on the cancellation
//! token, once, off the call's own future (which stays small). The timeout
//! is counted from that first wait; a first poll that blocks would not be
//! stopped by a timer anyway. (So a call whose token is already cancelled
//! still runs if it never waits; one that waits stops at its first wait.)
//!
//! When the tool and a stop are ready at the same poll, the tool wins: one
//! that stops as soon as it sees its token cancelled reports what it did.
//! On a timeout or a cancellation the tool's future is dropped, which stops
//! its async work at the await it is in. A synchronous tool's body is told
//! through its own token, which dropping its future cancels (see
//! `run_blocking`); a thread cannot be stopped from outside, so a body that
//! never looks keeps its thread until it returns, and its result is thrown
//! away.

use std::future::Future;
use std::mem::MaybeUninit;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use futures_util::FutureExt;
use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};

use crate::context::ToolContext;
use crate::error::{CallError, ToolError};
use crate::output::ToolOutput;
use crate::registry::Entry;
use crate::tool::{Arguments, Tool};
use crate::tool_future::ToolFuture;

pin_project_lite::pin_project! {
    /// A tool's future under the guard. It ends as the tool's own result
    /// does, a [`ToolError`] on failure: an output passes up unchanged, and
    /// is not copied into the layout of a wider error on its way.
    pub(super) struct Guarded<'t, F> {
        #[pin]
        work: F,
        token: &'t CancellationToken,
        timeout: Duration,
        // Made at the first wait.
        stops: Option<Pin<Box<Stops>>>,
    }
}

pin_project_lite::pin_project! {
    /// What can stop a call that waits.
    struct Stops {
        #[pin]
        cancelled: WaitForCancellationFutureOwned,
        // `None` when the runtime has no timer, or the timeout is too
        // large for the clock.
        #[pin]
        timer: Option<tokio::time::Sleep>,
    }
}

/// A tool and its arguments, ready to start under the guard.
pub(super) struct Ready<'t> {
    tool: &'t dyn Tool,
    /// The tool's name as the registry filed it, for its errors.
    name: &'t str,
    arguments: Arguments,
    ctx: &'t ToolContext,
    timeout: Duration,
}

impl<'t> Ready<'t> {
    /// The tool of `entry`, to run with `arguments` in `ctx`, bounded by
    /// its own timeout or else the pipeline's.
    #[inline(always)]
    pub(super) fn new(
        entry: &'t Entry,
        arguments: Arguments,
        ctx: &'t ToolContext,
        settings: &super::Settings,
    ) -> Self {
        Self {
            tool: &**entry.tool,
            name: &entry.name,
            arguments,
            ctx,
            timeout: entry.timeout.unwrap_or(settings.timeout),
        }
    }

    /// [`guarded`](Self::guarded), its failure the call's error, which
    /// names the tool.
    #[inline(always)]
    pub(super) fn run(self) -> impl Future<Output = Result<ToolOutput, CallError>> + 't {
        let name = self.name;
        self.guarded()
            .map(move |result| result.map_err(|error| CallError::tool_failed(name, error)))
    }

    /// Start the tool: its future, until it finishes, the timeout passes,
    /// or the context's token is cancelled. Inlined where it is awaited, so
    /// the tool's future (held in place, see [`ToolFuture`]) is written
    /// where it runs instead of being copied there.
    #[inline(always)]
    pub(super) fn guarded(self) -> Guarded<'t, ToolFuture<'t>> {
        Guarded {
            work: start_contained(self.tool, self.arguments, self.ctx),
            token: self.ctx.cancellation(),
            timeout: self.timeout,
            stops: None,
        }
    }
}

/// The tool of `entry` started under the guard as [`Ready::guarded`] does,
/// written at `place`: the tool's future is made where it will run, not
/// moved there, and its arguments are made (by `arguments`) as the tool
/// starts, so they move once, to the tool. `arguments` runs before
/// anything is written at `place`, so it may read what lies there.
///
/// # Safety
/// `place` is valid for writes and holds nothing to drop.
#[inline(always)]
pub(super) unsafe fn guarded_at<'t>(
    place: *mut Guarded<'t, ToolFuture<'t>>,
    entry: &'t Entry,
    arguments: impl FnOnce() -> Arguments,
    ctx: &'t ToolContext,
    settings: &super::Settings,
) {
    let timeout = entry.timeout.unwrap_or(settings.timeout);
    // SAFETY: the caller's promise; each field is written once.
    unsafe {
        start_contained_at(
            &**entry.tool,
            arguments,
            ctx,
            std::ptr::addr_of_mut!((*place).work),
        );
        std::ptr::addr_of_mut!((*place).token).write(ctx.cancellation());
        std::ptr::addr_of_mut!((*place).timeout).write(timeout);
        std::ptr::addr_of_mut!((*place).stops).write(None);
    }
}

/// What a tool's future gives.
type Outcome = Result<ToolOutput, ToolError>;

impl Guarded<'_, ToolFuture<'_>> {
    /// [`poll`](Future::poll), the answer written to `out` (always, ready
    /// or not): the tool's result is written there by the tool's own
    /// future, so a caller that reads it in place never copies it.
    #[inline(always)]
    pub(super) fn poll_into(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        out: &mut MaybeUninit<Poll<Outcome>>,
    ) {
        let this = self.project();
        let work = this.work;
        if let Err(panic) = std::panic::catch_unwind(AssertUnwindSafe(|| {
            work.poll_into(cx, out);
        })) {
            // `out` is written after the tool's poll returns: a panic in
            // it left `out` as it was, with nothing to drop.
            let error = ToolError::Panicked(crate::panics::message(panic));
            out.write(Poll::Ready(Err(error)));
            return;
        }
        // SAFETY: written just above (the closure ran to its end).
        if unsafe { out.assume_init_ref() }.is_ready() {
            return;
        }
        let stops = this.stops.get_or_insert_with(|| {
            Box::pin(Stops {
                cancelled: this.token.clone().cancelled_owned(),
                timer: timer(*this.timeout),
            })
        });
        let stops = stops.as_mut().project();
        if stops.cancelled.poll(cx).is_ready() {
            out.write(Poll::Ready(Err(ToolError::Cancelled)));
        } else if let Some(timer) = stops.timer.as_pin_mut()
            && timer.poll(cx).is_ready()
        {
            out.write(Poll::Ready(Err(ToolError::Timeout(*this.timeout))));
        }
    }
}

impl Future for Guarded<'_, ToolFuture<'_>> {
    type Output = Outcome;

    #[inline(always)]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Outcome> {
        let mut out = MaybeUninit::uninit();
        self.poll_into(cx, &mut out);
        // SAFETY: `poll_into` always writes `out`.
        unsafe { out.assume_init() }
    }
}

/// `tool.start(..)`, with a panic while the future is made (its arguments
/// read, its values injected: a host type's `Deserialize` may panic) made
/// the tool's failure, as one while it runs is.
#[inline(always)]
pub(crate) fn start_contained<'a>(
    tool: &'a dyn Tool,
    arguments: Arguments,
    ctx: &'a ToolContext,
) -> ToolFuture<'a> {
    match std::panic::catch_unwind(AssertUnwindSafe(|| tool.start(arguments, ctx))) {
        Ok(future) => future,
        Err(panic) => panicked_at_start(panic),
    }
}

/// [`start_contained`], its future written at `place`, its arguments made
/// by `arguments` as it starts, before anything is written at `place`.
///
/// # Safety
/// `place` is valid for writes and holds nothing to drop.
#[inline(always)]
unsafe fn start_contained_at<'a>(
    tool: &'a dyn Tool,
    arguments: impl FnOnce() -> Arguments,
    ctx: &'a ToolContext,
    place: *mut ToolFuture<'a>,
) {
    // SAFETY (both writes): the caller's promise. `place` is written once:
    // by the tool's future, or, if making it panicked (before the write),
    // by the failure.
    let started = std::panic::catch_unwind(AssertUnwindSafe(|| unsafe {
        place.write(tool.start(arguments(), ctx));
    }));
    if let Err(panic) = started {
        unsafe { place.write(panicked_at_start(panic)) };
    }
}

/// The future of a tool whose making panicked: its failure, at once.
#[cold]
#[inline(never)]
fn panicked_at_start<'a>(panic: crate::panics::Payload) -> ToolFuture<'a> {
    let error = ToolError::Panicked(crate::panics::message(panic));
    ToolFuture::new(std::future::ready(Err(error)))
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

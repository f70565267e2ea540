//! [`ToolFuture`]: where it holds a future (in place when small, boxed
//! otherwise), that the future is polled where it was first polled, and
//! dropped exactly once on every path (finished, pending, panicked, never
//! polled); and futures that borrow themselves (as every future that awaits
//! something borrowing one of its locals does), whose pointers into
//! themselves, made on one poll, are used on the next poll and in the drop.
//!
//! Natively the latter pass either way; they are here for Miri
//! (`scripts/miri.sh`), under which a `&mut` to the buffer as an `Unpin`
//! type, made on each poll, invalidated those pointers: undefined behaviour
//! that no test on real hardware shows.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, Waker};

use toolsmith::{ToolError, ToolFuture, ToolOutput};

#[path = "support/waits.rs"]
mod waits;
use waits::yield_once;

/// Counts its drops.
struct Drops(Arc<AtomicUsize>);

impl Drop for Drops {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

type Out = Result<ToolOutput, ToolError>;

fn poll_once(future: Pin<&mut ToolFuture<'_>>) -> Poll<Out> {
    future.poll(&mut Context::from_waker(Waker::noop()))
}

/// The text of a ready output.
fn text(poll: Poll<Out>) -> Option<String> {
    match poll {
        Poll::Ready(Ok(output)) => Some(output.content),
        _ => None,
    }
}

#[test]
fn a_future_writing_through_a_borrow_of_itself_across_polls() {
    let future = ToolFuture::new(async {
        let mut bytes = [1u8, 2, 3, 4];
        let borrowed: &mut [u8; 4] = &mut bytes;
        yield_once().await;
        borrowed[0] = 9;
        yield_once().await;
        Ok(ToolOutput::from(format!("{}", borrowed[0] + borrowed[3])))
    });
    assert!(future.is_in_place());
    let mut future = Box::pin(future);
    assert!(poll_once(future.as_mut()).is_pending());
    assert!(poll_once(future.as_mut()).is_pending());
    assert_eq!(text(poll_once(future.as_mut())).as_deref(), Some("13"));
}

#[test]
fn a_future_reading_a_borrow_of_itself_on_the_stack() {
    let future = ToolFuture::new(async {
        let kept = String::from("kept");
        let borrowed: &String = &kept;
        yield_once().await;
        Ok(ToolOutput::from(borrowed.clone()))
    });
    let mut future = std::pin::pin!(future);
    assert!(poll_once(future.as_mut()).is_pending());
    assert_eq!(text(poll_once(future.as_mut())).as_deref(), Some("kept"));
}

/// Reads through its borrow when dropped.
struct ReadsOnDrop<'a>(&'a [u8; 8], Arc<AtomicUsize>);

impl Drop for ReadsOnDrop<'_> {
    fn drop(&mut self) {
        self.1.fetch_add(usize::from(self.0[7]), Ordering::SeqCst);
    }
}

#[test]
fn a_future_dropped_while_pending_reads_a_borrow_of_itself() {
    let seen = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&seen);
    let future = ToolFuture::new(async move {
        let data = [5u8; 8];
        let _guard = ReadsOnDrop(&data, counter);
        yield_once().await;
        Ok(ToolOutput::from(""))
    });
    assert!(future.is_in_place());
    let mut future = Box::pin(future);
    assert!(poll_once(future.as_mut()).is_pending());
    drop(future);
    assert_eq!(seen.load(Ordering::SeqCst), 5);
}

/// Echo the count after a pause, holding a borrow of it across the pause
/// (small enough to be held in place).
#[toolsmith::tool]
async fn echo_later(count: u32) -> String {
    let borrowed: &u32 = &count;
    yield_once().await;
    borrowed.to_string()
}

#[test]
fn a_generated_tool_borrowing_its_argument_across_an_await() {
    use toolsmith::{Arguments, Tool, ToolContext};
    let ctx = ToolContext::new();
    let tool = EchoLaterTool;
    let future = tool.start(Arguments::json(serde_json::json!({"count": 7})), &ctx);
    assert!(future.is_in_place());
    let mut future = std::pin::pin!(future);
    assert!(poll_once(future.as_mut()).is_pending());
    assert_eq!(text(poll_once(future.as_mut())).as_deref(), Some("7"));
}

#[test]
fn a_small_future_is_held_in_place_and_a_large_one_boxed() {
    let small = ToolFuture::new(async { Ok(ToolOutput::from("small")) });
    assert!(small.is_in_place());
    let big = [7u8; ToolFuture::IN_PLACE + 1];
    let large = ToolFuture::new(async move { Ok(ToolOutput::from(format!("{}", big[0]))) });
    assert!(!large.is_in_place());
    let mut large = std::pin::pin!(large);
    let Poll::Ready(Ok(output)) = poll_once(large.as_mut()) else {
        panic!("a boxed future runs too");
    };
    assert_eq!(output.content, "7");
}

#[test]
fn a_future_aligned_beyond_the_buffer_is_boxed() {
    #[repr(align(64))]
    struct Aligned(u8);
    let aligned = Aligned(3);
    let future = ToolFuture::new(async move {
        let whole = aligned;
        Ok(ToolOutput::from(whole.0.to_string()))
    });
    assert!(!future.is_in_place());
}

#[test]
fn a_future_that_borrows_itself_runs_where_it_was_first_polled() {
    // The future keeps a reference into its own state across an await:
    // moved after its first poll, the reference would dangle.
    let future = ToolFuture::new(async {
        let text = String::from("kept");
        let borrowed: &str = &text;
        yield_once().await;
        Ok(ToolOutput::from(borrowed.to_owned()))
    });
    assert!(future.is_in_place());
    // Moved before its first poll: allowed.
    let moved = [future];
    let [future] = moved;
    let mut future = Box::pin(future);
    assert!(poll_once(future.as_mut()).is_pending());
    let Poll::Ready(Ok(output)) = poll_once(future.as_mut()) else {
        panic!("ready on the second poll");
    };
    assert_eq!(output.content, "kept");
}

#[test]
fn the_future_is_dropped_once_on_every_path() {
    for in_place in [true, false] {
        let padding = if in_place { 0 } else { ToolFuture::IN_PLACE };
        let make = |drops: &Arc<AtomicUsize>, wait: bool, fail: bool| {
            let guard = Drops(Arc::clone(drops));
            let big = vec![0u8; padding];
            let pad = [0u8; 8];
            let body = async move {
                let _guard = guard;
                let _ = (&big, &pad);
                if wait {
                    yield_once().await;
                }
                if fail {
                    panic!("the tool failed");
                }
                Ok(ToolOutput::from("done"))
            };
            if in_place {
                ToolFuture::new(body)
            } else {
                ToolFuture::boxed(Box::pin(body))
            }
        };
        // Finished.
        let drops = Arc::new(AtomicUsize::new(0));
        let mut future = Box::pin(make(&drops, false, false));
        assert_eq!(future.is_in_place(), in_place);
        assert!(poll_once(future.as_mut()).is_ready());
        drop(future);
        assert_eq!(drops.load(Ordering::SeqCst), 1);
        // Dropped while pending.
        let drops = Arc::new(AtomicUsize::new(0));
        let mut future = Box::pin(make(&drops, true, false));
        assert!(poll_once(future.as_mut()).is_pending());
        assert_eq!(drops.load(Ordering::SeqCst), 0);
        drop(future);
        assert_eq!(drops.load(Ordering::SeqCst), 1);
        // Never polled.
        let drops = Arc::new(AtomicUsize::new(0));
        drop(make(&drops, true, false));
        assert_eq!(drops.load(Ordering::SeqCst), 1);
        // Panicked while polled: the panic passes, the state is dropped
        // once, by the unwinding future itself.
        let drops = Arc::new(AtomicUsize::new(0));
        let mut future = Box::pin(make(&drops, false, true));
        let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _ = poll_once(future.as_mut());
        }));
        assert!(panicked.is_err());
        drop(future);
        assert_eq!(drops.load(Ordering::SeqCst), 1);
    }
}

#[test]
fn a_tool_future_is_send() {
    fn send<T: Send>(_: &T) {}
    let future = ToolFuture::new(async { Ok(ToolOutput::from("sent")) });
    send(&future);
}

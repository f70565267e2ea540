//! `ToolFuture` holding a future that borrows itself (as every future that
//! awaits something borrowing one of its locals does): the pointer into
//! itself, made on one poll, is used on the next poll and in the drop.
//!
//! Natively these pass either way; they are here for Miri
//! (`scripts/miri.sh`), under which a `&mut` to the buffer as an `Unpin`
//! type, made on each poll, invalidated those pointers: undefined behaviour
//! that no test on real hardware shows.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, Waker};

use toolsmith::{ToolError, ToolFuture, ToolOutput};

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

/// Pending on its first poll, ready on the next.
async fn yield_once() {
    let mut yielded = false;
    std::future::poll_fn(|cx| {
        if yielded {
            Poll::Ready(())
        } else {
            yielded = true;
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    })
    .await;
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

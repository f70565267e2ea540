//! A wait for the tests of futures: one poll pending, the next ready.

use std::task::Poll;

/// Pending on its first poll (waking itself), ready on the next.
pub async fn yield_once() {
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

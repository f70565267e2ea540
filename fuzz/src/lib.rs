//! What the fuzz targets share: reading an input as JSON, running a
//! future that never waits.

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use toolsmith::serde_json::{self, Value};

/// The input as a model might send it: JSON when it parses, else the text
/// itself as a string (models do send arguments as stringified JSON).
pub fn payload_of(data: &[u8]) -> Value {
    serde_json::from_slice(data)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(data).into_owned()))
}

/// Poll `future` until it finishes. For futures that never wait on
/// anything (the targets' tools): one that stays pending is a bug.
pub fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    for _ in 0..1_000 {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
    }
    panic!("a future that needs nothing to wait for never finished");
}

//! What is left of a contained panic: its message, and a payload dropped
//! so that nothing more unwinds.
//!
//! A panic's payload is any value, and its own `Drop` may panic in turn:
//! dropped where the first panic was caught, it would unwind past that
//! containment into the host. Every place that contains a panic hands the
//! payload here instead of dropping it.

use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind};

/// A contained panic's payload.
pub(crate) type Payload = Box<dyn Any + Send>;

/// What a caught panic said (its text, when its payload is a string),
/// its payload then dropped as [`discard_panic`](discard) does. For a host that
/// contains panics of its own code (`catch_unwind`, `FutureExt::catch_unwind`).
///
/// ```
/// let caught = std::panic::catch_unwind(|| panic!("disk full")).unwrap_err();
/// assert_eq!(toolsmith::panic_message(caught), "disk full");
/// ```
pub fn message(payload: Payload) -> String {
    let text = if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_owned()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "a panic without a message".to_owned()
    };
    discard(payload);
    text
}

/// Drop a caught panic's payload. A panic in its own drop (a payload may
/// be any value) is caught too, and that second payload forgotten:
/// dropping it could panic again, and again. Dropped directly where the
/// first panic was caught, it would unwind past that containment.
pub fn discard(payload: Payload) {
    if let Err(again) = catch_unwind(AssertUnwindSafe(move || drop(payload))) {
        std::mem::forget(again);
    }
}

/// Run `work`, a panic in it contained and discarded: for what must run
/// to its end whatever it calls, such as dropping a tool's future.
pub(crate) fn contain(work: impl FnOnce()) {
    if let Err(payload) = catch_unwind(AssertUnwindSafe(work)) {
        discard(payload);
    }
}

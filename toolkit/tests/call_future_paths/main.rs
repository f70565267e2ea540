//! The future of `ToolRegistry::call` on each of its paths: the tool's
//! bounds (a timeout, a cancellation, from another thread), a tool future
//! held in place that borrows from itself (for Miri too: `scripts/miri.sh`
//! runs `in_place`), and a result saved to a file, before which the call
//! lets go of the tool and of everything it held.

#[path = "../support/waits.rs"]
mod waits;

mod guard;
mod in_place;
mod saving;

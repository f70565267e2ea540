//! What the one schema walk ([`super::walk`]) does with the problems it
//! finds: the three questions asked of a call's arguments.
//!
//! - [`Collect`]: every problem, with its path and message (step 4's report);
//! - [`Verdict<false>`]: whether there is any problem (is this valid?), for
//!   `anyOf` and for casting;
//! - [`Verdict<true>`]: whether the arguments are valid *and* casting would
//!   change nothing in them (the fast path of steps 3 and 4).
//!
//! A sink only decides where problems go; which problems exist is decided
//! once, by the walk. Its constants let the walk skip work the sink has no
//! use for (messages, did-you-means) and add the cast's question where it is
//! wanted, at compile time.

use super::path::Path;
use crate::error::{ArgumentError, Problem};

/// Where problems go.
pub(super) trait Sink {
    /// Whether problems are wanted in full: each one, with its message,
    /// which costs extra work (a second look at unknown keys, a report per
    /// `anyOf` branch).
    const DETAILED: bool;
    /// Whether the walk also answers the cast's question: a value casting
    /// would change counts as a problem, and values the schema does not look
    /// into are measured against the depth limit (nothing else has measured
    /// them before this walk).
    const CLEAN: bool;
    /// Note a problem at `path`; `problem` is only called if it is wanted.
    fn report(&mut self, path: &Path<'_>, problem: impl FnOnce() -> Problem);
    /// Whether the outcome is known and the walk may stop.
    fn settled(&self) -> bool;
}

/// The most problems one call reports: enough for a model to fix its call,
/// and a bound on the memory a hostile payload (thousands of wrong items
/// against a long `enum`) can make the report take.
pub(crate) const MAX_PROBLEMS: usize = 50;

/// Keeps every problem, with its path, up to [`MAX_PROBLEMS`].
pub(super) struct Collect(pub(super) Vec<ArgumentError>);

impl Sink for Collect {
    const DETAILED: bool = true;
    const CLEAN: bool = false;

    fn report(&mut self, path: &Path<'_>, problem: impl FnOnce() -> Problem) {
        if self.0.len() < MAX_PROBLEMS {
            self.0.push(ArgumentError::new(path.render(), problem()));
        }
    }
    fn settled(&self) -> bool {
        self.0.len() >= MAX_PROBLEMS
    }
}

/// Only notices that there was a problem, and stops at the first. With
/// `CLEAN`, a value casting would change is a problem too.
pub(super) struct Verdict<const CLEAN: bool> {
    pub(super) failed: bool,
}

impl<const CLEAN_: bool> Verdict<CLEAN_> {
    pub(super) const fn new() -> Self {
        Self { failed: false }
    }
}

impl<const CLEAN_: bool> Sink for Verdict<CLEAN_> {
    const DETAILED: bool = false;
    const CLEAN: bool = CLEAN_;

    #[inline]
    fn report(&mut self, _: &Path<'_>, _: impl FnOnce() -> Problem) {
        self.failed = true;
    }
    #[inline]
    fn settled(&self) -> bool {
        self.failed
    }
}

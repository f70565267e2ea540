//! A cap on the work one cast or validation may do.
//!
//! `anyOf` branches that each lead back into the same `anyOf` (an untagged
//! recursive enum) make a value that fits no branch cost work exponential in
//! its depth: every level tries every branch, and every branch the level
//! below. A model can send such a value by accident. Counting steps keeps
//! every call bounded; no real call comes near the limit.

use std::cell::Cell;

/// Steps left for one call, shared by everything the call walks.
#[derive(Debug)]
pub(super) struct Budget {
    left: Cell<u32>,
    told: Cell<bool>,
}

impl Budget {
    /// Enough for some hundred thousand values checked through
    /// alternatives, and a fraction of a second at most.
    pub(super) const STEPS: u32 = 1 << 22;

    pub(super) fn new() -> Self {
        Self::with_steps(Self::STEPS)
    }

    pub(super) fn with_steps(steps: u32) -> Self {
        Self {
            left: Cell::new(steps),
            told: Cell::new(false),
        }
    }

    /// Take one step; `false` when none are left.
    pub(super) fn spend(&self) -> bool {
        let left = self.left.get();
        self.left.set(left.saturating_sub(1));
        left > 0
    }

    /// Take `steps` steps at once: the work of a loop over a schema's own
    /// lists, which a schema of 60,000 properties reached through 20,000
    /// `allOf` branches would otherwise repeat unbounded at one step a
    /// visit. `false` when fewer are left.
    pub(super) fn spend_many(&self, steps: u32) -> bool {
        let left = self.left.get();
        self.left.set(left.saturating_sub(steps));
        left >= steps
    }

    /// Whether running out still has to be reported; true only once.
    pub(super) fn first_to_tell(&self) -> bool {
        !self.told.replace(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_run_out() {
        let budget = Budget::with_steps(2);
        assert!(budget.spend());
        assert!(budget.spend());
        assert!(!budget.spend());
        assert!(!budget.spend());
    }

    #[test]
    fn running_out_is_told_once() {
        let budget = Budget::with_steps(0);
        assert!(budget.first_to_tell());
        assert!(!budget.first_to_tell());
    }
}

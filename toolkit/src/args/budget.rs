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
    /// Names a did-you-mean may still be measured against.
    suggestions: Cell<u32>,
}

impl Budget {
    /// Enough for some hundred thousand values checked through
    /// alternatives, and a fraction of a second at most.
    pub(super) const STEPS: u32 = 1 << 22;

    pub(super) fn new() -> Self {
        Self::with_steps(Self::STEPS)
    }

    /// Names measured for did-you-means, in all, in one call: some
    /// thousands of unknown keys against a hundred names. Each is short
    /// ([`crate::suggest`] measures no long ones), but a key and a name are
    /// measured for every pair: 100,000 keys against 100,000 required names
    /// would otherwise be 10^10 measures.
    pub(super) const SUGGESTIONS: u32 = 1 << 18;

    pub(super) fn with_steps(steps: u32) -> Self {
        Self {
            left: Cell::new(steps),
            told: Cell::new(false),
            suggestions: Cell::new(Self::SUGGESTIONS),
        }
    }

    /// Take `names` from what did-you-means may measure; `false`, taking
    /// nothing, when fewer are left: no suggestion is then made, and the
    /// check goes on.
    pub(super) fn may_suggest(&self, names: usize) -> bool {
        let left = self.suggestions.get();
        match u32::try_from(names) {
            Ok(names) if names <= left => {
                self.suggestions.set(left - names);
                true
            }
            _ => false,
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
    fn suggestions_run_out_without_taking_steps() {
        let budget = Budget::with_steps(1);
        assert!(budget.may_suggest(Budget::SUGGESTIONS as usize - 1));
        assert!(!budget.may_suggest(2));
        assert!(budget.may_suggest(1));
        assert!(!budget.may_suggest(1));
        assert!(!budget.may_suggest(usize::MAX));
        assert!(budget.spend());
    }

    #[test]
    fn running_out_is_told_once() {
        let budget = Budget::with_steps(0);
        assert!(budget.first_to_tell());
        assert!(!budget.first_to_tell());
    }
}

//! The fast path of steps 3 and 4: "already valid, nothing to cast".
//!
//! Most calls are well typed. For them the full walks (cast, then validate)
//! do work whose result is known in advance: an empty list of casts and no
//! errors. This check answers that question in one pass over the arguments,
//! allocating nothing and rendering no paths. When it says no (something
//! to cast, something wrong), the full walks run and produce the casts and
//! errors exactly as before.
//!
//! It is the schema walk ([`super::walk`]) with the clean sink
//! ([`Verdict<true>`]): the validator's rules, and at each type check the
//! cast's own question, so it says yes exactly when casting would change
//! nothing and validation would report nothing. The walk visits the same
//! (schema, value) pairs as validation, so it runs out of the work budget
//! exactly where validation would; and it measures the depth of what the
//! schema does not look into, so a value it calls clean nests at most
//! [`MAX_DEPTH`](super::node::MAX_DEPTH) levels, as validation requires.

use serde_json::Value;

use super::budget::Budget;
use super::node::Nodes;
use super::path::Path;
use super::sink::Verdict;
use super::walk::Walker;

/// Whether `value` is valid against the root of `nodes` and casting would
/// change nothing in it.
pub(super) fn is_clean(nodes: &Nodes, value: &Value) -> bool {
    // A flat root's well-typed call is told clean without the walk, which
    // would say the same (see `flat`).
    if let (Some(flat), Value::Object(map)) = (&nodes.flat_root, value)
        && flat.admits(map)
    {
        return true;
    }
    is_clean_within(nodes, value, Budget::STEPS)
}

/// [`is_clean`] with `steps` instead of the full walks' budget.
pub(super) fn is_clean_within(nodes: &Nodes, value: &Value, steps: u32) -> bool {
    let budget = Budget::with_steps(steps);
    let mut sink = Verdict::<true>::new();
    Walker {
        nodes,
        budget: &budget,
    }
    .node(nodes.root, value, &Path::ROOT, 0, &mut sink);
    !sink.failed
}

#[cfg(test)]
#[path = "tests/quick.rs"]
mod tests;

//! Step 4: check the arguments against the schema and report every problem.
//!
//! A model fixes a call faster when it learns everything wrong with it at
//! once, each problem at its path. Errors come in schema order (properties as
//! declared, then keys the schema does not know), so the same call always
//! gets the same message.
//!
//! The rules themselves live in the one schema walk ([`super::walk`]); this
//! module asks it for the full report ([`Collect`]) or for a yes/no answer
//! ([`Verdict`](super::sink::Verdict)), which stops at the first problem.
//! Problems are built lazily, so a valid call allocates nothing.

use serde_json::Value;

use super::budget::Budget;
use super::node::{NodeId, Nodes};
use super::path::Path;
use super::sink::Collect;
use super::walk::Walker;
use crate::error::ArgumentError;

/// Every problem with `value` against the root of `nodes`.
pub(super) fn validate(nodes: &Nodes, value: &Value) -> Result<(), Vec<ArgumentError>> {
    validate_within(nodes, value, &Budget::new())
}

/// [`validate`] within the steps left in `budget`.
pub(super) fn validate_within(
    nodes: &Nodes,
    value: &Value,
    budget: &Budget,
) -> Result<(), Vec<ArgumentError>> {
    let mut sink = Collect(Vec::new());
    Walker { nodes, budget }.node(nodes.root, value, &Path::ROOT, 0, &mut sink);
    if sink.0.is_empty() {
        Ok(())
    } else {
        Err(sink.0)
    }
}

/// Whether `value` is valid against node `id`, which sits `depth` levels
/// into the arguments. A value too costly to check within `budget` is not.
pub(super) fn is_valid(
    nodes: &Nodes,
    id: NodeId,
    value: &Value,
    depth: usize,
    budget: &Budget,
) -> bool {
    Walker { nodes, budget }.is_valid(id, value, depth)
}

#[cfg(test)]
#[path = "tests/validate.rs"]
pub(super) mod tests;

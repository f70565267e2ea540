//! The fast path of steps 3 and 4: "already valid, nothing to cast".
//!
//! Most calls are well typed. For them the full walks (cast, then validate)
//! do work whose result is known in advance: an empty list of casts and no
//! errors. This check answers that question in one pass over the arguments,
//! with no hashing, no allocation and no paths. When it says no (something
//! to cast, something wrong, or something it does not judge on its own), the
//! full walks run and produce the casts and errors exactly as before.
//!
//! So the check must never say yes where the full walks would cast or
//! report anything. It visits the same (schema, value) pairs as they do and
//! applies the same tests, plus the cast's own question: a value the cast
//! would touch (an integral float where only integers are wanted) is not
//! clean even though it is valid.
//!
//! The pass also measures the depth of what the schema does not look into
//! (values of parameters with no schema, undeclared keys), so a value it
//! calls clean nests at most [`MAX_DEPTH`] levels, as validation requires.
//!
//! Two limits of the full walks apply here too: the depth limit, and the
//! work budget, which counts the same visits and so runs out exactly where
//! theirs would. For `anyOf`, the full walks try the branches in order until
//! one is valid; the check does the same but only skips a branch that fails
//! at its own root (wrong type, not an allowed value, the `false` schema),
//! where the full walks also spend exactly one step. A branch that fails
//! deeper sends the call to the full walks.

use serde_json::{Map, Value};

use super::budget::Budget;
use super::cast::wants_cast_of;
use super::depth::fits;
use super::equal::{has_duplicates, json_equal};
use super::node::{
    Additional, ArrayRules, MAX_DEPTH, Node, NodeId, Nodes, ObjectRules, Types, same_name,
};
use super::number::Num;

/// Whether `value` is valid against the root of `nodes` and casting would
/// change nothing in it.
pub(super) fn is_clean(nodes: &Nodes, value: &Value) -> bool {
    is_clean_within(nodes, value, Budget::STEPS)
}

/// [`is_clean`] with `steps` instead of the full walks' budget.
pub(super) fn is_clean_within(nodes: &Nodes, value: &Value, steps: u32) -> bool {
    Quick {
        nodes,
        left: steps,
        float_free: 0,
    }
    .node(nodes.root, value, 0)
}

struct Quick<'n> {
    nodes: &'n Nodes,
    /// Visits left before the full walks would run out of budget.
    left: u32,
    /// How many `anyOf` values around this one were found to hold no
    /// integral float (so the values inside need no second look).
    float_free: usize,
}

impl Quick<'_> {
    /// Take one step, as the full walks do for each visit.
    fn spend(&mut self) -> bool {
        match self.left.checked_sub(1) {
            Some(left) => {
                self.left = left;
                true
            }
            None => false,
        }
    }

    fn node(&mut self, id: NodeId, value: &Value, depth: usize) -> bool {
        let node = self.nodes.get(id);
        if depth > MAX_DEPTH || !self.spend() || node.never {
            return false;
        }
        // One look at the value's kind serves every question: the
        // validator's (type, allowed values, what is inside) and the cast's.
        let fits = match value {
            Value::Number(n) => {
                let num = Num::of(n);
                itself(node, value, Types::of_number(num))
                    && num.is_finite()
                    && node.number.as_ref().is_none_or(|r| r.admits(num))
            }
            Value::String(s) => {
                itself(node, value, Types::STRING)
                    && node.string.as_ref().is_none_or(|r| r.admits(s))
            }
            Value::Bool(_) => itself(node, value, Types::BOOLEAN),
            Value::Null => itself(node, value, Types::NULL),
            // What the schema does not look into is still measured.
            Value::Array(items) => {
                itself(node, value, Types::ARRAY)
                    && match &node.array {
                        Some(rules) => self.array(rules, items, depth),
                        None => fits(value, depth),
                    }
            }
            Value::Object(map) => {
                itself(node, value, Types::OBJECT)
                    && match &node.object {
                        Some(rules) => self.object(rules, map, depth),
                        None => fits(value, depth),
                    }
            }
        };
        fits && ((node.all_of.is_empty() && node.any_of.is_empty())
            || self.branches(node, value, depth))
    }

    /// `allOf` and `anyOf`.
    fn branches(&mut self, node: &Node, value: &Value, depth: usize) -> bool {
        node.all_of.iter().all(|&b| self.node(b, value, depth))
            && (node.any_of.is_empty() || self.alternatives(node, value, depth))
    }

    fn array(&mut self, rules: &ArrayRules, items: &[Value], depth: usize) -> bool {
        let count = u64::try_from(items.len()).unwrap_or(u64::MAX);
        if rules.min_items.is_some_and(|min| count < min)
            || rules.max_items.is_some_and(|max| count > max)
        {
            return false;
        }
        // Items first: comparing them recurses, so they are measured before.
        items
            .iter()
            .enumerate()
            .all(|(index, item)| match rules.item(index) {
                Some(schema) => self.node(schema, item, depth + 1),
                None => fits(item, depth + 1),
            })
            && !(rules.unique && has_duplicates(items))
    }

    /// One pass over the entries in their own order: each is looked up among
    /// the declared properties (the one at the same position first), checked,
    /// and counted if required.
    fn object(&mut self, rules: &ObjectRules, map: &Map<String, Value>, depth: usize) -> bool {
        let count = u64::try_from(map.len()).unwrap_or(u64::MAX);
        if rules.min_properties.is_some_and(|min| count < min)
            || rules.max_properties.is_some_and(|max| count > max)
        {
            return false;
        }
        let mut required = 0;
        let mut required_elsewhere = 0;
        for (position, (key, value)) in map.iter().enumerate() {
            let mut known = false;
            if let Some(property) = rules.property_at(position, key) {
                if !self.node(property.schema, value, depth + 1) {
                    return false;
                }
                required += usize::from(property.required);
                known = true;
            }
            for (pattern, schema) in &rules.pattern_properties {
                if pattern.is_match(key) {
                    if !self.node(*schema, value, depth + 1) {
                        return false;
                    }
                    known = true;
                }
            }
            if !known {
                match rules.additional {
                    Additional::Allowed => {
                        if !fits(value, depth + 1) {
                            return false;
                        }
                    }
                    Additional::Forbidden => return false,
                    Additional::Schema(schema) => {
                        if !self.node(schema, value, depth + 1) {
                            return false;
                        }
                    }
                }
            }
            // Names in `required_elsewhere` are distinct, and so are keys.
            if rules
                .required_elsewhere
                .iter()
                .any(|name| same_name(name, key))
            {
                required_elsewhere += 1;
            }
        }
        required == rules.required_count && required_elsewhere == rules.required_elsewhere.len()
    }

    /// `anyOf`: the first branch that does not fail at its root must hold.
    fn alternatives(&mut self, node: &Node, value: &Value, depth: usize) -> bool {
        for &branch in &node.any_of {
            if rejects_at_root(self.nodes.get(branch), value) {
                // The full walks spend a step to find that out.
                if !self.spend() {
                    return false;
                }
                continue;
            }
            // The full walks write integral floats in a value that fits a
            // branch as integers (see `cast`): such a value is not clean.
            if self.float_free == 0 && has_integral_float(value, depth) {
                return false;
            }
            self.float_free += 1;
            let clean = self.node(branch, value, depth);
            self.float_free -= 1;
            return clean;
        }
        false
    }
}

/// Whether `value` holds a float with no fraction (`2.0`, `-0`) anywhere
/// within [`MAX_DEPTH`] levels.
fn has_integral_float(value: &Value, depth: usize) -> bool {
    if depth > MAX_DEPTH {
        return false;
    }
    match value {
        Value::Number(n) => n
            .as_f64()
            .is_some_and(|f| n.is_f64() && f.is_finite() && f.fract() == 0.0),
        Value::Array(items) => items.iter().any(|item| has_integral_float(item, depth + 1)),
        Value::Object(map) => map
            .values()
            .any(|child| has_integral_float(child, depth + 1)),
        _ => false,
    }
}

/// The checks on the value itself, whose narrowest type is `kind`:
/// type, allowed values, and whether casting would change it.
#[inline]
fn itself(node: &Node, value: &Value, kind: Types) -> bool {
    node.types.allows_kind(kind)
        && !wants_cast_of(node.cast_to, value, kind)
        && node
            .allowed
            .as_ref()
            .is_none_or(|allowed| allowed.iter().any(|a| json_equal(a, value)))
}

/// Whether the node refuses the value before looking inside it: the checks
/// the validator makes first, each of which ends its visit.
fn rejects_at_root(node: &Node, value: &Value) -> bool {
    node.never
        || !node.types.allows(value)
        || node
            .allowed
            .as_ref()
            .is_some_and(|allowed| !allowed.iter().any(|a| json_equal(a, value)))
}

#[cfg(test)]
#[path = "tests/quick.rs"]
mod tests;

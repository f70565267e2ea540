//! A well-typed call of a tool whose parameters are plain scalars, found
//! clean without the walk.
//!
//! Most tools take a few strings, booleans and integers, and most calls
//! send each of them, in the order the schema declares them, of the type it
//! asks for. For such a root (an object whose one rule is its properties,
//! each settled by its type or an integer held to a range), the walk's
//! answer on such a call is known from each value's kind and, for an
//! integer, the range: what the walk itself reads from the same compiled
//! nodes (`Node::settled_by_type`, the range the bounds let through).
//! This reads only that, in one pass over the entries beside the declared
//! properties. It says yes only where the walk would; anything else (a key
//! out of order, one it does not declare, a value of another kind, a float,
//! an integer out of range) is left to the walk, which then reports or
//! casts as before.

use serde_json::{Map, Value};

use super::node::{Nodes, Types, same_name};
use super::number::Num;

/// The most properties a flat root has: the walk of a call of them takes
/// a few thousand steps, far from the end of its budget
/// ([`Budget::STEPS`](super::budget::Budget::STEPS)), so that it could never
/// have said no for want of steps where this says yes.
const MAX_PROPERTIES: usize = 1024;

/// The root's properties, in declared order, as [`FlatRoot::admits`] reads
/// them.
#[derive(Debug)]
pub(super) struct FlatRoot {
    properties: Box<[FlatProperty]>,
}

#[derive(Debug)]
struct FlatProperty {
    name: String,
    required: bool,
    /// The kinds whose type check is the property's whole rule: `null`,
    /// booleans, strings (see [`Node::settle`](super::node::Node)).
    settled: Types,
    integers: Integers,
}

/// What the walk asks of an integer for a property.
#[derive(Debug, Clone, Copy)]
enum Integers {
    /// Nothing more than that it is one.
    Any,
    /// That it lies within this range, both ends included.
    Within(i128, i128),
    /// More than can be told here (a `multipleOf`, a value list, a branch,
    /// a cast): the walk decides.
    Walk,
}

impl FlatRoot {
    /// The root of `nodes` as a flat root, if it is one: an object whose
    /// every check but its declared properties' passes whatever the
    /// object holds (no patterns, no counts, no required names it does
    /// not declare, no list of values or branch), and each of whose
    /// properties is settled by its type for some kind or takes integers.
    pub(super) fn of(nodes: &Nodes) -> Option<Self> {
        let root = nodes.get(nodes.root);
        let rules = root.object.as_ref()?;
        let simple_object = root.plain.contains(Types::OBJECT)
            && rules.pattern_properties.is_empty()
            && rules.required_elsewhere.is_empty()
            && rules.min_properties.is_none()
            && rules.max_properties.is_none();
        if !simple_object || rules.properties.len() > MAX_PROPERTIES {
            return None;
        }
        let properties = rules
            .properties
            .iter()
            .map(|property| {
                let node = nodes.get(property.schema);
                let integers = match &node.number {
                    _ if !node.plain.contains(Types::INTEGER) => Integers::Walk,
                    None => Integers::Any,
                    Some(rules) if rules.multiple_of.is_none() => rules
                        .integer_range()
                        .map_or(Integers::Walk, |(low, high)| Integers::Within(low, high)),
                    Some(_) => Integers::Walk,
                };
                let settled = node.settled_by_type;
                let flat = settled != Types::NONE || !matches!(integers, Integers::Walk);
                flat.then(|| FlatProperty {
                    name: property.name.clone(),
                    required: property.required,
                    settled,
                    integers,
                })
            })
            .collect::<Option<Box<[FlatProperty]>>>()?;
        Some(Self { properties })
    }

    /// Whether the walk would find `map` clean (valid, nothing to cast),
    /// told without it: `true` only when each key is the next declared
    /// property's, none required is left out, and each value is of a kind
    /// its property settles, or an integer it takes. `false` means the
    /// walk must say.
    #[inline]
    pub(super) fn admits(&self, map: &Map<String, Value>) -> bool {
        let mut entries = map.iter();
        let mut next = entries.next();
        for property in &*self.properties {
            match next {
                Some((key, value)) if same_name(&property.name, key) => {
                    if !property.admits(value) {
                        return false;
                    }
                    next = entries.next();
                }
                _ if property.required => return false,
                _ => {}
            }
        }
        next.is_none()
    }
}

impl FlatProperty {
    #[inline(always)]
    fn admits(&self, value: &Value) -> bool {
        match value {
            // A float, even an integral one, is a question of casting.
            Value::Number(n) => match (Num::of(n), self.integers) {
                (Num::Int(_), Integers::Any) => true,
                (Num::Int(int), Integers::Within(low, high)) => low <= int && int <= high,
                _ => false,
            },
            other => self.settled.intersects(Types::of(other)),
        }
    }
}

#[cfg(test)]
#[path = "tests/flat.rs"]
mod tests;

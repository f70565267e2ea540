//! The compiled form of a schema: an arena of nodes linked by index.
//!
//! Casting and validation walk these nodes only. Everything that costs time
//! or can fail (resolving `$ref`s, compiling patterns, reading bounds from
//! `format`) was done once by the compiler, so a call only compares values.

use std::cmp::Ordering;

use regex::Regex;
use serde_json::{Number, Value};

use super::number::Num;

/// How deep into the arguments casting and validation go. It is serde_json's
/// own parsing limit; only JSON nested inside strings can reach past it.
pub(super) const MAX_DEPTH: usize = 128;

/// Where a node lives in [`Nodes`].
pub(super) type NodeId = usize;

/// Every node of one compiled schema, and which of them is the root.
#[derive(Debug)]
pub(super) struct Nodes {
    pub(super) nodes: Vec<Node>,
    pub(super) root: NodeId,
    /// What the patterns among the nodes are charged, given back with them.
    pub(super) _patterns: super::compile::PatternCharge,
    /// The root, when a clean call of it can be told without the walk.
    pub(super) flat_root: Option<super::flat::FlatRoot>,
}

impl Nodes {
    /// The node at `id`, or an empty node if `id` is out of range.
    ///
    /// Ids only come from the compiler, so the fallback never happens; it
    /// exists so that a bug here cannot become a panic in a tool call.
    #[inline]
    pub(super) fn get(&self, id: NodeId) -> &Node {
        static ANYTHING: Node = Node::ANYTHING;
        self.nodes.get(id).unwrap_or(&ANYTHING)
    }

    /// The one branch of `node`'s `anyOf` meant for values of `value`'s JSON
    /// type, if exactly one is: how `Option<T>` and `T | integer` look.
    pub(super) fn only_branch_for(&self, node: &Node, value: &Value) -> Option<NodeId> {
        let mut fitting = node
            .any_of
            .iter()
            .copied()
            .filter(|&b| self.get(b).is_for(value));
        let only = fitting.next()?;
        fitting.next().is_none().then_some(only)
    }
}

/// One schema, with its subschemas referred to by id.
#[derive(Debug)]
pub(super) struct Node {
    /// The JSON types the schema allows; [`Types::ANY`] without `type`.
    pub(super) types: Types,
    /// The types casting aims for: `types`, or those of the `enum` values
    /// when the schema names no type.
    pub(super) cast_to: Types,
    /// The `false` schema: nothing is valid.
    pub(super) never: bool,
    /// `enum`, or `const` as a one-value list.
    pub(super) allowed: Option<Vec<Value>>,
    pub(super) number: Option<Box<NumberRules>>,
    pub(super) string: Option<Box<StringRules>>,
    pub(super) array: Option<Box<ArrayRules>>,
    pub(super) object: Option<Box<ObjectRules>>,
    /// Every one must hold: `allOf`, and a `$ref` that has siblings.
    pub(super) all_of: Vec<NodeId>,
    /// At least one must hold: `anyOf`, or `oneOf` (see the validator for
    /// why `oneOf` is not exclusive here).
    pub(super) any_of: Vec<NodeId>,
    /// The kinds of value whose type check is the node's whole answer:
    /// derived from the rules above by [`Node::settle`], never set alone.
    pub(super) settled_by_type: Types,
    /// The kinds of value for which the checks every node makes (nothing is
    /// allowed, the type, the list of values, the cast's question) pass
    /// whatever the value, and no branch applies: the walk goes straight to
    /// the rules of the value's kind. A float is never plain, since whether
    /// it is cast depends on its value. Derived by [`Node::settle`] too.
    pub(super) plain: Types,
}

impl Node {
    /// The `true` schema.
    pub(super) const ANYTHING: Node = Node {
        types: Types::ANY,
        cast_to: Types::ANY,
        never: false,
        allowed: None,
        number: None,
        string: None,
        array: None,
        object: None,
        all_of: Vec::new(),
        any_of: Vec::new(),
        settled_by_type: Types::SCALARS_WITHOUT_NUMBERS,
        plain: Types::ALL_BUT_FLOATS,
    };

    /// Derive [`plain`](Self::plain) and [`settled_by_type`](Self::settled_by_type)
    /// from the node's rules. Plain: the kinds the type allows and no cast
    /// applies to, when the node has no value list, no branch and is not
    /// the `false` schema. Settled: of those, `null`, booleans, and strings
    /// without string rules. Numbers are never settled so: they are checked
    /// for finiteness, bounds and integral floats.
    pub(super) fn settle(&mut self) {
        let unconditional = !self.never
            && self.allowed.is_none()
            && self.all_of.is_empty()
            && self.any_of.is_empty();
        let mut plain = Types::NONE;
        if unconditional {
            for kind in [
                Types::NULL,
                Types::BOOLEAN,
                Types::INTEGER,
                Types::STRING,
                Types::ARRAY,
                Types::OBJECT,
            ] {
                if self.types.allows_kind(kind) && !super::cast::kind_wants_cast(self.cast_to, kind)
                {
                    plain = plain.union(kind);
                }
            }
        }
        self.plain = plain;
        let mut settled = Types::NULL.union(Types::BOOLEAN);
        if self.string.is_none() {
            settled = settled.union(Types::STRING);
        }
        self.settled_by_type = Types(plain.0 & settled.0);
        if let Some(rules) = &mut self.object {
            let steps = rules.properties.len() + rules.required_elsewhere.len();
            rules.list_steps = u32::try_from(steps).unwrap_or(u32::MAX);
        }
    }

    /// Whether the node says nothing at all, so a `$ref` beside it can stand alone.
    pub(super) fn is_unconstrained(&self) -> bool {
        self.types == Types::ANY
            && !self.never
            && self.allowed.is_none()
            && self.number.is_none()
            && self.string.is_none()
            && self.array.is_none()
            && self.object.is_none()
            && self.all_of.is_empty()
            && self.any_of.is_empty()
    }

    /// Whether the node is meant for values of this JSON type; a list of
    /// values is meant for the types of its values.
    pub(super) fn is_for(&self, value: &Value) -> bool {
        self.cast_to == Types::ANY || self.cast_to.allows(value)
    }

    /// Whether `null` is the only value the node allows.
    pub(super) fn is_null_only(&self) -> bool {
        self.types == Types::NULL || self.allowed.as_deref() == Some(&[Value::Null])
    }
}

/// A set of JSON Schema types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Types(u8);

impl Types {
    pub(super) const NONE: Types = Types(0);
    pub(super) const NULL: Types = Types(1);
    pub(super) const BOOLEAN: Types = Types(1 << 1);
    pub(super) const INTEGER: Types = Types(1 << 2);
    pub(super) const NUMBER: Types = Types(1 << 3);
    pub(super) const STRING: Types = Types(1 << 4);
    /// `null`, booleans and strings: the kinds a type check may settle.
    pub(super) const SCALARS_WITHOUT_NUMBERS: Types = Types(1 | 1 << 1 | 1 << 4);
    /// Every kind but [`NUMBER`](Self::NUMBER), a float that is not integral.
    pub(super) const ALL_BUT_FLOATS: Types = Types(0x7f & !(1 << 3));
    pub(super) const ARRAY: Types = Types(1 << 5);
    pub(super) const OBJECT: Types = Types(1 << 6);
    pub(super) const ANY: Types = Types(0x7f);

    /// Names in the order messages list them.
    pub(super) const NAMED: [(Types, &'static str); 7] = [
        (Types::OBJECT, "object"),
        (Types::ARRAY, "array"),
        (Types::STRING, "string"),
        (Types::INTEGER, "integer"),
        (Types::NUMBER, "number"),
        (Types::BOOLEAN, "boolean"),
        (Types::NULL, "null"),
    ];

    /// The type a JSON Schema `type` keyword names, if it is one.
    pub(super) fn named(name: &str) -> Option<Types> {
        Types::NAMED
            .iter()
            .find(|(_, n)| *n == name)
            .map(|(t, _)| *t)
    }

    /// The narrowest type of a value: integral numbers are `integer`.
    #[inline]
    pub(super) fn of(value: &Value) -> Types {
        match value {
            Value::Null => Types::NULL,
            Value::Bool(_) => Types::BOOLEAN,
            Value::Number(n) if is_integer(n) => Types::INTEGER,
            Value::Number(_) => Types::NUMBER,
            Value::String(_) => Types::STRING,
            Value::Array(_) => Types::ARRAY,
            Value::Object(_) => Types::OBJECT,
        }
    }

    #[inline]
    pub(super) fn contains(self, other: Types) -> bool {
        self.0 & other.0 == other.0
    }

    #[inline]
    pub(super) fn intersects(self, other: Types) -> bool {
        self.0 & other.0 != 0
    }

    pub(super) fn union(self, other: Types) -> Types {
        Types(self.0 | other.0)
    }

    /// Whether a value of this JSON type is allowed; an integer is also a number.
    #[inline]
    pub(super) fn allows(self, value: &Value) -> bool {
        self.allows_kind(Types::of(value))
    }

    /// Whether a value whose narrowest type is `kind` is allowed.
    #[inline]
    pub(super) fn allows_kind(self, kind: Types) -> bool {
        self.intersects(kind) || (kind == Types::INTEGER && self.contains(Types::NUMBER))
    }

    /// The narrowest type of a number: integral ones are `integer`.
    #[inline]
    pub(super) fn of_number(num: Num) -> Types {
        if num.is_integral() {
            Types::INTEGER
        } else {
            Types::NUMBER
        }
    }
}

/// Whether a number is an integer in JSON Schema's sense: `30.0` is.
#[inline]
pub(super) fn is_integer(n: &Number) -> bool {
    Num::of(n).is_integral()
}

/// Whether two names are the same: lengths first, then the bytes a word at
/// a time. Names are short, and for them a call into the C library's
/// `memcmp`, which `==` makes, costs more than the comparison itself.
#[inline]
pub(crate) fn same_name(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let n = a.len();
    if n != b.len() {
        return false;
    }
    if n < 4 {
        return a.iter().zip(b).all(|(x, y)| x == y);
    }
    if n < 8 {
        // Two overlapping 4-byte words cover 4 to 7 bytes.
        return word4(a, 0) == word4(b, 0) && word4(a, n - 4) == word4(b, n - 4);
    }
    let mut at = 0;
    while at + 8 < n {
        if word8(a, at) != word8(b, at) {
            return false;
        }
        at += 8;
    }
    // The last eight bytes, overlapping what was compared, cover the rest.
    word8(a, n - 8) == word8(b, n - 8)
}

/// The four bytes at `at`; callers stay in bounds.
#[inline]
fn word4(bytes: &[u8], at: usize) -> u32 {
    bytes
        .get(at..at + 4)
        .and_then(|w| w.try_into().ok())
        .map_or(0, u32::from_ne_bytes)
}

/// The eight bytes at `at`; callers stay in bounds.
#[inline]
fn word8(bytes: &[u8], at: usize) -> u64 {
    bytes
        .get(at..at + 8)
        .and_then(|w| w.try_into().ok())
        .map_or(0, u64::from_ne_bytes)
}

/// `minimum`, `maximum`, their exclusive forms, `multipleOf`, and the range
/// a numeric `format` implies, already merged into the tightest bounds.
#[derive(Debug)]
pub(super) struct NumberRules {
    pub(super) lower: Option<Bound>,
    pub(super) upper: Option<Bound>,
    pub(super) multiple_of: Option<(Number, Num)>,
    /// The integers both bounds let through, `(lowest, highest)`, derived
    /// from the bounds' own comparisons, so an integer (most numbers a model
    /// sends) is checked against both in two comparisons. `None` when that
    /// range is empty or could not be derived: the bounds decide alone.
    integers: Option<(i128, i128)>,
}

impl NumberRules {
    /// The rules of `lower`, `upper` and `multiple_of`.
    pub(super) fn new(
        lower: Option<Bound>,
        upper: Option<Bound>,
        multiple_of: Option<(Number, Num)>,
    ) -> Self {
        let lowest = lower
            .as_ref()
            .map_or(Some(i128::MIN), Bound::lowest_integer);
        let highest = upper
            .as_ref()
            .map_or(Some(i128::MAX), Bound::highest_integer);
        let integers = lowest.zip(highest).filter(|(low, high)| low <= high);
        Self {
            lower,
            upper,
            multiple_of,
            integers,
        }
    }

    /// The integers both bounds let through, `(lowest, highest)`, if that
    /// range could be derived.
    pub(super) fn integer_range(&self) -> Option<(i128, i128)> {
        self.integers
    }

    /// Whether `num` is within both bounds: for an integer, the range
    /// derived from them; for a float, the bounds themselves.
    #[inline(always)]
    pub(super) fn bounds_admit(&self, num: Num) -> bool {
        if let (Num::Int(int), Some((lowest, highest))) = (num, self.integers) {
            return lowest <= int && int <= highest;
        }
        !self
            .lower
            .as_ref()
            .is_some_and(|bound| bound.falls_short(num))
            && !self
                .upper
                .as_ref()
                .is_some_and(|bound| bound.goes_past(num))
    }
}

/// One end of a numeric range.
#[derive(Debug, Clone)]
pub(super) struct Bound {
    /// As the schema (or the format) wrote it, for the message.
    pub(super) limit: Number,
    /// The same, for exact comparison.
    pub(super) at: Num,
    pub(super) exclusive: bool,
}

impl Bound {
    /// Whether `num` is below this bound, taken as a minimum.
    #[inline]
    pub(super) fn falls_short(&self, num: Num) -> bool {
        let order = num.compare(self.at);
        order == Some(Ordering::Less) || (self.exclusive && order == Some(Ordering::Equal))
    }

    /// Whether `num` is above this bound, taken as a maximum.
    #[inline]
    pub(super) fn goes_past(&self, num: Num) -> bool {
        let order = num.compare(self.at);
        order == Some(Ordering::Greater) || (self.exclusive && order == Some(Ordering::Equal))
    }

    /// The lowest integer this bound, taken as a minimum, lets through, if
    /// any: found by [`falls_short`](Self::falls_short) itself, so the two
    /// agree exactly, stepping up from the bound's floor (a step or two).
    fn lowest_integer(&self) -> Option<i128> {
        let mut int = self.floor()?;
        while self.falls_short(Num::Int(int)) {
            int = int.checked_add(1)?;
        }
        Some(int)
    }

    /// The highest integer this bound, taken as a maximum, lets through, if
    /// any: by [`goes_past`](Self::goes_past), stepping down from the floor.
    fn highest_integer(&self) -> Option<i128> {
        let mut int = self.floor()?;
        while self.goes_past(Num::Int(int)) {
            int = int.checked_sub(1)?;
        }
        Some(int)
    }

    /// The highest integer at or below the bound, or the end of `i128`'s
    /// range for a bound beyond it (then one step finds that no integer
    /// passes a minimum there, or every one a maximum). `None` for a NaN,
    /// which no number passes or fails, and which JSON cannot write anyway.
    fn floor(&self) -> Option<i128> {
        match self.at {
            Num::Int(int) => Some(int),
            Num::Float(float) if float.is_nan() => None,
            // Exact within the range (a float beyond 2^53 is whole), and
            // `as` saturates beyond it.
            Num::Float(float) => Some(float.floor() as i128),
        }
    }
}

/// `minLength`, `maxLength` (in characters) and `pattern`.
#[derive(Debug, Default)]
pub(super) struct StringRules {
    pub(super) min_length: Option<u64>,
    pub(super) max_length: Option<u64>,
    pub(super) pattern: Option<Pattern>,
}

/// A string's length in characters, not bytes: a model counts "é" as one.
pub(super) fn char_length(s: &str) -> u64 {
    u64::try_from(s.chars().count()).unwrap_or(u64::MAX)
}

/// A compiled `pattern`, with its text for the message.
#[derive(Debug)]
pub(super) struct Pattern {
    pub(super) regex: Regex,
    pub(super) source: String,
}

/// `prefixItems`, `items`, item counts and `uniqueItems`.
#[derive(Debug, Default)]
pub(super) struct ArrayRules {
    /// The schemas of the first items, in order.
    pub(super) prefix: Vec<NodeId>,
    /// The schema of every item after the prefix.
    pub(super) rest: Option<NodeId>,
    pub(super) min_items: Option<u64>,
    pub(super) max_items: Option<u64>,
    pub(super) unique: bool,
}

impl ArrayRules {
    /// The schema for the item at `index`, if any applies.
    pub(super) fn item(&self, index: usize) -> Option<NodeId> {
        self.prefix.get(index).copied().or(self.rest)
    }
}

/// `properties`, `required`, `patternProperties`, `additionalProperties`
/// and property counts.
#[derive(Debug, Default)]
pub(super) struct ObjectRules {
    /// In the order the schema declares them, which is the order errors come in.
    pub(super) properties: Vec<Property>,
    /// Indexes into `properties`, sorted by name, for lookup without hashing.
    pub(super) by_name: Vec<usize>,
    /// Required names the schema does not declare under `properties`.
    pub(super) required_elsewhere: Vec<String>,
    /// How many of `properties` are required.
    pub(super) required_count: usize,
    pub(super) pattern_properties: Vec<(Regex, NodeId)>,
    pub(super) additional: Additional,
    pub(super) min_properties: Option<u64>,
    pub(super) max_properties: Option<u64>,
    /// The steps a check takes going through `properties` and
    /// `required_elsewhere`, whatever the value holds; set as the node
    /// settles.
    pub(super) list_steps: u32,
}

impl ObjectRules {
    /// Up to this many properties, a scan that compares lengths first beats
    /// a binary search, whose every step compares bytes.
    const SCAN: usize = 8;

    /// The declared property called `name`.
    #[inline]
    pub(super) fn property(&self, name: &str) -> Option<&Property> {
        if self.properties.len() <= Self::SCAN {
            return self.properties.iter().find(|p| same_name(&p.name, name));
        }
        let found = self
            .by_name
            .binary_search_by(|&i| {
                self.properties
                    .get(i)
                    .map_or("", |p| p.name.as_str())
                    .cmp(name)
            })
            .ok()?;
        self.properties.get(*self.by_name.get(found)?)
    }

    /// The declared property called `name`, which is the object's entry at
    /// `position`. Models mostly send arguments in the declared order, so the
    /// property at the same position is tried first.
    #[inline]
    pub(super) fn property_at(&self, position: usize, name: &str) -> Option<&Property> {
        match self.properties.get(position) {
            Some(property) if same_name(&property.name, name) => Some(property),
            _ => self.property(name),
        }
    }

    /// Call `visit` with every schema the value under `key` must match:
    /// its declared schema and the matching `patternProperties`, or else the
    /// `additionalProperties` schema. Returns whether the key is declared or
    /// matches a pattern, i.e. is not an additional property.
    /// `position` is where `key` sits in its object, a hint for the lookup.
    pub(super) fn schemas_for(
        &self,
        position: usize,
        key: &str,
        mut visit: impl FnMut(NodeId),
    ) -> bool {
        let mut known = false;
        if let Some(property) = self.property_at(position, key) {
            visit(property.schema);
            known = true;
        }
        for (pattern, schema) in &self.pattern_properties {
            if pattern.is_match(key) {
                visit(*schema);
                known = true;
            }
        }
        if !known && let Additional::Schema(schema) = self.additional {
            visit(schema);
        }
        known
    }
}

/// One entry of `properties`.
#[derive(Debug)]
pub(super) struct Property {
    pub(super) name: String,
    pub(super) schema: NodeId,
    pub(super) required: bool,
}

/// What `additionalProperties` says about keys the schema does not declare.
#[derive(Debug, Default)]
pub(super) enum Additional {
    /// Absent or `true`.
    #[default]
    Allowed,
    /// `false`.
    Forbidden,
    /// A schema every extra value must match.
    Schema(NodeId),
}

#[cfg(test)]
#[path = "tests/node.rs"]
mod tests;

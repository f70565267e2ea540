//! Step 4: check the arguments against the schema and report every problem.
//!
//! A model fixes a call faster when it learns everything wrong with it at
//! once, each problem at its path. Errors come in schema order (properties as
//! declared, then keys the schema does not know), so the same call always
//! gets the same message.
//!
//! The same walk answers "is this valid?" for `anyOf` and for casting; a
//! [`Sink`] decides whether problems are collected or merely noticed, and
//! problems are built lazily, so a valid call allocates nothing.

use serde_json::{Map, Value};

use super::budget::Budget;
use super::describe;
use super::equal::{has_duplicates, json_equal};
use super::node::{Additional, MAX_DEPTH, Node, NodeId, Nodes, Types, char_length, same_name};
use super::number::Num;
use super::path::Path;
use crate::error::{ArgumentError, Problem};
use crate::suggest::did_you_mean;

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
    Validator { nodes, budget }.node(nodes.root, value, &Path::ROOT, 0, &mut sink);
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
    let mut sink = Verdict { failed: false };
    Validator { nodes, budget }.node(id, value, &Path::ROOT, depth, &mut sink);
    !sink.failed
}

/// Where problems go.
trait Sink {
    /// Note a problem at `path`; `problem` is only called if it is wanted.
    fn report(&mut self, path: &Path<'_>, problem: impl FnOnce() -> Problem);
    /// Whether the outcome is known and the walk may stop.
    fn settled(&self) -> bool;
    /// Whether problems are wanted in full, which costs extra work.
    fn detailed(&self) -> bool;
}

/// The most problems one call reports: enough for a model to fix its call,
/// and a bound on the memory a hostile payload (thousands of wrong items
/// against a long `enum`) can make the report take.
pub(crate) const MAX_PROBLEMS: usize = 50;

/// The most allowed values one problem lists.
const MAX_LISTED: usize = 50;

/// Keeps every problem, with its path, up to [`MAX_PROBLEMS`].
struct Collect(Vec<ArgumentError>);

impl Sink for Collect {
    fn report(&mut self, path: &Path<'_>, problem: impl FnOnce() -> Problem) {
        if self.0.len() < MAX_PROBLEMS {
            self.0.push(ArgumentError::new(path.render(), problem()));
        }
    }
    fn settled(&self) -> bool {
        self.0.len() >= MAX_PROBLEMS
    }
    fn detailed(&self) -> bool {
        true
    }
}

/// Only notices that there was a problem, and stops at the first.
struct Verdict {
    failed: bool,
}

impl Sink for Verdict {
    fn report(&mut self, _: &Path<'_>, _: impl FnOnce() -> Problem) {
        self.failed = true;
    }
    fn settled(&self) -> bool {
        self.failed
    }
    fn detailed(&self) -> bool {
        false
    }
}

struct Validator<'n> {
    nodes: &'n Nodes,
    budget: &'n Budget,
}

impl Validator<'_> {
    fn node<S: Sink>(
        &self,
        id: NodeId,
        value: &Value,
        path: &Path<'_>,
        depth: usize,
        sink: &mut S,
    ) {
        let node = self.nodes.get(id);
        if !self.budget.spend() {
            // Said once; the steps that follow have nothing new to say.
            if !sink.detailed() || self.budget.first_to_tell() {
                sink.report(path, || {
                    Problem::Other(
                        "is too complex to check within this tool's limits; send a simpler value"
                            .to_owned(),
                    )
                });
            }
            return;
        }
        if depth > MAX_DEPTH {
            sink.report(path, || {
                Problem::Other(format!("is nested more than {MAX_DEPTH} levels deep"))
            });
            return;
        }
        if node.never {
            sink.report(path, || Problem::Other("is not allowed here".to_owned()));
            return;
        }
        if !node.types.allows(value) {
            sink.report(path, || Problem::WrongType {
                expected: describe::types(node.types),
                found: describe::value(value),
            });
            return;
        }
        if let Some(allowed) = &node.allowed
            && !allowed.iter().any(|a| json_equal(a, value))
        {
            sink.report(path, || {
                Problem::NotOneOf(allowed.iter().take(MAX_LISTED).cloned().collect())
            });
            return;
        }
        match value {
            Value::Number(n) => self.number(node, Num::of(n), path, sink),
            Value::String(s) => self.string(node, s, path, sink),
            Value::Array(items) => self.array(node, items, path, depth, sink),
            Value::Object(map) => self.object(node, map, path, depth, sink),
            Value::Null | Value::Bool(_) => {}
        }
        for &branch in &node.all_of {
            if sink.settled() {
                return;
            }
            self.node(branch, value, path, depth, sink);
        }
        if !node.any_of.is_empty() && !sink.settled() {
            self.alternatives(node, value, path, depth, sink);
        }
    }

    fn number<S: Sink>(&self, node: &Node, num: Num, path: &Path<'_>, sink: &mut S) {
        if !num.is_finite() {
            sink.report(path, || Problem::NotFinite);
            return;
        }
        let Some(rules) = &node.number else { return };
        if let Some(bound) = &rules.lower
            && bound.falls_short(num)
        {
            sink.report(path, || Problem::TooSmall {
                limit: bound.limit.clone(),
                exclusive: bound.exclusive,
            });
        }
        if let Some(bound) = &rules.upper
            && bound.goes_past(num)
        {
            sink.report(path, || Problem::TooLarge {
                limit: bound.limit.clone(),
                exclusive: bound.exclusive,
            });
        }
        if let Some((limit, step)) = &rules.multiple_of
            && !num.is_multiple_of(*step)
        {
            sink.report(path, || Problem::NotMultipleOf(limit.clone()));
        }
    }

    fn string<S: Sink>(&self, node: &Node, s: &str, path: &Path<'_>, sink: &mut S) {
        let Some(rules) = &node.string else { return };
        if rules.min_length.is_some() || rules.max_length.is_some() {
            let length = char_length(s);
            if let Some(min) = rules.min_length
                && length < min
            {
                sink.report(path, || Problem::TooShort(min));
            }
            if let Some(max) = rules.max_length
                && length > max
            {
                sink.report(path, || Problem::TooLong(max));
            }
        }
        if let Some(pattern) = &rules.pattern
            && !pattern.regex.is_match(s)
        {
            sink.report(path, || Problem::PatternMismatch(pattern.source.clone()));
        }
    }

    fn array<S: Sink>(
        &self,
        node: &Node,
        items: &[Value],
        path: &Path<'_>,
        depth: usize,
        sink: &mut S,
    ) {
        let Some(rules) = &node.array else { return };
        let count = u64::try_from(items.len()).unwrap_or(u64::MAX);
        if let Some(min) = rules.min_items
            && count < min
        {
            sink.report(path, || Problem::TooFewItems(min));
        }
        if let Some(max) = rules.max_items
            && count > max
        {
            sink.report(path, || Problem::TooManyItems(max));
        }
        if rules.unique && has_duplicates(items) {
            sink.report(path, || Problem::DuplicateItems);
        }
        for (index, item) in items.iter().enumerate() {
            if sink.settled() {
                return;
            }
            if let Some(schema) = rules.item(index) {
                self.node(schema, item, &path.index(index), depth + 1, sink);
            }
        }
    }

    fn object<S: Sink>(
        &self,
        node: &Node,
        map: &Map<String, Value>,
        path: &Path<'_>,
        depth: usize,
        sink: &mut S,
    ) {
        let Some(rules) = &node.object else { return };
        let count = u64::try_from(map.len()).unwrap_or(u64::MAX);
        if let Some(min) = rules.min_properties
            && count < min
        {
            sink.report(path, || Problem::TooFewProperties(min));
        }
        if let Some(max) = rules.max_properties
            && count > max
        {
            sink.report(path, || Problem::TooManyProperties(max));
        }

        let mut missing = false;
        let mut entries = Entries::new(map);
        for property in &rules.properties {
            if sink.settled() {
                return;
            }
            let at = path.key(&property.name);
            match entries.get(&property.name) {
                Some(value) => self.node(property.schema, value, &at, depth + 1, sink),
                None if property.required => {
                    missing = true;
                    sink.report(&at, || Problem::Missing);
                }
                None => {}
            }
        }
        for name in &rules.required_elsewhere {
            if entries.get(name).is_none() {
                missing = true;
                sink.report(&path.key(name), || Problem::Missing);
            }
        }

        // Keys outside `properties` need a look only if something applies to
        // them, or if a missing name might be hiding under a misspelling.
        let free =
            matches!(rules.additional, Additional::Allowed) && rules.pattern_properties.is_empty();
        if free && !(missing && sink.detailed()) {
            return;
        }
        for (position, (key, value)) in map.iter().enumerate() {
            if sink.settled() {
                return;
            }
            let at = path.key(key);
            let mut known = rules.property_at(position, key).is_some();
            for (pattern, schema) in &rules.pattern_properties {
                if pattern.is_match(key) {
                    known = true;
                    self.node(*schema, value, &at, depth + 1, sink);
                }
            }
            if known {
                continue;
            }
            match rules.additional {
                Additional::Schema(schema) => self.node(schema, value, &at, depth + 1, sink),
                Additional::Forbidden => sink.report(&at, || {
                    let absent = rules
                        .properties
                        .iter()
                        .map(|p| p.name.as_str())
                        .filter(|name| !map.contains_key(*name));
                    Problem::Unknown {
                        suggestion: did_you_mean(key, absent).map(str::to_owned),
                        allowed: rules.properties.iter().map(|p| p.name.clone()).collect(),
                    }
                }),
                // Extra keys are allowed, but one that is a near miss of a
                // missing name is almost surely it: say so beside "required".
                Additional::Allowed if missing => {
                    let absent = rules
                        .properties
                        .iter()
                        .filter(|p| p.required)
                        .map(|p| p.name.as_str())
                        .chain(rules.required_elsewhere.iter().map(String::as_str))
                        .filter(|name| !map.contains_key(*name));
                    if let Some(meant) = did_you_mean(key, absent) {
                        sink.report(&at, || Problem::Unknown {
                            suggestion: Some(meant.to_owned()),
                            allowed: rules.properties.iter().map(|p| p.name.clone()).collect(),
                        });
                    }
                }
                Additional::Allowed => {}
            }
        }
    }

    /// `anyOf`/`oneOf`. `oneOf` is treated as `anyOf`: a value matching two
    /// branches is not something a model can act on, and schemars' enums
    /// use `oneOf` where the branches never overlap anyway.
    ///
    /// When no branch fits, the report is the most precise one available:
    /// the allowed values when every branch is a list of values; the one
    /// branch's own errors when only one is for the type that was sent; the
    /// allowed types when none is; otherwise the first problem per branch.
    fn alternatives<S: Sink>(
        &self,
        node: &Node,
        value: &Value,
        path: &Path<'_>,
        depth: usize,
        sink: &mut S,
    ) {
        if node
            .any_of
            .iter()
            .any(|&b| is_valid(self.nodes, b, value, depth, self.budget))
        {
            return;
        }
        if !sink.detailed() {
            sink.report(path, || Problem::Other(String::new()));
            return;
        }
        // Documented Rust enums become one `const` branch per variant:
        // list the values, not one failure per branch.
        if let Some(values) = self.choices(node.any_of.iter().copied()) {
            sink.report(path, || Problem::NotOneOf(values));
            return;
        }
        // `Option<T>` lands here: whatever is wrong for T is the problem.
        // More generally, branches for another JSON type are no help to the
        // model; only those for the type it sent are worth explaining.
        if let Some(only) = self.nodes.only_branch_for(node, value) {
            self.node(only, value, path, depth, sink);
            return;
        }
        if !node.any_of.iter().any(|&b| self.nodes.get(b).is_for(value)) {
            let wanted = node
                .any_of
                .iter()
                .fold(Types::NONE, |all, &b| all.union(self.nodes.get(b).cast_to));
            sink.report(path, || Problem::WrongType {
                expected: describe::types(wanted),
                found: describe::value(value),
            });
            return;
        }
        let reasons = node
            .any_of
            .iter()
            .copied()
            .filter(|&b| self.nodes.get(b).is_for(value))
            .filter_map(|branch| {
                let mut errors = Collect(Vec::new());
                self.node(branch, value, path, depth, &mut errors);
                errors.0.first().map(ToString::to_string)
            })
            .collect();
        sink.report(path, || Problem::NoAlternative(reasons));
    }

    /// Every value the branches allow, if each is a list of values (`enum`,
    /// `const`, the `null` type, or alternatives of these).
    fn choices(&self, branches: impl Iterator<Item = NodeId>) -> Option<Vec<Value>> {
        let mut values: Vec<Value> = Vec::new();
        for branch in branches {
            let node = self.nodes.get(branch);
            let more = if let Some(allowed) = &node.allowed {
                allowed.clone()
            } else if node.types == Types::NULL {
                vec![Value::Null]
            } else if !node.any_of.is_empty() {
                self.choices(node.any_of.iter().copied())?
            } else if let [only] = node.all_of.as_slice() {
                self.choices(std::iter::once(*only))?
            } else {
                return None;
            };
            for value in more {
                if !values.iter().any(|v| json_equal(v, &value)) {
                    values.push(value);
                }
                // A list for the model, not the whole enum: also keeps the
                // duplicate check above from growing with the square of it.
                if values.len() >= MAX_LISTED {
                    return Some(values);
                }
            }
        }
        Some(values)
    }
}

/// Finds the values of declared names in an object without hashing them.
///
/// Names are asked for in declared order, and models mostly send arguments
/// in that order, so the entry after the last one found is tried first; a
/// scan comparing lengths before bytes finds the rest. Large objects use the
/// map's own index.
struct Entries<'m> {
    map: &'m Map<String, Value>,
    next: serde_json::map::Iter<'m>,
}

impl<'m> Entries<'m> {
    /// Above this many entries, hashing a name is cheaper than scanning.
    const SCAN: usize = 16;

    fn new(map: &'m Map<String, Value>) -> Self {
        Self {
            map,
            next: map.iter(),
        }
    }

    fn get(&mut self, name: &str) -> Option<&'m Value> {
        if self.map.len() > Self::SCAN {
            return self.map.get(name);
        }
        let mut ahead = self.next.clone();
        if let Some((key, value)) = ahead.next()
            && same_name(key, name)
        {
            self.next = ahead;
            return Some(value);
        }
        let mut scan = self.map.iter();
        while let Some((key, value)) = scan.next() {
            if same_name(key, name) {
                self.next = scan;
                return Some(value);
            }
        }
        None
    }
}

#[cfg(test)]
#[path = "tests/validate.rs"]
pub(super) mod tests;

//! The one walk over a compiled schema and a value: every validity rule,
//! written once.
//!
//! Three questions are asked of a call's arguments: what is wrong with them
//! (step 4's report), whether they are valid at all (for `anyOf` and for
//! casting), and whether they are valid with nothing to cast (the fast path
//! of steps 3 and 4). They differ only in what happens to a problem, so one
//! walk answers all three and a [`Sink`] receives the problems, as serde
//! drives many visitors through one traversal. The sink's constants are
//! known at compile time: each question gets its own copy of the walk, with
//! the work it has no use for (messages, did-you-means, the cast's question)
//! compiled out.
//!
//! Every visit of a (schema, value) pair takes one step of the [`Budget`],
//! whatever the question, so all three run out of steps at the same place.
//!
//! The cast's question, asked only by the clean sink, is whether casting
//! would change the value: a type check answers it at each node (an
//! integral float where only integers are wanted is valid but is cast), and
//! a value that fits an `anyOf` must hold no float that casting writes as
//! an integer. Nothing has measured the arguments' depth before that walk,
//! so it also measures what the schema does not look into.

use serde_json::{Map, Value};

use super::budget::Budget;
use super::cast::{changes, integral_float_of};
use super::depth::fits;
use super::describe;
use super::equal::{has_duplicates, json_equal};
use super::node::{
    Additional, MAX_DEPTH, Node, NodeId, Nodes, NumberRules, ObjectRules, StringRules, Types,
    char_length, same_name,
};
use super::number::Num;
use super::path::Path;
use super::sink::{Collect, Sink, Verdict};
use crate::error::Problem;
use crate::suggest::did_you_mean;

/// The most allowed values one problem lists.
pub(super) const MAX_LISTED: usize = 50;

/// What is said of a value whose check ran out of steps: not that it is
/// wrong, only that it was not checked through.
pub(super) const TOO_COMPLEX: &str =
    "is too complex to check within this tool's limits; send a simpler value";

/// Bytes of a string its length and pattern checks, or a comparison with
/// an allowed value, take a step for: the steps of a call then read at most
/// a quarter of a gigabyte of strings, and a string of 16 MiB takes 6% of
/// them.
const STRING_BYTES_A_STEP: usize = 64;

/// The names an object's rules declare, as a problem lists them: the
/// first [`MAX_LISTED`], as an `enum`'s values are. Every unknown key's
/// problem held all of them: 50 copies of a server's 100,000 names took
/// half a gigabyte.
fn listed_names(rules: &ObjectRules) -> Vec<String> {
    rules
        .properties
        .iter()
        .take(MAX_LISTED)
        .map(|p| p.name.clone())
        .collect()
}

/// A schema and the budget of the call it checks.
pub(super) struct Walker<'n> {
    pub(super) nodes: &'n Nodes,
    pub(super) budget: &'n Budget,
}

/// The count rules of an array (items) or an object (properties): each
/// bound that `count` breaks is reported as the problem made from it.
#[inline]
fn check_count<S: Sink>(
    count: usize,
    (min, too_few): (Option<u64>, fn(u64) -> Problem),
    (max, too_many): (Option<u64>, fn(u64) -> Problem),
    path: &Path<'_>,
    sink: &mut S,
) {
    let count = u64::try_from(count).unwrap_or(u64::MAX);
    if let Some(min) = min
        && count < min
    {
        sink.report(path, || too_few(min));
    }
    if let Some(max) = max
        && count > max
    {
        sink.report(path, || too_many(max));
    }
}

/// The problem of a value nested past [`MAX_DEPTH`].
fn too_deep() -> Problem {
    Problem::Other(format!("is nested more than {MAX_DEPTH} levels deep"))
}

/// The problem, for the clean sink, of a value casting would change.
fn cast_pending() -> Problem {
    Problem::Other("is in a form that casting changes".to_owned())
}

impl Walker<'_> {
    /// Whether `value`, `depth` levels into the arguments, is valid against
    /// node `id` within the steps left.
    pub(super) fn is_valid(&self, id: NodeId, value: &Value, depth: usize) -> bool {
        let mut sink = Verdict::<false>::new();
        self.node(id, value, &Path::ROOT, depth, &mut sink);
        !sink.failed
    }

    /// Visit `value` at `path`, `depth` levels into the arguments, against
    /// node `id`.
    ///
    /// Inlined where it is called, so a scalar value (most arguments) is
    /// checked without a call; the walk recurses through the containers'
    /// and the branches' own functions.
    #[inline(always)]
    pub(super) fn node<S: Sink>(
        &self,
        id: NodeId,
        value: &Value,
        path: &Path<'_>,
        depth: usize,
        sink: &mut S,
    ) {
        let node = self.nodes.get(id);
        if !self.budget.spend() {
            self.out_of_steps(path, sink);
            return;
        }
        if depth > MAX_DEPTH {
            sink.report(path, too_deep);
            return;
        }
        // One look at the value's kind serves the type check, the number
        // rules and the cast's question.
        let (kind, num) = match value {
            Value::Number(n) => {
                let num = Num::of(n);
                (Types::of_number(num), Some(num))
            }
            other => (Types::of(other), None),
        };
        // A kind the type check alone answers for (a string where any
        // string will do): the checks below would each find nothing.
        if node.settled_by_type.intersects(kind) {
            return;
        }
        // A kind the checks below pass whatever the value (an object where
        // objects are wanted): straight to the rules of its kind.
        let plain = node.plain.intersects(kind) && !matches!(num, Some(Num::Float(_)));
        if !plain {
            if node.never {
                sink.report(path, || Problem::Other("is not allowed here".to_owned()));
                return;
            }
            if !node.types.allows_kind(kind) {
                sink.report(path, || Problem::WrongType {
                    expected: describe::types(node.types),
                    found: describe::value(value),
                });
                return;
            }
            if let Some(allowed) = &node.allowed
                && !self.is_one_of(allowed, value, path, sink)
            {
                return;
            }
            if S::CLEAN && changes(node.cast_to, value, kind) {
                sink.report(path, cast_pending);
                return;
            }
        }
        match (value, num) {
            (_, Some(num)) => self.number(node, num, path, sink),
            (Value::String(s), _) => {
                if let Some(rules) = &node.string {
                    self.string(rules, s, path, sink);
                }
            }
            (Value::Array(items), _) => self.array(node, value, items, path, depth, sink),
            (Value::Object(map), _) => self.object(node, value, map, path, depth, sink),
            _ => {}
        }
        if !plain && (!node.all_of.is_empty() || !node.any_of.is_empty()) {
            self.branches(node, value, path, depth, sink);
        }
    }

    /// `allOf`, then `anyOf`.
    #[inline(never)]
    fn branches<S: Sink>(
        &self,
        node: &Node,
        value: &Value,
        path: &Path<'_>,
        depth: usize,
        sink: &mut S,
    ) {
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

    #[inline(always)]
    fn number<S: Sink>(&self, node: &Node, num: Num, path: &Path<'_>, sink: &mut S) {
        if !num.is_finite() {
            sink.report(path, || Problem::NotFinite);
            return;
        }
        let Some(rules) = &node.number else { return };
        if !rules.bounds_admit(num) {
            self.out_of_bounds(rules, num, path, sink);
        }
        if let Some((limit, step)) = &rules.multiple_of
            && !num.is_multiple_of(*step)
        {
            sink.report(path, || Problem::NotMultipleOf(limit.clone()));
        }
    }

    /// Each bound `num` breaks.
    #[inline(never)]
    fn out_of_bounds<S: Sink>(&self, rules: &NumberRules, num: Num, path: &Path<'_>, sink: &mut S) {
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
    }

    /// Whether `value` is one of `allowed`; if not, or if comparing would
    /// take more steps than are left, that is reported.
    #[inline(never)]
    fn is_one_of<S: Sink>(
        &self,
        allowed: &[Value],
        value: &Value,
        path: &Path<'_>,
        sink: &mut S,
    ) -> bool {
        // A string is compared again with each allowed one of its length:
        // 500 values of 8 KB, reached through 190,000 references, would
        // read 760 GB. What the comparisons read is counted as steps.
        let mut read = 0usize;
        let found = allowed.iter().any(|a| {
            if let (Value::String(a), Value::String(s)) = (a, value)
                && a.len() == s.len()
            {
                read += a.len();
            }
            json_equal(a, value)
        });
        let work = read / STRING_BYTES_A_STEP;
        if work > 0
            && !self
                .budget
                .spend_many(u32::try_from(work).unwrap_or(u32::MAX))
        {
            self.out_of_steps(path, sink);
            return false;
        }
        if found {
            return true;
        }
        sink.report(path, || {
            Problem::NotOneOf(allowed.iter().take(MAX_LISTED).cloned().collect())
        });
        false
    }

    #[inline(never)]
    fn string<S: Sink>(&self, rules: &StringRules, s: &str, path: &Path<'_>, sink: &mut S) {
        // Counting the characters and matching the pattern take time in the
        // string's length, which the node's one step does not count: a
        // string of a megabyte checked through 10,000 references to one
        // pattern took 20 s.
        let work = u32::try_from(s.len() / STRING_BYTES_A_STEP).unwrap_or(u32::MAX);
        if work > 0 && !self.budget.spend_many(work) {
            self.out_of_steps(path, sink);
            return;
        }
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

    #[inline(never)]
    fn array<S: Sink>(
        &self,
        node: &Node,
        value: &Value,
        items: &[Value],
        path: &Path<'_>,
        depth: usize,
        sink: &mut S,
    ) {
        let Some(rules) = &node.array else {
            if S::CLEAN && !fits(value, depth) {
                sink.report(path, too_deep);
            }
            return;
        };
        check_count(
            items.len(),
            (rules.min_items, Problem::TooFewItems),
            (rules.max_items, Problem::TooManyItems),
            path,
            sink,
        );
        // Safe before the items are measured: the comparison stops at the
        // depth limit.
        if rules.unique && has_duplicates(items) {
            sink.report(path, || Problem::DuplicateItems);
        }
        for (index, item) in items.iter().enumerate() {
            if sink.settled() {
                return;
            }
            match rules.item(index) {
                Some(schema) => self.node(schema, item, &path.index(index), depth + 1, sink),
                None if S::CLEAN && !fits(item, depth + 1) => {
                    sink.report(&path.index(index), too_deep);
                }
                None => {}
            }
        }
    }

    /// Say that the call's steps ran out: once, since the steps that
    /// follow have nothing new to say.
    #[inline(never)]
    fn out_of_steps<S: Sink>(&self, path: &Path<'_>, sink: &mut S) {
        if !S::DETAILED || self.budget.first_to_tell() {
            sink.report(path, || Problem::Other(TOO_COMPLEX.to_owned()));
        }
    }

    #[inline(never)]
    fn object<S: Sink>(
        &self,
        node: &Node,
        value: &Value,
        map: &Map<String, Value>,
        path: &Path<'_>,
        depth: usize,
        sink: &mut S,
    ) {
        let Some(rules) = &node.object else {
            if S::CLEAN && !fits(value, depth) {
                sink.report(path, too_deep);
            }
            return;
        };
        // The loops below go through the schema's lists, whatever the
        // value holds: counted as steps of their own.
        let work = if rules.pattern_properties.is_empty() {
            rules.list_steps
        } else {
            let patterns = rules.pattern_properties.len().saturating_mul(map.len());
            rules
                .list_steps
                .saturating_add(u32::try_from(patterns).unwrap_or(u32::MAX))
        };
        if !self.budget.spend_many(work) {
            self.out_of_steps(path, sink);
            return;
        }
        check_count(
            map.len(),
            (rules.min_properties, Problem::TooFewProperties),
            (rules.max_properties, Problem::TooManyProperties),
            path,
            sink,
        );

        // Properties in declared order, so errors come in schema order.
        let mut missing = false;
        let mut declared = 0;
        let mut entries = Entries::new(map);
        for property in &rules.properties {
            if sink.settled() {
                return;
            }
            match entries.get(&property.name) {
                Some(value) => {
                    declared += 1;
                    // A sink that keeps no messages never reads a path:
                    // it is not built for it.
                    if S::DETAILED {
                        let at = path.key(&property.name);
                        self.node(property.schema, value, &at, depth + 1, sink);
                    } else {
                        self.node(property.schema, value, path, depth + 1, sink);
                    }
                }
                None if property.required => {
                    missing = true;
                    sink.report(&path.key(&property.name), || Problem::Missing);
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

        // Then every key again, if a pattern may apply to it, or if some
        // are undeclared and something applies to those: a schema, a
        // refusal, the clean sink's measure, or a did-you-mean for a
        // missing name hiding under a misspelling.
        let undeclared = map.len() > declared;
        let extra_wants_a_look = match rules.additional {
            Additional::Allowed => S::CLEAN || (S::DETAILED && missing),
            Additional::Forbidden | Additional::Schema(_) => true,
        };
        if rules.pattern_properties.is_empty() && !(undeclared && extra_wants_a_look) {
            return;
        }
        self.other_keys(rules, map, missing, path, depth, sink);
    }

    /// Every key of an object again, for the patterns and the keys it does
    /// not declare. Out of line: most objects need no second look, and the
    /// loop over the declared properties is compiled better without it.
    #[inline(never)]
    fn other_keys<S: Sink>(
        &self,
        rules: &ObjectRules,
        map: &Map<String, Value>,
        missing: bool,
        path: &Path<'_>,
        depth: usize,
        sink: &mut S,
    ) {
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
                    let suggestion = if self.budget.may_suggest(rules.properties.len()) {
                        did_you_mean(key, absent).map(str::to_owned)
                    } else {
                        None
                    };
                    Problem::Unknown {
                        suggestion,
                        allowed: listed_names(rules),
                    }
                }),
                Additional::Allowed => {
                    if S::CLEAN && !fits(value, depth + 1) {
                        sink.report(&at, too_deep);
                    }
                    // Extra keys are allowed, but one that is a near miss
                    // of a missing name is almost surely it: say so beside
                    // "required".
                    let names = rules.properties.len() + rules.required_elsewhere.len();
                    if S::DETAILED && missing && self.budget.may_suggest(names) {
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
                                allowed: listed_names(rules),
                            });
                        }
                    }
                }
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
    #[inline(never)]
    fn alternatives<S: Sink>(
        &self,
        node: &Node,
        value: &Value,
        path: &Path<'_>,
        depth: usize,
        sink: &mut S,
    ) {
        if node.any_of.iter().any(|&b| self.is_valid(b, value, depth)) {
            // Casting leaves a value that fits a branch as it is, but for
            // the integral floats anywhere in it, which it writes as
            // integers (see `cast`). This look at the whole value also
            // measures it.
            if S::CLEAN && !floats_stay(value, depth) {
                sink.report(path, cast_pending);
            }
            return;
        }
        if !S::DETAILED {
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

/// Whether `value`, `depth` levels into the arguments, nests at most
/// [`MAX_DEPTH`] levels and holds no float that casting writes as an
/// integer (`2.0`, `-0`).
fn floats_stay(value: &Value, depth: usize) -> bool {
    if depth > MAX_DEPTH {
        return false;
    }
    match value {
        Value::Number(n) => integral_float_of(n).is_none(),
        Value::Array(items) => items.iter().all(|item| floats_stay(item, depth + 1)),
        Value::Object(map) => map.values().all(|child| floats_stay(child, depth + 1)),
        _ => true,
    }
}

/// Finds the values of declared names in an object without hashing them.
///
/// Names are asked for in declared order, and models mostly send arguments
/// in that order, so the entry after the last one found is tried first; a
/// scan comparing lengths before bytes finds the rest. Large objects use the
/// map's own index.
pub(super) struct Entries<'m> {
    map: &'m Map<String, Value>,
    next: serde_json::map::Iter<'m>,
}

impl<'m> Entries<'m> {
    /// Above this many entries, hashing a name is cheaper than scanning.
    const SCAN: usize = 16;

    pub(super) fn new(map: &'m Map<String, Value>) -> Self {
        Self {
            map,
            next: map.iter(),
        }
    }

    #[inline(always)]
    pub(super) fn get(&mut self, name: &str) -> Option<&'m Value> {
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

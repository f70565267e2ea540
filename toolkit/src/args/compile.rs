//! JSON Schema -> [`Nodes`]: done once per tool, when it is registered.
//!
//! `$ref`s become node ids. Each reference target is compiled once, into a
//! slot reserved before its contents are compiled, so a recursive schema
//! (a tree whose children are trees) refers back to that slot instead of
//! unfolding forever. Unknown keywords are ignored, as JSON Schema asks;
//! only what cannot be honoured (a `$ref` that leads nowhere, a pattern the
//! regex engine rejects) is an error.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};

use regex::Regex;
use serde_json::{Map, Number, Value};

use super::SchemaError;
use super::depth::fits;
use super::flat::FlatRoot;
use super::node::MAX_DEPTH as ARGUMENT_DEPTH;
use super::node::{
    Additional, ArrayRules, Bound, Node, NodeId, Nodes, NumberRules, ObjectRules, Pattern,
    Property, StringRules, Types,
};
use super::number::{Num, format_range};

/// Deeper than this, a schema is taken to be an attack or a bug. Only a
/// chain of `$ref`s comes near it (JSON itself is read 128 levels deep at
/// most), and each level takes some 7 KiB of stack in a debug build: 256
/// overflowed the 2 MiB of a tokio worker compiling a server's tool.
const MAX_DEPTH: usize = 128;

/// Compile a whole schema; its root is the reference target `#`.
pub(super) fn compile(schema: &Value) -> Result<Nodes, SchemaError> {
    let mut compiler = Compiler {
        document: schema,
        nodes: Vec::new(),
        targets: HashMap::new(),
        depth: 0,
        patterns: PatternCharge::default(),
    };
    let root = compiler.target("", "#")?;
    let patterns = std::mem::take(&mut compiler.patterns);
    let mut nodes = compiler.nodes;
    // Each node's rules are final only now (a `$ref` target is filled in
    // after its users): derive what the walk may skip from them.
    for node in &mut nodes {
        node.settle();
    }
    let mut nodes = Nodes {
        nodes,
        root,
        _patterns: patterns,
        flat_root: None,
    };
    reject_empty_cycles(&nodes)?;
    nodes.flat_root = FlatRoot::of(&nodes);
    Ok(nodes)
}

struct Compiler<'s> {
    /// The whole schema, which `$ref`s point into.
    document: &'s Value,
    nodes: Vec<Node>,
    /// Reference targets by JSON pointer, each compiled once.
    targets: HashMap<String, NodeId>,
    depth: usize,
    /// What the schema's patterns compiled so far are charged, against
    /// [`PATTERNS_BUDGET`] and the process's [`PROCESS_PATTERNS_BUDGET`].
    patterns: PatternCharge,
}

impl<'s> Compiler<'s> {
    /// Compile a subschema into a new node, or reuse the node it merely points to.
    fn subschema(&mut self, schema: &'s Value, at: &str) -> Result<NodeId, SchemaError> {
        let node = self.node(schema, at)?;
        // `{"$ref": X}` and `{"allOf": [X]}` are X itself; sharing X's node
        // keeps the arena small and the walk one step shorter.
        if let [only] = node.all_of.as_slice() {
            let rest = Node {
                all_of: Vec::new(),
                ..node
            };
            if rest.is_unconstrained() {
                return Ok(*only);
            }
            return Ok(self.push(Node {
                all_of: vec![*only],
                ..rest
            }));
        }
        Ok(self.push(node))
    }

    fn push(&mut self, node: Node) -> NodeId {
        self.nodes.push(node);
        self.nodes.len() - 1
    }

    /// The node for a `$ref` target, compiling it the first time.
    fn target(&mut self, pointer: &str, at: &str) -> Result<NodeId, SchemaError> {
        if let Some(&id) = self.targets.get(pointer) {
            return Ok(id);
        }
        let schema = self.document.pointer(pointer).ok_or_else(|| {
            SchemaError(format!(
                "{at}: $ref \"#{pointer}\" points to nothing in the schema"
            ))
        })?;
        let slot = self.push(Node::ANYTHING);
        self.targets.insert(pointer.to_owned(), slot);
        let node = self.node(schema, &format!("#{pointer}"))?;
        if let Some(place) = self.nodes.get_mut(slot) {
            *place = node;
        }
        Ok(slot)
    }

    fn reference(&mut self, reference: &Value, at: &str) -> Result<NodeId, SchemaError> {
        let text = reference
            .as_str()
            .ok_or_else(|| SchemaError(format!("{at}: $ref must be a string")))?;
        let fragment = text.strip_prefix('#').ok_or_else(|| {
            SchemaError(format!(
                "{at}: $ref \"{text}\" leaves the schema; only references within it (\"#/$defs/...\") are supported"
            ))
        })?;
        let pointer = percent_decode(fragment).ok_or_else(|| {
            SchemaError(format!("{at}: $ref \"{text}\" is not a valid URI fragment"))
        })?;
        if !pointer.is_empty() && !pointer.starts_with('/') {
            return Err(SchemaError(format!(
                "{at}: $ref \"{text}\" names an anchor; only JSON pointers (\"#/$defs/...\") are supported"
            )));
        }
        self.target(&pointer, at)
    }

    /// Compile one schema into a node without storing it.
    fn node(&mut self, schema: &'s Value, at: &str) -> Result<Node, SchemaError> {
        let map = match schema {
            Value::Object(map) => map,
            Value::Bool(true) => return Ok(Node::ANYTHING),
            Value::Bool(false) => {
                return Ok(Node {
                    never: true,
                    ..Node::ANYTHING
                });
            }
            _ => {
                return Err(SchemaError(format!(
                    "{at}: a schema must be an object or a boolean"
                )));
            }
        };
        if self.depth >= MAX_DEPTH {
            return Err(SchemaError(format!(
                "{at}: the schema nests deeper than {MAX_DEPTH} levels"
            )));
        }
        self.depth += 1;
        let node = self.keywords(map, at);
        self.depth -= 1;
        node
    }

    fn keywords(&mut self, map: &'s Map<String, Value>, at: &str) -> Result<Node, SchemaError> {
        let nullable = map.get("nullable") == Some(&Value::Bool(true));
        let mut types = declared_types(map.get("type"));
        if nullable && types != Types::ANY {
            types = types.union(Types::NULL);
        }
        // Allowed values are copied and compared by recursion: measured first.
        for keyword in ["enum", "const"] {
            if map.get(keyword).is_some_and(|value| !fits(value, 0)) {
                return Err(SchemaError(format!(
                    "{at}: `{keyword}` nests deeper than {ARGUMENT_DEPTH} levels"
                )));
            }
        }
        let mut allowed = allowed_values(map);
        if nullable
            && let Some(values) = &mut allowed
            && !values.contains(&Value::Null)
        {
            values.push(Value::Null);
        }
        let cast_to = match &allowed {
            Some(values) if types == Types::ANY => values
                .iter()
                .fold(Types::NONE, |all, v| all.union(Types::of(v))),
            _ => types,
        };

        let mut all_of = Vec::new();
        if let Some(reference) = map.get("$ref") {
            all_of.push(self.reference(reference, at)?);
        }
        all_of.extend(self.list(map, "allOf", at)?);
        let mut any_of = self.list(map, "anyOf", at)?;
        let one_of = self.list(map, "oneOf", at)?;
        if any_of.is_empty() {
            any_of = one_of;
        } else if !one_of.is_empty() {
            // Both must hold, so `oneOf` becomes a node of its own under `allOf`.
            all_of.push(self.push(Node {
                any_of: one_of,
                ..Node::ANYTHING
            }));
        }

        Ok(Node {
            types,
            cast_to,
            never: false,
            allowed,
            number: number_rules(map).map(Box::new),
            string: self.string_rules(map, at)?.map(Box::new),
            array: self.array_rules(map, at)?.map(Box::new),
            object: self.object_rules(map, at)?.map(Box::new),
            all_of,
            any_of,
            settled_by_type: Types::NONE,
            plain: Types::NONE,
        })
    }

    /// The subschemas of an array keyword such as `anyOf`.
    fn list(
        &mut self,
        map: &'s Map<String, Value>,
        keyword: &str,
        at: &str,
    ) -> Result<Vec<NodeId>, SchemaError> {
        let Some(Value::Array(schemas)) = map.get(keyword) else {
            return Ok(Vec::new());
        };
        schemas
            .iter()
            .enumerate()
            .map(|(i, s)| self.subschema(s, &format!("{at}/{keyword}/{i}")))
            .collect()
    }

    fn string_rules(
        &mut self,
        map: &'s Map<String, Value>,
        at: &str,
    ) -> Result<Option<StringRules>, SchemaError> {
        let pattern = match map.get("pattern") {
            Some(Value::String(source)) => Some(Pattern {
                regex: self.regex(source, &format!("{at}/pattern"))?,
                source: source.clone(),
            }),
            _ => None,
        };
        let rules = StringRules {
            min_length: count(map.get("minLength")),
            max_length: count(map.get("maxLength")),
            pattern,
        };
        let any =
            rules.min_length.is_some() || rules.max_length.is_some() || rules.pattern.is_some();
        Ok(any.then_some(rules))
    }

    fn array_rules(
        &mut self,
        map: &'s Map<String, Value>,
        at: &str,
    ) -> Result<Option<ArrayRules>, SchemaError> {
        let mut rules = ArrayRules {
            min_items: count(map.get("minItems")),
            max_items: count(map.get("maxItems")),
            unique: map.get("uniqueItems") == Some(&Value::Bool(true)),
            ..ArrayRules::default()
        };
        let rest_keyword;
        if map.contains_key("prefixItems") {
            rules.prefix = self.list(map, "prefixItems", at)?;
            rest_keyword = "items";
        } else if map.get("items").is_some_and(Value::is_array) {
            // Before 2020-12, an array under `items` was the tuple form.
            rules.prefix = self.list(map, "items", at)?;
            rest_keyword = "additionalItems";
        } else {
            rest_keyword = "items";
        }
        if let Some(rest) = map.get(rest_keyword) {
            rules.rest = Some(self.subschema(rest, &format!("{at}/{rest_keyword}"))?);
        }
        let any = !rules.prefix.is_empty()
            || rules.rest.is_some()
            || rules.min_items.is_some()
            || rules.max_items.is_some()
            || rules.unique;
        Ok(any.then_some(rules))
    }

    fn object_rules(
        &mut self,
        map: &'s Map<String, Value>,
        at: &str,
    ) -> Result<Option<ObjectRules>, SchemaError> {
        let mut rules = ObjectRules {
            min_properties: count(map.get("minProperties")),
            max_properties: count(map.get("maxProperties")),
            ..ObjectRules::default()
        };
        let required: Vec<&str> = match map.get("required") {
            Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        // A set, not the list: a server's schema may name 100,000 required
        // keys beside as many properties, and a scan per property would
        // take minutes.
        let required_set: std::collections::HashSet<&str> = required.iter().copied().collect();
        if let Some(Value::Object(properties)) = map.get("properties") {
            for (name, schema) in properties {
                let schema =
                    self.subschema(schema, &format!("{at}/properties/{}", escape(name)))?;
                rules.properties.push(Property {
                    name: name.clone(),
                    schema,
                    required: required_set.contains(name.as_str()),
                });
            }
        }
        rules.required_count = rules.properties.iter().filter(|p| p.required).count();
        rules.by_name = (0..rules.properties.len()).collect();
        let properties = &rules.properties;
        rules
            .by_name
            .sort_by(|&a, &b| name_at(properties, a).cmp(name_at(properties, b)));
        let mut elsewhere = std::collections::HashSet::new();
        for name in required {
            if rules.property(name).is_none() && elsewhere.insert(name) {
                rules.required_elsewhere.push(name.to_owned());
            }
        }
        if let Some(Value::Object(patterns)) = map.get("patternProperties") {
            for (source, schema) in patterns {
                let where_ = format!("{at}/patternProperties/{}", escape(source));
                let regex = self.regex(source, &where_)?;
                rules
                    .pattern_properties
                    .push((regex, self.subschema(schema, &where_)?));
            }
        }
        rules.additional = match map.get("additionalProperties") {
            None | Some(Value::Bool(true)) => Additional::Allowed,
            Some(Value::Bool(false)) => Additional::Forbidden,
            Some(schema) => {
                Additional::Schema(self.subschema(schema, &format!("{at}/additionalProperties"))?)
            }
        };
        let any = !rules.properties.is_empty()
            || !rules.required_elsewhere.is_empty()
            || !rules.pattern_properties.is_empty()
            || !matches!(rules.additional, Additional::Allowed)
            || rules.min_properties.is_some()
            || rules.max_properties.is_some();
        Ok(any.then_some(rules))
    }
}

fn name_at(properties: &[Property], index: usize) -> &str {
    properties.get(index).map_or("", |p| p.name.as_str())
}

/// `type` as a set; absent or unreadable means any type. Names JSON Schema
/// does not know are skipped rather than refused, since hand-written tool
/// schemas in the wild use some (`"any"`).
fn declared_types(keyword: Option<&Value>) -> Types {
    let named = |v: &Value| v.as_str().and_then(Types::named);
    let types = match keyword {
        Some(Value::String(_)) => keyword.and_then(named),
        Some(Value::Array(names)) => Some(
            names
                .iter()
                .filter_map(named)
                .fold(Types::NONE, Types::union),
        ),
        _ => None,
    };
    match types {
        Some(types) if types != Types::NONE => types,
        _ => Types::ANY,
    }
}

/// `enum` and `const` as one list of allowed values.
fn allowed_values(map: &Map<String, Value>) -> Option<Vec<Value>> {
    let listed = match map.get("enum") {
        Some(Value::Array(values)) => Some(values.clone()),
        _ => None,
    };
    match (listed, map.get("const")) {
        (None, None) => None,
        (Some(values), None) => Some(values),
        (None, Some(value)) => Some(vec![value.clone()]),
        // Both must hold: only the constant, and only if the list has it.
        (Some(values), Some(value)) => Some(values.into_iter().filter(|v| v == value).collect()),
    }
}

fn number_rules(map: &Map<String, Value>) -> Option<NumberRules> {
    let number = |key: &str| match map.get(key) {
        Some(Value::Number(n)) => Some(n.clone()),
        _ => None,
    };
    // Draft 4 wrote `exclusiveMinimum: true` beside `minimum`; 2020-12
    // writes the bound itself under `exclusiveMinimum`.
    let flag = |key: &str| map.get(key) == Some(&Value::Bool(true));
    let mut lower = None;
    let mut upper = None;
    if let Some(n) = number("minimum") {
        tighten(&mut lower, bound(n, flag("exclusiveMinimum")), Side::Lower);
    }
    if let Some(n) = number("exclusiveMinimum") {
        tighten(&mut lower, bound(n, true), Side::Lower);
    }
    if let Some(n) = number("maximum") {
        tighten(&mut upper, bound(n, flag("exclusiveMaximum")), Side::Upper);
    }
    if let Some(n) = number("exclusiveMaximum") {
        tighten(&mut upper, bound(n, true), Side::Upper);
    }
    if let Some((min, max)) = map
        .get("format")
        .and_then(Value::as_str)
        .and_then(format_range)
    {
        tighten(&mut lower, bound(min, false), Side::Lower);
        tighten(&mut upper, bound(max, false), Side::Upper);
    }
    let multiple_of = number("multipleOf")
        .map(|n| (Num::of(&n), n))
        .filter(|(step, _)| step.compare(Num::Int(0)) == Some(std::cmp::Ordering::Greater))
        .map(|(step, n)| (n, step));
    if lower.is_none() && upper.is_none() && multiple_of.is_none() {
        return None;
    }
    Some(NumberRules::new(lower, upper, multiple_of))
}

fn bound(limit: Number, exclusive: bool) -> Bound {
    Bound {
        at: Num::of(&limit),
        limit,
        exclusive,
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Side {
    Lower,
    Upper,
}

/// Keep whichever bound admits less: the schema's own, or the format's.
fn tighten(current: &mut Option<Bound>, new: Bound, side: Side) {
    use std::cmp::Ordering::{Equal, Greater, Less};
    let tighter = match current {
        None => true,
        Some(old) => match (new.at.compare(old.at), side) {
            (Some(Greater), Side::Lower) | (Some(Less), Side::Upper) => true,
            (Some(Equal), _) => new.exclusive && !old.exclusive,
            _ => false,
        },
    };
    if tighter {
        *current = Some(new);
    }
}

/// A count such as `minLength`: a non-negative integer, possibly written `2.0`.
fn count(keyword: Option<&Value>) -> Option<u64> {
    let n = keyword?.as_number()?;
    n.as_u64().or_else(|| {
        let f = n.as_f64()?;
        // Saturates above u64::MAX, which is as good as no limit.
        (f >= 0.0 && f.fract() == 0.0).then_some(f as u64)
    })
}

/// The sizes a pattern may compile to, smallest first, each what the
/// pattern is charged if it fits. A pattern's compiled automata are bounded
/// by the size it is allowed (the engine's own default is 10 MiB, and a
/// `\w` alone takes 45 KiB): most patterns fit the first.
const PATTERN_TIERS: [usize; 2] = [64 << 10, 1 << 20];

/// The most a pattern's lazily built automaton may keep while it matches
/// (the engine's default is 2 MiB); past it the engine clears it, or
/// matches without it, in time still linear in the text.
const PATTERN_CACHE: usize = 256 << 10;

/// The most a schema's patterns may be charged in all: a server's schema
/// of 5,000 properties with a pattern of some 2 MiB each took 11 GiB to
/// compile. Room for 128 small patterns, or 8 large ones.
const PATTERNS_BUDGET: usize = 8 << 20;

/// The most the patterns of every schema compiled and still alive in the
/// process may be charged in all: a server may list 10,000 tools, each
/// within [`PATTERNS_BUDGET`]. Past it, a schema with one more pattern is
/// refused (its tool is not registered) until others are dropped.
const PROCESS_PATTERNS_BUDGET: usize = 512 << 20;

/// What every live [`PatternCharge`] holds, in all.
static PROCESS_PATTERNS: AtomicUsize = AtomicUsize::new(0);

/// What a schema's compiled patterns are charged, against the process's
/// budget until it is dropped.
#[derive(Debug, Default)]
pub(super) struct PatternCharge(usize);

impl PatternCharge {
    /// Charge `amount` more, if the process's budget has room.
    fn add(&mut self, amount: usize) -> bool {
        let taken = charge(&PROCESS_PATTERNS, PROCESS_PATTERNS_BUDGET, amount);
        if taken {
            self.0 += amount;
        }
        taken
    }

    /// Give back `amount` of what was charged.
    fn give_back(&mut self, amount: usize) {
        let amount = amount.min(self.0);
        self.0 -= amount;
        PROCESS_PATTERNS.fetch_sub(amount, Ordering::Relaxed);
    }
}

/// Add `amount` to `held` if the total stays within `budget`.
fn charge(held: &AtomicUsize, budget: usize, amount: usize) -> bool {
    held.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |now| {
        now.checked_add(amount).filter(|&total| total <= budget)
    })
    .is_ok()
}

impl Drop for PatternCharge {
    fn drop(&mut self) {
        PROCESS_PATTERNS.fetch_sub(self.0, Ordering::Relaxed);
    }
}

impl Compiler<'_> {
    /// `source` compiled as a pattern of the schema at `at`, within what
    /// is left of the schema's [`PATTERNS_BUDGET`] and of the process's.
    fn regex(&mut self, source: &str, at: &str) -> Result<Regex, SchemaError> {
        let left = PATTERNS_BUDGET.saturating_sub(self.patterns.0);
        let mut too_big = None;
        for tier in PATTERN_TIERS {
            if tier > left {
                break;
            }
            // Charged before it is compiled: past the process's budget,
            // nothing more is compiled at all.
            if !self.patterns.add(tier) {
                return Err(SchemaError(format!(
                    "{at}: the pattern {source:?} does not fit what is left of the {} MiB the patterns of every schema in this process may take compiled",
                    PROCESS_PATTERNS_BUDGET >> 20
                )));
            }
            let built = regex::RegexBuilder::new(source)
                .size_limit(tier)
                .dfa_size_limit(PATTERN_CACHE)
                .build();
            match built {
                Ok(regex) => return Ok(regex),
                Err(e) => {
                    self.patterns.give_back(tier);
                    if !matches!(e, regex::Error::CompiledTooBig(_)) {
                        return Err(SchemaError(format!(
                            "{at}: the pattern {source:?} is not a valid regular expression: {e}"
                        )));
                    }
                    too_big = Some(tier);
                }
            }
        }
        Err(SchemaError(match too_big {
            Some(tier) if tier == PATTERN_TIERS[PATTERN_TIERS.len() - 1] => format!(
                "{at}: the pattern {source:?} compiles to more than {} KiB; write a simpler one",
                tier >> 10
            ),
            _ => format!(
                "{at}: the pattern {source:?} does not fit what is left of the {} MiB the schema's patterns may take compiled; the schema has too many or too large patterns",
                PATTERNS_BUDGET >> 20
            ),
        }))
    }
}

/// A name as one JSON pointer step, for locations in error messages.
fn escape(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

/// `%XX` escapes in a URI fragment, as `$ref`s to odd names write them.
fn percent_decode(text: &str) -> Option<String> {
    if !text.contains('%') {
        return Some(text.to_owned());
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if b == b'%' {
            let hex = bytes.get(i + 1..i + 3)?;
            let hex = std::str::from_utf8(hex).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// Refuse schemas that loop without reaching a value (`A = {"$ref": A}`,
/// `A = {"anyOf": [A, ...]}`): walking them would never end. Loops through
/// properties or items are fine: each turn consumes a level of the value.
fn reject_empty_cycles(nodes: &Nodes) -> Result<(), SchemaError> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        Open,
        Done,
    }
    let edges = |id: NodeId| {
        let node = nodes.get(id);
        node.all_of.iter().chain(&node.any_of).copied()
    };
    let mut marks = vec![Mark::New; nodes.nodes.len()];
    for start in 0..nodes.nodes.len() {
        if marks.get(start) != Some(&Mark::New) {
            continue;
        }
        // Depth-first without recursion: each frame is a node and how many
        // of its edges have been followed.
        let mut stack = vec![(start, 0usize)];
        if let Some(m) = marks.get_mut(start) {
            *m = Mark::Open;
        }
        while let Some((id, next)) = stack.last_mut() {
            let id = *id;
            match edges(id).nth(*next) {
                Some(child) => {
                    *next += 1;
                    match marks.get(child) {
                        Some(Mark::Open) => {
                            return Err(SchemaError(
                                "the schema refers to itself without ever reaching a value (a $ref, allOf or anyOf loop)".to_owned(),
                            ));
                        }
                        Some(Mark::New) => {
                            if let Some(m) = marks.get_mut(child) {
                                *m = Mark::Open;
                            }
                            stack.push((child, 0));
                        }
                        _ => {}
                    }
                }
                None => {
                    if let Some(m) = marks.get_mut(id) {
                        *m = Mark::Done;
                    }
                    stack.pop();
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
#[path = "tests/compile.rs"]
mod tests;

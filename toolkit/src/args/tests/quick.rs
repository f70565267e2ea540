//! Tests of `args::quick`.

use super::super::cast::{cast_trying_every_branch, cast_within};
use super::super::node::MAX_DEPTH;
use super::super::validate::tests::{deep_misfit, exponential_schema};
use super::super::validate::validate_within;
use super::super::{ArgumentSchema, Cast};
use super::*;
use crate::error::ArgumentError;
use serde_json::{Map, json};

type Outcome = (Value, Result<Vec<Cast>, Vec<ArgumentError>>);

/// Steps 3 and 4 the long way: cast, then validate.
fn slow(schema: &ArgumentSchema, mut args: Value) -> Outcome {
    let casts = schema.cast(&mut args);
    let result = schema.validate(&args).map(|()| casts);
    (args, result)
}

/// Steps 3 and 4 through the entry point the registry uses.
fn checked(schema: &ArgumentSchema, mut args: Value) -> Outcome {
    let result = schema.check(&mut args);
    (args, result)
}

/// Whether the long way, within `steps` for each walk, finds nothing to
/// cast and nothing wrong.
fn slow_is_clean_within(nodes: &Nodes, value: &Value, steps: u32) -> bool {
    let mut copy = value.clone();
    cast_within(nodes, &mut copy, &Budget::with_steps(steps)).is_empty()
        && validate_within(nodes, value, &Budget::with_steps(steps)).is_ok()
}

/// The check and the long way agree on `args`, and the check calls clean
/// exactly what the long way neither touches nor reports.
fn agree(schema: &ArgumentSchema, args: &Value) {
    let expected = slow(schema, args.clone());
    assert_eq!(
        checked(schema, args.clone()),
        expected,
        "check and cast + validate disagree on {args}"
    );
    assert_eq!(
        is_clean(&schema.nodes, args),
        expected == (args.clone(), Ok(Vec::new())),
        "the fast check and the long way disagree on whether {args} is clean"
    );
    // Without the list of casts, the arguments and the verdict are the same.
    let mut unlogged = args.clone();
    let result = schema.check_unlogged(&mut unlogged);
    assert_eq!(
        (unlogged, result),
        (expected.0, expected.1.map(drop)),
        "the check with and without its list of casts disagree on {args}"
    );
}

fn forecast() -> Value {
    json!({
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "The city."},
            "days": {"type": "integer", "format": "uint32", "minimum": 1, "maximum": 14},
            "metric": {"type": "boolean"}
        },
        "required": ["city", "days", "metric"],
        "additionalProperties": false
    })
}

/// What schemars writes for a struct with every shape this module handles.
fn schemars_args() -> Value {
    #[derive(schemars::JsonSchema)]
    #[allow(dead_code)]
    struct Inner {
        flags: Vec<String>,
        level: u8,
    }
    /// How hard to try.
    #[derive(schemars::JsonSchema)]
    #[allow(dead_code)]
    enum Effort {
        /// Quick and rough.
        Low,
        /// Slow and careful.
        High,
    }
    #[derive(schemars::JsonSchema)]
    #[allow(dead_code)]
    enum Mode {
        Fast,
        Slow,
    }
    #[derive(schemars::JsonSchema)]
    #[allow(dead_code)]
    struct Tree {
        name: String,
        children: Vec<Tree>,
    }
    #[derive(schemars::JsonSchema)]
    #[allow(dead_code)]
    struct Args {
        small: u8,
        big: i64,
        huge: u64,
        ratio: f32,
        limit: Option<u32>,
        tags: Vec<String>,
        counts: std::collections::HashMap<String, i32>,
        inner: Inner,
        maybe_inner: Option<Inner>,
        effort: Effort,
        mode: Option<Mode>,
        tree: Tree,
    }
    serde_json::to_value(schemars::schema_for!(Args)).unwrap()
}

fn schemars_good() -> Value {
    json!({
        "small": 8,
        "big": -5,
        "huge": u64::MAX,
        "ratio": 0.5,
        "limit": null,
        "tags": ["a"],
        "counts": {"a": 1},
        "inner": {"flags": [], "level": 3},
        "maybe_inner": {"flags": ["x"], "level": 0},
        "effort": "Low",
        "mode": "Fast",
        "tree": {"name": "root", "children": [{"name": "kid", "children": []}]}
    })
}

/// Schemas from the module's tests, each with values that are clean
/// (valid, nothing to cast) and values that are not.
fn table() -> Vec<(Value, Vec<Value>, Vec<Value>)> {
    let x = |schema: Value| json!({"type": "object", "properties": {"x": schema}});
    let xs = |values: Vec<Value>| values.into_iter().map(|v| json!({"x": v})).collect();
    vec![
        (
            forecast(),
            vec![
                json!({"city": "Oslo", "days": 3, "metric": true}),
                json!({"metric": false, "city": "", "days": 14}),
                json!({"days": 1, "metric": true, "city": "Bergen"}),
            ],
            vec![
                json!({"city": "Oslo", "days": "3", "metric": "yes"}),
                json!({"city": "Oslo", "days": 3.0, "metric": true}),
                json!({"city": "Oslo", "days": 0, "metric": true}),
                json!({"city": "Oslo", "days": 15, "metric": true}),
                json!({"city": "Oslo", "days": 2.5, "metric": true}),
                json!({"city": "Oslo", "days": 3}),
                json!({"city": "Oslo", "days": 3, "metric": true, "extra": 1}),
                json!({"cty": "Oslo", "days": 3, "metric": true}),
                json!({"city": 5, "days": 3, "metric": true}),
                json!({"city": null, "days": 3, "metric": true}),
                json!({}),
                json!([]),
                json!(null),
                json!("{\"city\": \"Oslo\"}"),
            ],
        ),
        (
            schemars_args(),
            vec![schemars_good(), {
                let mut v = schemars_good();
                v["maybe_inner"] = json!(null);
                v["mode"] = json!(null);
                v
            }],
            vec![
                {
                    let mut v = schemars_good();
                    v["effort"] = json!("Medium");
                    v
                },
                {
                    let mut v = schemars_good();
                    v["maybe_inner"] = json!({"flags": [], "level": "4"});
                    v
                },
                {
                    let mut v = schemars_good();
                    v["maybe_inner"] = json!({"flags": "nope"});
                    v
                },
                {
                    let mut v = schemars_good();
                    v["tree"] = json!({"name": "a", "children": [{"name": 4, "children": "[]"}]});
                    v
                },
                {
                    let mut v = schemars_good();
                    v["counts"] = json!("{\"a\": \"1\"}");
                    v
                },
                {
                    let mut v = schemars_good();
                    v["small"] = json!(256);
                    v["huge"] = json!(-1);
                    v
                },
                {
                    let mut v = schemars_good();
                    v["ratio"] = json!(1e39);
                    v
                },
                {
                    let mut v = schemars_good();
                    v["mode"] = json!("fast");
                    v
                },
                json!({}),
            ],
        ),
        (
            json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string"},
                    "speed": {"enum": ["fast", "slow"]},
                    "timeout": {"type": "integer", "maximum": 600}
                },
                "required": ["path", "speed", "timeout"],
                "additionalProperties": false
            }),
            vec![json!({"path": "a", "speed": "slow", "timeout": 600})],
            vec![
                json!({"apple": 2, "speed": "medium", "timeout": 900, "zebra": 1}),
                json!({"path": "a", "speed": "slow", "timeout": "600"}),
                json!({"pth": "a", "speed": "slow", "timeout": 1}),
            ],
        ),
        (
            json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
            vec![
                json!({"path": "a"}),
                json!({"path": "a", "pth": "b"}),
                json!({"other": 1, "path": "a"}),
            ],
            vec![json!({"pth": "a"}), json!({"other": "a"}), json!({})],
        ),
        (
            json!({"type": "object", "required": ["token"]}),
            vec![json!({"token": 1}), json!({"a": 1, "token": null})],
            vec![json!({}), json!({"tokn": 1})],
        ),
        (
            json!({
                "$ref": "#/$defs/Args",
                "required": ["arguments"],
                "$defs": {"Args": {"properties": {"arguments": {"type": "string"}}}}
            }),
            vec![json!({"arguments": "a"}), json!({"arguments": "a", "b": 1})],
            vec![json!({}), json!({"arguments": 1}), json!({"argument": "a"})],
        ),
        (
            json!({
                "type": "object",
                "properties": {"name": {"type": "string"}},
                "patternProperties": {"^n": {"maxLength": 2}, "^x_": {"type": "integer"}},
                "additionalProperties": false,
                "required": ["x_req"]
            }),
            vec![
                json!({"x_req": 1, "nx": "y"}),
                json!({"x_req": 2, "name": "ab"}),
            ],
            vec![
                json!({"name": "abc", "nx": "y", "other": 1}),
                json!({"x_req": "1"}),
                json!({"x_req": 1.0}),
                json!({"nx": "y"}),
            ],
        ),
        (
            json!({"type": "object", "additionalProperties": {"type": "integer"}, "minProperties": 1, "maxProperties": 2}),
            vec![json!({"a": 1}), json!({"a": 1, "b": -2})],
            vec![
                json!({}),
                json!({"a": 1, "b": 2, "c": 3}),
                json!({"a": "1"}),
                json!({"a": 1.0}),
                json!({"a": 1.5}),
            ],
        ),
        (
            x(
                json!({"type": "array", "minItems": 1, "maxItems": 2, "uniqueItems": true, "items": {"type": "integer"}}),
            ),
            xs(vec![json!([1]), json!([1, 2])]),
            xs(vec![
                json!([]),
                json!([1, 2, 3]),
                json!([1, 1]),
                json!([1, "2"]),
                json!("[1]"),
                json!([1.0]),
            ]),
        ),
        (
            x(
                json!({"prefixItems": [{"type": "string"}, {"type": "integer"}], "items": {"type": "boolean"}}),
            ),
            xs(vec![json!(["a"]), json!(["1", 2, false, true])]),
            xs(vec![
                json!(["1", "2", "no"]),
                json!([1]),
                json!(["a", 2, 3]),
            ]),
        ),
        (
            x(json!({"prefixItems": [{"type": "string"}], "items": false})),
            xs(vec![json!(["a"]), json!([])]),
            xs(vec![json!(["a", 1])]),
        ),
        (
            x(json!({"type": "string", "minLength": 2, "maxLength": 3, "pattern": "^[a-zé]+$"})),
            xs(vec![json!("ab"), json!("ééé")]),
            xs(vec![json!("é"), json!("éééé"), json!("AB"), json!(12)]),
        ),
        (
            x(
                json!({"exclusiveMinimum": 0, "maximum": 10, "exclusiveMaximum": true, "multipleOf": 0.5}),
            ),
            xs(vec![
                json!(0.5),
                json!(9.5),
                json!(1),
                json!("x"),
                json!(null),
            ]),
            xs(vec![json!(0), json!(10), json!(0.3), json!(-1)]),
        ),
        (
            x(json!({"type": "integer", "format": "int64"})),
            xs(vec![json!(i64::MIN), json!(i64::MAX)]),
            xs(vec![
                json!(9_223_372_036_854_775_808_u64),
                json!(1e19),
                json!("5"),
                json!(true),
            ]),
        ),
        (
            x(json!({"type": "number", "format": "float"})),
            xs(vec![json!(1e38), json!(3), json!(30.0)]),
            xs(vec![json!(1e39), json!("2.5"), json!("nan")]),
        ),
        (
            x(json!({"type": ["integer", "null"]})),
            xs(vec![json!(7), json!(null)]),
            xs(vec![json!("7"), json!(7.0), json!(7.5), json!("")]),
        ),
        (
            x(json!({"enum": ["a", "b", 1]})),
            xs(vec![json!("a"), json!(1)]),
            // `1.0` is valid, but becomes `1` where the values are integers.
            xs(vec![json!("c"), json!("1"), json!(2), json!(1.0)]),
        ),
        (
            x(json!({"const": "on"})),
            xs(vec![json!("on")]),
            xs(vec![json!("off"), json!(null)]),
        ),
        (
            x(json!({"type": "string", "nullable": true, "enum": ["a"]})),
            xs(vec![json!("a"), json!(null)]),
            xs(vec![json!("b"), json!(1)]),
        ),
        (
            x(
                json!({"anyOf": [{"type": "string", "maxLength": 2}, {"type": "integer", "minimum": 0}]}),
            ),
            xs(vec![json!("ab"), json!("4x"), json!(4)]),
            xs(vec![json!("abc"), json!(-1), json!(true), json!(4.0)]),
        ),
        (
            x(json!({"anyOf": [{"type": "boolean"}, {"type": "integer"}]})),
            xs(vec![json!(true), json!(5)]),
            xs(vec![json!("5"), json!("1"), json!(5.0), json!("x")]),
        ),
        (
            x(json!({"anyOf": [
                {"type": "string", "maxLength": 2},
                {"type": "string", "pattern": "^[0-9]+$"},
                {"type": "integer"}
            ]})),
            // `"123"` fails the first branch inside, and fits the second.
            xs(vec![json!("ab"), json!(12), json!("123")]),
            xs(vec![json!("abc"), json!("12a")]),
        ),
        (
            x(json!({"oneOf": [{"type": "integer"}, {"minimum": 0}]})),
            xs(vec![json!(3), json!(-3), json!(0.5)]),
            xs(vec![json!(-0.5)]),
        ),
        (
            x(json!({"oneOf": [
                {"type": "string", "const": "Fast", "description": "Go fast."},
                {"type": "string", "const": "Slow", "description": "Go slow."}
            ]})),
            xs(vec![json!("Fast"), json!("Slow")]),
            xs(vec![json!("Medium"), json!(1)]),
        ),
        (
            x(json!({"anyOf": [{"const": "auto"}, {"type": "integer", "minimum": 1}]})),
            xs(vec![json!("auto"), json!(3)]),
            xs(vec![json!(0), json!("manual"), json!(true), json!("3")]),
        ),
        (
            x(json!({"oneOf": [
                {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "boolean"}}, "required": ["a", "b"]},
                {"type": "object", "properties": {"a": {"type": "number"}}, "required": ["a"]}
            ]})),
            // Valid by the second branch, though the first fails inside.
            xs(vec![
                json!({"a": 1, "b": true}),
                json!({"a": 1.5}),
                json!({"a": 1.5, "b": true}),
            ]),
            xs(vec![json!({"a": "1", "b": "maybe"}), json!({})]),
        ),
        (
            json!({
                "type": "object",
                "properties": {"x": {"anyOf": [{"$ref": "#/$defs/S"}, {"type": "null"}]}},
                "$defs": {"S": {"type": "object", "properties": {"n": {"type": "integer"}, "m": {"type": "string"}}, "required": ["n", "m"]}}
            }),
            vec![
                json!({"x": null}),
                json!({"x": {"n": 1, "m": "a"}}),
                json!({}),
            ],
            vec![
                json!({"x": {"n": "4"}}),
                json!({"x": {}}),
                json!({"x": 5}),
                json!({"x": "{\"n\": 1, \"m\": \"a\"}"}),
            ],
        ),
        (
            json!({"allOf": [
                {"properties": {"a": {"type": "integer"}}},
                {"properties": {"b": {"type": "boolean"}}},
                {"properties": {"a": {"maximum": 5}}}
            ]}),
            vec![json!({"a": 1, "b": false}), json!({})],
            vec![
                json!({"a": "1", "b": "no"}),
                json!({"a": 9}),
                json!({"a": 2.0}),
            ],
        ),
        (
            json!({
                "type": "object",
                "properties": {"n": {"$ref": "#/definitions/Small", "minimum": 0}},
                "definitions": {"Small": {"type": "integer", "maximum": 3}}
            }),
            vec![json!({"n": 3}), json!({"n": 0})],
            vec![json!({"n": 4}), json!({"n": -1}), json!({"n": "2"})],
        ),
        (
            json!({
                "$ref": "#/$defs/Node",
                "$defs": {"Node": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string"},
                        "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}
                    },
                    "required": ["name", "children"]
                }}
            }),
            vec![
                json!({"name": "a", "children": [{"name": "b", "children": [{"name": "c", "children": []}]}]}),
            ],
            vec![
                json!({"name": "a", "children": [{"name": "b", "children": [{"name": 3}]}]}),
                json!({"name": "a", "children": "[]"}),
            ],
        ),
        (
            json!({"type": "object", "properties": {"next": {"$ref": "#"}, "v": {"type": "integer"}}}),
            vec![json!({"next": {"next": {"v": 1}}})],
            vec![json!({"next": {"next": {"v": "1"}}})],
        ),
        (
            json!({"properties": {"x": false}, "additionalProperties": true}),
            vec![json!({}), json!({"y": 1})],
            vec![json!({"x": 1})],
        ),
        (
            json!({"type": "object", "properties": {}, "additionalProperties": false}),
            vec![json!({})],
            vec![json!({"x": 1})],
        ),
        (
            json!(true),
            vec![json!({}), json!({"a": "1"}), json!(5)],
            vec![],
        ),
        (json!(false), vec![], vec![json!({})]),
        (
            exponential_schema(),
            vec![json!([[1], []]), json!(3)],
            vec![deep_misfit(3), deep_misfit(60)],
        ),
        (
            json!({"$ref": "#/$defs/L", "$defs": {"L": {"type": ["array", "integer"], "items": {"$ref": "#/$defs/L"}}}}),
            vec![json!([[1], 2]), deep_nest(MAX_DEPTH)],
            vec![
                json!([["1"]]),
                deep_nest(MAX_DEPTH + 1),
                deep_nest(MAX_DEPTH + 5),
            ],
        ),
    ]
}

/// An integer inside `depth` arrays.
fn deep_nest(depth: usize) -> Value {
    let mut value = json!(1);
    for _ in 0..depth {
        value = Value::Array(vec![value]);
    }
    value
}

#[test]
fn clean_calls_take_the_fast_path_and_the_rest_agree() {
    for (raw, clean, other) in table() {
        let schema = ArgumentSchema::compile(&raw).expect("compiles");
        for args in &clean {
            assert!(
                is_clean(&schema.nodes, args),
                "{args} should be clean for {raw}"
            );
            agree(&schema, args);
        }
        for args in &other {
            assert!(
                !is_clean(&schema.nodes, args),
                "{args} should not be clean for {raw}"
            );
            agree(&schema, args);
        }
    }
}

#[test]
fn the_fast_path_runs_out_of_steps_where_the_long_way_does() {
    let mut checked = 0;
    for (raw, clean, _) in table() {
        let schema = ArgumentSchema::compile(&raw).expect("compiles");
        for args in &clean {
            let needed = (0..=Budget::STEPS)
                .find(|&steps| slow_is_clean_within(&schema.nodes, args, steps))
                .expect("clean within the full budget");
            if needed > 2_000 {
                continue;
            }
            for steps in needed.saturating_sub(3)..needed + 3 {
                assert_eq!(
                    is_clean_within(&schema.nodes, args, steps),
                    steps >= needed,
                    "{args} against {raw} within {steps} steps (needs {needed})"
                );
            }
            checked += 1;
        }
    }
    assert!(checked > 40, "{checked}");
}

/// A small deterministic generator (xorshift), so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        usize::try_from(self.next() % n.max(1) as u64).unwrap_or(0)
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// Every property name the schema mentions, and some near misses.
fn names(schema: &Value, into: &mut Vec<String>) {
    match schema {
        Value::Object(map) => {
            for keyword in ["properties", "patternProperties"] {
                if let Some(Value::Object(properties)) = map.get(keyword) {
                    for name in properties.keys() {
                        into.push(name.clone());
                        into.push(format!("{name}_"));
                    }
                }
            }
            if let Some(Value::Array(required)) = map.get("required") {
                into.extend(required.iter().filter_map(Value::as_str).map(str::to_owned));
            }
            map.values().for_each(|v| names(v, into));
        }
        Value::Array(items) => items.iter().for_each(|v| names(v, into)),
        _ => {}
    }
}

fn scalar(rng: &mut Rng) -> Value {
    rng.pick(&[
        json!(null),
        json!(true),
        json!(false),
        json!(0),
        json!(1),
        json!(3),
        json!(-1),
        json!(14),
        json!(15),
        json!(256),
        json!(u64::MAX),
        json!(i64::MIN),
        json!(3.0),
        json!(2.5),
        json!(0.5),
        json!(1e39),
        json!(""),
        json!("a"),
        json!("ab"),
        json!("abc"),
        json!("3"),
        json!("2.5"),
        json!("yes"),
        json!("no"),
        json!("null"),
        json!("Low"),
        json!("Fast"),
        json!("auto"),
        json!("[1]"),
        json!("[]"),
        json!("{}"),
        json!("{\"n\": \"1\"}"),
    ])
    .clone()
}

/// A random value `depth` levels deep at most, with keys from `keys`;
/// mostly an object at the top.
fn value(rng: &mut Rng, keys: &[String], depth: usize) -> Value {
    if depth == 0 {
        return scalar(rng);
    }
    match rng.below(6) {
        0 | 1 => scalar(rng),
        2 => {
            let len = rng.below(4);
            Value::Array((0..len).map(|_| value(rng, keys, depth - 1)).collect())
        }
        _ => {
            let len = rng.below(5);
            let mut map = Map::new();
            for _ in 0..len {
                map.insert(rng.pick(keys).clone(), value(rng, keys, depth - 1));
            }
            Value::Object(map)
        }
    }
}

/// `value` with one random change somewhere inside: a leaf replaced, a
/// key dropped or added, or the keys of an object reordered.
fn mutate(rng: &mut Rng, value: &mut Value, keys: &[String]) {
    match value {
        Value::Object(map) if !map.is_empty() && rng.below(3) > 0 => {
            let index = rng.below(map.len());
            match rng.below(5) {
                0 => {
                    let key = map.keys().nth(index).cloned().unwrap_or_default();
                    map.remove(&key);
                }
                1 => {
                    map.insert(rng.pick(keys).clone(), scalar(rng));
                }
                2 => {
                    let mut entries: Vec<_> = std::mem::take(map).into_iter().collect();
                    entries.rotate_left(1);
                    map.extend(entries);
                }
                _ => {
                    if let Some(child) = map.values_mut().nth(index) {
                        mutate(rng, child, keys);
                    }
                }
            }
        }
        Value::Array(items) if !items.is_empty() && rng.below(3) > 0 => {
            let index = rng.below(items.len());
            match rng.below(4) {
                0 => {
                    items.remove(index);
                }
                1 => items.push(scalar(rng)),
                _ => mutate(rng, &mut items[index], keys),
            }
        }
        _ => *value = scalar(rng),
    }
}

/// Casting with the shortcut that skips branches which cannot change
/// the value gives what trying every branch on a copy gives.
fn cast_agrees_with_trying_every_branch(nodes: &Nodes, args: &Value) {
    let (mut quick, mut full) = (args.clone(), args.clone());
    let casts = cast_within(nodes, &mut quick, &Budget::new());
    let expected = cast_trying_every_branch(nodes, &mut full, &Budget::new());
    assert_eq!((quick, casts), (full, expected), "{args}");
}

#[test]
fn skipping_branches_that_cannot_cast_changes_no_cast() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut runs = 0;
    for (raw, good, bad) in table() {
        let schema = ArgumentSchema::compile(&raw).expect("compiles");
        let mut keys = vec!["arguments".to_owned(), "zzz".to_owned()];
        names(&raw, &mut keys);
        let seeds: Vec<Value> = good
            .iter()
            .chain(&bad)
            .filter(|v| *v != &deep_misfit(60))
            .cloned()
            .collect();
        for args in &seeds {
            cast_agrees_with_trying_every_branch(&schema.nodes, args);
        }
        for round in 0..200 {
            let args = if round % 2 == 0 && !seeds.is_empty() {
                let mut args = rng.pick(&seeds).clone();
                mutate(&mut rng, &mut args, &keys);
                args
            } else {
                value(&mut rng, &keys, 3)
            };
            cast_agrees_with_trying_every_branch(&schema.nodes, &args);
            runs += 1;
        }
    }
    assert!(runs > 1000, "{runs}");
}

#[test]
fn generated_values_agree() {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let (mut runs, mut clean, mut flat) = (0, 0, 0);
    for (raw, good, bad) in table() {
        let schema = ArgumentSchema::compile(&raw).expect("compiles");
        let mut keys = vec!["arguments".to_owned(), "zzz".to_owned()];
        names(&raw, &mut keys);
        // Values that use up the work budget cost a second each in a
        // debug build; the table has them already.
        let seeds: Vec<Value> = good
            .iter()
            .chain(&bad)
            .filter(|v| *v != &deep_misfit(60))
            .cloned()
            .collect();
        for round in 0..400 {
            let args = if round % 2 == 0 && !seeds.is_empty() {
                let mut args = rng.pick(&seeds).clone();
                for _ in 0..=rng.below(2) {
                    mutate(&mut rng, &mut args, &keys);
                }
                args
            } else {
                value(&mut rng, &keys, 3)
            };
            agree(&schema, &args);
            runs += 1;
            clean += usize::from(is_clean(&schema.nodes, &args));
            // `agree` holds the flat root's yes to the long way's too.
            flat += usize::from(matches!(
                (&schema.nodes.flat_root, &args),
                (Some(root), Value::Object(map)) if root.admits(map)
            ));
        }
    }
    // Enough of each kind to mean something.
    assert!(clean > runs / 20, "{clean} clean of {runs}");
    assert!(
        flat > runs / 100,
        "{flat} told clean without the walk, of {runs}"
    );
}

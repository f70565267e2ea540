//! Tests of `args::flat`. That it says yes only where the walk would is
//! checked with the walk's own tests: `quick`'s generated values go through
//! `is_clean`, which asks a flat root first.

use super::*;
use crate::args::ArgumentSchema;
use serde_json::json;

fn flat(schema: Value) -> Option<FlatRoot> {
    FlatRoot::of(&ArgumentSchema::compile(&schema).unwrap().nodes)
}

fn forecast() -> FlatRoot {
    flat(json!({"type": "object", "properties": {
        "city": {"type": "string"},
        "days": {"type": "integer", "format": "uint32", "minimum": 1, "maximum": 14},
        "metric": {"type": "boolean"},
        "note": {"type": ["string", "null"]}
    }, "required": ["city", "days", "metric"]}))
    .expect("a flat root")
}

fn map(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => unreachable!(),
    }
}

#[test]
fn a_well_typed_call_in_declared_order_is_admitted() {
    let root = forecast();
    for call in [
        json!({"city": "Oslo", "days": 3, "metric": true}),
        json!({"city": "", "days": 14, "metric": false, "note": null}),
        json!({"city": "Oslo", "days": 1, "metric": true, "note": "x"}),
    ] {
        assert!(root.admits(&map(call.clone())), "{call}");
    }
}

#[test]
fn anything_else_is_left_to_the_walk() {
    let root = forecast();
    for call in [
        // Out of range, a float, an integral float, a string to cast.
        json!({"city": "Oslo", "days": 0, "metric": true}),
        json!({"city": "Oslo", "days": 15, "metric": true}),
        json!({"city": "Oslo", "days": 3.5, "metric": true}),
        json!({"city": "Oslo", "days": 3.0, "metric": true}),
        json!({"city": "Oslo", "days": "3", "metric": true}),
        json!({"city": "Oslo", "days": 3, "metric": "yes"}),
        json!({"city": 7, "days": 3, "metric": true}),
        json!({"city": null, "days": 3, "metric": true}),
        // A key out of order, one undeclared, one missing, one twice as
        // a near miss.
        json!({"days": 3, "city": "Oslo", "metric": true}),
        json!({"city": "Oslo", "days": 3, "metric": true, "extra": 1}),
        json!({"city": "Oslo", "metric": true}),
        json!({"city": "Oslo", "days": 3, "metric": true, "note": 1}),
        json!({"City": "Oslo", "days": 3, "metric": true}),
        json!({}),
    ] {
        assert!(!root.admits(&map(call.clone())), "{call}");
    }
}

#[test]
fn only_roots_whose_rules_are_their_properties_types_are_flat() {
    let object = |properties: Value| json!({"type": "object", "properties": properties});
    assert!(
        flat(object(
            json!({"a": {"type": "string"}, "b": {"type": "integer"}})
        ))
        .is_some()
    );
    for not_flat in [
        // A property the walk must look into.
        object(json!({"a": {"type": "string", "minLength": 2}})),
        object(json!({"a": {"type": "integer", "multipleOf": 2}})),
        object(json!({"a": {"enum": ["x", "y"]}})),
        object(json!({"a": {"anyOf": [{"type": "string"}, {"type": "null"}]}})),
        object(json!({"a": {"type": "array"}})),
        object(json!({"a": {"type": "object"}})),
        // A root with rules beyond its properties.
        json!({"type": "object", "properties": {"a": {"type": "string"}}, "minProperties": 1}),
        json!({"type": "object", "patternProperties": {"^x": {}}}),
        json!({"type": "object", "required": ["elsewhere"]}),
        json!({"type": "object", "allOf": [{"type": "object"}]}),
        json!({"type": "object", "enum": [{}]}),
    ] {
        assert!(flat(not_flat.clone()).is_none(), "{not_flat}");
    }
    let many: Map<String, Value> = (0..=MAX_PROPERTIES)
        .map(|i| (format!("p{i}"), json!({"type": "string"})))
        .collect();
    assert!(flat(object(Value::Object(many))).is_none());
}

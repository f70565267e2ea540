//! Reading by [`Fields`] against serde's derive, on the same inputs: the
//! same values and the same errors, word for word.

use super::*;
use serde::Deserialize;
use serde_json::{Value, json};

fn three() -> u32 {
    3
}

/// What a derived arguments struct of the same parameters reads.
#[derive(Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
struct Derived {
    city: String,
    #[serde(default = "three")]
    days: u32,
    #[serde(rename = "metric-units")]
    metric: Option<bool>,
    tags: Vec<String>,
    extra: Option<Value>,
    any: Value,
}

type Tuple6 = (String, u32, Option<bool>, Vec<String>, Option<Value>, Value);

const FIELDS: Fields<Tuple6> = Fields::new(
    &["city", "days", "metric-units", "tags", "extra", "any"],
    (None, Some(three as fn() -> u32), None, None, None, None),
);

fn as_tuple(d: Derived) -> Tuple6 {
    (d.city, d.days, d.metric, d.tags, d.extra, d.any)
}

/// serde's error, with what a derived struct says it expects in the words
/// `Fields` uses instead (the only difference allowed).
fn derived_error(e: serde_json::Error) -> String {
    e.to_string()
        .replace("struct Derived", "an object of the tool's arguments")
}

/// Both readings of one JSON value.
fn both(value: &Value) -> (Result<Tuple6, String>, Result<Tuple6, String>) {
    let derived = serde_json::from_value::<Derived>(value.clone())
        .map(as_tuple)
        .map_err(derived_error);
    let fields = FIELDS.read(value.clone()).map_err(|e| e.to_string());
    (derived, fields)
}

fn corpus() -> Vec<Value> {
    let full = json!({"city": "Oslo", "days": 5, "metric-units": true, "tags": ["a"], "extra": 1, "any": null});
    let mut cases = vec![
        full.clone(),
        // Missing: with a default, an Option, a Value, and a required one.
        json!({"city": "Oslo", "tags": [], "any": 1}),
        json!({"tags": [], "any": 1}),
        json!({"city": "Oslo", "tags": []}),
        json!({"city": "Oslo", "any": {}}),
        json!({}),
        // Null where an Option, a Value or a plain type is.
        json!({"city": "Oslo", "tags": [], "any": null, "metric-units": null, "extra": null}),
        json!({"city": null, "tags": [], "any": 1}),
        json!({"city": "Oslo", "days": null, "tags": [], "any": 1}),
        // Wrong types, out of range, nested.
        json!({"city": 1, "tags": [], "any": 1}),
        json!({"city": "Oslo", "days": -1, "tags": [], "any": 1}),
        json!({"city": "Oslo", "days": 4294967296u64, "tags": [], "any": 1}),
        json!({"city": "Oslo", "days": 2.5, "tags": [], "any": 1}),
        json!({"city": "Oslo", "days": "3", "tags": [], "any": 1}),
        json!({"city": "Oslo", "tags": [1], "any": 1}),
        json!({"city": "Oslo", "tags": "a", "any": 1}),
        json!({"city": "Oslo", "tags": [], "any": [[[[{"deep": [1]}]]]]}),
        // Names: unknown, the Rust name of a renamed one, case, spaces,
        // a lookalike, empty.
        json!({"city": "Oslo", "tags": [], "any": 1, "unknown": 1}),
        json!({"city": "Oslo", "tags": [], "any": 1, "metric": true}),
        json!({"City": "Oslo", "tags": [], "any": 1}),
        json!({"city ": "Oslo", "tags": [], "any": 1}),
        json!({"cіty": "Oslo", "tags": [], "any": 1}),
        json!({"": 1}),
        // Not an object at all.
        json!(null),
        json!("city"),
        json!(7),
        json!(-2.5),
        json!(true),
    ];
    // Each key of the full call left out in turn.
    for key in full.as_object().unwrap().keys() {
        let mut one_less = full.clone();
        one_less.as_object_mut().unwrap().remove(key);
        cases.push(one_less);
    }
    cases
}

#[test]
fn reads_what_serdes_derive_reads_and_refuses_what_it_refuses() {
    let cases = corpus();
    for value in &cases {
        let (derived, fields) = both(value);
        assert_eq!(fields, derived, "for {value}");
    }
    // Some of each outcome, so the comparison compares something.
    let outcomes: Vec<bool> = cases.iter().map(|v| both(v).1.is_ok()).collect();
    assert!(outcomes.iter().filter(|ok| **ok).count() >= 4);
    assert!(outcomes.iter().filter(|ok| !**ok).count() >= 15);
}

#[test]
fn arrays_are_not_read_by_position() {
    // A derived struct reads `[..]` by position; the tool's arguments are
    // an object (the schema says so), and only an object is read.
    let err = FIELDS
        .read(json!(["Oslo", 3, true, [], null, 1]))
        .unwrap_err()
        .to_string();
    assert!(err.contains("an object of the tool's arguments"), "{err}");
}

#[test]
fn no_parameters_take_an_empty_object_only() {
    const NONE: Fields<()> = Fields::new(&[], ());
    NONE.read(json!({})).unwrap();
    let err = NONE.read(json!({"a": 1})).unwrap_err().to_string();
    assert_eq!(err, "unknown field `a`, there are no fields");
}

//! Casting and validation against what schemars 1.x really emits: type
//! arrays for `Option`, `$defs` and `$ref`s, numeric `format`s with partial
//! bounds, `oneOf` of `const`s for documented enums, recursive `$ref`s.

use std::collections::HashMap;

use schemars::{JsonSchema, schema_for};
use serde_json::{Value, json};

use super::ArgumentSchema;

#[derive(JsonSchema)]
#[allow(dead_code)]
struct Inner {
    flags: Vec<String>,
    level: u8,
}

/// How hard to try.
#[derive(JsonSchema)]
#[allow(dead_code)]
enum Effort {
    /// Quick and rough.
    Low,
    /// Slow and careful.
    High,
}

#[derive(JsonSchema)]
#[allow(dead_code)]
struct Tree {
    name: String,
    children: Vec<Tree>,
}

#[derive(JsonSchema)]
#[allow(dead_code)]
struct Args {
    small: u8,
    big: i64,
    huge: u64,
    ratio: f32,
    limit: Option<u32>,
    tags: Vec<String>,
    counts: HashMap<String, i32>,
    inner: Inner,
    maybe_inner: Option<Inner>,
    effort: Effort,
    tree: Tree,
}

fn schema() -> (Value, ArgumentSchema) {
    let raw = serde_json::to_value(schema_for!(Args)).expect("schema serializes");
    let compiled = ArgumentSchema::compile(&raw).expect("schemars output compiles");
    (raw, compiled)
}

fn good() -> Value {
    json!({
        "small": 8,
        "big": -5,
        "huge": u64::MAX,
        "ratio": 0.5,
        "limit": null,
        "tags": ["a"],
        "counts": {"a": 1},
        "inner": {"flags": [], "level": 3},
        "maybe_inner": null,
        "effort": "Low",
        "tree": {"name": "root", "children": []}
    })
}

fn errors(schema: &ArgumentSchema, args: &Value) -> Vec<String> {
    match schema.validate(args) {
        Ok(()) => Vec::new(),
        Err(errors) => errors.iter().map(ToString::to_string).collect(),
    }
}

fn with(changes: Value) -> Value {
    let mut args = good();
    if let (Value::Object(args), Value::Object(changes)) = (&mut args, changes) {
        args.extend(changes);
    }
    args
}

#[test]
fn the_schema_has_the_shapes_this_module_is_built_for() {
    let (raw, _) = schema();
    let properties = &raw["properties"];
    assert_eq!(properties["limit"]["type"], json!(["integer", "null"]));
    assert_eq!(properties["small"]["format"], json!("uint8"));
    assert_eq!(
        properties["big"].get("minimum"),
        None,
        "int64 carries no bounds of its own"
    );
    assert_eq!(properties["inner"]["$ref"], json!("#/$defs/Inner"));
    assert!(properties["maybe_inner"]["anyOf"].is_array());
    assert!(raw["$defs"]["Effort"]["oneOf"].is_array());
    assert_eq!(
        raw["$defs"]["Tree"]["properties"]["children"]["items"]["$ref"],
        json!("#/$defs/Tree")
    );
}

#[test]
fn a_good_call_is_valid_and_needs_no_casts() {
    let (_, schema) = schema();
    let mut args = good();
    assert!(schema.cast(&mut args).is_empty());
    assert_eq!(args, good());
    assert_eq!(errors(&schema, &args), Vec::<String>::new());
    assert!(schema.has_parameter("maybe_inner"));
    assert!(!schema.has_parameter("name"));
}

#[test]
fn stringly_typed_calls_are_cast_everywhere() {
    let (_, schema) = schema();
    let mut args = with(json!({
        "small": "8",
        "big": "-5",
        "ratio": "0.5",
        "limit": "10",
        "counts": "{\"a\": \"1\"}",
        "inner": {"flags": [], "level": 3.0},
        "maybe_inner": {"flags": [], "level": "4"},
        "tree": {"name": "root", "children": [{"name": "kid", "children": "[]"}]}
    }));
    let casts: Vec<String> = schema
        .cast(&mut args)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(errors(&schema, &args), Vec::<String>::new());
    assert_eq!(args["small"], json!(8));
    assert_eq!(args["limit"], json!(10));
    assert_eq!(args["counts"], json!({"a": 1}));
    assert_eq!(args["inner"]["level"], json!(3));
    assert_eq!(args["maybe_inner"]["level"], json!(4));
    assert_eq!(args["tree"]["children"][0]["children"], json!([]));
    for expected in [
        r#"small: string "8" -> integer"#,
        r#"big: string "-5" -> integer"#,
        r#"ratio: string "0.5" -> number"#,
        r#"limit: string "10" -> integer"#,
        r#"counts: string "{\"a\": \"1\"}" -> object"#,
        r#"counts.a: string "1" -> integer"#,
        "inner.level: number 3.0 -> integer",
        r#"maybe_inner.level: string "4" -> integer"#,
        r#"tree.children[0].children: string "[]" -> array"#,
    ] {
        assert!(
            casts.contains(&expected.to_owned()),
            "missing {expected} in {casts:#?}"
        );
    }
    assert_eq!(casts.len(), 9);
}

#[test]
fn format_ranges_guard_what_serde_would_reject() {
    let (_, schema) = schema();
    let args = with(json!({
        "small": 256,
        "big": 9_223_372_036_854_775_808_u64,
        "huge": -1,
        "ratio": 1e39,
        "limit": -1,
        "counts": {"a": 2_147_483_648_i64}
    }));
    assert_eq!(
        errors(&schema, &args),
        [
            "small must be <= 255",
            "big must be <= 9223372036854775807",
            "huge must be >= 0",
            "ratio must be <= 3.4028234663852886e+38",
            "limit must be >= 0",
            "counts.a must be <= 2147483647",
        ]
    );
}

#[test]
fn nested_and_optional_structs_report_precise_paths() {
    let (_, schema) = schema();
    let args = with(json!({
        "inner": {"flags": [1], "level": 3},
        "maybe_inner": {"flags": "nope"},
        "tags": "a"
    }));
    assert_eq!(
        errors(&schema, &args),
        [
            r#"tags should be array, got string "a""#,
            "inner.flags[0] should be string, got integer 1",
            r#"maybe_inner.flags should be array, got string "nope""#,
            "maybe_inner.level is required",
        ]
    );
    let args = with(json!({"maybe_inner": 5}));
    assert_eq!(
        errors(&schema, &args),
        ["maybe_inner should be object or null, got integer 5"]
    );
}

#[test]
fn documented_enums_list_their_values() {
    let (_, schema) = schema();
    let args = with(json!({"effort": "Medium"}));
    assert_eq!(
        errors(&schema, &args),
        [r#"effort must be one of "Low", "High""#]
    );
}

#[test]
fn errors_follow_the_declared_field_order() {
    // The workspace turns on serde_json's `preserve_order`, so schemars keeps
    // fields as declared and errors come in that order, not alphabetically.
    let (_, schema) = schema();
    let found = errors(&schema, &json!({}));
    let order: Vec<&str> = found.iter().filter_map(|e| e.split(' ').next()).collect();
    assert_eq!(
        order,
        [
            "small", "big", "huge", "ratio", "tags", "counts", "inner", "effort", "tree"
        ]
    );
}

#[test]
fn missing_fields_are_all_required() {
    let (_, schema) = schema();
    let found = errors(&schema, &json!({}));
    for name in [
        "small", "big", "huge", "ratio", "tags", "counts", "inner", "effort", "tree",
    ] {
        assert!(
            found.contains(&format!("{name} is required")),
            "{name}: {found:?}"
        );
    }
    assert!(
        !found
            .iter()
            .any(|e| e.starts_with("limit") || e.starts_with("maybe_inner"))
    );
}

#[test]
fn a_recursive_tree_validates_three_levels_down() {
    let (_, schema) = schema();
    let deep = json!({"name": "a", "children": [{"name": "b", "children": [{"name": "c", "children": [{"name": 4}]}]}]});
    let args = with(json!({"tree": deep}));
    assert_eq!(
        errors(&schema, &args),
        [
            "tree.children[0].children[0].children[0].name should be string, got integer 4",
            "tree.children[0].children[0].children[0].children is required",
        ]
    );
}

#[test]
fn bools_are_not_numbers_even_in_schemars_schemas() {
    let (_, schema) = schema();
    let mut args = with(json!({"small": true}));
    assert!(schema.cast(&mut args).is_empty());
    assert_eq!(
        errors(&schema, &args),
        ["small should be integer, got boolean true"]
    );
}

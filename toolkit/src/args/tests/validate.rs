//! Tests of `args::validate`, and through it of the rules of `args::walk`.

use super::super::compile::compile;
use super::super::node::MAX_DEPTH;
use super::super::sink::MAX_PROBLEMS;
use super::super::walk::{Entries, MAX_LISTED};
use super::*;
use crate::error::Problem;
use serde_json::Map;

#[test]
fn a_report_holds_at_most_fifty_problems_and_fifty_values_each() {
    let values: Vec<String> = (0..1_000).map(|i| format!("v{i}")).collect();
    let schema = json!({"type": "object", "properties": {
        "x": {"type": "array", "items": {"enum": values}}
    }});
    let nodes = super::super::ArgumentSchema::compile(&schema).unwrap();
    let errors = nodes.validate(&json!({"x": vec!["q"; 5_000]})).unwrap_err();
    assert_eq!(errors.len(), MAX_PROBLEMS);
    match &errors[0].problem {
        Problem::NotOneOf(listed) => assert_eq!(listed.len(), MAX_LISTED),
        other => panic!("{other:?}"),
    }
}
use serde_json::json;

/// Every error for `args` against `schema`, as text.
fn errors(schema: Value, args: Value) -> Vec<String> {
    let nodes = compile(&schema).expect("schema compiles");
    match validate(&nodes, &args) {
        Ok(()) => Vec::new(),
        Err(errors) => errors.iter().map(ToString::to_string).collect(),
    }
}

fn valid(schema: Value, args: Value) -> bool {
    errors(schema, args).is_empty()
}

/// The errors for a single property `x` with `schema`.
fn x(schema: Value, value: Value) -> Vec<String> {
    errors(
        json!({"type": "object", "properties": {"x": schema}}),
        json!({"x": value}),
    )
}

#[test]
fn a_valid_call_has_no_errors() {
    let schema = json!({
        "type": "object",
        "properties": {"path": {"type": "string"}, "limit": {"type": "integer", "minimum": 1}},
        "required": ["path"],
        "additionalProperties": false
    });
    assert!(valid(schema.clone(), json!({"path": "a", "limit": 3})));
    assert!(valid(schema, json!({"path": "a"})));
}

#[test]
fn wrong_types_say_what_was_wanted_and_sent() {
    assert_eq!(
        x(json!({"type": "integer"}), json!("abc")),
        [r#"x should be integer, got string "abc""#]
    );
    assert_eq!(
        x(json!({"type": ["string", "null"]}), json!(true)),
        ["x should be string or null, got boolean true"]
    );
    assert_eq!(
        x(json!({"type": "string"}), json!({"a": 1})),
        ["x should be string, got an object"]
    );
    assert_eq!(
        x(json!({"type": "object"}), json!([1])),
        ["x should be object, got an array"]
    );
    assert_eq!(
        x(json!({"type": "integer"}), json!(2.5)),
        ["x should be integer, got number 2.5"]
    );
    assert_eq!(
        x(json!({"type": "boolean"}), json!(null)),
        ["x should be boolean, got null"]
    );
}

#[test]
fn long_values_are_cut_in_messages() {
    let long = "a".repeat(100);
    let message = &x(json!({"type": "integer"}), json!(long))[0];
    assert!(message.len() < 90, "{message}");
    assert!(message.ends_with("…\""), "{message}");
}

#[test]
fn integral_floats_are_integers() {
    assert!(x(json!({"type": "integer"}), json!(30.0)).is_empty());
    assert!(x(json!({"type": "number"}), json!(3)).is_empty());
}

#[test]
fn missing_required_values_are_reported_at_their_path() {
    let schema =
        json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]});
    assert_eq!(errors(schema, json!({})), ["path is required"]);
    let nested = json!({
        "type": "object",
        "properties": {"meta": {"type": "object", "properties": {"id": {}}, "required": ["id"]}}
    });
    assert_eq!(errors(nested, json!({"meta": {}})), ["meta.id is required"]);
    let elsewhere = json!({"type": "object", "required": ["token"]});
    assert_eq!(errors(elsewhere, json!({})), ["token is required"]);
}

#[test]
fn numeric_bounds() {
    let schema = json!({"type": "integer", "minimum": 1, "maximum": 600});
    assert_eq!(
        errors(
            json!({"type": "object", "properties": {"timeout": schema}}),
            json!({"timeout": 601})
        ),
        ["timeout must be <= 600"]
    );
    assert_eq!(x(schema.clone(), json!(0)), ["x must be >= 1"]);
    assert!(x(schema.clone(), json!(600)).is_empty());
    assert!(x(schema, json!(1)).is_empty());
}

#[test]
fn exclusive_bounds_exclude_the_limit() {
    let modern = json!({"exclusiveMinimum": 0, "exclusiveMaximum": 1});
    assert_eq!(x(modern.clone(), json!(0)), ["x must be > 0"]);
    assert_eq!(x(modern.clone(), json!(1.0)), ["x must be < 1"]);
    assert!(x(modern, json!(0.5)).is_empty());
    let draft4 =
        json!({"minimum": 0, "exclusiveMinimum": true, "maximum": 10, "exclusiveMaximum": true});
    assert_eq!(x(draft4.clone(), json!(0)), ["x must be > 0"]);
    assert_eq!(x(draft4.clone(), json!(10)), ["x must be < 10"]);
    assert!(x(draft4, json!(9.99)).is_empty());
}

#[test]
fn bounds_compare_exactly_at_the_edges_of_u64_and_i64() {
    let uint64 = json!({"type": "integer", "format": "uint64"});
    assert!(x(uint64.clone(), json!(u64::MAX)).is_empty());
    assert_eq!(x(uint64.clone(), json!(-1)), ["x must be >= 0"]);
    assert_eq!(
        x(uint64, json!(1e20)),
        ["x must be <= 18446744073709551615"]
    );
    let int64 = json!({"type": "integer", "format": "int64"});
    assert!(x(int64.clone(), json!(i64::MIN)).is_empty());
    assert_eq!(
        x(int64.clone(), json!(9_223_372_036_854_775_808_u64)),
        ["x must be <= 9223372036854775807"]
    );
    assert_eq!(
        x(
            json!({"maximum": 9_223_372_036_854_775_807_i64}),
            json!(9_223_372_036_854_775_808_u64)
        )
        .len(),
        1
    );
    assert!(
        x(
            json!({"minimum": 9_223_372_036_854_775_808_u64}),
            json!(u64::MAX)
        )
        .is_empty()
    );
}

#[test]
fn format_ranges_apply_without_explicit_bounds() {
    assert_eq!(
        x(json!({"type": "integer", "format": "uint8"}), json!(256)),
        ["x must be <= 255"]
    );
    assert_eq!(
        x(json!({"type": "integer", "format": "int8"}), json!(-129)),
        ["x must be >= -128"]
    );
    assert_eq!(
        x(json!({"type": "integer", "format": "uint32"}), json!(-1)),
        ["x must be >= 0"]
    );
    assert_eq!(
        x(json!({"type": "integer", "format": "int16"}), json!(40_000)),
        ["x must be <= 32767"]
    );
    assert_eq!(
        x(json!({"type": "number", "format": "float"}), json!(1e39)).len(),
        1
    );
    assert!(x(json!({"type": "number", "format": "float"}), json!(1e38)).is_empty());
}

#[test]
fn multiple_of() {
    assert_eq!(
        x(json!({"multipleOf": 5}), json!(12)),
        ["x must be a multiple of 5"]
    );
    assert!(x(json!({"multipleOf": 5}), json!(15)).is_empty());
    assert!(x(json!({"multipleOf": 0.01}), json!(0.07)).is_empty());
    assert_eq!(
        x(json!({"multipleOf": 0.5}), json!(0.3)),
        ["x must be a multiple of 0.5"]
    );
}

#[test]
fn string_lengths_count_characters() {
    let schema = json!({"type": "string", "minLength": 2, "maxLength": 3});
    assert!(x(schema.clone(), json!("ééé")).is_empty());
    assert_eq!(
        x(schema.clone(), json!("é")),
        ["x must be at least 2 characters"]
    );
    assert_eq!(x(schema, json!("éééé")), ["x must be at most 3 characters"]);
    assert_eq!(
        x(json!({"minLength": 1}), json!("")),
        ["x must be at least 1 character"]
    );
}

#[test]
fn patterns_search_the_string() {
    let schema = json!({"type": "string", "pattern": "^[a-z]+$"});
    assert!(x(schema.clone(), json!("abc")).is_empty());
    assert_eq!(
        x(schema, json!("ABC")),
        ["x must match the pattern ^[a-z]+$"]
    );
    // Unanchored, as JSON Schema has it.
    assert!(x(json!({"pattern": "b"}), json!("abc")).is_empty());
}

#[test]
fn item_counts_and_uniqueness() {
    let schema = json!({"type": "array", "minItems": 1, "maxItems": 2, "uniqueItems": true});
    assert_eq!(
        x(schema.clone(), json!([])),
        ["x must have at least 1 item"]
    );
    assert_eq!(
        x(schema.clone(), json!([1, 2, 3])),
        ["x must have at most 2 items"]
    );
    assert_eq!(
        x(schema.clone(), json!([1, 1.0])),
        ["x must not repeat items"]
    );
    assert!(x(schema, json!([1, "1"])).is_empty());
}

#[test]
fn property_counts() {
    let schema = json!({"type": "object", "minProperties": 1, "maxProperties": 2});
    assert_eq!(
        x(schema.clone(), json!({})),
        ["x must have at least 1 entry"]
    );
    assert_eq!(
        x(schema, json!({"a": 1, "b": 2, "c": 3})),
        ["x must have at most 2 entries"]
    );
}

#[test]
fn enum_and_const_list_the_allowed_values() {
    assert_eq!(
        x(json!({"enum": ["a", "b", 1]}), json!("c")),
        [r#"x must be one of "a", "b", 1"#]
    );
    assert_eq!(
        x(json!({"const": "on"}), json!("off")),
        [r#"x must be one of "on""#]
    );
    assert!(x(json!({"enum": [1]}), json!(1.0)).is_empty());
}

#[test]
fn unknown_properties_get_a_suggestion() {
    let schema = json!({
        "type": "object",
        "properties": {"limit": {"type": "integer"}, "path": {"type": "string"}},
        "additionalProperties": false
    });
    assert_eq!(
        errors(schema.clone(), json!({"pth": "a"})),
        ["pth is not a parameter of this tool; did you mean 'path'?"]
    );
    assert_eq!(
        errors(schema.clone(), json!({"path": "a", "zzz": 1})),
        ["zzz is not a parameter of this tool; allowed: limit, path"]
    );
    let none = json!({"type": "object", "properties": {}, "additionalProperties": false});
    assert_eq!(
        errors(none, json!({"x": 1})),
        ["x is not a parameter of this tool; it takes no parameters here"]
    );
}

#[test]
fn a_misspelled_required_name_is_pointed_out_even_when_extra_keys_are_allowed() {
    let schema =
        json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]});
    assert_eq!(
        errors(schema.clone(), json!({"pth": "a"})),
        [
            "path is required",
            "pth is not a parameter of this tool; did you mean 'path'?"
        ]
    );
    // Extra keys that are not near misses stay allowed.
    assert_eq!(
        errors(schema.clone(), json!({"other": "a"})),
        ["path is required"]
    );
    assert!(valid(schema, json!({"path": "a", "pth": "b"})));
}

#[test]
fn additional_properties_schemas_apply_to_extra_keys() {
    let schema = json!({"type": "object", "additionalProperties": {"type": "integer"}});
    assert!(valid(schema.clone(), json!({"a": 1, "b": 2})));
    assert_eq!(
        errors(schema, json!({"a": 1, "b": "x"})),
        [r#"b should be integer, got string "x""#]
    );
}

#[test]
fn pattern_properties_apply_to_matching_keys() {
    let schema = json!({
        "type": "object",
        "properties": {"name": {"type": "string"}},
        "patternProperties": {"^n": {"maxLength": 2}},
        "additionalProperties": false
    });
    assert_eq!(
        errors(schema, json!({"name": "abc", "nx": "y", "other": 1})),
        [
            "name must be at most 2 characters",
            "other is not a parameter of this tool; allowed: name",
        ]
    );
}

#[test]
fn nested_paths() {
    let schema = json!({
        "type": "object",
        "properties": {"meta": {
            "type": "object",
            "properties": {"flags": {"type": "array", "items": {"type": "string"}}}
        }}
    });
    assert_eq!(
        errors(schema, json!({"meta": {"flags": [5, "ok", false]}})),
        [
            "meta.flags[0] should be string, got integer 5",
            "meta.flags[2] should be string, got boolean false",
        ]
    );
}

#[test]
fn tuple_items_check_by_position() {
    let schema = json!({"prefixItems": [{"type": "string"}], "items": false});
    assert!(x(schema.clone(), json!(["a"])).is_empty());
    assert_eq!(x(schema, json!(["a", 1])), ["x[1] is not allowed here"]);
}

#[test]
fn all_errors_come_at_once_in_schema_order() {
    let schema = json!({
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "speed": {"enum": ["fast", "slow"]},
            "timeout": {"type": "integer", "maximum": 600}
        },
        "required": ["path", "speed", "timeout"],
        "additionalProperties": false
    });
    // Declared and sent in sorted order, so the test holds with or
    // without serde_json's `preserve_order`.
    let found = errors(
        schema,
        json!({"apple": 2, "speed": "medium", "timeout": 900, "zebra": 1}),
    );
    assert_eq!(
        found,
        [
            "path is required",
            r#"speed must be one of "fast", "slow""#,
            "timeout must be <= 600",
            "apple is not a parameter of this tool; allowed: path, speed, timeout",
            "zebra is not a parameter of this tool; allowed: path, speed, timeout",
        ]
    );
}

#[test]
fn a_false_schema_allows_nothing() {
    assert_eq!(x(json!(false), json!(1)), ["x is not allowed here"]);
    assert!(valid(json!({"properties": {"x": false}}), json!({})));
}

#[test]
fn all_of_needs_every_branch() {
    let schema = json!({"allOf": [{"minimum": 1}, {"maximum": 5}, {"type": "integer"}]});
    assert!(x(schema.clone(), json!(3)).is_empty());
    assert_eq!(x(schema.clone(), json!(9)), ["x must be <= 5"]);
    assert_eq!(
        x(schema, json!(2.5)),
        ["x should be integer, got number 2.5"]
    );
}

#[test]
fn any_of_needs_one_branch() {
    let schema =
        json!({"anyOf": [{"type": "string", "maxLength": 2}, {"type": "integer", "minimum": 0}]});
    assert!(x(schema.clone(), json!("ab")).is_empty());
    assert!(x(schema.clone(), json!(4)).is_empty());
    assert_eq!(x(schema, json!("abc")), ["x must be at most 2 characters"]);
}

#[test]
fn any_of_lists_a_reason_per_branch_when_several_could_fit() {
    let schema = json!({"anyOf": [
        {"type": "string", "maxLength": 2},
        {"type": "string", "pattern": "^[0-9]+$"},
        {"type": "integer"}
    ]});
    assert_eq!(
        x(schema, json!("abc")),
        [
            "x matches none of the allowed forms (x must be at most 2 characters; or x must match the pattern ^[0-9]+$)"
        ]
    );
}

#[test]
fn one_of_is_checked_like_any_of() {
    // Both branches match; exclusivity is deliberately not enforced.
    let schema = json!({"oneOf": [{"type": "integer"}, {"minimum": 0}]});
    assert!(x(schema, json!(3)).is_empty());
}

#[test]
fn any_of_explains_the_one_branch_for_the_type_sent() {
    let schema = json!({"anyOf": [
        {"type": "integer"},
        {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    ]});
    assert_eq!(
        x(schema, json!({"n": "a"})),
        [r#"x.n should be integer, got string "a""#]
    );
    let with_const = json!({"anyOf": [{"const": "auto"}, {"type": "integer", "minimum": 1}]});
    assert_eq!(x(with_const.clone(), json!(0)), ["x must be >= 1"]);
    assert_eq!(
        x(with_const.clone(), json!("manual")),
        [r#"x must be one of "auto""#]
    );
    assert_eq!(
        x(with_const, json!(true)),
        ["x should be string or integer, got boolean true"]
    );
}

#[test]
fn any_of_with_only_wrong_types_names_them_together() {
    let schema = json!({"anyOf": [{"type": "string"}, {"type": "integer"}]});
    assert_eq!(
        x(schema, json!(true)),
        ["x should be string or integer, got boolean true"]
    );
}

#[test]
fn option_of_a_struct_reports_the_struct_errors() {
    let schema = json!({
        "type": "object",
        "properties": {"x": {"anyOf": [{"$ref": "#/$defs/S"}, {"type": "null"}]}},
        "$defs": {"S": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}}
    });
    assert!(valid(schema.clone(), json!({"x": null})));
    assert!(valid(schema.clone(), json!({"x": {"n": 1}})));
    assert_eq!(
        errors(schema.clone(), json!({"x": {"n": "a"}})),
        [r#"x.n should be integer, got string "a""#]
    );
    assert_eq!(
        errors(schema.clone(), json!({"x": {}})),
        ["x.n is required"]
    );
    assert_eq!(
        errors(schema, json!({"x": 5})),
        ["x should be object or null, got integer 5"]
    );
}

#[test]
fn enum_alternatives_list_every_value() {
    let mode = json!({"oneOf": [
        {"type": "string", "const": "Fast", "description": "Go fast."},
        {"type": "string", "const": "Slow", "description": "Go slow."}
    ]});
    assert_eq!(
        x(mode.clone(), json!("Medium")),
        [r#"x must be one of "Fast", "Slow""#]
    );
    let optional = json!({"anyOf": [mode, {"type": "null"}]});
    assert_eq!(
        x(optional, json!("Medium")),
        [r#"x must be one of "Fast", "Slow", null"#]
    );
}

#[test]
fn nullable_allows_null() {
    assert!(x(json!({"type": "integer", "nullable": true}), json!(null)).is_empty());
    assert!(x(json!({"enum": ["a"], "nullable": true}), json!(null)).is_empty());
}

#[test]
fn refs_validate_like_their_target() {
    let schema = json!({
        "type": "object",
        "properties": {"n": {"$ref": "#/definitions/Small"}},
        "definitions": {"Small": {"type": "integer", "maximum": 3}}
    });
    assert_eq!(errors(schema, json!({"n": 4})), ["n must be <= 3"]);
}

#[test]
fn a_three_deep_recursive_tree_validates() {
    let schema = json!({
        "$ref": "#/$defs/Node",
        "$defs": {"Node": {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}
            },
            "required": ["name", "children"]
        }}
    });
    let tree = json!({"name": "a", "children": [{"name": "b", "children": [{"name": "c", "children": []}]}]});
    assert!(valid(schema.clone(), tree));
    let broken = json!({"name": "a", "children": [{"name": "b", "children": [{"name": 3}]}]});
    assert_eq!(
        errors(schema, broken),
        [
            "children[0].children[0].name should be string, got integer 3",
            "children[0].children[0].children is required"
        ]
    );
}

#[test]
fn odd_keys_are_quoted_in_paths() {
    let schema = json!({"type": "object", "properties": {"a": {"type": "object", "additionalProperties": {"type": "integer"}}}});
    assert_eq!(
        errors(schema, json!({"a": {"odd key": "x"}})),
        [r#"a["odd key"] should be integer, got string "x""#]
    );
}

#[test]
fn values_nested_too_deeply_are_refused() {
    let schema = json!({"$ref": "#/$defs/L", "$defs": {"L": {"type": ["array", "integer"], "items": {"$ref": "#/$defs/L"}}}});
    let mut value = json!(1);
    for _ in 0..(MAX_DEPTH + 5) {
        value = Value::Array(vec![value]);
    }
    let found = errors(schema, value);
    assert_eq!(found.len(), 1);
    assert!(
        found[0].ends_with("is nested more than 128 levels deep"),
        "{}",
        found[0]
    );
}

/// An untagged recursive enum: two branches lead back to the same `anyOf`.
pub(in crate::args) fn exponential_schema() -> Value {
    json!({"$ref": "#/$defs/E", "$defs": {"E": {"anyOf": [
        {"type": "integer"},
        {"type": "array", "items": {"$ref": "#/$defs/E"}},
        {"type": "array", "items": {"$ref": "#/$defs/E"}, "minItems": 1}
    ]}}})
}

pub(in crate::args) fn deep_misfit(depth: usize) -> Value {
    let mut value = json!("x");
    for _ in 0..depth {
        value = Value::Array(vec![value]);
    }
    value
}

#[test]
fn alternatives_that_would_take_exponential_time_are_cut_short() {
    let found = errors(exponential_schema(), deep_misfit(60));
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].contains("too complex to check"), "{}", found[0]);
    // Shallow misfits still get their real message.
    let found = errors(exponential_schema(), deep_misfit(2));
    assert!(!found[0].contains("too complex"), "{}", found[0]);
}

#[test]
fn entries_are_found_in_any_order_and_size() {
    for size in [0, 1, 3, 16, 17, 40] {
        let map: Map<String, Value> = (0..size).map(|i| (format!("k{i}"), json!(i))).collect();
        // Asked in order, in reverse, and for names that are absent.
        let mut names: Vec<String> = (0..size).map(|i| format!("k{i}")).collect();
        names.extend((0..size).rev().map(|i| format!("k{i}")));
        names.extend(["k".to_owned(), format!("k{size}"), String::new()]);
        let mut entries = Entries::new(&map);
        for name in &names {
            assert_eq!(entries.get(name), map.get(name), "{name} of {size}");
        }
    }
}

#[test]
fn is_valid_agrees_with_validate() {
    let schema =
        json!({"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]});
    let nodes = compile(&schema).unwrap();
    for (args, ok) in [
        (json!({"a": 1}), true),
        (json!({}), false),
        (json!({"a": "1"}), false),
    ] {
        assert_eq!(is_valid(&nodes, nodes.root, &args, 0, &Budget::new()), ok);
        assert_eq!(validate(&nodes, &args).is_ok(), ok);
    }
}

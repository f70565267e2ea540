//! Tests of `args::cast`.

use super::super::compile::compile;
use super::*;
use serde_json::json;

/// Cast `args` against `schema`; the result and the casts as text.
fn run(schema: Value, mut args: Value) -> (Value, Vec<String>) {
    let nodes = compile(&schema).expect("schema compiles");
    let casts = cast(&nodes, &mut args);
    (args, casts.iter().map(ToString::to_string).collect())
}

fn property(schema: Value) -> Value {
    json!({"type": "object", "properties": {"x": schema}})
}

/// Cast `x` against `schema` and return the new `x`.
fn x(schema: Value, value: Value) -> Value {
    let (args, _) = run(property(schema), json!({"x": value}));
    args["x"].clone()
}

#[test]
fn a_branch_that_cannot_change_the_value_costs_no_copy() {
    let nodes = compile(&property(json!({"anyOf": [
        {"type": "integer"},
        {"type": "array", "items": {"type": "integer", "minimum": 5}},
        {"type": "object", "properties": {"n": {"type": "boolean"}}}
    ]})))
    .unwrap();
    let big: Vec<Value> = (0..10_000).map(|i| json!(i % 5)).collect();
    for value in [json!("abc"), Value::Array(big), json!({"n": "maybe"})] {
        let mut args = json!({"x": value});
        let before = COPIES.with(std::cell::Cell::get);
        assert!(cast(&nodes, &mut args).is_empty());
        assert_eq!(COPIES.with(std::cell::Cell::get), before, "{}", &args["x"]);
    }
    // A branch that does cast is tried on a copy.
    let mut args = json!({"x": ["7", 8]});
    let before = COPIES.with(std::cell::Cell::get);
    assert_eq!(cast(&nodes, &mut args).len(), 1);
    assert_eq!(args, json!({"x": [7, 8]}));
    assert_eq!(COPIES.with(std::cell::Cell::get), before + 1);
}

#[test]
fn integer_strings_become_integers() {
    let int = json!({"type": "integer"});
    assert_eq!(x(int.clone(), json!("60")), json!(60));
    assert_eq!(x(int.clone(), json!(" 60 ")), json!(60));
    assert_eq!(x(int.clone(), json!("-3")), json!(-3));
    assert_eq!(
        x(int.clone(), json!("18446744073709551615")),
        json!(u64::MAX)
    );
    assert_eq!(x(int, json!("1e3")), json!(1000));
}

#[test]
fn whole_numbers_in_other_forms_become_integers_exactly() {
    for (text, value) in [
        ("30.0", json!(30)),
        ("1e3", json!(1000)),
        ("2.50e1", json!(25)),
        ("1000e-3", json!(1)),
        ("-4.0", json!(-4)),
        ("+7", json!(7)),
        ("0.0", json!(0)),
        ("1.", json!(1)),
        ("1.8446744073709551615e19", json!(u64::MAX)),
    ] {
        assert_eq!(whole_decimal(text), value.as_number().cloned(), "{text}");
    }
    for text in [
        "2.0000000000000001",
        "0.5",
        "1e-3",
        "1e21",
        ".",
        "1e",
        "e5",
        "1.2.3",
        "-",
        "1e99999999999",
    ] {
        assert_eq!(whole_decimal(text), None, "{text}");
    }
}

#[test]
fn number_strings_become_numbers() {
    let num = json!({"type": "number"});
    assert_eq!(x(num.clone(), json!("2.5")), json!(2.5));
    assert_eq!(x(num.clone(), json!("1e3")), json!(1000.0));
    assert_eq!(x(num.clone(), json!("60")), json!(60));
    assert_eq!(x(num, json!("-0.5")), json!(-0.5));
}

#[test]
fn numbers_become_their_text_where_text_is_wanted() {
    let text = json!({"type": "string"});
    assert_eq!(x(text.clone(), json!(4)), json!("4"));
    assert_eq!(x(text.clone(), json!(-12)), json!("-12"));
    assert_eq!(x(text.clone(), json!(2.5)), json!("2.5"));
    assert_eq!(
        x(text.clone(), json!(u64::MAX)),
        json!("18446744073709551615")
    );
    assert_eq!(x(text.clone(), json!(0.000125)), json!("0.000125"));
    // Too long to be sure it prints as it was sent: left for validation.
    let long: Value = serde_json::from_str("12345678901234567890123").unwrap();
    assert_eq!(x(text.clone(), long.clone()), long);
    assert_eq!(x(text.clone(), json!(0.1 + 0.2)), json!(0.1 + 0.2));
    // Booleans and containers are not text.
    assert_eq!(x(text.clone(), json!(true)), json!(true));
    assert_eq!(x(text, json!([1])), json!([1]));
    // An integer is preferred where both are allowed; text is left alone.
    let either = json!({"type": ["integer", "string"]});
    assert_eq!(x(either.clone(), json!(3.0)), json!(3));
    assert_eq!(x(either.clone(), json!(3.5)), json!("3.5"));
    assert_eq!(x(either, json!("7")), json!("7"));
    // A number that is already allowed stays a number.
    assert_eq!(
        x(json!({"type": ["number", "string"]}), json!(2.5)),
        json!(2.5)
    );
}

#[test]
fn a_number_is_not_text_where_another_branch_is_for_numbers() {
    // `#[serde(untagged)] enum Selector { Index(u8), Name(String) }`
    let selector = json!({"anyOf": [
        {"type": "integer", "minimum": 0, "maximum": 255},
        {"type": "string"}
    ]});
    assert_eq!(x(selector.clone(), json!(300)), json!(300));
    assert_eq!(x(selector, json!(7)), json!(7));
    // With no branch for numbers, the text branch takes it.
    let text_or_list = json!({"anyOf": [
        {"type": "string"},
        {"type": "array", "items": {"type": "string"}}
    ]});
    assert_eq!(x(text_or_list, json!(300)), json!("300"));
    // `Option<String>`
    let optional = json!({"anyOf": [{"type": "string"}, {"type": "null"}]});
    assert_eq!(x(optional, json!(4)), json!("4"));
}

#[test]
fn fractions_do_not_become_integers() {
    assert_eq!(x(json!({"type": "integer"}), json!("2.5")), json!("2.5"));
    assert_eq!(x(json!({"type": "integer"}), json!(30.5)), json!(30.5));
}

#[test]
fn non_finite_strings_stay_strings() {
    for text in ["NaN", "nan", "inf", "-inf", "infinity", "Infinity"] {
        assert_eq!(x(json!({"type": "number"}), json!(text)), json!(text));
        assert_eq!(x(json!({"type": "integer"}), json!(text)), json!(text));
    }
}

#[test]
fn overflowing_integer_strings_stay_strings() {
    let int = json!({"type": "integer"});
    assert_eq!(
        x(int.clone(), json!("18446744073709551616")),
        json!("18446744073709551616")
    );
    assert_eq!(
        x(int.clone(), json!("-9223372036854775809")),
        json!("-9223372036854775809")
    );
    assert_eq!(x(int, json!("1e30")), json!("1e30"));
}

#[test]
fn text_that_is_not_a_number_stays() {
    for text in ["", "abc", "12abc", "0x10", "1_000", "1,5"] {
        assert_eq!(x(json!({"type": "integer"}), json!(text)), json!(text));
    }
}

#[test]
fn integral_floats_become_integers() {
    assert_eq!(x(json!({"type": "integer"}), json!(30.0)), json!(30));
    assert_eq!(x(json!({"type": "integer"}), json!(-2.0)), json!(-2));
    assert_eq!(
        x(json!({"type": ["integer", "null"]}), json!(1e19)),
        json!(10_000_000_000_000_000_000_u64)
    );
    // Past u64 there is no integer to become.
    assert_eq!(x(json!({"type": "integer"}), json!(1e30)), json!(1e30));
}

#[test]
fn floats_stay_floats_where_numbers_are_wanted() {
    assert_eq!(x(json!({"type": "number"}), json!(30.0)), json!(30.0));
    assert_eq!(
        x(json!({"type": ["integer", "number"]}), json!(30.0)),
        json!(30.0)
    );
}

#[test]
fn boolean_words_become_booleans() {
    let b = json!({"type": "boolean"});
    for text in ["true", "TRUE", " yes ", "Yes", "1"] {
        assert_eq!(x(b.clone(), json!(text)), json!(true), "{text}");
    }
    for text in ["false", "False", "no", "NO", "0"] {
        assert_eq!(x(b.clone(), json!(text)), json!(false), "{text}");
    }
    for text in ["y", "on", "2", "truthy"] {
        assert_eq!(x(b.clone(), json!(text)), json!(text), "{text}");
    }
}

#[test]
fn booleans_never_become_numbers() {
    assert_eq!(x(json!({"type": "integer"}), json!(true)), json!(true));
    assert_eq!(x(json!({"type": "number"}), json!(false)), json!(false));
}

#[test]
fn numbers_never_become_booleans() {
    assert_eq!(x(json!({"type": "boolean"}), json!(1)), json!(1));
    assert_eq!(x(json!({"type": "boolean"}), json!(0.0)), json!(0.0));
}

#[test]
fn json_strings_become_objects_and_arrays() {
    assert_eq!(
        x(json!({"type": "object"}), json!("{\"a\": 1}")),
        json!({"a": 1})
    );
    assert_eq!(
        x(json!({"type": "array"}), json!(" [1, 2] ")),
        json!([1, 2])
    );
    // The wrong container, or broken JSON, stays.
    assert_eq!(x(json!({"type": "object"}), json!("[1]")), json!("[1]"));
    assert_eq!(x(json!({"type": "array"}), json!("{}")), json!("{}"));
    assert_eq!(x(json!({"type": "array"}), json!("[1,")), json!("[1,"));
}

#[test]
fn parsed_json_is_cast_inside() {
    let schema = json!({"type": "object", "properties": {"n": {"type": "integer"}}});
    let (args, casts) = run(property(schema), json!({"x": "{\"n\": \"5\"}"}));
    assert_eq!(args, json!({"x": {"n": 5}}));
    assert_eq!(
        casts,
        [
            r#"x: string "{\"n\": \"5\"}" -> object"#,
            r#"x.n: string "5" -> integer"#
        ]
    );
}

#[test]
fn scalars_are_never_wrapped_into_arrays() {
    let list = json!({"type": "array", "items": {"type": "string"}});
    assert_eq!(x(list.clone(), json!("a")), json!("a"));
    assert_eq!(x(list, json!(5)), json!(5));
}

#[test]
fn null_for_an_optional_parameter_that_refuses_null_means_absent() {
    let schema = json!({
        "type": "object",
        "properties": {
            "page": {"type": "integer", "default": 1},
            "limit": {"type": ["integer", "null"]},
            "query": {"type": "string"}
        },
        "required": ["query"]
    });
    let (value, casts) = run(schema, json!({"query": null, "page": null, "limit": null}));
    // `page` refuses null and is optional: dropped, so its default applies.
    // `limit` accepts null; `query` is required: both stay for validation.
    assert_eq!(value, json!({"query": null, "limit": null}));
    assert_eq!(casts, ["page: null -> absent"]);
}

#[test]
fn objects_never_become_strings() {
    assert_eq!(
        x(json!({"type": "string"}), json!({"a": 1})),
        json!({"a": 1})
    );
}

#[test]
fn values_of_an_allowed_type_are_left_alone() {
    assert_eq!(
        x(json!({"type": ["string", "integer"]}), json!("60")),
        json!("60")
    );
    assert_eq!(
        x(json!({"type": ["boolean", "string"]}), json!("yes")),
        json!("yes")
    );
    assert_eq!(x(json!({"type": "string"}), json!("[1]")), json!("[1]"));
    let (_, casts) = run(property(json!({"type": "integer"})), json!({"x": 60}));
    assert!(casts.is_empty());
}

#[test]
fn untyped_schemas_cast_nothing() {
    assert_eq!(x(json!({}), json!("60")), json!("60"));
    assert_eq!(x(json!(true), json!("60")), json!("60"));
}

#[test]
fn enum_values_say_what_to_cast_to() {
    assert_eq!(x(json!({"enum": [1, 2, 3]}), json!("2")), json!(2));
    assert_eq!(x(json!({"enum": ["1", "2"]}), json!("2")), json!("2"));
}

#[test]
fn nullable_types_cast_and_null_stays() {
    let schema = json!({"type": ["integer", "null"]});
    assert_eq!(x(schema.clone(), json!("7")), json!(7));
    assert_eq!(x(schema, json!(null)), json!(null));
    assert_eq!(
        x(json!({"type": "integer", "nullable": true}), json!("7")),
        json!(7)
    );
}

#[test]
fn other_spellings_of_a_parameter_name_are_renamed() {
    let schema = json!({"type": "object", "additionalProperties": false,
        "properties": {"old_text": {"type": "string"}, "start_line": {"type": "integer"}}});
    let (value, casts) = run(schema.clone(), json!({"oldText": "a", "Start-Line": "3"}));
    assert_eq!(value, json!({"old_text": "a", "start_line": 3}));
    assert_eq!(
        casts,
        [
            "old_text: parameter name \"oldText\" -> renamed",
            "start_line: parameter name \"Start-Line\" -> renamed",
            "start_line: string \"3\" -> integer",
        ]
    );
    // Both spellings sent, or a name that is no spelling of a parameter:
    // left for validation to report.
    let (value, casts) = run(schema.clone(), json!({"oldText": "a", "old_text": "b"}));
    assert_eq!(value, json!({"oldText": "a", "old_text": "b"}));
    assert!(casts.is_empty());
    let (_, casts) = run(schema, json!({"oldTxt": "a"}));
    assert!(casts.is_empty());
}

#[test]
fn where_extra_keys_are_allowed_they_are_kept_as_sent() {
    let schema = json!({"type": "object", "properties": {"old_text": {"type": "string"}}});
    let (value, casts) = run(schema, json!({"oldText": "a"}));
    assert_eq!(value, json!({"oldText": "a"}));
    assert!(casts.is_empty());
}

#[test]
fn spellings_that_fit_two_parameters_are_not_guessed() {
    let schema = json!({"type": "object", "additionalProperties": false,
        "properties": {"old_text": {"type": "string"}, "oldtext": {"type": "string"}}});
    let (value, casts) = run(schema, json!({"OldText": "a"}));
    assert_eq!(value, json!({"OldText": "a"}));
    assert!(casts.is_empty());
}

#[test]
fn casting_recurses_into_arrays_and_objects() {
    let schema = json!({
        "type": "object",
        "properties": {
            "meta": {
                "type": "object",
                "properties": {
                    "flags": {"type": "array", "items": {"type": "boolean"}},
                    "sizes": {"type": "object", "additionalProperties": {"type": "integer"}}
                }
            }
        }
    });
    let (args, casts) = run(
        schema,
        json!({"meta": {"flags": ["yes", false, "0"], "sizes": {"a": "1", "b": 2}}}),
    );
    assert_eq!(
        args,
        json!({"meta": {"flags": [true, false, false], "sizes": {"a": 1, "b": 2}}})
    );
    assert_eq!(
        casts,
        [
            r#"meta.flags[0]: string "yes" -> boolean"#,
            r#"meta.flags[2]: string "0" -> boolean"#,
            r#"meta.sizes.a: string "1" -> integer"#,
        ]
    );
}

#[test]
fn tuple_items_cast_by_position() {
    let schema = json!({"prefixItems": [{"type": "string"}, {"type": "integer"}], "items": {"type": "boolean"}});
    assert_eq!(x(schema, json!(["1", "2", "no"])), json!(["1", 2, false]));
}

#[test]
fn pattern_properties_cast_matching_keys() {
    let schema = json!({"type": "object", "patternProperties": {"^n_": {"type": "integer"}}});
    let (args, _) = run(schema, json!({"n_a": "1", "s": "2"}));
    assert_eq!(args, json!({"n_a": 1, "s": "2"}));
}

#[test]
fn refs_are_followed() {
    let schema = json!({
        "type": "object",
        "properties": {"inner": {"$ref": "#/$defs/Inner"}},
        "$defs": {"Inner": {"type": "object", "properties": {"n": {"type": "integer"}}}}
    });
    let (args, casts) = run(schema, json!({"inner": {"n": "3"}}));
    assert_eq!(args, json!({"inner": {"n": 3}}));
    assert_eq!(casts, [r#"inner.n: string "3" -> integer"#]);
}

#[test]
fn recursive_schemas_cast_at_every_depth() {
    let schema = json!({
        "$ref": "#/$defs/Node",
        "$defs": {"Node": {
            "type": "object",
            "properties": {
                "size": {"type": "integer"},
                "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}
            }
        }}
    });
    let (args, casts) = run(
        schema,
        json!({"size": "1", "children": [{"size": "2", "children": [{"size": "3", "children": []}]}]}),
    );
    assert_eq!(
        args,
        json!({"size": 1, "children": [{"size": 2, "children": [{"size": 3, "children": []}]}]})
    );
    assert_eq!(
        casts.last().unwrap(),
        r#"children[0].children[0].size: string "3" -> integer"#
    );
}

#[test]
fn any_of_leaves_a_value_that_fits_a_branch() {
    let schema = json!({"anyOf": [{"type": "string"}, {"type": "integer"}]});
    assert_eq!(x(schema, json!("60")), json!("60"));
}

#[test]
fn any_of_writes_integral_floats_in_the_fitting_branch_as_integers() {
    // An untagged enum `Id(u32) | Pair { a: i8 }`: `{"a": -0}` fits the
    // pair, and must reach serde as an integer.
    let schema = json!({"anyOf": [
        {"type": "integer", "format": "uint32"},
        {"type": "object", "properties": {"a": {"type": "integer", "format": "int8"}}, "required": ["a"]}
    ]});
    let (args, casts) = run(property(schema.clone()), json!({"x": {"a": -0.0}}));
    assert_eq!(args["x"], json!({"a": 0}));
    assert_eq!(casts, ["x.a: number -0.0 -> integer"]);
    assert_eq!(x(schema, json!(7.0)), json!(7));
}

#[test]
fn any_of_takes_the_first_branch_casting_makes_fit() {
    let schema = json!({"anyOf": [{"type": "boolean"}, {"type": "integer"}]});
    let (args, casts) = run(property(schema.clone()), json!({"x": "5"}));
    assert_eq!(args["x"], json!(5));
    assert_eq!(casts, [r#"x: string "5" -> integer"#]);
    assert_eq!(x(schema, json!("1")), json!(true));
}

#[test]
fn any_of_records_only_the_chosen_branch() {
    // The first branch casts `a` but then fails on `b`; only the second's casts count.
    let schema = json!({"oneOf": [
        {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "boolean"}}, "required": ["a", "b"]},
        {"type": "object", "properties": {"a": {"type": "number"}}, "required": ["a"]}
    ]});
    let (args, casts) = run(property(schema), json!({"x": {"a": "1", "b": "maybe"}}));
    assert_eq!(args["x"], json!({"a": 1, "b": "maybe"}));
    assert_eq!(casts, [r#"x.a: string "1" -> number"#]);
}

#[test]
fn any_of_leaves_null_alone() {
    let schema = json!({"anyOf": [{"type": "integer"}, {"type": "null"}]});
    assert_eq!(x(schema, json!(null)), json!(null));
}

#[test]
fn option_of_a_struct_casts_inside_even_when_still_invalid() {
    let schema = json!({
        "type": "object",
        "properties": {"x": {"anyOf": [{"$ref": "#/$defs/S"}, {"type": "null"}]}},
        "$defs": {"S": {"type": "object", "properties": {"n": {"type": "integer"}, "m": {"type": "string"}}, "required": ["n", "m"]}}
    });
    let (args, casts) = run(schema, json!({"x": {"n": "4"}}));
    assert_eq!(args, json!({"x": {"n": 4}}));
    assert_eq!(casts, [r#"x.n: string "4" -> integer"#]);
}

#[test]
fn the_one_branch_for_the_type_keeps_its_casts_even_when_still_invalid() {
    let schema = json!({"anyOf": [
        {"type": "integer"},
        {"type": "object", "properties": {"n": {"type": "integer"}, "m": {}}, "required": ["n", "m"]}
    ]});
    let (args, casts) = run(property(schema), json!({"x": {"n": "5"}}));
    assert_eq!(args["x"], json!({"n": 5}));
    assert_eq!(casts, [r#"x.n: string "5" -> integer"#]);
}

#[test]
fn all_of_casts_through_every_branch() {
    let schema = json!({"allOf": [
        {"properties": {"a": {"type": "integer"}}},
        {"properties": {"b": {"type": "boolean"}}}
    ]});
    let (args, _) = run(schema, json!({"a": "1", "b": "no"}));
    assert_eq!(args, json!({"a": 1, "b": false}));
}

#[test]
fn casts_record_path_from_and_to() {
    let (_, casts) = run(
        json!({"type": "object", "properties": {"timeout": {"type": "integer"}, "odd key": {"type": "number"}}}),
        json!({"odd key": "0.5", "timeout": "60"}),
    );
    assert_eq!(
        casts,
        [
            r#"["odd key"]: string "0.5" -> number"#,
            r#"timeout: string "60" -> integer"#
        ]
    );
    let nodes = compile(&property(json!({"type": "integer"}))).unwrap();
    let mut args = json!({"x": 30.0});
    assert_eq!(
        cast(&nodes, &mut args),
        [Cast {
            path: "x".into(),
            from: "number 30.0".into(),
            to: "integer".into()
        }]
    );
}

#[test]
fn a_false_schema_casts_nothing() {
    assert_eq!(x(json!(false), json!("1")), json!("1"));
}

#[test]
fn alternatives_that_would_take_exponential_time_are_cut_short() {
    use super::super::validate::tests::{deep_misfit, exponential_schema};
    let (args, casts) = run(exponential_schema(), deep_misfit(60));
    assert_eq!(args, deep_misfit(60));
    assert!(casts.is_empty());
}

#[test]
fn values_nested_past_the_limit_are_left_alone() {
    let schema = json!({"$ref": "#/$defs/L", "$defs": {"L": {"type": ["array", "integer"], "items": {"$ref": "#/$defs/L"}}}});
    let nodes = compile(&schema).unwrap();
    let mut value = json!("1");
    for _ in 0..(MAX_DEPTH + 5) {
        value = Value::Array(vec![value]);
    }
    let casts = cast(&nodes, &mut value);
    assert!(casts.is_empty());
    let mut shallow = json!([["1"]]);
    assert_eq!(cast(&nodes, &mut shallow).len(), 1);
}

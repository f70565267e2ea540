//! Tests of `args::payload`.

use super::*;
use serde_json::json;

fn ok(payload: Value) -> Value {
    normalize_payload(payload, false).expect("payload is accepted")
}

fn refused(payload: Value) -> String {
    normalize_payload(payload, false)
        .expect_err("payload is refused")
        .to_string()
}

#[test]
fn arguments_encoded_twice_are_read_one_level_deeper() {
    let twice = json!(json!({"a": 1}).to_string()).to_string();
    assert_eq!(
        normalize_payload(json!(twice), false).unwrap(),
        json!({"a": 1})
    );
    // Three times is not a payload a model would send by mistake.
    let thrice = json!(twice).to_string();
    assert_eq!(
        normalize_payload(json!(thrice), false).unwrap_err(),
        PayloadError::NotAnObject("a string".into())
    );
}

#[test]
fn an_object_passes_through() {
    assert_eq!(ok(json!({"a": 1, "b": [2]})), json!({"a": 1, "b": [2]}));
    assert_eq!(ok(json!({})), json!({}));
}

#[test]
fn null_means_no_arguments() {
    assert_eq!(ok(json!(null)), json!({}));
}

#[test]
fn an_empty_string_means_no_arguments() {
    assert_eq!(ok(json!("")), json!({}));
    assert_eq!(ok(json!("  \n")), json!({}));
    assert_eq!(ok(json!("null")), json!({}));
}

#[test]
fn a_json_string_of_an_object_is_parsed() {
    assert_eq!(ok(json!(r#"{"a": 1}"#)), json!({"a": 1}));
    assert_eq!(ok(json!(" \n {\"a\": 1}\t ")), json!({"a": 1}));
}

#[test]
fn the_arguments_wrapper_is_taken_off() {
    assert_eq!(ok(json!({"arguments": {"a": 1}})), json!({"a": 1}));
    assert_eq!(ok(json!({"arguments": "{\"a\": 1}"})), json!({"a": 1}));
    assert_eq!(ok(json!({"arguments": null})), json!({}));
    assert_eq!(ok(json!(r#"{"arguments": {"a": 1}}"#)), json!({"a": 1}));
}

#[test]
fn the_wrapper_stays_when_the_tool_has_an_arguments_parameter() {
    let payload = json!({"arguments": {"a": 1}});
    assert_eq!(normalize_payload(payload.clone(), true).unwrap(), payload);
    let payload = json!({"arguments": "{\"a\": 1}"});
    assert_eq!(normalize_payload(payload.clone(), true).unwrap(), payload);
}

#[test]
fn arguments_beside_other_keys_is_an_ordinary_parameter() {
    let payload = json!({"arguments": {"a": 1}, "b": 2});
    assert_eq!(ok(payload.clone()), payload);
}

#[test]
fn an_arguments_key_holding_a_scalar_is_not_a_wrapper() {
    assert_eq!(ok(json!({"arguments": 5})), json!({"arguments": 5}));
}

#[test]
fn a_wrapped_string_must_be_an_object_too() {
    assert!(matches!(
        normalize_payload(json!({"arguments": "nope"}), false),
        Err(PayloadError::NotJson(_))
    ));
    assert!(matches!(
        normalize_payload(json!({"arguments": "[1]"}), false),
        Err(PayloadError::NotAnObject(_))
    ));
}

#[test]
fn non_objects_are_refused_with_what_was_sent() {
    assert_eq!(
        refused(json!([1])),
        "arguments must be a JSON object of named parameters, got an array"
    );
    assert_eq!(
        refused(json!(5)),
        "arguments must be a JSON object of named parameters, got a number (5)"
    );
    assert_eq!(
        refused(json!(true)),
        "arguments must be a JSON object of named parameters, got a boolean (true)"
    );
}

#[test]
fn a_string_holding_json_that_is_not_an_object_is_refused() {
    assert_eq!(
        normalize_payload(json!("[1]"), false),
        Err(PayloadError::NotAnObject("an array".into()))
    );
    assert_eq!(
        normalize_payload(json!("\"hi\""), false),
        Err(PayloadError::NotAnObject("a string".into()))
    );
    assert_eq!(
        normalize_payload(json!("42"), false),
        Err(PayloadError::NotAnObject("a number (42)".into()))
    );
}

#[test]
fn almost_json_is_repaired_and_the_repairs_are_returned() {
    let (args, repairs) = read_payload(json!("{'a': True,}"), false).unwrap();
    assert_eq!(args, json!({"a": true}));
    let repairs: Vec<String> = repairs.iter().map(ToString::to_string).collect();
    assert_eq!(
        repairs,
        [
            "trailing comma at line 1, column 11 -> repaired",
            "single-quoted string at line 1, column 2 -> repaired",
            "Python literal (True, False or None) at line 1, column 7 -> repaired",
        ]
    );
    // Inside the wrapper, and encoded twice.
    let (args, repairs) = read_payload(json!({"arguments": "{\"a\": 1,}"}), false).unwrap();
    assert_eq!((args, repairs.len()), (json!({"a": 1}), 1));
    let twice = json!("{\"a\": 1,}").to_string();
    let (args, repairs) = read_payload(json!(twice), false).unwrap();
    assert_eq!((args, repairs.len()), (json!({"a": 1}), 1));
    // An object, and valid text, need no repair.
    assert!(read_payload(json!({"a": 1}), false).unwrap().1.is_empty());
    assert!(
        read_payload(json!("{\"a\": 1}"), false)
            .unwrap()
            .1
            .is_empty()
    );
}

#[test]
fn text_that_cannot_be_repaired_is_refused_where_it_fails() {
    let err = normalize_payload(json!("{\"a\": 1,\n \"b\" 2}"), false).unwrap_err();
    assert_eq!(
        err.to_string(),
        "arguments are not valid JSON (expected `:` at line 2, column 6:\n     \"b\" 2}\n         ^\n); \
         send a JSON object of named parameters"
    );
}

#[test]
fn a_string_that_is_not_json_is_refused() {
    let err = normalize_payload(json!("path=a.txt"), false).unwrap_err();
    assert!(matches!(err, PayloadError::NotJson(_)), "{err:?}");
    assert!(
        err.to_string()
            .starts_with("arguments are not valid JSON ("),
        "{err}"
    );
    assert!(matches!(
        normalize_payload(json!("{\"a\": 1"), false),
        Err(PayloadError::NotJson(_))
    ));
}

//! Tests of `args::repair`.

use super::*;
use serde_json::json;

fn repaired(text: &str) -> (Value, Vec<String>) {
    let (value, casts) = parse(text).unwrap_or_else(|e| panic!("{text:?} refused: {e}"));
    (value, casts.into_iter().map(|c| c.from).collect())
}

fn refused(text: &str) -> String {
    match parse(text) {
        Ok((value, casts)) => panic!("{text:?} accepted as {value} with {casts:?}"),
        Err(e) => e,
    }
}

#[test]
fn valid_json_is_not_touched() {
    assert_eq!(
        repaired(r#"{"a": [1, "x,]"]}"#),
        (json!({"a": [1, "x,]"]}), vec![])
    );
}

#[test]
fn trailing_commas_are_dropped() {
    let (value, repairs) = repaired(r#"{"a": [1, 2,], "b": 3,}"#);
    assert_eq!(value, json!({"a": [1, 2], "b": 3}));
    assert_eq!(repairs, ["trailing comma at line 1, column 12 (2 times)"]);
}

#[test]
fn raw_control_characters_in_strings_are_escaped() {
    let (value, repairs) = repaired("{\"a\": \"x\ny\tz\u{1}\"}");
    assert_eq!(value, json!({"a": "x\ny\tz\u{1}"}));
    assert_eq!(
        repairs,
        ["raw line break or control character in a string at line 1, column 9 (3 times)"]
    );
}

#[test]
fn single_quotes_become_double_quotes() {
    let (value, _) = repaired(r#"{'a': 'say "hi"', 'b': 'it\'s'}"#);
    assert_eq!(value, json!({"a": "say \"hi\"", "b": "it's"}));
    let error = refused("{'text': 'it's fine'}");
    assert!(error.contains("line 1, column 13"), "{error}");
}

#[test]
fn python_literals_become_json() {
    let (value, repairs) = repaired(r#"{"a": True, "b": [False, None]}"#);
    assert_eq!(value, json!({"a": true, "b": [false, null]}));
    assert_eq!(
        repairs,
        ["Python literal (True, False or None) at line 1, column 7 (3 times)"]
    );
    refused(r#"{"a": Nonesuch}"#);
}

#[test]
fn missing_closers_at_the_end_are_added_after_a_complete_value() {
    assert_eq!(repaired(r#"{"a": "x""#).0, json!({"a": "x"}));
    assert_eq!(
        repaired(r#"{"a": ["x", {"b": true}"#).0,
        json!({"a": ["x", {"b": true}]})
    );
    for cut in [
        r#"{"a": "x"#,
        r#"{"a": 1"#,
        r#"{"a": "#,
        r#"{"a": "x","#,
        r#"{"a""#,
    ] {
        refused(cut);
    }
}

#[test]
fn fences_labels_and_prose_are_taken_off() {
    assert_eq!(repaired("```json\n{\"a\": 1}\n```").0, json!({"a": 1}));
    assert_eq!(repaired("arguments: {\"a\": 1}").0, json!({"a": 1}));
    assert_eq!(
        repaired("Here are the arguments:\n{\"a\": 1}\nHope this helps.").0,
        json!({"a": 1})
    );
    refused("options: {\"a\": 1}");
    refused("\"path\": \"x\", \"o\": {\"a\": 1}");
    refused("{\"a\": 1} {\"b\": 2}");
}

#[test]
fn comments_are_dropped() {
    let (value, repairs) = repaired("{\n  // the file\n  \"a\": 1 /* one */\n}");
    assert_eq!(value, json!({"a": 1}));
    assert_eq!(repairs, ["comment at line 2, column 3 (2 times)"]);
    refused("{\"a\": 1 /* open");
}

#[test]
fn refusals_quote_the_place_with_a_caret() {
    let error = refused("{\"a\": 1 \"b\": 2}");
    assert_eq!(
        error,
        "expected `,` or `}` at line 1, column 9:\n    {\"a\": 1 \"b\": 2}\n            ^\n"
    );
    let long = format!("{{\"a\": \"{}\" \"b\": 1}}", "x".repeat(500));
    let error = refused(&long);
    let excerpt = error.lines().nth(1).unwrap();
    assert!(excerpt.chars().count() <= EXCERPT + 6, "{error}");
}

#[test]
fn a_refusal_after_a_repair_points_into_the_text_sent() {
    // The fence is repaired; the missing comma, on line 3, is not.
    let error = refused("```json\n{\"a\": True,\n \"b\": 1 \"c\": 2}\n```");
    assert!(
        error.starts_with("expected `,` or `}` at line 3, column 9:"),
        "{error}"
    );
}

#[test]
fn deep_and_odd_text_does_not_panic() {
    let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    refused(&format!("{{\"a\": {deep}"));
    for text in [
        "{",
        "{'",
        "{\"\\",
        "{/",
        "é{é",
        "{\"a\": \"é\n\"",
        "```",
        "{,}",
        "{]",
    ] {
        let _ = parse(text);
    }
}

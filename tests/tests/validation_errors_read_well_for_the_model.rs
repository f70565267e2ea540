//! Invalid calls come back as error results a model can act on: every
//! problem at once, each at its path, then what to do; and as typed errors
//! for the host.

use serde_json::{Value, json};
use tk::{ArgumentError, CallError, InvalidArguments, PayloadError, Problem, ToolContext};
use toolsmith_tests::registry_of;

const FIX_HINT: &str = "\n\n[Fix the arguments as described and call the tool again.]";

async fn model_text(name: &str, payload: Value) -> String {
    let registry = registry_of(&[name]);
    let out = registry.call(name, payload, &ToolContext::new()).await;
    assert!(
        out.is_error,
        "{name} should refuse the call: {}",
        out.content
    );
    out.content
}

fn invalid(name: &str, problems: &str) -> String {
    format!("Error: Invalid parameters for tool '{name}': {problems}{FIX_HINT}")
}

#[tokio::test]
async fn a_bound_is_reported_like_nanobot_with_a_hint() {
    assert_eq!(
        model_text("exec", json!({"command": "ls", "timeout": 900})).await,
        "Error: Invalid parameters for tool 'exec': timeout must be <= 600\n\n\
         [Fix the arguments as described and call the tool again.]"
    );
    // A cast value is checked like a sent one.
    assert_eq!(
        model_text("exec", json!({"command": "ls", "timeout": "0"})).await,
        invalid("exec", "timeout must be >= 1")
    );
}

#[tokio::test]
async fn nested_problems_carry_their_path() {
    assert_eq!(
        model_text(
            "tag_item",
            json!({"id": 1, "meta": {"flags": [true], "level": 1}})
        )
        .await,
        invalid(
            "tag_item",
            "meta.flags[0] should be string, got boolean true"
        )
    );
    assert_eq!(
        model_text(
            "tag_item",
            json!({"id": 1, "meta": {"flags": ["ok", "also", false], "level": 10}})
        )
        .await,
        invalid(
            "tag_item",
            "meta.flags[2] should be string, got boolean false; meta.level must be <= 9"
        )
    );
    assert_eq!(
        model_text(
            "count_nodes",
            json!({"tree": {"label": "a", "children": [{"label": [5]}]}})
        )
        .await,
        invalid(
            "count_nodes",
            "tree.children[0].label should be string, got an array"
        )
    );
}

#[tokio::test]
async fn every_problem_is_reported_at_once_in_schema_order() {
    assert_eq!(
        model_text(
            "create_account",
            json!({"tags": [], "age": 5, "handle": "X"})
        )
        .await,
        invalid(
            "create_account",
            "handle must be at least 3 characters; \
             handle must match the pattern ^[a-z][a-z0-9_]*$; \
             age must be >= 13; \
             tags must have at least 1 item"
        )
    );
    assert_eq!(
        model_text(
            "create_account",
            json!({"handle": "a_very_long_handle_indeed", "age": 200, "tags": ["a", "b", "c", "d"], "quota": 1.5})
        )
        .await,
        invalid(
            "create_account",
            "handle must be at most 16 characters; age must be <= 130; \
             tags must have at most 3 items; quota must be <= 1.0"
        )
    );
}

#[tokio::test]
async fn integer_widths_are_bounded_by_their_type() {
    assert_eq!(
        model_text(
            "integer_widths",
            json!({
                "a_i8": -129, "a_i16": 0, "a_i32": 2147483648_i64, "a_i64": 0, "a_isize": 0,
                "a_u8": 256, "a_u16": "70000", "a_u32": -1, "a_u64": -1, "a_usize": 0,
            })
        )
        .await,
        invalid(
            "integer_widths",
            "a_i8 must be >= -128; a_i32 must be <= 2147483647; a_u8 must be <= 255; \
             a_u16 must be <= 65535; a_u32 must be >= 0; a_u64 must be >= 0"
        )
    );
}

#[tokio::test]
async fn missing_parameters_are_named() {
    assert_eq!(
        model_text("read_file", json!({})).await,
        invalid("read_file", "path is required")
    );
    assert_eq!(
        model_text("tag_item", json!({"meta": {}})).await,
        invalid(
            "tag_item",
            "id is required; meta.flags is required; meta.level is required"
        )
    );
}

#[tokio::test]
async fn a_misspelled_parameter_gets_a_did_you_mean() {
    assert_eq!(
        model_text("read_file", json!({"pth": "a.txt"})).await,
        invalid(
            "read_file",
            "path is required; pth is not a parameter of this tool; did you mean 'path'?"
        )
    );
    assert_eq!(
        model_text("read_file", json!({"path": "a.txt", "ofset": 2})).await,
        invalid(
            "read_file",
            "ofset is not a parameter of this tool; did you mean 'offset'?"
        )
    );
    // Inside a nested struct too, beside the name it replaces.
    assert_eq!(
        model_text(
            "tag_item",
            json!({"id": 1, "meta": {"flgs": ["a"], "level": 1}})
        )
        .await,
        invalid(
            "tag_item",
            "meta.flags is required; meta.flgs is not a known field; did you mean 'flags'?"
        )
    );
}

#[tokio::test]
async fn an_unknown_parameter_lists_the_allowed_ones() {
    assert_eq!(
        model_text("read_file", json!({"path": "a.txt", "encoding": "utf-8"})).await,
        invalid(
            "read_file",
            "encoding is not a parameter of this tool; allowed: path, offset, limit"
        )
    );
    assert_eq!(
        model_text("ping", json!({"loud": true})).await,
        invalid(
            "ping",
            "loud is not a parameter of this tool; it takes no parameters here"
        )
    );
    // A whole-arguments struct is closed as well.
    assert_eq!(
        model_text("search", json!({"query": "x", "limt": 5})).await,
        invalid(
            "search",
            "limt is not a parameter of this tool; did you mean 'limit'?"
        )
    );
}

#[tokio::test]
async fn map_values_and_optional_structs_are_checked_at_their_path() {
    assert_eq!(
        model_text(
            "lists_and_maps",
            json!({"tags": [], "counts": {"a": -1}, "switches": {"x": "maybe"}})
        )
        .await,
        invalid(
            "lists_and_maps",
            "counts.a must be >= 0; switches.x should be boolean, got string \"maybe\""
        )
    );
    assert_eq!(
        model_text(
            "tag_item",
            json!({"id": 1, "meta": {"flags": [], "level": 1}, "editor": 5})
        )
        .await,
        invalid("tag_item", "editor should be object or null, got integer 5")
    );
    assert_eq!(
        model_text(
            "tag_item",
            json!({"id": 1, "meta": {"flags": "a,b", "level": 1}, "editor": {"name": false}})
        )
        .await,
        invalid(
            "tag_item",
            "meta.flags should be array, got string \"a,b\"; editor.name should be string, got boolean false"
        )
    );
}

#[tokio::test]
async fn values_inside_a_stringified_object_are_checked_at_their_path() {
    assert_eq!(
        model_text("count_nodes", json!({"tree": "{\"label\": true}"})).await,
        invalid(
            "count_nodes",
            "tree.label should be string, got boolean true"
        )
    );
}

#[tokio::test]
async fn a_closed_nested_struct_refuses_unknown_fields_with_a_suggestion() {
    // `Person` has `#[serde(deny_unknown_fields)]`, so its schema is closed.
    assert_eq!(
        model_text(
            "tag_item",
            json!({"id": 1, "meta": {"flags": [], "level": 1}, "editor": {"nmae": "Eve"}})
        )
        .await,
        invalid(
            "tag_item",
            "editor.name is required; editor.nmae is not a known field; did you mean 'name'?"
        )
    );
}

#[tokio::test]
async fn enums_list_their_values() {
    assert_eq!(
        model_text("paint", json!({"color": "purple"})).await,
        invalid(
            "paint",
            r#"color must be one of "red", "green", "deep_blue""#
        )
    );
    // An optional enum may also be null, and says so.
    assert_eq!(
        model_text("paint", json!({"color": "red", "trim": "purple"})).await,
        invalid(
            "paint",
            r#"trim must be one of "red", "green", "deep_blue", null"#
        )
    );
    // Inside a list, at the item's index.
    assert_eq!(
        model_text("search", json!({"query": "q", "kinds": ["code", "pdf"]})).await,
        invalid("search", r#"kinds[1] must be one of "code", "docs""#)
    );
}

#[tokio::test]
async fn patterns_are_checked() {
    assert_eq!(
        model_text("fetch_page", json!({"url": "ftp://x"})).await,
        invalid("fetch_page", "url must match the pattern ^https?://")
    );
}

#[tokio::test]
async fn a_payload_that_is_not_an_object_asks_for_named_parameters() {
    assert_eq!(
        model_text("read_file", json!(["a.txt"])).await,
        "Error: Invalid arguments for tool 'read_file': arguments must be a JSON object of named parameters, got an array\
         \n\n[Fix the arguments as described and call the tool again.]"
    );
    let text = model_text("read_file", json!("path=a.txt")).await;
    assert!(
        text.starts_with(
            "Error: Invalid arguments for tool 'read_file': arguments are not valid JSON ("
        ),
        "{text}"
    );
    assert!(
        text.ends_with("); send a JSON object of named parameters\n\n[Fix the arguments as described and call the tool again.]"),
        "{text}"
    );
}

#[tokio::test]
async fn the_host_gets_the_same_facts_as_typed_errors() {
    let registry = registry_of(&["exec"]);
    let err = registry
        .try_call(
            "exec",
            json!({"timeout": 900, "comand": "ls"}),
            &ToolContext::new(),
        )
        .await
        .expect_err("the call is refused");
    assert_eq!(
        err,
        CallError::InvalidArguments(InvalidArguments {
            tool: "exec".into(),
            errors: vec![
                ArgumentError::new("command", Problem::Missing),
                ArgumentError::new(
                    "timeout",
                    Problem::TooLarge {
                        limit: 600.into(),
                        exclusive: false
                    }
                ),
                ArgumentError::new(
                    "comand",
                    Problem::Unknown {
                        suggestion: Some("command".into()),
                        allowed: vec!["command".into(), "timeout".into()],
                    }
                ),
            ],
        })
    );
    let err = registry
        .prepare("exec", json!(42))
        .expect_err("not an object");
    assert_eq!(
        err,
        CallError::InvalidPayload {
            tool: "exec".into(),
            error: PayloadError::NotAnObject("a number (42)".into()),
        }
    );
}

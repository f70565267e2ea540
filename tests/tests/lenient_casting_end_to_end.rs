//! What models really send is cast to what the schema wants before
//! validation, through the whole call path, and every cast is recorded.

use serde_json::{Value, json};
use tk::args::Cast;
use tk::{ToolContext, ToolRegistry};
use toolsmith_tests::hand_written::JsonTool;
use toolsmith_tests::registry_of;

fn registry() -> ToolRegistry {
    registry_of(&[
        "exec",
        "integer_widths",
        "scalars",
        "ping",
        "lists_and_maps",
        "tag_item",
        "count_nodes",
        "search",
        "read_file",
        "list_dir",
        "launch",
        "paint",
    ])
}

async fn ok(name: &str, payload: Value) -> String {
    let out = registry().call(name, payload, &ToolContext::new()).await;
    assert!(!out.is_error, "{name} failed: {}", out.content);
    out.content
}

fn casts(name: &str, payload: Value) -> Vec<String> {
    registry()
        .prepare(name, payload)
        .expect("the arguments are valid after casting")
        .casts()
        .iter()
        .map(ToString::to_string)
        .collect()
}

#[tokio::test]
async fn a_string_of_digits_becomes_an_integer() {
    assert_eq!(
        ok("exec", json!({"command": "ls", "timeout": "60"})).await,
        "would run `ls` for at most 60 s"
    );
    let registry = registry();
    let prepared = registry
        .prepare("exec", json!({"command": "ls", "timeout": " 60 "}))
        .expect("valid");
    assert_eq!(
        prepared.casts(),
        [Cast {
            path: "timeout".into(),
            from: "string \" 60 \"".into(),
            to: "integer".into(),
        }]
    );
}

#[tokio::test]
async fn an_integral_float_becomes_an_integer() {
    assert_eq!(
        ok("exec", json!({"command": "ls", "timeout": 30.0})).await,
        "would run `ls` for at most 30 s"
    );
    assert_eq!(
        casts("exec", json!({"command": "ls", "timeout": 30.0})),
        ["timeout: number 30.0 -> integer"]
    );
}

#[tokio::test]
async fn boolean_words_become_booleans() {
    for (word, expected) in [
        ("yes", true),
        ("true", true),
        ("1", true),
        ("no", false),
        ("false", false),
        ("0", false),
    ] {
        let out = ok(
            "scalars",
            json!({"ratio": 1, "precise": 1, "verbose": word, "label": "l", "path": "p"}),
        )
        .await;
        assert!(
            out.contains(&format!("verbose={expected}")),
            "{word:?} -> {out}"
        );
    }
}

#[tokio::test]
async fn numeric_strings_become_numbers_but_strings_stay_strings() {
    let out = ok(
        "scalars",
        json!({"ratio": "0.5", "precise": "-2.25", "verbose": false, "label": "42", "path": "7"}),
    )
    .await;
    assert_eq!(out, "ratio=0.5 precise=-2.25 verbose=false label=42 path=7");
}

#[tokio::test]
async fn numbers_sent_for_text_become_their_text() {
    let out = ok(
        "scalars",
        json!({"ratio": 0.5, "precise": -2.25, "verbose": false, "label": 42, "path": 7.5}),
    )
    .await;
    assert_eq!(
        out,
        "ratio=0.5 precise=-2.25 verbose=false label=42 path=7.5"
    );
}

#[tokio::test]
async fn integer_strings_keep_full_64_bit_precision() {
    let out = ok(
        "integer_widths",
        json!({
            "a_i8": "-5", "a_i16": "300", "a_i32": "-70000", "a_i64": "-9223372036854775808",
            "a_isize": "-1", "a_u8": "200", "a_u16": "60000", "a_u32": "4000000000",
            "a_u64": "18446744073709551615", "a_usize": "12",
        }),
    )
    .await;
    assert_eq!(
        out,
        "i8=-5 i16=300 i32=-70000 i64=-9223372036854775808 isize=-1 u8=200 u16=60000 u32=4000000000 u64=18446744073709551615 usize=12"
    );
}

#[tokio::test]
async fn a_stringified_object_becomes_an_object_and_is_cast_inside() {
    let out = ok(
        "tag_item",
        json!({"id": "7", "meta": "{\"flags\": [\"a\"], \"level\": \"2\"}"}),
    )
    .await;
    assert_eq!(
        out,
        r#"id=7 meta=Meta { flags: ["a"], level: 2, owner: None } editor=None"#
    );
    assert_eq!(
        casts(
            "tag_item",
            json!({"id": "7", "meta": "{\"flags\": [\"a\"], \"level\": \"2\"}"})
        ),
        [
            "id: string \"7\" -> integer",
            "meta: string \"{\\\"flags\\\": [\\\"a\\\"], \\\"level\\\": \\\"2\\\"}\" -> object",
            "meta.level: string \"2\" -> integer",
        ]
    );
}

#[tokio::test]
async fn an_optional_nested_struct_is_cast_inside_too() {
    let out = ok(
        "tag_item",
        json!({"id": 1, "meta": {"flags": [], "level": 0}, "editor": "{\"name\": \"Eve\"}"}),
    )
    .await;
    assert!(
        out.ends_with(r#"editor=Some(Person { name: "Eve", email: None })"#),
        "{out}"
    );
}

#[tokio::test]
async fn stringified_arrays_and_maps_become_values() {
    let out = ok(
        "lists_and_maps",
        json!({
            "tags": "[\"a\", \"b\"]",
            "counts": "{\"x\": \"3\"}",
            "switches": {"on": "yes"},
            "scores": "[1, \"2\"]",
        }),
    )
    .await;
    assert_eq!(
        out,
        r#"nickname=None tags=["a", "b"] counts=[("x", 3)] switches={"on": true} scores=Some([1, 2])"#
    );
}

#[tokio::test]
async fn recursive_values_are_cast_at_every_level() {
    let out = ok(
        "count_nodes",
        json!({"tree": {"label": "a", "children": "[{\"label\": \"b\", \"children\": \"[{\\\"label\\\": \\\"c\\\"}]\"}]"}}),
    )
    .await;
    assert_eq!(out, "3 nodes: a,b,c");
}

#[tokio::test]
async fn a_flattened_struct_is_cast_like_any_other() {
    assert_eq!(
        ok(
            "search",
            json!({"query": "x", "limit": "5", "kinds": "[\"docs\"]"})
        )
        .await,
        "query=x limit=5 kinds=[Docs]"
    );
}

#[tokio::test]
async fn the_payload_may_be_a_json_string() {
    assert_eq!(
        ok(
            "read_file",
            json!("{\"path\": \"a.txt\", \"offset\": \"3\"}")
        )
        .await,
        "read a.txt from line 3 limit None"
    );
}

#[tokio::test]
async fn null_and_empty_payloads_mean_no_arguments() {
    assert_eq!(ok("ping", Value::Null).await, "pong");
    assert_eq!(ok("ping", json!("")).await, "pong");
    assert_eq!(ok("list_dir", Value::Null).await, "listing .");
}

#[tokio::test]
async fn an_arguments_wrapper_is_taken_off() {
    assert_eq!(
        ok("read_file", json!({"arguments": "{\"path\": \"a.txt\"}"})).await,
        "read a.txt from line 1 limit None"
    );
    assert_eq!(
        ok(
            "read_file",
            json!({"arguments": {"path": "b.txt", "limit": "2"}})
        )
        .await,
        "read b.txt from line 1 limit Some(2)"
    );
    assert_eq!(ok("ping", json!({"arguments": null})).await, "pong");
}

#[tokio::test]
async fn an_arguments_key_beside_others_or_holding_a_scalar_is_no_wrapper() {
    let registry = registry();
    let ctx = ToolContext::new();
    let text = registry
        .call("read_file", json!({"path": "a", "arguments": {}}), &ctx)
        .await
        .content;
    assert!(
        text.contains("arguments is not a parameter of this tool; allowed: path, offset, limit"),
        "{text}"
    );
    let text = registry
        .call("read_file", json!({"arguments": 5}), &ctx)
        .await
        .content;
    assert!(
        text.contains("path is required; arguments is not a parameter of this tool"),
        "{text}"
    );
}

#[tokio::test]
async fn the_wrapper_stays_when_the_tool_has_a_parameter_named_arguments() {
    // Unwrapped, this would be a payload that is not an object; kept, it is
    // the `arguments` parameter, cast from a stringified array.
    assert_eq!(
        ok("launch", json!({"arguments": "[\"-l\", \"-a\"]"})).await,
        "ls -l -a"
    );
    assert_eq!(
        casts("launch", json!({"arguments": "[\"-l\"]"})),
        ["arguments: string \"[\\\"-l\\\"]\" -> array"]
    );
}

#[tokio::test]
async fn enums_and_hand_written_schemas_are_cast_too() {
    assert_eq!(
        ok("paint", json!({"color": "red", "trim": null})).await,
        "color=Red trim=None"
    );
    let registry = ToolRegistry::new();
    registry
        .register(JsonTool::numbered("numbered"))
        .expect("registers");
    let out = registry
        .call("numbered", json!({"n": "41"}), &ToolContext::new())
        .await;
    assert_eq!(out.content, "numbered: 41");
}

#[tokio::test]
async fn what_cannot_be_read_is_left_for_validation() {
    let out = registry()
        .call(
            "exec",
            json!({"command": "ls", "timeout": "soon"}),
            &ToolContext::new(),
        )
        .await;
    assert!(out.is_error);
    assert!(
        out.content
            .contains("timeout should be integer, got string \"soon\""),
        "{}",
        out.content
    );
    // A boolean is never a number, and a fraction never an integer.
    let out = registry()
        .call(
            "exec",
            json!({"command": "ls", "timeout": 2.5}),
            &ToolContext::new(),
        )
        .await;
    assert!(
        out.content
            .contains("timeout should be integer, got number 2.5"),
        "{}",
        out.content
    );
    let out = registry()
        .call(
            "exec",
            json!({"command": "ls", "timeout": true}),
            &ToolContext::new(),
        )
        .await;
    assert!(
        out.content
            .contains("timeout should be integer, got boolean true"),
        "{}",
        out.content
    );
}

/// OpenAI strict mode makes every parameter required and the optional ones
/// nullable, so a model sends `null` for what it leaves out. A parameter with
/// a default then takes its default; an `Option` becomes `None`.
#[tokio::test]
async fn null_from_a_strict_mode_model_means_not_given() {
    let strict = tk::ToolRegistry::from_inventory(&tk::ToolFilter::all().names(["read_file"]))
        .unwrap()
        .definitions(tk::DefinitionFormat::OpenAiStrict);
    let parameters = &strict[0]["function"]["parameters"];
    assert_eq!(parameters["required"], json!(["path", "offset", "limit"]));
    assert_eq!(
        ok(
            "read_file",
            json!({"path": "a.txt", "offset": null, "limit": null})
        )
        .await,
        "read a.txt from line 1 limit None"
    );
}

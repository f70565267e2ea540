//! A tool whose value is not an object at its schema's root (a list, a
//! number, an `Option`, an enum of names) gets an output schema that wraps
//! the value's schema under `result`, marked `"x-toolsmith-wrapped": true`,
//! and structured content `{"result": value}`; the model still reads the
//! value's own JSON. What is wrapped is the schema's decision, so the
//! content fits the schema whatever the value: `Some(struct)` serializes to
//! an object, and is wrapped all the same.
//!
//! The tools are registered by hand, not collected.

use serde_json::{Value, json};
use tk::args::ArgumentSchema;
use tk::schemars::JsonSchema;
use tk::serde::Serialize;
use tk::{Tool, ToolContext, ToolOutput, ToolRegistry, tool};

/// A file found by a search.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(crate = "tk::serde")]
#[schemars(crate = "tk::schemars")]
pub struct Hit {
    /// The file's path.
    pub path: String,
    /// Where in it.
    pub line: u32,
}

/// Which way a file changed.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(crate = "tk::serde", rename_all = "snake_case")]
#[schemars(crate = "tk::schemars")]
pub enum Change {
    Added,
    Removed,
}

/// Find the files that mention a word.
#[tool(read_only)]
async fn find_hits(
    /// The word.
    word: String,
) -> Vec<Hit> {
    vec![
        Hit {
            path: format!("{word}.rs"),
            line: 3,
        },
        Hit {
            path: "lib.rs".into(),
            line: 40,
        },
    ]
}

/// Count the words in a text.
#[tool(read_only)]
fn count_words(
    /// The text.
    text: String,
) -> u32 {
    u32::try_from(text.split_whitespace().count()).unwrap_or(u32::MAX)
}

/// The first hit for a word, if there is one.
#[tool(read_only)]
async fn first_hit(
    /// The word.
    word: String,
) -> Result<Option<Hit>, String> {
    Ok((!word.is_empty()).then(|| Hit {
        path: format!("{word}.rs"),
        line: 1,
    }))
}

/// How a file changed.
#[tool(read_only)]
async fn change_of(
    /// The file.
    path: String,
) -> Change {
    if path.starts_with('+') {
        Change::Added
    } else {
        Change::Removed
    }
}

/// One hit, an object: not wrapped.
#[tool(read_only)]
async fn one_hit() -> Hit {
    Hit {
        path: "main.rs".into(),
        line: 7,
    }
}

fn registry() -> ToolRegistry {
    let registry = ToolRegistry::new();
    registry.register(FindHitsTool).expect("registers");
    registry.register(CountWordsTool).expect("registers");
    registry.register(FirstHitTool).expect("registers");
    registry.register(ChangeOfTool).expect("registers");
    registry.register(OneHitTool).expect("registers");
    registry
}

/// Call `name` and check what came back against the tool's output schema.
async fn call_checked(name: &str, payload: Value) -> (ToolOutput, Value) {
    let registry = registry();
    let out = registry.call(name, payload, &ToolContext::new()).await;
    assert!(!out.is_error, "{}", out.content);
    let schema = registry
        .get(name)
        .expect("registered")
        .spec()
        .output_schema
        .clone()
        .expect("an output schema");
    let structured = out.structured.as_deref().expect("structured content");
    let compiled = ArgumentSchema::compile(&schema).expect("the output schema compiles");
    assert!(
        compiled.validate(structured).is_ok(),
        "{structured} does not fit {schema}"
    );
    (out, schema)
}

fn assert_wrapped(schema: &Value) {
    assert_eq!(schema["type"], json!("object"));
    assert_eq!(schema["required"], json!(["result"]));
    assert_eq!(schema["x-toolsmith-wrapped"], json!(true));
    assert_eq!(
        schema["properties"].as_object().map(|p| p.len()),
        Some(1),
        "{schema}"
    );
}

#[tokio::test]
async fn a_list_of_structs_is_wrapped_and_its_definitions_resolve() {
    let (out, schema) = call_checked("find_hits", json!({"word": "main"})).await;
    assert_wrapped(&schema);
    assert_eq!(schema["properties"]["result"]["type"], json!("array"));
    assert_eq!(
        schema["properties"]["result"]["items"]["$ref"],
        json!("#/$defs/Hit")
    );
    assert_eq!(schema["$defs"]["Hit"]["required"], json!(["path", "line"]));
    let hits = json!([{"path": "main.rs", "line": 3}, {"path": "lib.rs", "line": 40}]);
    assert_eq!(out.structured.as_deref(), Some(&json!({"result": hits})));
    // The model reads the list itself.
    assert_eq!(out.content, hits.to_string());
}

#[tokio::test]
async fn a_number_is_wrapped_and_reads_as_the_number() {
    let (out, schema) = call_checked("count_words", json!({"text": "one two  three"})).await;
    assert_wrapped(&schema);
    assert_eq!(schema["properties"]["result"]["type"], json!("integer"));
    assert_eq!(out.content, "3");
    assert_eq!(out.structured.as_deref(), Some(&json!({"result": 3})));
}

#[tokio::test]
async fn an_option_of_a_struct_is_wrapped_for_some_and_none() {
    let (out, schema) = call_checked("first_hit", json!({"word": "main"})).await;
    assert_wrapped(&schema);
    assert_eq!(schema["$defs"]["Hit"]["type"], json!("object"));
    assert_eq!(
        out.structured.as_deref(),
        Some(&json!({"result": {"path": "main.rs", "line": 1}}))
    );
    assert_eq!(out.content, r#"{"path":"main.rs","line":1}"#);

    let (out, _) = call_checked("first_hit", json!({"word": ""})).await;
    assert_eq!(out.structured.as_deref(), Some(&json!({"result": null})));
    assert_eq!(out.content, "null");
}

#[tokio::test]
async fn an_enum_of_names_is_wrapped_and_reads_as_the_name() {
    let (out, schema) = call_checked("change_of", json!({"path": "+a.rs"})).await;
    assert_wrapped(&schema);
    assert_eq!(out.structured.as_deref(), Some(&json!({"result": "added"})));
    assert_eq!(out.content, "added");
}

#[tokio::test]
async fn an_object_is_not_wrapped() {
    let (out, schema) = call_checked("one_hit", json!({})).await;
    assert!(schema.get("x-toolsmith-wrapped").is_none(), "{schema}");
    assert_eq!(
        out.structured.as_deref(),
        Some(&json!({"path": "main.rs", "line": 7}))
    );
}

#[test]
fn the_definition_served_over_mcp_has_an_object_output_schema() {
    let registry = registry();
    for definition in registry.definitions(tk::DefinitionFormat::Mcp).iter() {
        assert_eq!(
            definition["outputSchema"]["type"],
            json!("object"),
            "{definition}"
        );
    }
    assert!(FindHitsTool.spec().output_schema.is_some());
}

//! What a tool returns becomes the model's text, the user's text and
//! structured content: strings, `ToolOutput`, `()`, serializable structs
//! (with an output schema), numbers (structured under `result`), and both
//! sides of `Result`s.

use serde_json::json;
use tk::{CallError, ToolContext, ToolError, ToolOutput, ToolRegistry};
use toolsmith_tests::registry_of;

fn registry() -> ToolRegistry {
    registry_of(&[
        "shout",
        "summarize_diff",
        "forget",
        "weather",
        "divide",
        "square_root",
        "word_count",
        "purge_cache",
        "fetch_page",
    ])
}

/// The tool's own output, before the pipeline shapes it for a model.
async fn call(name: &str, payload: serde_json::Value) -> ToolOutput {
    match registry()
        .try_call(name, payload, &ToolContext::new())
        .await
    {
        Ok(output) => output,
        Err(error) => tk::pipeline::error_output(&error),
    }
}

#[tokio::test]
async fn a_string_is_the_models_text() {
    assert_eq!(
        call("shout", json!({"text": "hi"})).await,
        ToolOutput::text("HI!")
    );
}

#[tokio::test]
async fn a_tool_output_is_passed_through_whole() {
    let out = call("summarize_diff", json!({"files": 3})).await;
    assert_eq!(out.content, "3 files changed");
    assert_eq!(out.display.as_deref(), Some("✔ 3 files"));
    assert_eq!(out.for_user(), "✔ 3 files");
    assert_eq!(out.metadata["files"], json!(3));
    assert!(!out.is_error);
}

#[tokio::test]
async fn unit_is_a_successful_empty_result() {
    let out = call("forget", json!(null)).await;
    assert_eq!(out, ToolOutput::default());
    assert!(!out.is_error);
}

#[tokio::test]
async fn a_struct_is_structured_content_and_json_text() {
    let out = call("weather", json!({"city": "Oslo"})).await;
    let expected = json!({"city": "Oslo", "celsius": -6, "sky": "deep_blue"});
    assert_eq!(out.structured.as_deref(), Some(&expected));
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&out.content).expect("the text is JSON"),
        expected
    );
    assert_eq!(
        out.content,
        r#"{"city":"Oslo","celsius":-6,"sky":"deep_blue"}"#
    );
    let spec_schema = registry()
        .get("weather")
        .expect("registered")
        .spec()
        .output_schema
        .clone()
        .expect("an output schema");
    assert_eq!(
        spec_schema["properties"]
            .as_object()
            .expect("properties")
            .keys()
            .collect::<Vec<_>>(),
        ["city", "celsius", "sky"]
    );
}

#[tokio::test]
async fn a_number_reads_as_text_and_is_structured_under_result() {
    let out = call("divide", json!({"a": 1, "b": 4})).await;
    assert_eq!(out.content, "0.25");
    assert_eq!(out.structured.as_deref(), Some(&json!({"result": 0.25})));
    let tool = registry().get("divide").expect("registered");
    let schema = tool.spec().output_schema.clone().expect("an output schema");
    assert_eq!(
        schema["properties"]["result"]["type"],
        json!("number"),
        "the number's schema is wrapped in an object"
    );
    assert_eq!(schema["x-toolsmith-wrapped"], json!(true));
    let out = call("word_count", json!({"text": "one two  three"})).await;
    assert_eq!(out.content, "3");
    assert_eq!(out.structured.as_deref(), Some(&json!({"result": 3})));
}

#[tokio::test]
async fn an_err_string_is_an_error_result_the_model_reads() {
    let out = call("divide", json!({"a": 1, "b": 0})).await;
    assert!(out.is_error);
    assert_eq!(
        out.content,
        "Error: Tool 'divide' failed: cannot divide by zero\n\n\
         [Analyze the error above and try a different approach.]"
    );
    let err = registry()
        .try_call("purge_cache", json!({"confirm": "no"}), &ToolContext::new())
        .await
        .expect_err("not confirmed");
    assert_eq!(
        err,
        CallError::Tool {
            tool: "purge_cache".into(),
            error: ToolError::Failed("nothing done: set confirm to true".into()),
        }
    );
    assert_eq!(
        call("purge_cache", json!({"confirm": "yes"})).await.content,
        "cache purged"
    );
}

#[tokio::test]
async fn a_tool_error_keeps_its_kind() {
    let err = registry()
        .try_call("square_root", json!({"x": -4}), &ToolContext::new())
        .await
        .expect_err("negative");
    assert_eq!(
        err,
        CallError::Tool {
            tool: "square_root".into(),
            error: ToolError::InvalidArguments("-4 is negative; pass a number >= 0".into()),
        }
    );
    assert_eq!(
        err.to_model_text(),
        "Error: Tool 'square_root' failed: invalid arguments: -4 is negative; pass a number >= 0\n\n\
         [Fix the arguments as described and call the tool again.]"
    );
    assert_eq!(call("square_root", json!({"x": 9})).await.content, "3");
    let out = call("fetch_page", json!({"url": "https://unreachable.example"})).await;
    assert!(out.is_error);
    assert!(
        out.content.starts_with(
            "Error: Tool 'fetch_page' failed: could not reach https://unreachable.example"
        ),
        "{}",
        out.content
    );
}

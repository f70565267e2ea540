//! Chapter: outputs, errors and structured results.

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::json;
use toolsmith::{Tool, ToolContext, ToolError, ToolOutput, ToolRegistry, tool};

// ANCHOR: structured
/// One line of a forecast.
#[derive(Serialize, JsonSchema)]
struct Forecast {
    /// The city.
    city: String,
    /// Degrees Celsius.
    celsius: f64,
}

/// The forecast for a city.
#[tool(read_only)]
async fn forecast(
    /// The city.
    city: String,
) -> Result<Forecast, ToolError> {
    if city.trim().is_empty() {
        return Err(ToolError::InvalidArguments(
            "name a city, for example \"Oslo\"".into(),
        ));
    }
    Ok(Forecast { city, celsius: 4.5 })
}
// ANCHOR_END: structured

// ANCHOR: tool_output
/// Summarise a file for the model, and show the user the whole diff.
#[tool]
async fn apply_patch(
    /// The patch, in unified diff format.
    patch: String,
) -> ToolOutput {
    let lines = patch.lines().count();
    ToolOutput::text(format!("applied a patch of {lines} lines"))
        .with_display(patch)
        .with_metadata("lines", lines)
}
// ANCHOR_END: tool_output

// ANCHOR: own_error
/// Errors of the `divide` tool; `Display` is what the model reads.
#[derive(Debug, thiserror::Error)]
enum DivideError {
    #[error("cannot divide by zero; pass a non-zero `by`")]
    ByZero,
}

/// Divide two integers.
#[tool(read_only)]
async fn divide(
    /// The dividend.
    n: i64,
    /// The divisor.
    by: i64,
) -> Result<i64, DivideError> {
    if by == 0 {
        return Err(DivideError::ByZero);
    }
    Ok(n / by)
}
// ANCHOR_END: own_error

fn registry() -> ToolRegistry {
    let registry = ToolRegistry::new();
    registry.register(ForecastTool).unwrap();
    registry.register(ApplyPatchTool).unwrap();
    registry.register(DivideTool).unwrap();
    registry
}

#[tokio::test]
async fn serializable_results_are_structured() {
    let registry = registry();
    let ctx = ToolContext::new();
    // ANCHOR: structured_use
    let out = registry
        .call("forecast", json!({"city": "Oslo"}), &ctx)
        .await;
    assert_eq!(out.content, r#"{"city":"Oslo","celsius":4.5}"#);
    assert_eq!(
        out.structured.as_deref(),
        Some(&json!({"city": "Oslo", "celsius": 4.5}))
    );
    // The output schema comes from the same type.
    let schema = ForecastTool.spec().output_schema.clone().unwrap();
    assert_eq!(schema["required"], json!(["city", "celsius"]));

    let out = registry.call("forecast", json!({"city": " "}), &ctx).await;
    assert!(out.is_error);
    assert!(out.content.contains("name a city"));
    // ANCHOR_END: structured_use
}

#[tokio::test]
async fn a_tool_output_speaks_to_model_and_user() {
    let registry = registry();
    let patch = "--- a\n+++ b\n@@ -1 +1 @@\n-x\n+y\n";
    let out = registry
        .call("apply_patch", json!({"patch": patch}), &ToolContext::new())
        .await;
    assert_eq!(out.content, "applied a patch of 5 lines");
    assert_eq!(out.for_user(), patch);
    assert_eq!(out.metadata.get("lines"), Some(&json!(5)));
}

#[tokio::test]
async fn an_error_type_that_displays_is_enough() {
    let registry = registry();
    let ctx = ToolContext::new();
    assert_eq!(
        registry
            .call("divide", json!({"n": 7, "by": 2}), &ctx)
            .await
            .content,
        "3"
    );
    let out = registry
        .call("divide", json!({"n": 7, "by": 0}), &ctx)
        .await;
    assert!(out.is_error);
    assert!(
        out.content.contains("pass a non-zero `by`"),
        "{}",
        out.content
    );
}

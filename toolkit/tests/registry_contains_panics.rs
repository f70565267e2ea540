//! A panic in a tool is an error result for that call, through every entry
//! point of the registry, not only through the batch runner.

use serde_json::json;
use toolsmith::{CallError, ToolContext, ToolError, ToolRegistry, tool};

/// Panics on async threads.
#[tool]
async fn boom() -> String {
    panic!("async boom")
}

/// Panics on the blocking pool.
#[tool]
fn boom_sync() -> String {
    panic!("sync boom")
}

fn registry() -> ToolRegistry {
    let registry = ToolRegistry::new();
    registry.register(BoomTool).unwrap();
    registry.register(BoomSyncTool).unwrap();
    registry
}

#[tokio::test]
async fn call_turns_a_panic_into_an_error_result() {
    let registry = registry();
    for (tool, message) in [("boom", "async boom"), ("boom_sync", "sync boom")] {
        let out = registry.call(tool, json!({}), &ToolContext::new()).await;
        assert!(out.is_error);
        assert!(
            out.content.starts_with(&format!(
                "Error: Tool '{tool}' failed: the tool crashed: {message}"
            )),
            "{}",
            out.content
        );
    }
}

#[tokio::test]
async fn try_call_and_prepared_run_report_the_panic_as_a_typed_error() {
    let registry = registry();
    let expected = CallError::Tool {
        tool: "boom".into(),
        error: ToolError::Panicked("async boom".into()),
    };
    let err = registry
        .try_call("boom", json!({}), &ToolContext::new())
        .await
        .unwrap_err();
    assert_eq!(err, expected);
    let err = registry
        .prepare("boom", json!({}))
        .unwrap()
        .run(&ToolContext::new())
        .await
        .unwrap_err();
    assert_eq!(err, expected);
}

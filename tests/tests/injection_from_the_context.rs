//! Injected parameters: the context (through a renamed import), its
//! cancellation token, and shared state, present or missing.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use serde_json::json;
use tk::{CallError, CancellationToken, ToolContext, ToolError};
use toolsmith_tests::injection::Counter;
use toolsmith_tests::registry_of;

#[tokio::test]
async fn the_context_arrives_through_a_renamed_import() {
    let registry = registry_of(&["whoami"]);
    let ctx = ToolContext::new()
        .with_channel("telegram", "42")
        .with_workspace("/srv/agent");
    assert_eq!(
        registry.call("whoami", json!({}), &ctx).await.content,
        "channel=telegram chat=42 workspace=/srv/agent"
    );
    assert_eq!(
        registry
            .call("whoami", json!({}), &ToolContext::new())
            .await
            .content,
        "channel=- chat=- workspace=-"
    );
}

#[test]
fn injected_parameters_are_not_in_the_schema() {
    let registry = registry_of(&["whoami", "count_visit", "cancel_status", "sync_thread"]);
    let properties = |name: &str| {
        let tool = registry.get(name).expect("registered");
        let keys: Vec<String> = tool.spec().input_schema["properties"]
            .as_object()
            .expect("properties")
            .keys()
            .cloned()
            .collect();
        keys
    };
    assert!(properties("whoami").is_empty());
    assert!(properties("cancel_status").is_empty());
    assert_eq!(properties("count_visit"), ["by"]);
    assert_eq!(properties("sync_thread"), ["tag"]);
}

#[tokio::test]
async fn shared_state_is_injected_by_type() {
    let registry = registry_of(&["count_visit"]);
    let counter = Arc::new(Counter::default());
    let ctx = ToolContext::new().with_shared_state(Arc::clone(&counter));
    assert_eq!(
        registry.call("count_visit", json!({}), &ctx).await.content,
        "visits=1"
    );
    assert_eq!(
        registry
            .call("count_visit", json!({"by": "5"}), &ctx)
            .await
            .content,
        "visits=6"
    );
    // The tool changed the host's own value, not a copy.
    assert_eq!(counter.hits.load(Ordering::SeqCst), 6);
}

#[tokio::test]
async fn missing_state_is_an_error_result_that_names_the_type() {
    let registry = registry_of(&["count_visit"]);
    let out = registry
        .call("count_visit", json!({}), &ToolContext::new())
        .await;
    assert!(out.is_error);
    assert_eq!(
        out.content,
        "Error: Tool 'count_visit' failed: this tool is not set up: it needs a \
         `toolsmith_tests::injection::Counter` in its context, which the host did not provide\n\n\
         [This is not caused by your arguments; tell the user, or use another tool.]"
    );
    let err = registry
        .try_call(
            "count_visit",
            json!({}),
            &ToolContext::new().with_state(7u32),
        )
        .await
        .expect_err("no counter");
    assert_eq!(
        err,
        CallError::Tool {
            tool: "count_visit".into(),
            error: ToolError::MissingState("toolsmith_tests::injection::Counter"),
        }
    );
}

#[tokio::test]
async fn a_sync_tool_reports_missing_state_the_same_way() {
    let registry = registry_of(&["sync_thread"]);
    let err = registry
        .try_call("sync_thread", json!({"tag": "t"}), &ToolContext::new())
        .await
        .expect_err("no counter");
    assert_eq!(
        err,
        CallError::Tool {
            tool: "sync_thread".into(),
            error: ToolError::MissingState("toolsmith_tests::injection::Counter"),
        }
    );
}

#[tokio::test]
async fn the_injected_token_is_the_contexts_token() {
    let registry = registry_of(&["cancel_status"]);
    let ctx = ToolContext::new();
    assert_eq!(
        registry
            .call("cancel_status", json!({}), &ctx)
            .await
            .content,
        "context=false token=false"
    );
    ctx.cancellation().cancel();
    assert_eq!(
        registry
            .call("cancel_status", json!({}), &ctx)
            .await
            .content,
        "context=true token=true"
    );
}

#[tokio::test]
async fn a_tool_waiting_on_its_token_stops_when_the_caller_cancels() {
    let registry = registry_of(&["wait_for_cancel"]);
    let batch = CancellationToken::new();
    let ctx = ToolContext::new().with_cancellation(batch.child_token());
    let call = registry.call("wait_for_cancel", json!({}), &ctx);
    let cancel = async {
        tokio::task::yield_now().await;
        batch.cancel();
    };
    // The limit only keeps a broken build from hanging the run; the tool
    // can only finish if it waits on the very token that was cancelled.
    let (out, ()) = tokio::time::timeout(Duration::from_secs(60), async {
        tokio::join!(call, cancel)
    })
    .await
    .expect("the tool saw the cancellation");
    assert_eq!(out.content, "stopped by cancellation");
    assert!(!out.is_error);
}

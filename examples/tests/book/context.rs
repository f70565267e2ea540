//! Chapter: context, state and cancellation.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde_json::json;
use toolsmith::{CancellationToken, FromContext, ToolContext, ToolError, ToolRegistry, tool};

// ANCHOR: state
/// The host's connection to its key-value store (here, a counter).
#[derive(Default)]
struct Store {
    writes: AtomicU64,
}

/// Remember a value under a key.
#[tool]
async fn remember(
    store: &Store, // injected from the context's state, not in the schema
    ctx: &ToolContext,
    /// The key.
    key: String,
    /// The value.
    value: String,
) -> String {
    let n = store.writes.fetch_add(1, Ordering::SeqCst) + 1;
    let chat = ctx.chat_id().unwrap_or("-");
    format!("{key}={value} saved for chat {chat} (write #{n})")
}
// ANCHOR_END: state

// ANCHOR: from_context
/// Who is asking: derived from the context rather than stored in it.
struct Caller(String);

impl FromContext for Caller {
    fn from_context(ctx: &ToolContext) -> Result<&Self, ToolError> {
        ctx.state::<Caller>()
            .ok_or_else(|| ToolError::failed("this tool needs a signed-in caller"))
    }
}

/// Say who is asking.
#[tool(read_only)]
async fn whoami(caller: &Caller) -> String {
    format!("you are {}", caller.0)
}
// ANCHOR_END: from_context

// ANCHOR: cancellation
/// Count slowly, stopping as soon as the call is cancelled.
#[tool(read_only)]
async fn count_slowly(
    cancel: &CancellationToken,
    /// Where to stop.
    #[arg(maximum = 100)]
    to: u32,
) -> Result<String, ToolError> {
    for i in 0..to {
        tokio::select! {
            _ = cancel.cancelled() => return Err(ToolError::Cancelled),
            _ = tokio::time::sleep(Duration::from_millis(10)) => {}
        }
        let _ = i;
    }
    Ok(format!("counted to {to}"))
}
// ANCHOR_END: cancellation

// ANCHOR: sync_tool
/// Hash a text: CPU-bound work, so a plain `fn` that runs off the async threads.
#[tool(read_only)]
fn checksum(
    /// The text.
    text: String,
) -> String {
    let sum = text
        .bytes()
        .fold(0u32, |acc, b| acc.rotate_left(5) ^ u32::from(b));
    format!("{sum:08x}")
}
// ANCHOR_END: sync_tool

fn registry() -> ToolRegistry {
    let registry = ToolRegistry::new();
    registry.register(RememberTool).unwrap();
    registry.register(WhoamiTool).unwrap();
    registry.register(CountSlowlyTool).unwrap();
    registry.register(ChecksumTool).unwrap();
    registry
}

#[tokio::test]
async fn state_and_context_are_injected() {
    let registry = registry();
    // ANCHOR: state_use
    let store = Arc::new(Store::default());
    let ctx = ToolContext::new()
        .with_channel("telegram", "42")
        .with_shared_state(Arc::clone(&store));
    let out = registry
        .call("remember", json!({"key": "tea", "value": "green"}), &ctx)
        .await;
    assert_eq!(out.content, "tea=green saved for chat 42 (write #1)");
    assert_eq!(store.writes.load(Ordering::SeqCst), 1);

    // Without the state, the call fails with a message naming what is missing.
    let out = registry
        .call(
            "remember",
            json!({"key": "a", "value": "b"}),
            &ToolContext::new(),
        )
        .await;
    assert!(out.is_error);
    assert!(out.content.contains("Store"), "{}", out.content);
    // ANCHOR_END: state_use
}

#[tokio::test]
async fn from_context_types_explain_their_absence() {
    let registry = registry();
    let ctx = ToolContext::new().with_state(Caller("ada".into()));
    assert_eq!(
        registry.call("whoami", json!({}), &ctx).await.content,
        "you are ada"
    );
    let out = registry
        .call("whoami", json!({}), &ToolContext::new())
        .await;
    assert!(out.content.contains("signed-in caller"), "{}", out.content);
}

#[tokio::test]
async fn cancellation_reaches_the_tool() {
    let registry = registry();
    // ANCHOR: cancel_use
    let token = CancellationToken::new();
    let ctx = ToolContext::new().with_cancellation(token.clone());
    token.cancel();
    let out = registry
        .call("count_slowly", json!({"to": 100}), &ctx)
        .await;
    assert!(out.is_error);
    assert!(out.content.contains("cancelled"), "{}", out.content);
    // ANCHOR_END: cancel_use
}

#[tokio::test]
async fn sync_tools_are_called_like_async_ones() {
    let registry = registry();
    let out = registry
        .call("checksum", json!({"text": "hello"}), &ToolContext::new())
        .await;
    assert_eq!(out.content, checksum("hello".into()));
}

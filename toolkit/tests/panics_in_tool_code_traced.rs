//! A case of `panics_in_tool_code.rs` with a tracing subscriber set, so
//! that `registry.call` without layers goes through `Pipeline::run` and
//! `steps` (the span enabled): a panic while a timed-out tool's future is
//! dropped is contained there too. A test binary of its own: the subscriber is
//! global.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::json;
use toolsmith::pipeline::Pipeline;
use toolsmith::{Arguments, Tool, ToolContext, ToolError, ToolOutput, ToolRegistry, ToolSpec};

/// Panics when dropped.
struct PanicOnDrop;

impl Drop for PanicOnDrop {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            panic!("the tool's future panicked while dropped");
        }
    }
}

/// Waits forever holding a value whose drop panics.
struct Stuck(ToolSpec);

#[async_trait]
impl Tool for Stuck {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }
    async fn call(&self, _: Arguments, _: &ToolContext) -> Result<ToolOutput, ToolError> {
        let _bomb = PanicOnDrop;
        std::future::pending::<()>().await;
        unreachable!()
    }
}

/// Enables every span, so calls take the traced path.
struct Everything(AtomicU64);

impl tracing::Subscriber for Everything {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(self.0.fetch_add(1, Ordering::SeqCst) + 1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, _: &tracing::Event<'_>) {}
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

#[tokio::test]
async fn a_panic_while_a_timed_out_future_is_dropped_is_contained_when_traced() {
    let _ = tracing::subscriber::set_global_default(Everything(AtomicU64::new(0)));
    let registry =
        ToolRegistry::new().with_pipeline(Pipeline::new().with_timeout(Duration::from_millis(50)));
    registry
        .register(Stuck(ToolSpec::new(
            "stuck",
            "Waits.",
            json!({"type": "object"}),
        )))
        .unwrap();
    let task =
        tokio::spawn(async move { registry.call("stuck", json!({}), &ToolContext::new()).await });
    let out = tokio::time::timeout(Duration::from_secs(20), task)
        .await
        .expect("bounded")
        .expect("registry.call (traced, no layers) contains a panic of the tool's future");
    assert!(
        out.is_error && out.content.contains("did not finish within"),
        "{}",
        out.content
    );
}

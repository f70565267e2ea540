//! A tool's code that panics outside a poll of its future: its future's
//! drop code, run on a timeout or a cancellation, and a panic payload's own
//! drop code. Both escaped `registry.call` and `try_call` without layers
//! (a layer's containment caught the first, and turned the timeout into a
//! panic); both are contained on every path, and a timeout stays a timeout.
//! The same with a subscriber set is in `panic_while_dropped_traced.rs`.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::json;
use toolsmith::pipeline::{Call, Layer, Next, Pipeline};
use toolsmith::{
    Arguments, CallError, CancellationToken, Tool, ToolContext, ToolError, ToolOutput,
    ToolRegistry, ToolSpec,
};

struct PassThrough;

#[async_trait]
impl Layer for PassThrough {
    async fn handle(&self, call: &mut Call<'_>, next: Next<'_>) -> Result<ToolOutput, CallError> {
        next.run(call).await
    }
}

/// Panics when dropped (a value whose drop code asserts, or owns a tokio
/// runtime: dropping one on an async thread panics).
struct PanicOnDrop(&'static str);

impl Drop for PanicOnDrop {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            panic!("{}", self.0);
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
        let _bomb = PanicOnDrop("the tool's future panicked while dropped");
        std::future::pending::<()>().await;
        unreachable!()
    }
}

/// Panics with a payload whose own drop panics.
struct PayloadBomb(ToolSpec);

#[async_trait]
impl Tool for PayloadBomb {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }
    async fn call(&self, _: Arguments, _: &ToolContext) -> Result<ToolOutput, ToolError> {
        std::panic::panic_any(PanicOnDrop("the panic's payload panicked while dropped"))
    }
}

fn spec(name: &'static str) -> ToolSpec {
    ToolSpec::new(name, "A tool under attack.", json!({"type": "object"}))
}

fn registry(pipeline: Pipeline) -> Arc<ToolRegistry> {
    let pipeline = pipeline.with_timeout(Duration::from_millis(50));
    let registry = ToolRegistry::new().with_pipeline(pipeline);
    registry.register(Stuck(spec("stuck"))).unwrap();
    registry
        .register(PayloadBomb(spec("payload_bomb")))
        .unwrap();
    Arc::new(registry)
}

/// What `registry.call` gave, or the panic that escaped it.
async fn call(
    registry: Arc<ToolRegistry>,
    name: &'static str,
    ctx: ToolContext,
) -> Result<ToolOutput, String> {
    let task = tokio::spawn(async move { registry.call(name, json!({}), &ctx).await });
    tokio::time::timeout(Duration::from_secs(20), task)
        .await
        .expect("bounded")
        .map_err(|error| error.to_string())
}

fn cancelled() -> ToolContext {
    let token = CancellationToken::new();
    token.cancel();
    ToolContext::new().with_cancellation(token)
}

/// Whether `output` is the timeout's error.
fn timed_out(output: &ToolOutput) -> bool {
    output.is_error && output.content.contains("did not finish within")
}

/// A tool timed out while holding a value whose drop panics: the call's
/// answer is the timeout, with a layer or without.
#[tokio::test]
async fn a_panic_while_a_timed_out_future_is_dropped_is_contained() {
    let layered = call(
        registry(Pipeline::new().layer(PassThrough)),
        "stuck",
        ToolContext::new(),
    )
    .await
    .expect("the layered path contains it");
    assert!(timed_out(&layered), "{}", layered.content);
    let fast = call(registry(Pipeline::new()), "stuck", ToolContext::new()).await;
    let fast = fast.expect("registry.call without layers contains a panic of the tool's future");
    assert!(timed_out(&fast), "{}", fast.content);
}

/// The same through `try_call` without layers (`Pipeline::run`).
#[tokio::test]
async fn a_panic_while_a_timed_out_future_is_dropped_is_contained_in_try_call() {
    let registry = registry(Pipeline::new());
    let task = tokio::spawn(async move {
        registry
            .try_call("stuck", json!({}), &ToolContext::new())
            .await
    });
    let result = tokio::time::timeout(Duration::from_secs(20), task)
        .await
        .expect("bounded");
    let error = result
        .expect("try_call contains a panic of the tool's future")
        .unwrap_err();
    assert_eq!(error.kind(), toolsmith::ErrorKind::Timeout, "{error:?}");
}

/// The same for a call cancelled through its token.
#[tokio::test]
async fn a_panic_while_a_cancelled_future_is_dropped_is_contained() {
    let fast = call(registry(Pipeline::new()), "stuck", cancelled()).await;
    let fast = fast.expect("registry.call contains a panic of a cancelled tool's future");
    assert!(
        fast.is_error && fast.content.contains("cancelled"),
        "{}",
        fast.content
    );
}

/// A panic whose payload panics when dropped: the payload is dropped
/// where that second panic is contained too.
#[tokio::test]
async fn a_panic_payload_that_panics_when_dropped_is_contained() {
    let fast = call(
        registry(Pipeline::new()),
        "payload_bomb",
        ToolContext::new(),
    )
    .await;
    let fast = fast.expect("registry.call contains a panic whose payload panics when dropped");
    assert!(
        fast.is_error && fast.content.contains("panic"),
        "{}",
        fast.content
    );
}

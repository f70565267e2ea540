//! A tool removed from the registry while one of its calls runs: the call
//! holds the last reference, so the tool itself is dropped when the call
//! ends, inside `registry.call` / `try_call` on the host's task. A tool
//! whose drop panics (one that owns a tokio runtime does, on an async
//! thread) does not unwind into the host, nor out of the batch `Runner`:
//! the registry drops a tool inside panic containment, as it does a
//! tool's future.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::json;
use tokio::sync::Notify;
use toolsmith::pipeline::{Call, Layer, Next, Pipeline};
use toolsmith::{
    Arguments, CallError, Tool, ToolContext, ToolError, ToolOutput, ToolRegistry, ToolSpec,
};

struct PanicOnDrop;
impl Drop for PanicOnDrop {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            panic!("the tool panicked while dropped");
        }
    }
}

struct Owner {
    spec: ToolSpec,
    started: Arc<Notify>,
    gate: Arc<Notify>,
    _held: PanicOnDrop,
}

#[async_trait]
impl Tool for Owner {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    async fn call(&self, _: Arguments, _: &ToolContext) -> Result<ToolOutput, ToolError> {
        self.started.notify_one();
        self.gate.notified().await;
        Ok("done".into())
    }
}

struct PassThrough;
#[async_trait]
impl Layer for PassThrough {
    async fn handle(&self, call: &mut Call<'_>, next: Next<'_>) -> Result<ToolOutput, CallError> {
        next.run(call).await
    }
}

#[derive(Clone, Copy, Debug)]
enum Path {
    Call,
    CallLayered,
    TryCall,
    Runner,
}

async fn run(path: Path) -> Result<String, String> {
    let pipeline = match path {
        Path::CallLayered => Pipeline::new().layer(PassThrough),
        _ => Pipeline::new(),
    };
    let registry = Arc::new(ToolRegistry::new().with_pipeline(pipeline));
    let (started, gate) = (Arc::new(Notify::new()), Arc::new(Notify::new()));
    registry
        .register(Owner {
            spec: ToolSpec::new("owner", "Owns a value.", json!({"type": "object"})),
            started: started.clone(),
            gate: gate.clone(),
            _held: PanicOnDrop,
        })
        .unwrap();
    let task = tokio::spawn({
        let registry = registry.clone();
        async move {
            let ctx = ToolContext::new();
            match path {
                Path::Runner => {
                    let runner = toolsmith::exec::Runner::new(registry.clone());
                    let calls = vec![toolsmith::exec::ToolCall::new("c1", "owner", json!({}))];
                    let state = runner.run(calls, &ctx).await;
                    state.calls[0]
                        .output
                        .as_ref()
                        .map(|o| o.content.clone())
                        .unwrap_or_default()
                }
                Path::TryCall => registry
                    .try_call("owner", json!({}), &ctx)
                    .await
                    .map(|o| o.content)
                    .unwrap_or_else(|e| e.to_string()),
                _ => registry.call("owner", json!({}), &ctx).await.content,
            }
        }
    });
    tokio::time::timeout(Duration::from_secs(20), started.notified())
        .await
        .expect("the call started");
    // The host takes the tool out (an MCP server's list changed, say) and
    // lets go of it; the call in flight now holds the last reference.
    drop(registry.unregister("owner").expect("registered"));
    gate.notify_one();
    tokio::time::timeout(Duration::from_secs(20), task)
        .await
        .expect("bounded")
        .map_err(|e| e.to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_dropped_as_its_call_ends_does_not_unwind_into_call() {
    let out = run(Path::Call).await;
    assert_eq!(out.as_deref(), Ok("done"), "registry.call");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_dropped_as_its_call_ends_does_not_unwind_into_layered_call() {
    let out = run(Path::CallLayered).await;
    assert_eq!(out.as_deref(), Ok("done"), "registry.call with a layer");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_dropped_as_its_call_ends_does_not_unwind_into_try_call() {
    let out = run(Path::TryCall).await;
    assert_eq!(out.as_deref(), Ok("done"), "registry.try_call");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_dropped_as_its_call_ends_does_not_unwind_into_the_runner() {
    let out = run(Path::Runner).await;
    assert_eq!(out.as_deref(), Ok("done"), "Runner::run");
}

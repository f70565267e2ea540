//! A tool's `spec()` is tool code too. One that panics once the tool is
//! registered (a wrapper whose inner tool went away, say) does not unwind
//! out of `registry.call`, `try_call` or `prepare().run()` when the call
//! fails: the failure is named by the name the registry filed, not by
//! asking the tool again.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::json;
use toolsmith::pipeline::{Call, Layer, Next, Pipeline};
use toolsmith::{
    Arguments, CallError, Tool, ToolContext, ToolError, ToolOutput, ToolRegistry, ToolSpec,
};

struct Fragile {
    spec: ToolSpec,
    armed: Arc<AtomicBool>,
}

#[async_trait]
impl Tool for Fragile {
    fn spec(&self) -> &ToolSpec {
        if self.armed.load(Ordering::SeqCst) {
            panic!("the tool's spec() panicked");
        }
        &self.spec
    }
    async fn call(&self, _: Arguments, _: &ToolContext) -> Result<ToolOutput, ToolError> {
        Err(ToolError::failed("it failed"))
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
    PrepareRun,
}

async fn run(path: Path) -> Result<String, String> {
    let pipeline = match path {
        Path::CallLayered => Pipeline::new().layer(PassThrough),
        _ => Pipeline::new(),
    };
    let registry = Arc::new(ToolRegistry::new().with_pipeline(pipeline));
    let armed = Arc::new(AtomicBool::new(false));
    registry
        .register(Fragile {
            spec: ToolSpec::new("fragile", "Fails.", json!({"type": "object"})),
            armed: armed.clone(),
        })
        .unwrap();
    armed.store(true, Ordering::SeqCst);
    let task = tokio::spawn(async move {
        let ctx = ToolContext::new();
        match path {
            Path::Call | Path::CallLayered => {
                registry.call("fragile", json!({}), &ctx).await.content
            }
            Path::TryCall => format!("{:?}", registry.try_call("fragile", json!({}), &ctx).await),
            Path::PrepareRun => match registry.prepare("fragile", json!({})) {
                Ok(prepared) => format!("{:?}", prepared.run(&ctx).await.map(|o| o.content)),
                Err(e) => format!("prepare: {e}"),
            },
        }
    });
    tokio::time::timeout(Duration::from_secs(20), task)
        .await
        .expect("bounded")
        .map_err(|e| e.to_string())
}

#[tokio::test]
async fn a_failed_call_is_named_without_the_tools_spec_through_call() {
    let out = run(Path::Call).await;
    assert!(out.is_ok(), "{out:?}");
}

#[tokio::test]
async fn a_failed_call_is_named_without_the_tools_spec_through_a_layer() {
    let out = run(Path::CallLayered).await;
    assert!(out.is_ok(), "{out:?}");
}

#[tokio::test]
async fn a_failed_call_is_named_without_the_tools_spec_through_try_call() {
    let out = run(Path::TryCall).await;
    assert!(out.is_ok(), "{out:?}");
}

#[tokio::test]
async fn a_failed_call_is_named_without_the_tools_spec_through_prepare() {
    let out = run(Path::PrepareRun).await;
    assert!(out.is_ok(), "{out:?}");
}

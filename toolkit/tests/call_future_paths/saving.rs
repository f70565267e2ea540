//! With `ShapeConfig::persist_dir`, a call's result is saved off the async
//! threads. Before it starts saving, a call lets go of everything else it
//! held, on both paths: the tool's entry (so a tool unregistered meanwhile
//! is dropped), the arguments, and (on the general path) its `Call`, with
//! whatever context a layer kept in it.

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, Waker};

use async_trait::async_trait;
use serde_json::{Value, json};
use toolsmith::exec::ShapeConfig;
use toolsmith::pipeline::{Call, Layer, Next, Pipeline};
use toolsmith::{
    Arguments, CallError, Tool, ToolContext, ToolError, ToolOutput, ToolRegistry, ToolSpec,
};

struct Drops(Arc<AtomicUsize>);
impl Drop for Drops {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

struct Probe {
    spec: ToolSpec,
    _own: Drops,
}

#[async_trait]
impl Tool for Probe {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    async fn call(&self, args: Arguments, _: &ToolContext) -> Result<ToolOutput, ToolError> {
        let args: Value = args.into_json();
        Ok(args["text"].as_str().unwrap_or_default().to_owned().into())
    }
}

struct PassOn;
#[async_trait]
impl Layer for PassOn {
    async fn handle(&self, call: &mut Call<'_>, next: Next<'_>) -> Result<ToolOutput, CallError> {
        next.run(call).await
    }
}

fn poll<F: Future>(future: std::pin::Pin<&mut F>) -> Poll<F::Output> {
    future.poll(&mut Context::from_waker(Waker::noop()))
}

/// A runtime whose one blocking thread is busy until the sender is dropped
/// (30 s at most): the result's saving is queued behind it, so the first
/// poll of a call that saves is always pending.
fn runtime_with_busy_blocking_pool() -> (tokio::runtime::Runtime, std::sync::mpsc::Sender<()>) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .max_blocking_threads(1)
        .build()
        .unwrap();
    let (release, wait) = std::sync::mpsc::channel::<()>();
    let (started_tx, started) = std::sync::mpsc::channel::<()>();
    rt.spawn_blocking(move || {
        let _ = started_tx.send(());
        let _ = wait.recv_timeout(std::time::Duration::from_secs(30));
    });
    started
        .recv_timeout(std::time::Duration::from_secs(30))
        .unwrap();
    (rt, release)
}

fn check(layered: bool) -> usize {
    let (rt, release) = runtime_with_busy_blocking_pool();
    let _enter = rt.enter();
    let dir = std::env::temp_dir().join(format!(
        "call-future-saving-{}-{layered}",
        std::process::id()
    ));
    let mut pipeline = Pipeline::new().with_shape(ShapeConfig::default().persist_dir(&dir));
    if layered {
        pipeline = pipeline.layer(PassOn);
    }
    let registry = ToolRegistry::new().with_pipeline(pipeline);
    let dropped = Arc::new(AtomicUsize::new(0));
    let schema = json!({"type": "object", "properties": {"text": {"type": "string"}}});
    registry
        .register_arc(Arc::new(Probe {
            spec: ToolSpec::new("probe", "A tool.", schema),
            _own: Drops(dropped.clone()),
        }))
        .unwrap();
    let ctx = ToolContext::new();
    let seen;
    {
        let mut call = pin!(registry.call("probe", json!({"text": "x"}), &ctx));
        // The tool answers at once; the result is now being saved.
        assert!(poll(call.as_mut()).is_pending());
        drop(registry.unregister("probe"));
        seen = dropped.load(Ordering::SeqCst);
        drop(release);
        let out = rt.block_on(call.as_mut());
        assert_eq!(out.content, "x");
    }
    let _ = std::fs::remove_dir_all(&dir);
    seen
}

#[test]
fn fast_path_lets_go_of_the_tool_before_saving() {
    assert_eq!(check(false), 1);
}

#[test]
fn general_path_lets_go_of_the_tool_before_saving() {
    assert_eq!(
        check(true),
        1,
        "the layered call still holds its Call (entry, tool, arguments) while its result is saved"
    );
}

/// A layer that runs the call in a context of its own (`Call::set_context`),
/// holding a value whose drop is counted.
struct OwnContext(Arc<AtomicUsize>);
#[async_trait]
impl Layer for OwnContext {
    async fn handle(&self, call: &mut Call<'_>, next: Next<'_>) -> Result<ToolOutput, CallError> {
        call.set_context(ToolContext::new().with_state(Drops(self.0.clone())));
        next.run(call).await
    }
}

#[test]
fn a_layers_own_context_is_let_go_before_saving() {
    let (rt, release) = runtime_with_busy_blocking_pool();
    let _enter = rt.enter();
    let dir = std::env::temp_dir().join(format!("call-future-saving-{}-ctx", std::process::id()));
    let contexts_dropped = Arc::new(AtomicUsize::new(0));
    let pipeline = Pipeline::new()
        .with_shape(ShapeConfig::default().persist_dir(&dir))
        .layer(OwnContext(contexts_dropped.clone()));
    let registry = ToolRegistry::new().with_pipeline(pipeline);
    let schema = json!({"type": "object", "properties": {"text": {"type": "string"}}});
    registry
        .register_arc(Arc::new(Probe {
            spec: ToolSpec::new("probe", "A tool.", schema),
            _own: Drops(Arc::new(AtomicUsize::new(0))),
        }))
        .unwrap();
    let ctx = ToolContext::new();
    let seen;
    {
        let mut call = pin!(registry.call("probe", json!({"text": "x"}), &ctx));
        assert!(poll(call.as_mut()).is_pending());
        seen = contexts_dropped.load(Ordering::SeqCst);
        drop(release);
        assert_eq!(rt.block_on(call.as_mut()).content, "x");
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(
        seen, 1,
        "the layer's context (and its state) is still alive while the result is saved"
    );
}

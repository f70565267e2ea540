//! A call of a tool whose future is held in place (not boxed) and borrows
//! from its own state across a wait, on both paths, and a call whose result
//! is being saved (`persist_dir`): for Miri, under both borrow models.

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, Waker};

use async_trait::async_trait;
use serde_json::{Value, json};
use toolsmith::exec::ShapeConfig;
use toolsmith::pipeline::Pipeline;
use toolsmith::{
    Arguments, Tool, ToolContext, ToolError, ToolFuture, ToolOutput, ToolRegistry, ToolSpec,
};

use crate::waits::yield_once;

struct Drops(Arc<AtomicUsize>);
impl Drop for Drops {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[derive(Clone, Copy)]
enum Act {
    Answer,
    Forever,
    Panic,
    Fail,
}

struct Borrowing {
    spec: ToolSpec,
    act: Act,
    futures_dropped: Arc<AtomicUsize>,
    _own: Drops,
}

struct CountedBy<'a>(&'a Borrowing);
impl Drop for CountedBy<'_> {
    fn drop(&mut self) {
        self.0.futures_dropped.fetch_add(1, Ordering::SeqCst);
    }
}

#[async_trait]
impl Tool for Borrowing {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    async fn call(&self, _: Arguments, _: &ToolContext) -> Result<ToolOutput, ToolError> {
        unreachable!("start is overridden")
    }
    fn start<'a>(&'a self, args: Arguments, _ctx: &'a ToolContext) -> ToolFuture<'a> {
        let args: Value = args.into_json();
        let text = args["text"].as_str().unwrap_or_default().to_owned();
        let act = self.act;
        let future = ToolFuture::new(async move {
            let _counted = CountedBy(self);
            let own = [7u8; 8];
            let borrowed: &String = &text;
            let mine: &[u8; 8] = &own;
            yield_once().await;
            if let Act::Forever = act {
                std::future::pending::<()>().await;
            }
            match act {
                Act::Answer | Act::Forever => Ok(format!("{borrowed}{}", mine[3]).into()),
                Act::Panic => panic!("bug after the wait: {borrowed}"),
                Act::Fail => Err(ToolError::Failed(format!("failed: {borrowed}"))),
            }
        });
        assert!(future.is_in_place(), "the test needs an in-place future");
        future
    }
}

fn make(pipeline: Pipeline, act: Act) -> (ToolRegistry, Arc<AtomicUsize>, Arc<AtomicUsize>) {
    let dropped = Arc::new(AtomicUsize::new(0));
    let futures_dropped = Arc::new(AtomicUsize::new(0));
    let schema = json!({"type": "object", "properties": {"text": {"type": "string"}}});
    let registry = ToolRegistry::new().with_pipeline(pipeline);
    registry
        .register_arc(Arc::new(Borrowing {
            spec: ToolSpec::new("borrowing", "A tool.", schema),
            act,
            futures_dropped: futures_dropped.clone(),
            _own: Drops(dropped.clone()),
        }))
        .unwrap();
    (registry, dropped, futures_dropped)
}

fn poll<F: Future>(future: std::pin::Pin<&mut F>) -> Poll<F::Output> {
    future.poll(&mut Context::from_waker(Waker::noop()))
}

#[test]
fn in_place_waits_then_answers() {
    let (registry, dropped, futures) = make(Pipeline::new(), Act::Answer);
    let ctx = ToolContext::new();
    {
        let mut call = pin!(registry.call("borrowing", json!({"text": "hi"}), &ctx));
        assert!(poll(call.as_mut()).is_pending());
        drop(registry.unregister("borrowing"));
        let Poll::Ready(out) = poll(call.as_mut()) else {
            panic!("pending")
        };
        assert_eq!(out.content, "hi7");
        assert_eq!(futures.load(Ordering::SeqCst), 1);
        assert_eq!(dropped.load(Ordering::SeqCst), 1);
    }
}

#[test]
fn in_place_dropped_while_waiting() {
    let (registry, dropped, futures) = make(Pipeline::new(), Act::Answer);
    let ctx = ToolContext::new();
    {
        let mut call = Box::pin(registry.call("borrowing", json!({"text": "hi"}), &ctx));
        assert!(poll(call.as_mut()).is_pending());
        drop(registry.unregister("borrowing"));
        drop(call);
    }
    assert_eq!(futures.load(Ordering::SeqCst), 1);
    assert_eq!(dropped.load(Ordering::SeqCst), 1);
}

#[test]
fn in_place_cancelled_while_waiting_and_failures() {
    for (act, cancel, expected) in [
        (Act::Forever, true, "cancelled"),
        (Act::Panic, false, "bug after the wait: hi"),
        (Act::Fail, false, "failed: hi"),
    ] {
        let (registry, _, futures) = make(Pipeline::new(), act);
        let ctx = ToolContext::new();
        let mut call = pin!(registry.call("borrowing", json!({"text": "hi"}), &ctx));
        assert!(poll(call.as_mut()).is_pending());
        if cancel {
            assert!(poll(call.as_mut()).is_pending());
            ctx.cancellation().cancel();
        }
        let Poll::Ready(out) = poll(call.as_mut()) else {
            panic!("pending")
        };
        assert!(out.is_error);
        assert!(out.content.contains(expected), "{}", out.content);
        assert_eq!(futures.load(Ordering::SeqCst), 1);
    }
}

fn saving_pipeline() -> Pipeline {
    // Never written to: the outputs here are short, so nothing is persisted;
    // but with a persist dir, the result is shaped off the async threads.
    Pipeline::new().with_shape(ShapeConfig::default().persist_dir("/nonexistent/call-future"))
}

#[test]
fn saving_stage_after_a_tool_and_after_a_refusal() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let (registry, _, futures) = make(saving_pipeline(), Act::Answer);
    let ctx = ToolContext::new();
    // The tool answers, then the result is saved.
    rt.block_on(async {
        let out = registry
            .call("borrowing", json!({"text": "hi"}), &ctx)
            .await;
        assert_eq!(out.content, "hi7");
        let out = registry.call("nope", json!({}), &ctx).await;
        assert!(out.is_error);
    });
    assert_eq!(futures.load(Ordering::SeqCst), 1);
    // Dropped while saving.
    let _enter = rt.enter();
    let mut call = Box::pin(registry.call("nope", json!({}), &ctx));
    // Mostly pending (the blocking pool has not run the shaping yet); either
    // way the call is dropped after its first poll.
    let _ = poll(call.as_mut());
    drop(call);
}

struct PassOn;
#[async_trait]
impl toolsmith::pipeline::Layer for PassOn {
    async fn handle(
        &self,
        call: &mut toolsmith::pipeline::Call<'_>,
        next: toolsmith::pipeline::Next<'_>,
    ) -> Result<ToolOutput, toolsmith::CallError> {
        next.run(call).await
    }
}

#[test]
fn general_path_in_place_waits_is_dropped_and_is_cancelled() {
    // Answers after the wait, the tool unregistered meanwhile.
    let (registry, dropped, futures) = make(Pipeline::new().layer(PassOn), Act::Answer);
    let ctx = ToolContext::new();
    {
        let mut call = pin!(registry.call("borrowing", json!({"text": "hi"}), &ctx));
        assert!(poll(call.as_mut()).is_pending());
        drop(registry.unregister("borrowing"));
        let Poll::Ready(out) = poll(call.as_mut()) else {
            panic!("pending")
        };
        assert_eq!(out.content, "hi7");
    }
    assert_eq!(
        (
            futures.load(Ordering::SeqCst),
            dropped.load(Ordering::SeqCst)
        ),
        (1, 1)
    );
    // Dropped while waiting.
    let (registry, dropped, futures) = make(Pipeline::new().layer(PassOn), Act::Forever);
    {
        let mut call = Box::pin(registry.call("borrowing", json!({"text": "hi"}), &ctx));
        assert!(poll(call.as_mut()).is_pending());
        drop(registry.unregister("borrowing"));
        drop(call);
    }
    assert_eq!(
        (
            futures.load(Ordering::SeqCst),
            dropped.load(Ordering::SeqCst)
        ),
        (1, 1)
    );
    // Cancelled while waiting.
    let (registry, _, futures) = make(Pipeline::new().layer(PassOn), Act::Forever);
    let ctx = ToolContext::new();
    let mut call = pin!(registry.call("borrowing", json!({"text": "hi"}), &ctx));
    assert!(poll(call.as_mut()).is_pending());
    assert!(poll(call.as_mut()).is_pending());
    ctx.cancellation().cancel();
    let Poll::Ready(out) = poll(call.as_mut()) else {
        panic!("pending")
    };
    assert!(
        out.is_error && out.content.contains("cancelled"),
        "{}",
        out.content
    );
    assert_eq!(futures.load(Ordering::SeqCst), 1);
}

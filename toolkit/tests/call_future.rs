//! The future of `ToolRegistry::call`, polled by hand: it holds the tool's
//! future where it runs and the registry's entry the future borrows from,
//! so each path must drop the future once, before the entry, and keep the
//! entry as long as the future lives, even when the tool is unregistered
//! meanwhile. Natively most of these would pass on a wrong drop order too;
//! they are here for Miri (`scripts/miri.sh`), which reports a use after
//! free or an aliasing violation that no run on real hardware shows.

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, Waker};

use async_trait::async_trait;
use serde_json::{Value, json};
use toolsmith::pipeline::{Call, Layer, Next, Pipeline};
use toolsmith::{
    Arguments, CallError, Tool, ToolContext, ToolError, ToolOutput, ToolRegistry, ToolSpec,
};

#[path = "support/waits.rs"]
mod waits;
use waits::yield_once;

/// Counts its drops.
struct Drops(Arc<AtomicUsize>);

impl Drop for Drops {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// What the probe tool does when called.
#[derive(Clone, Copy)]
enum Act {
    /// Answers at once with its argument.
    Answer,
    /// Waits once (pending, then ready), its argument borrowed across the wait.
    WaitThenAnswer,
    /// Panics while its future is made.
    PanicAtStart,
    /// Panics while its future runs.
    PanicWhileRunning,
    /// Fails.
    Fail,
}

/// A tool that counts its own drops and those of its futures.
struct Probe {
    spec: ToolSpec,
    act: Act,
    futures_dropped: Arc<AtomicUsize>,
    _own: Drops,
}

impl Probe {
    fn new(act: Act) -> (Arc<Self>, Arc<AtomicUsize>, Arc<AtomicUsize>) {
        let dropped = Arc::new(AtomicUsize::new(0));
        let futures_dropped = Arc::new(AtomicUsize::new(0));
        let schema = json!({
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        });
        let probe = Arc::new(Self {
            spec: ToolSpec::new("probe", "A tool.", schema),
            act,
            futures_dropped: futures_dropped.clone(),
            _own: Drops(dropped.clone()),
        });
        (probe, dropped, futures_dropped)
    }
}

/// Counts the drop of a tool's future through the tool itself: a future
/// dropped after its tool would read freed memory here, which Miri reports.
struct CountedBy<'a>(&'a Probe);

impl Drop for CountedBy<'_> {
    fn drop(&mut self) {
        self.0.futures_dropped.fetch_add(1, Ordering::SeqCst);
    }
}

#[async_trait]
impl Tool for Probe {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn call(&self, args: Arguments, _: &ToolContext) -> Result<ToolOutput, ToolError> {
        let _counted = CountedBy(self);
        let args: Value = args.into_json();
        let text = args["text"].as_str().unwrap_or_default().to_owned();
        match self.act {
            Act::Answer => Ok(text.into()),
            Act::WaitThenAnswer => {
                let borrowed: &str = &text;
                yield_once().await;
                Ok(borrowed.to_owned().into())
            }
            Act::PanicAtStart => unreachable!("`start` panics first"),
            Act::PanicWhileRunning => panic!("the tool's own bug"),
            Act::Fail => Err(ToolError::Failed("it did not work".into())),
        }
    }

    fn start<'a>(&'a self, args: Arguments, ctx: &'a ToolContext) -> toolsmith::ToolFuture<'a> {
        if let Act::PanicAtStart = self.act {
            panic!("the tool's own bug, before its future exists");
        }
        toolsmith::ToolFuture::boxed(self.call(args, ctx))
    }
}

fn registry_with(act: Act) -> (ToolRegistry, Arc<AtomicUsize>, Arc<AtomicUsize>) {
    let (probe, dropped, futures_dropped) = Probe::new(act);
    let registry = ToolRegistry::new();
    registry.register_arc(probe).expect("registers");
    (registry, dropped, futures_dropped)
}

fn poll<F: Future>(future: std::pin::Pin<&mut F>) -> Poll<F::Output> {
    future.poll(&mut Context::from_waker(Waker::noop()))
}

fn ready_text(poll: Poll<ToolOutput>) -> String {
    match poll {
        Poll::Ready(output) => output.content,
        Poll::Pending => panic!("the call is still pending"),
    }
}

#[test]
fn a_call_answered_at_once_drops_the_tools_future_before_it_answers() {
    let (registry, _, futures_dropped) = registry_with(Act::Answer);
    let ctx = ToolContext::new();
    let mut call = pin!(registry.call("probe", json!({"text": "hi"}), &ctx));
    assert_eq!(ready_text(poll(call.as_mut())), "hi");
    assert_eq!(futures_dropped.load(Ordering::SeqCst), 1);
}

#[test]
fn a_call_that_waits_answers_on_the_next_poll() {
    let (registry, _, futures_dropped) = registry_with(Act::WaitThenAnswer);
    let ctx = ToolContext::new();
    let mut call = pin!(registry.call("probe", json!({"text": "later"}), &ctx));
    assert!(poll(call.as_mut()).is_pending());
    assert_eq!(futures_dropped.load(Ordering::SeqCst), 0);
    assert_eq!(ready_text(poll(call.as_mut())), "later");
    assert_eq!(futures_dropped.load(Ordering::SeqCst), 1);
}

#[test]
fn a_tool_unregistered_while_its_call_waits_lives_until_the_call_is_done() {
    let (registry, dropped, _) = registry_with(Act::WaitThenAnswer);
    let ctx = ToolContext::new();
    {
        let mut call = pin!(registry.call("probe", json!({"text": "still here"}), &ctx));
        assert!(poll(call.as_mut()).is_pending());
        assert!(registry.unregister("probe").is_some());
        assert_eq!(dropped.load(Ordering::SeqCst), 0, "the call holds the tool");
        assert_eq!(ready_text(poll(call.as_mut())), "still here");
        assert_eq!(
            dropped.load(Ordering::SeqCst),
            1,
            "let go once the call is done"
        );
    }
    assert_eq!(dropped.load(Ordering::SeqCst), 1);
}

#[test]
fn a_call_dropped_while_its_tool_waits_drops_the_future_then_the_tool() {
    let (registry, dropped, futures_dropped) = registry_with(Act::WaitThenAnswer);
    let ctx = ToolContext::new();
    {
        let mut call = Box::pin(registry.call("probe", json!({"text": "x"}), &ctx));
        assert!(poll(call.as_mut()).is_pending());
        assert!(registry.unregister("probe").is_some());
        drop(call);
    }
    assert_eq!(futures_dropped.load(Ordering::SeqCst), 1);
    assert_eq!(dropped.load(Ordering::SeqCst), 1);
}

#[test]
fn a_call_never_polled_runs_nothing() {
    let (registry, dropped, futures_dropped) = registry_with(Act::Answer);
    let ctx = ToolContext::new();
    drop(registry.call("probe", json!({"text": "x"}), &ctx));
    assert_eq!(futures_dropped.load(Ordering::SeqCst), 0);
    drop(registry);
    assert_eq!(dropped.load(Ordering::SeqCst), 1);
}

#[test]
fn panics_and_failures_of_the_tool_are_its_answer() {
    for (act, expected) in [
        (Act::PanicAtStart, "before its future exists"),
        (Act::PanicWhileRunning, "the tool's own bug"),
        (Act::Fail, "it did not work"),
    ] {
        let (registry, _, _) = registry_with(act);
        let ctx = ToolContext::new();
        let mut call = pin!(registry.call("probe", json!({"text": "x"}), &ctx));
        let Poll::Ready(output) = poll(call.as_mut()) else {
            panic!("a failure is ready at once");
        };
        assert!(output.is_error);
        assert!(output.content.contains(expected), "{}", output.content);
    }
}

#[test]
fn refusals_before_the_tool_runs_are_ready_at_once() {
    let (registry, _, futures_dropped) = registry_with(Act::Answer);
    let ctx = ToolContext::new();
    for (name, payload) in [
        ("nope", json!({"text": "x"})),
        ("probe", json!({"text": []})),
    ] {
        let mut call = pin!(registry.call(name, payload, &ctx));
        let Poll::Ready(output) = poll(call.as_mut()) else {
            panic!("a refusal is ready at once");
        };
        assert!(output.is_error, "{}", output.content);
    }
    assert_eq!(futures_dropped.load(Ordering::SeqCst), 0);
}

#[test]
fn a_cancelled_call_stops_at_its_tools_wait() {
    let (registry, _, futures_dropped) = registry_with(Act::WaitThenAnswer);
    let ctx = ToolContext::new();
    ctx.cancellation().cancel();
    let mut call = pin!(registry.call("probe", json!({"text": "x"}), &ctx));
    let Poll::Ready(output) = poll(call.as_mut()) else {
        panic!("a cancelled call stops at the tool's first wait");
    };
    assert!(output.is_error);
    assert_eq!(futures_dropped.load(Ordering::SeqCst), 1);
}

/// A layer that does nothing but pass the call on.
struct PassOn;

#[async_trait]
impl Layer for PassOn {
    async fn handle(&self, call: &mut Call<'_>, next: Next<'_>) -> Result<ToolOutput, CallError> {
        next.run(call).await
    }
}

#[test]
fn a_call_through_layers_takes_the_general_path_alike() {
    let (probe, _, futures_dropped) = Probe::new(Act::WaitThenAnswer);
    let registry = ToolRegistry::new().with_pipeline(Pipeline::new().layer(PassOn));
    registry.register_arc(probe).expect("registers");
    let ctx = ToolContext::new();
    let mut call = pin!(registry.call("probe", json!({"text": "layered"}), &ctx));
    assert!(poll(call.as_mut()).is_pending());
    assert_eq!(ready_text(poll(call.as_mut())), "layered");
    assert_eq!(futures_dropped.load(Ordering::SeqCst), 1);
}

#[test]
#[should_panic(expected = "polled after it finished")]
fn a_call_polled_after_it_answered_says_so() {
    let (registry, _, _) = registry_with(Act::Answer);
    let ctx = ToolContext::new();
    let mut call = pin!(registry.call("probe", json!({"text": "x"}), &ctx));
    assert!(poll(call.as_mut()).is_ready());
    let _ = poll(call.as_mut());
}

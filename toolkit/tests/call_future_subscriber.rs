//! A subscriber set after the call's future is made, before its first poll:
//! the call is recorded, as the path is chosen at the first poll.

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, Waker};

use async_trait::async_trait;
use serde_json::json;
use toolsmith::{Arguments, Tool, ToolContext, ToolError, ToolOutput, ToolRegistry, ToolSpec};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

struct Echo(ToolSpec);
#[async_trait]
impl Tool for Echo {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }
    async fn call(&self, _: Arguments, _: &ToolContext) -> Result<ToolOutput, ToolError> {
        Ok("ok".into())
    }
}

struct CountSpans(Arc<AtomicUsize>);
impl Subscriber for CountSpans {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, attrs: &Attributes<'_>) -> Id {
        if attrs.metadata().name() == "execute_tool" {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
        Id::from_u64(1)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, _: &Event<'_>) {}
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

#[test]
fn a_subscriber_set_before_the_first_poll_records_the_call() {
    let registry = ToolRegistry::new();
    registry
        .register(Echo(ToolSpec::new(
            "echo",
            "A tool.",
            json!({"type": "object"}),
        )))
        .unwrap();
    let ctx = ToolContext::new();
    let spans = Arc::new(AtomicUsize::new(0));
    let mut call = pin!(registry.call("echo", json!({}), &ctx));
    let _guard = tracing::subscriber::set_default(CountSpans(spans.clone()));
    let Poll::Ready(out) = call.as_mut().poll(&mut Context::from_waker(Waker::noop())) else {
        panic!("pending")
    };
    assert_eq!(out.content, "ok");
    assert_eq!(spans.load(Ordering::SeqCst), 1);
}

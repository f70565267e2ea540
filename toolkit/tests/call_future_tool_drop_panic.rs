//! A tool whose own `Drop` panics, dropped by the call (it was unregistered
//! while the call waited, so the call held the last reference to it): the
//! call lets go of the tool while the tool's output waits to be handed
//! over, so a panic unwinding from there would leak that output. The
//! registry contains the panic, the call answers, and a counting allocator,
//! watching the output's one allocation (of a size nothing else uses), sees
//! it freed once.

use std::alloc::{GlobalAlloc, Layout, System};
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicIsize, Ordering};
use std::task::{Context, Poll, Waker};

use async_trait::async_trait;
use serde_json::json;
use toolsmith::{Arguments, Tool, ToolContext, ToolError, ToolOutput, ToolRegistry, ToolSpec};

#[path = "support/waits.rs"]
mod waits;
use waits::yield_once;

const MARKED: usize = 100_003;

struct Counting;
static LIVE_MARKED: AtomicIsize = AtomicIsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if layout.size() == MARKED {
            LIVE_MARKED.fetch_add(1, Ordering::SeqCst);
        }
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if layout.size() == MARKED {
            LIVE_MARKED.fetch_sub(1, Ordering::SeqCst);
        }
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

struct PanicsOnDrop {
    spec: ToolSpec,
    armed: Arc<AtomicBool>,
}

impl Drop for PanicsOnDrop {
    fn drop(&mut self) {
        if self.armed.swap(false, Ordering::SeqCst) {
            panic!("the tool's own Drop panics");
        }
    }
}

#[async_trait]
impl Tool for PanicsOnDrop {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    async fn call(&self, _: Arguments, _: &ToolContext) -> Result<ToolOutput, ToolError> {
        yield_once().await;
        let mut content = String::with_capacity(MARKED);
        content.push_str("answer");
        Ok(ToolOutput::text(content))
    }
}

fn poll<F: Future>(future: std::pin::Pin<&mut F>) -> Poll<F::Output> {
    future.poll(&mut Context::from_waker(Waker::noop()))
}

#[test]
fn a_tool_whose_drop_panics_does_not_leak_the_calls_output() {
    let armed = Arc::new(AtomicBool::new(true));
    let registry = ToolRegistry::new();
    registry
        .register_arc(Arc::new(PanicsOnDrop {
            spec: ToolSpec::new("dropper", "A tool.", json!({"type": "object"})),
            armed: armed.clone(),
        }))
        .unwrap();
    let ctx = ToolContext::new();
    let outcome = {
        let mut call = pin!(registry.call("dropper", json!({}), &ctx));
        assert!(poll(call.as_mut()).is_pending());
        drop(registry.unregister("dropper"));
        let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| poll(call.as_mut())));
        match outcome {
            Ok(Poll::Ready(output)) => format!("answered: {}", &output.content[..6]),
            Ok(Poll::Pending) => "pending".to_owned(),
            Err(_) => "the tool's Drop panic unwound out of poll".to_owned(),
        }
        // The call's future is dropped here.
    };
    assert!(!armed.load(Ordering::SeqCst), "the tool was dropped");
    eprintln!("outcome: {outcome}");
    assert_eq!(
        LIVE_MARKED.load(Ordering::SeqCst),
        0,
        "the tool's output ({MARKED} bytes) is still allocated after everything was dropped ({outcome})"
    );
}

//! A sync `#[tool]` function runs on the blocking pool: never on the thread
//! that drives the async tasks, so a slow or blocking body stalls nothing.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, mpsc};

use serde_json::json;
use tk::ToolContext;
use toolsmith_tests::injection::{Counter, Gate};
use toolsmith_tests::registry_of;

fn this_thread() -> String {
    format!("{:?}", std::thread::current().id())
}

#[tokio::test(flavor = "current_thread")]
async fn a_sync_tool_runs_on_another_thread_than_the_runtime() {
    let registry = registry_of(&["sync_thread", "async_thread"]);
    let counter = Arc::new(Counter::default());
    let ctx = ToolContext::new().with_shared_state(Arc::clone(&counter));

    // On a current-thread runtime, async tools run on the test's own thread...
    let out = registry.call("async_thread", json!({}), &ctx).await;
    assert_eq!(out.content, this_thread());

    // ...and sync tools do not.
    let out = registry
        .call("sync_thread", json!({"tag": "t"}), &ctx)
        .await;
    assert!(!out.is_error, "{}", out.content);
    let (tag, thread) = out.content.split_once(' ').expect("tag and thread");
    assert_eq!(tag, "t");
    assert_ne!(thread, this_thread());
    // State injected into the sync body is the host's.
    assert_eq!(counter.hits.load(Ordering::SeqCst), 1);
}

#[tokio::test(flavor = "current_thread")]
async fn a_blocking_sync_tool_leaves_the_runtime_free() {
    let registry = registry_of(&["block_until_released"]);
    let (release, released) = mpsc::channel();
    let gate = Arc::new(Gate {
        started: AtomicBool::new(false),
        release: Mutex::new(released),
    });
    let ctx = ToolContext::new().with_shared_state(Arc::clone(&gate));

    // This task runs on the same single runtime thread. It can only release
    // the tool if the tool's blocking body is not occupying that thread.
    let releaser = tokio::spawn({
        let gate = Arc::clone(&gate);
        async move {
            while !gate.started.load(Ordering::SeqCst) {
                tokio::task::yield_now().await;
            }
            release.send(()).expect("the tool is waiting");
        }
    });

    let out = registry
        .call("block_until_released", json!(null), &ctx)
        .await;
    assert_eq!(out.content, "released");
    assert!(!out.is_error);
    releaser.await.expect("the releaser finished");
}

//! Synchronous tools that never return cannot use up the blocking pool:
//! each holds one of a bounded number of permits until it returns, and a
//! call that finds none free times out waiting instead of taking a thread.
//!
//! Its own test binary: the limit is process-wide.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

use serde_json::json;
use toolsmith::exec::{CallStatus, Runner, ToolCall, set_blocking_tool_limit};
use toolsmith::{ToolContext, ToolRegistry, tool};

/// What the stuck tool shares with the test.
struct Gate {
    started: AtomicUsize,
    release: Mutex<mpsc::Receiver<()>>,
}

/// Blocks its thread until the test releases it, ignoring cancellation.
#[tool(read_only, timeout = "100ms")]
fn stuck(gate: &Gate) -> String {
    gate.started.fetch_add(1, Ordering::SeqCst);
    let _ = gate
        .release
        .lock()
        .unwrap()
        .recv_timeout(Duration::from_secs(30));
    "released".into()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stuck_sync_tools_hold_at_most_the_limit_of_threads() {
    set_blocking_tool_limit(2);
    let (release, receiver) = mpsc::channel();
    let gate = Arc::new(Gate {
        started: AtomicUsize::new(0),
        release: Mutex::new(receiver),
    });
    let ctx = ToolContext::new().with_shared_state(gate.clone());
    let registry = Arc::new(ToolRegistry::new());
    registry.register(StuckTool).unwrap();
    let runner = Runner::new(registry).with_max_concurrency(8);

    // Six calls, each timing out at 100 ms: only two bodies ever start (one
    // holds the gate's lock, one waits for it); the rest wait for a permit
    // and time out without a thread.
    let calls = (0..6)
        .map(|i| ToolCall::new(i.to_string(), "stuck", json!({})))
        .collect();
    let state = runner.run(calls, &ctx).await;
    assert!(
        state.calls.iter().all(|r| r.status == CallStatus::Error),
        "{state:?}"
    );
    // The two bodies that got permits may start after their calls timed
    // out (a thread takes time to start); the calls that got none are over
    // and can start nothing.
    for _ in 0..200 {
        if gate.started.load(Ordering::SeqCst) >= 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(gate.started.load(Ordering::SeqCst), 2);

    // Released, the two threads return and give their permits back: a new
    // call runs.
    release.send(()).unwrap();
    release.send(()).unwrap();
    release.send(()).unwrap();
    let mut finished = false;
    for _ in 0..100 {
        let state = runner
            .run(vec![ToolCall::new("again", "stuck", json!({}))], &ctx)
            .await;
        if state.calls[0].status == CallStatus::Success {
            finished = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(finished, "no permit came back");
}

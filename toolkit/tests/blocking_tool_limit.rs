//! Synchronous tools that never return cannot use up the blocking pool:
//! each holds one slot of a bounded number until it returns, and a call
//! that finds none free in time fails with an error saying why, while
//! asynchronous tools go on running.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

use serde_json::json;
use toolsmith::exec::{BlockingLimit, CallStatus, Runner, ToolCall, meta};
use toolsmith::{ErrorKind, ToolContext, ToolOutput, ToolRegistry, tool};

/// What the stuck tool shares with the test.
struct Gate {
    started: AtomicUsize,
    release: Mutex<mpsc::Receiver<()>>,
}

/// Blocks its thread until the test closes the channel, ignoring
/// cancellation (the bound on the wait only keeps a failed test finite).
#[tool(read_only, timeout = "300ms")]
fn stuck(gate: &Gate) -> String {
    gate.started.fetch_add(1, Ordering::SeqCst);
    let _ = gate
        .release
        .lock()
        .unwrap()
        .recv_timeout(Duration::from_secs(60));
    "released".into()
}

/// A synchronous tool that returns at once.
#[tool(read_only)]
fn quick() -> String {
    "quick".into()
}

/// An asynchronous tool, which takes no slot.
#[tool(read_only)]
async fn ping() -> String {
    "pong".into()
}

fn kind(out: &ToolOutput) -> Option<ErrorKind> {
    out.metadata.read(&meta::ERROR_KIND)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stuck_sync_tools_hold_at_most_the_limit_and_later_calls_say_why() {
    let (release, receiver) = mpsc::channel::<()>();
    let gate = Arc::new(Gate {
        started: AtomicUsize::new(0),
        release: Mutex::new(receiver),
    });
    let limit = BlockingLimit::new(2).with_wait(Duration::from_millis(50));
    let ctx = ToolContext::new()
        .with_shared_state(gate.clone())
        .with_state(limit.clone());
    let registry = Arc::new(ToolRegistry::new());
    registry.register(StuckTool).unwrap();
    registry.register(QuickTool).unwrap();
    registry.register(PingTool).unwrap();

    // Two calls take the two slots and time out; their threads stay.
    let (first, second) = tokio::join!(
        registry.call("stuck", json!({}), &ctx),
        registry.call("stuck", json!({}), &ctx)
    );
    for out in [&first, &second] {
        assert_eq!(kind(out), Some(ErrorKind::Timeout), "{}", out.content);
    }
    assert_eq!(limit.available(), 0);

    // More calls than the bound: each waits 50 ms for a slot, then fails
    // with the reason, through the registry and through the runner.
    for _ in 0..3 {
        let out = registry.call("stuck", json!({}), &ctx).await;
        assert_eq!(kind(&out), Some(ErrorKind::Unavailable), "{}", out.content);
        assert!(
            out.content.contains("may use 2 threads at once"),
            "{}",
            out.content
        );
    }
    let out = registry.call("quick", json!({}), &ctx).await;
    assert_eq!(kind(&out), Some(ErrorKind::Unavailable), "{}", out.content);
    let runner = Runner::new(Arc::clone(&registry)).with_max_concurrency(8);
    let calls = (0..4)
        .map(|i| ToolCall::new(i.to_string(), "stuck", json!({})))
        .collect();
    let state = runner.run(calls, &ctx).await;
    assert!(
        state.calls.iter().all(|r| r.status == CallStatus::Error),
        "{state:?}"
    );

    // An asynchronous tool still runs, and so does a synchronous one whose
    // context has a bound of its own.
    let out = registry.call("ping", json!({}), &ctx).await;
    assert_eq!(out.content, "pong");
    let other = ToolContext::new().with_state(BlockingLimit::new(1));
    let out = registry.call("quick", json!({}), &other).await;
    assert_eq!(out.content, "quick");

    // Only the two bodies that got slots ever started (the second may
    // start after its call timed out: a thread takes time to start).
    for _ in 0..200 {
        if gate.started.load(Ordering::SeqCst) >= 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(gate.started.load(Ordering::SeqCst), 2);

    // Closed, the channel lets both bodies return; they give their slots
    // back and a new call runs.
    drop(release);
    let mut ran = false;
    for _ in 0..200 {
        if registry.call("quick", json!({}), &ctx).await.content == "quick" {
            ran = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert!(ran, "no slot came back");
    // The other body returns when it gets the channel after the first:
    // its slot comes back a moment later.
    for _ in 0..200 {
        if limit.available() == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(limit.available(), 2);
}

/// With no wait, a call fails at once when no slot is free; with no limit
/// in the context, calls share the process-wide one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_zero_wait_fails_at_once_and_the_default_limit_applies_without_one() {
    let (release, receiver) = mpsc::channel::<()>();
    let gate = Arc::new(Gate {
        started: AtomicUsize::new(0),
        release: Mutex::new(receiver),
    });
    let registry = ToolRegistry::new();
    registry.register(StuckTool).unwrap();
    registry.register(QuickTool).unwrap();
    let none = BlockingLimit::new(1).with_wait(Duration::ZERO);
    let ctx = ToolContext::new()
        .with_shared_state(gate)
        .with_state(none.clone());
    // The slot is taken before the body is handed to the pool, and stays
    // with it after the call timed out.
    let out = registry.call("stuck", json!({}), &ctx).await;
    assert_eq!(kind(&out), Some(ErrorKind::Timeout), "{}", out.content);
    assert_eq!(none.available(), 0);
    let out = registry.call("quick", json!({}), &ctx).await;
    assert_eq!(kind(&out), Some(ErrorKind::Unavailable), "{}", out.content);
    assert!(
        out.content.contains("may use 1 thread at once"),
        "{}",
        out.content
    );

    drop(release);
    for _ in 0..200 {
        if none.available() == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(none.available(), 1);
    let out = registry.call("quick", json!({}), &ctx).await;
    assert_eq!(out.content, "quick");
    let out = registry.call("quick", json!({}), &ToolContext::new()).await;
    assert_eq!(out.content, "quick");
}

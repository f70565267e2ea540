//! Attacks on the bound of synchronous tool bodies: a call dropped while it
//! waits for a slot, or while its body runs, a body that panics, a crowd of
//! callers at once, and a host whose context holds no limit. The slots
//! must always come back exactly when the bodies return, and no more
//! bodies than the bound may ever run at once. Every wait is bounded.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

use serde_json::json;
use toolsmith::exec::{BlockingLimit, meta};
use toolsmith::{ErrorKind, ToolContext, ToolOutput, ToolRegistry, tool};

/// What the held tool shares with the test.
struct Gate {
    started: AtomicUsize,
    running: AtomicUsize,
    most_at_once: AtomicUsize,
    release: Mutex<mpsc::Receiver<()>>,
}

impl Gate {
    fn new() -> (mpsc::Sender<()>, Arc<Gate>) {
        let (release, receiver) = mpsc::channel();
        let gate = Arc::new(Gate {
            started: AtomicUsize::new(0),
            running: AtomicUsize::new(0),
            most_at_once: AtomicUsize::new(0),
            release: Mutex::new(receiver),
        });
        (release, gate)
    }
}

/// Runs until the test closes the channel (at most a minute, so a failed
/// test ends), ignoring cancellation, and counts how many run at once.
#[tool(read_only)]
fn held(gate: &Gate) -> String {
    gate.started.fetch_add(1, Ordering::SeqCst);
    let now = gate.running.fetch_add(1, Ordering::SeqCst) + 1;
    gate.most_at_once.fetch_max(now, Ordering::SeqCst);
    let _ = gate
        .release
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .recv_timeout(Duration::from_secs(60));
    gate.running.fetch_sub(1, Ordering::SeqCst);
    "released".into()
}

/// A body that panics.
#[tool(read_only)]
fn boom() -> String {
    panic!("the body gave up")
}

fn registry() -> Arc<ToolRegistry> {
    let registry = Arc::new(ToolRegistry::new());
    registry.register(HeldTool).unwrap();
    registry.register(BoomTool).unwrap();
    registry
}

fn kind(out: &ToolOutput) -> Option<ErrorKind> {
    out.metadata.read(&meta::ERROR_KIND)
}

/// Wait (bounded) until `limit` has `free` slots.
async fn until_free(limit: &BlockingLimit, free: usize) {
    for _ in 0..600 {
        if limit.available() == free {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{} slots free, not {free}", limit.available());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_dropped_while_waiting_or_running_leaks_no_slot() {
    let (release, gate) = Gate::new();
    let limit = BlockingLimit::new(1).with_wait(Duration::from_secs(30));
    let ctx = ToolContext::new()
        .with_shared_state(gate.clone())
        .with_state(limit.clone());
    let registry = registry();

    // The first call takes the slot; dropping it does not give it back
    // while its body still runs.
    let first = tokio::time::timeout(
        Duration::from_millis(200),
        registry.call("held", json!({}), &ctx),
    )
    .await;
    assert!(first.is_err(), "the held body returned");
    assert_eq!(limit.available(), 0);

    // Calls dropped while they wait for the slot take nothing with them,
    // and their bodies never start.
    for _ in 0..20 {
        let waiting = tokio::time::timeout(
            Duration::from_millis(20),
            registry.call("held", json!({}), &ctx),
        )
        .await;
        assert!(waiting.is_err());
    }
    assert_eq!(gate.started.load(Ordering::SeqCst), 1);
    assert_eq!(limit.available(), 0);

    // The slot comes back when the body returns, and only one is there.
    drop(release);
    until_free(&limit, 1).await;
    assert_eq!(gate.most_at_once.load(Ordering::SeqCst), 1);
    assert_eq!(gate.started.load(Ordering::SeqCst), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_body_gives_its_slot_back() {
    let limit = BlockingLimit::new(1).with_wait(Duration::ZERO);
    let ctx = ToolContext::new().with_state(limit.clone());
    let registry = registry();
    for _ in 0..5 {
        let out = tokio::time::timeout(
            Duration::from_secs(30),
            registry.call("boom", json!({}), &ctx),
        )
        .await
        .expect("a panicking body is answered");
        assert!(out.is_error);
        assert_ne!(kind(&out), Some(ErrorKind::Unavailable), "{}", out.content);
        until_free(&limit, 1).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crowd_of_callers_never_runs_more_bodies_than_the_bound() {
    let (release, gate) = Gate::new();
    let limit = BlockingLimit::new(3).with_wait(Duration::ZERO);
    let ctx = ToolContext::new()
        .with_shared_state(gate.clone())
        .with_state(limit.clone());
    let registry = registry();
    let calls: Vec<_> = (0..40)
        .map(|_| {
            let (registry, ctx) = (registry.clone(), ctx.clone());
            tokio::spawn(async move {
                tokio::time::timeout(
                    Duration::from_millis(300),
                    registry.call("held", json!({}), &ctx),
                )
                .await
            })
        })
        .collect();
    let mut refused = 0;
    for call in calls {
        if let Ok(out) = call.await.unwrap() {
            assert_eq!(kind(&out), Some(ErrorKind::Unavailable), "{}", out.content);
            refused += 1;
        }
    }
    assert_eq!(refused, 37);
    assert_eq!(gate.started.load(Ordering::SeqCst), 3);
    drop(release);
    until_free(&limit, 3).await;
    assert_eq!(gate.most_at_once.load(Ordering::SeqCst), 3);
}

/// A host that puts no limit in its context: the process-wide one bounds
/// the bodies (64), and a call past it is told why after the wait instead
/// of taking a 65th thread. The only test of this file on that limit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_context_without_a_limit_still_cannot_take_the_pool() {
    let (release, gate) = Gate::new();
    let ctx = ToolContext::new().with_shared_state(gate.clone());
    let registry = registry();
    let mut held = Vec::new();
    for _ in 0..64 {
        let (registry, ctx) = (registry.clone(), ctx.clone());
        held.push(tokio::spawn(async move {
            registry.call("held", json!({}), &ctx).await
        }));
    }
    for _ in 0..600 {
        if gate.started.load(Ordering::SeqCst) == 64 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(gate.started.load(Ordering::SeqCst), 64);
    // Past the bound: told after the default wait, within the deadline.
    let out = tokio::time::timeout(
        Duration::from_secs(60),
        registry.call("held", json!({}), &ctx),
    )
    .await
    .expect("the call past the bound is answered");
    assert_eq!(kind(&out), Some(ErrorKind::Unavailable), "{}", out.content);
    assert_eq!(gate.started.load(Ordering::SeqCst), 64);
    assert_eq!(gate.most_at_once.load(Ordering::SeqCst), 64);
    drop(release);
    for call in held {
        let out = tokio::time::timeout(Duration::from_secs(60), call)
            .await
            .expect("released bodies return")
            .unwrap();
        assert_eq!(out.content, "released");
    }
}

//! The file and search tools take their slots from the context's
//! `BlockingLimit`, the same bound synchronous tools and
//! `exec::run_blocking` use: blocking work held elsewhere (a stuck body)
//! leaves them an error that says why, not another thread, and the slot
//! they took comes back when they are done.

mod fs_support;

use std::time::Duration;

use fs_support::Env;
use serde_json::json;
use toolsmith::exec::{BlockingLimit, run_blocking};

/// One slot, no wait: a second piece of blocking work fails at once.
fn env_with_one_slot() -> (Env, BlockingLimit) {
    let mut env = Env::new();
    let limit = BlockingLimit::new(1).with_wait(Duration::ZERO);
    env.ctx = env.ctx.clone().with_state(limit.clone());
    (env, limit)
}

#[tokio::test]
async fn file_tools_wait_on_the_same_slots_as_other_blocking_work() {
    let (env, limit) = env_with_one_slot();
    env.write("notes.txt", "alpha\nbeta\n");

    // A body that holds the only slot until told to let go.
    let (release, held) = std::sync::mpsc::channel::<()>();
    let ctx = env.ctx.clone();
    let stuck = tokio::spawn(async move {
        run_blocking(&ctx, move |_| {
            let _ = held.recv_timeout(Duration::from_secs(30));
        })
        .await
    });
    tokio::time::timeout(Duration::from_secs(10), async {
        while limit.available() != 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("the stuck body takes the slot");

    for (tool, args) in [
        ("read_file", json!({"path": "notes.txt"})),
        ("grep", json!({"pattern": "beta"})),
        ("glob", json!({"pattern": "*.txt"})),
        ("list_dir", json!({"path": "."})),
        ("write_file", json!({"path": "new.txt", "content": "x"})),
    ] {
        let why = env.err(tool, args).await;
        assert!(why.contains("cannot start now"), "{tool}: {why}");
    }
    assert!(!env.exists("new.txt"), "a refused write writes nothing");

    release.send(()).unwrap();
    tokio::time::timeout(Duration::from_secs(10), stuck)
        .await
        .expect("the body returns once released")
        .unwrap()
        .unwrap();
    let read = env.ok("read_file", json!({"path": "notes.txt"})).await;
    assert!(read.content.contains("beta"), "{}", read.content);
    assert_eq!(limit.available(), 1, "the read gave its slot back");
}

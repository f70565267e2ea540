//! A batch of 100 read-only calls through the runner, concurrent against
//! sequential (the same runner with `max_concurrency(1)`).
//!
//! Two tools: one that waits 1 ms like a call to a disk or a server does,
//! where running together pays off; and one that returns at once, which shows
//! what the concurrency machinery itself costs.
//!
//! Run with `cargo bench -p toolsmith --bench batch`; ratios with
//! `python3 scripts/bench_ratios.py batch_io sequential` and
//! `python3 scripts/bench_ratios.py batch_instant sequential`.

use std::sync::Arc;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use toolsmith::exec::{Runner, ToolCall};
use toolsmith::{ToolContext, ToolRegistry, tool};

/// Look something up (waits 1 ms, as I/O would).
#[tool(read_only)]
async fn lookup(key: String) -> String {
    tokio::time::sleep(Duration::from_millis(1)).await;
    key
}

/// Echo the key at once.
#[tool(read_only)]
async fn instant(key: String) -> String {
    key
}

fn calls(tool: &str) -> Vec<ToolCall> {
    (0..100)
        .map(|i| ToolCall::new(format!("call_{i}"), tool, json!({"key": format!("k{i}")})))
        .collect()
}

fn batch(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_time()
        .build()
        .expect("a tokio runtime");
    let registry = Arc::new(ToolRegistry::new());
    registry.register(LookupTool).expect("registers");
    registry.register(InstantTool).expect("registers");
    let concurrent = Runner::new(registry.clone()).with_max_concurrency(100);
    let sequential = Runner::new(registry).with_max_concurrency(1);
    let ctx = ToolContext::new();

    for (group_name, tool) in [("batch_io", "lookup"), ("batch_instant", "instant")] {
        let mut group = c.benchmark_group(group_name);
        group.sample_size(10);
        for (name, runner) in [("sequential", &sequential), ("concurrent", &concurrent)] {
            group.bench_function(name, |b| {
                b.to_async(&runtime).iter(|| async {
                    let state = runner.run(calls(tool), &ctx).await;
                    assert!(state.is_finished());
                    state
                })
            });
        }
        group.finish();
    }
}

criterion_group!(benches, batch);
criterion_main!(benches);

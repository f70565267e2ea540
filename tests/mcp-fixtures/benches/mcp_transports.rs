//! Sequential tool calls, one after the other, from our client
//! (`McpClients`) to our server (the fixture server's `echo`) over each
//! transport: stdio, streamable HTTP without sessions (stateless) and with
//! them (stateful). Each iteration is one whole call and its answer, so the
//! figures are latencies; a fixed delay on one transport (Nagle's algorithm
//! meeting a delayed ACK costs about 40 ms) shows at once beside the others.
//!
//! `cargo bench -p toolsmith-mcp-tests --bench mcp_transports`;
//! `python3 scripts/bench_ratios.py mcp_sequential_calls` prints each
//! transport's time as a ratio of stdio's.

#[path = "../peers.rs"]
mod peers;

use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use tk::mcp::{McpClients, McpConfig};
use tk::{ToolContext, ToolRegistry};

fn sequential_calls(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let stateless = peers::fixture_http(&["--stateless"]);
    let stateful = peers::fixture_http(&[]);
    let config = McpConfig::from_json(&json!({"mcpServers": {
        "stdio": {"command": peers::fixture_server(), "args": ["--stdio"], "enabledTools": ["echo"]},
        "stateless": {"url": stateless.url, "enabledTools": ["echo"]},
        "stateful": {"url": stateful.url, "enabledTools": ["echo"]}
    }}))
    .expect("a valid configuration");
    let registry = Arc::new(ToolRegistry::new());
    let clients = McpClients::new(config, &registry);
    runtime.block_on(async {
        for (server, outcome) in clients.connect().await {
            outcome.unwrap_or_else(|e| panic!("{server}: {e}"));
        }
    });
    let ctx = ToolContext::new();
    let mut group = c.benchmark_group("mcp_sequential_calls");
    for (name, tool) in [
        ("baseline", "mcp_stdio_echo"),
        ("http_stateless", "mcp_stateless_echo"),
        ("http_stateful", "mcp_stateful_echo"),
    ] {
        group.bench_function(name, |b| {
            b.to_async(&runtime).iter(|| async {
                let out = registry
                    .call(tool, json!({"message": "round trip"}), &ctx)
                    .await;
                assert_eq!(out.content, "Echo: round trip", "{out:?}");
                black_box(out)
            })
        });
    }
    group.finish();
    runtime.block_on(clients.disconnect());
}

criterion_group!(benches, sequential_calls);
criterion_main!(benches);

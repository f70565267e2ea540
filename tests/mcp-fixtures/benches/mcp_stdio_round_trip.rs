//! Tool-call round trips over stdio: our server (the fixture server's `echo`,
//! a `#[tool]` function served by `McpServer`) against the reference
//! `server-everything`'s `echo`, both driven by the same client (`McpClients`).
//!
//! Run `scripts/mcp_peers.sh` once, then `cargo bench -p toolsmith-mcp-tests --bench
//! mcp_stdio_round_trip`; `python3 scripts/bench_ratios.py mcp_stdio_echo`
//! prints our time as a ratio of the reference server's.

#[path = "../peers.rs"]
mod peers;

use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use tk::mcp::{McpClients, McpConfig};
use tk::{ToolContext, ToolRegistry};

fn round_trips(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let everything = peers::npm_script("@modelcontextprotocol/server-everything", "dist/index.js");
    let config = McpConfig::from_json(&json!({"mcpServers": {
        "ours": {"command": peers::fixture_server(), "args": ["--stdio"], "enabledTools": ["echo"]},
        "reference": {"command": peers::node(), "args": [everything, "stdio"], "enabledTools": ["echo"]}
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
    let mut group = c.benchmark_group("mcp_stdio_echo");
    for (name, tool) in [
        ("baseline", "mcp_reference_echo"),
        ("toolsmith_server", "mcp_ours_echo"),
    ] {
        // Both answer the same text, so both do the same work on the wire.
        group.bench_function(name, |b| {
            b.to_async(&runtime).iter(|| async {
                let out = registry
                    .call(tool, json!({"message": "round trip"}), &ctx)
                    .await;
                assert_eq!(out.content, "Echo: round trip");
                black_box(out)
            })
        });
    }
    group.finish();
    runtime.block_on(clients.disconnect());
}

criterion_group!(benches, round_trips);
criterion_main!(benches);

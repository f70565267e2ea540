//! What each layer of the pipeline costs per call: `registry.call` on the
//! `forecast` tool with the defaults alone, then with one layer at a time,
//! beside the hand-written baseline in the same run.
//!
//! Run with `cargo bench -p toolsmith --bench pipeline_layers`; the ratios
//! are printed by `python3 scripts/bench_ratios.py pipeline_layers`.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use std::time::Duration;
use toolsmith::exec::{
    ApprovalDecision, ApprovalPolicy, ApprovalRequest, Approver, BeforeCall, CallInfo, Hook,
};

use toolsmith::pipeline::{
    Approval, Cache, CallLimits, Hooks, Mask, Pipeline, Rate, RateLimit, Retry, RetryBudget,
    Validators,
};
use toolsmith::{ToolContext, ToolRegistry, async_trait};

#[path = "common/forecast.rs"]
mod forecast;

use forecast::{ForecastTool, baseline};

/// A hook that looks and lets every call through.
struct Look;

#[async_trait]
impl Hook for Look {
    async fn before(&self, _call: CallInfo<'_>, arguments: &mut serde_json::Value) -> BeforeCall {
        black_box(arguments);
        BeforeCall::Proceed
    }
}

/// Says yes at once.
struct Yes;

#[async_trait]
impl Approver for Yes {
    async fn approve(&self, _request: &ApprovalRequest) -> ApprovalDecision {
        ApprovalDecision::Approve
    }
}

/// The pipelines compared, by name.
fn pipelines() -> Vec<(&'static str, Pipeline)> {
    vec![
        ("defaults", Pipeline::new()),
        ("hooks", Pipeline::new().layer(Hooks::new().with(Look))),
        (
            "validators",
            Pipeline::new().layer(Validators::new().check("forecast", |args| {
                black_box(args);
                Ok(())
            })),
        ),
        (
            "approval_not_needed",
            Pipeline::new().layer(Approval::deny(ApprovalPolicy::RequireForDangerous)),
        ),
        (
            "approval_asked",
            Pipeline::new().layer(Approval::new(ApprovalPolicy::AlwaysRequire, Yes)),
        ),
        ("retry", Pipeline::new().layer(Retry::new())),
        ("retry_budget", Pipeline::new().layer(RetryBudget::new(3))),
        // Every call after the first is a hit.
        (
            "cache_hit",
            Pipeline::new().layer(Cache::new(Duration::from_secs(3600))),
        ),
        (
            "call_limits",
            Pipeline::new().layer(CallLimits::new().per_turn(u32::MAX).per_session(u32::MAX)),
        ),
        (
            "rate_limit",
            Pipeline::new().layer(RateLimit::new().overall(Rate::per_second(u32::MAX))),
        ),
        ("mask", Pipeline::new().layer(Mask::new())),
    ]
}

fn layers(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a tokio runtime");
    let ctx = ToolContext::new();
    let payload = json!({"city": "Oslo", "days": 3, "metric": true});
    let mut group = c.benchmark_group("pipeline_layers");
    group.bench_function("baseline", |b| {
        b.to_async(&runtime)
            .iter(|| async { black_box(baseline(black_box(payload.clone())).await) })
    });
    for (name, pipeline) in pipelines() {
        let registry = ToolRegistry::new().with_pipeline(pipeline);
        registry.register(ForecastTool).expect("registers");
        group.bench_function(name, |b| {
            b.to_async(&runtime).iter(|| async {
                black_box(
                    registry
                        .call("forecast", black_box(payload.clone()), &ctx)
                        .await,
                )
            })
        });
    }
    group.finish();
}

criterion_group!(benches, layers);
criterion_main!(benches);

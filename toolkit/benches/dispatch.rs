//! `registry.call` on a 3-argument tool against the hand-written baseline:
//! `serde_json::from_value` into the arguments struct plus a direct call.
//!
//! Run with `cargo bench -p toolsmith --bench dispatch`; the ratios are printed
//! by `python3 scripts/bench_ratios.py dispatch`.

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use std::hint::black_box;
use toolsmith::{ToolContext, ToolRegistry};

#[path = "common/forecast.rs"]
mod forecast;

use forecast::{ForecastTool, baseline};

fn dispatch(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a tokio runtime");
    let registry = ToolRegistry::new();
    registry.register(ForecastTool).expect("registers");
    let ctx = ToolContext::new();
    let well_typed = json!({"city": "Oslo", "days": 3, "metric": true});
    let needs_casts = json!({"city": "Oslo", "days": "3", "metric": "yes"});

    // Same payload for both; each iteration clones it, as a call consumes it.
    let mut group = c.benchmark_group("dispatch");
    group.bench_function("baseline", |b| {
        b.to_async(&runtime)
            .iter(|| async { black_box(baseline(black_box(well_typed.clone())).await) })
    });
    group.bench_function("registry_well_typed", |b| {
        b.to_async(&runtime).iter(|| async {
            black_box(
                registry
                    .call("forecast", black_box(well_typed.clone()), &ctx)
                    .await,
            )
        })
    });
    group.bench_function("registry_needs_casts", |b| {
        b.to_async(&runtime).iter(|| async {
            black_box(
                registry
                    .call("forecast", black_box(needs_casts.clone()), &ctx)
                    .await,
            )
        })
    });
    // Steps 1 to 5 alone (payload, lookup, cast, validate, bind), to show
    // where the time goes.
    group.bench_function("registry_prepare_only", |b| {
        b.iter(|| black_box(registry.prepare("forecast", black_box(well_typed.clone()))))
    });
    group.bench_function("clone_only", |b| {
        b.iter(|| black_box(black_box(&well_typed).clone()))
    });
    group.finish();
}

criterion_group!(benches, dispatch);
criterion_main!(benches);

//! The same comparison as `dispatch`, counted in instructions instead of
//! nanoseconds: repeatable on a noisy machine. Run through
//! `scripts/dispatch_instructions.sh`, which runs this program under
//! callgrind with two iteration counts and prints instructions per call.
//!
//! Usage: `dispatch_instructions MODE ITERATIONS`, MODE one of `baseline`,
//! `registry`, `registry_casts`.
//!
//! `dispatch_instructions paired ROUNDS` measures wall time instead, in
//! pairs: each round times a batch of the baseline, then of each registry
//! path, back to back, so a burst of load elsewhere falls on both sides of
//! a ratio. It prints the median of the rounds' ratios, which a busy
//! machine moves far less than the ratio of two separate means.

use serde_json::{Value, json};
use std::hint::black_box;
use std::time::Instant;
use toolsmith::{ToolContext, ToolRegistry};

#[path = "common/forecast.rs"]
mod forecast;

use forecast::{ForecastTool, baseline};

/// The paths measured, as named on the command line.
const MODES: [&str; 3] = ["baseline", "registry", "registry_casts"];

/// Calls timed together in one round of `paired`.
const BATCH: u64 = 500;

fn main() {
    let mut args = std::env::args().skip(1);
    let mode = args.next().unwrap_or_default();
    let count: u64 = args.next().and_then(|n| n.parse().ok()).unwrap_or(0);
    if mode != "paired" && !MODES.contains(&mode.as_str()) {
        // `cargo bench` runs every bench target with its own flags: do nothing then.
        return;
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a tokio runtime");
    let registry = ToolRegistry::new();
    registry.register(ForecastTool).expect("registers");
    let ctx = ToolContext::new();
    let well_typed = json!({"city": "Oslo", "days": 3, "metric": true});
    let needs_casts = json!({"city": "Oslo", "days": "3", "metric": "yes"});
    let run = |mode: &str, iterations: u64| {
        let payload = if mode == "registry_casts" {
            &needs_casts
        } else {
            &well_typed
        };
        runtime.block_on(calls(mode, payload, iterations, &registry, &ctx));
    };
    if mode != "paired" {
        run(&mode, count);
        return;
    }
    // Nanoseconds per call, per mode, one entry per round.
    let mut times: [Vec<f64>; 3] = Default::default();
    for _ in 0..count {
        for (mode, times) in MODES.iter().zip(&mut times) {
            let start = Instant::now();
            run(mode, BATCH);
            times.push(start.elapsed().as_nanos() as f64 / BATCH as f64);
        }
    }
    println!("dispatch: wall time per call, median of {count} paired rounds of {BATCH} calls");
    for (mode, own) in MODES.iter().zip(&times) {
        let ratios: Vec<f64> = own.iter().zip(&times[0]).map(|(t, b)| t / b).collect();
        println!(
            "  {mode:<16} {:>8.1} ns   x{:.3}",
            median(own.clone()),
            median(ratios)
        );
    }
}

/// `iterations` calls of the path named `mode` with a copy of `payload`.
/// Each path is a loop of its own, so the code of one does not shape how
/// the compiler lays out the other.
async fn calls(
    mode: &str,
    payload: &Value,
    iterations: u64,
    registry: &ToolRegistry,
    ctx: &ToolContext,
) {
    if mode == "baseline" {
        baseline_calls(payload, iterations).await;
    } else {
        registry_calls(payload, iterations, registry, ctx).await;
    }
}

async fn baseline_calls(payload: &Value, iterations: u64) {
    for _ in 0..iterations {
        let payload = black_box(copy_of(payload));
        black_box(baseline(payload).await);
    }
}

async fn registry_calls(
    payload: &Value,
    iterations: u64,
    registry: &ToolRegistry,
    ctx: &ToolContext,
) {
    for _ in 0..iterations {
        let payload = black_box(copy_of(payload));
        black_box(registry.call("forecast", payload, ctx).await);
    }
}

/// A fresh payload for one call. One function for every path, never
/// inlined: how the compiler lays out the copy would otherwise differ
/// between the paths, and move the baseline by tens of instructions with
/// every change elsewhere in the program.
#[inline(never)]
fn copy_of(payload: &Value) -> Value {
    payload.clone()
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

//! The same comparison as `dispatch`, counted in instructions instead of
//! nanoseconds: repeatable on a noisy machine. Run through
//! `scripts/dispatch_instructions.sh`, which runs this program under
//! callgrind with two iteration counts and prints instructions per call.
//!
//! Usage: `dispatch_instructions MODE ITERATIONS`, MODE one of `baseline`,
//! `registry`, `registry_casts`.

use serde_json::json;
use std::hint::black_box;
use toolsmith::{ToolContext, ToolRegistry};

#[path = "common/forecast.rs"]
mod forecast;

use forecast::{ForecastTool, baseline};

fn main() {
    let mut args = std::env::args().skip(1);
    let mode = args.next().unwrap_or_default();
    let iterations: u64 = args.next().and_then(|n| n.parse().ok()).unwrap_or(0);
    if !matches!(mode.as_str(), "baseline" | "registry" | "registry_casts") {
        // `cargo bench` runs every bench target with its own flags: do nothing then.
        return;
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a tokio runtime");
    let registry = ToolRegistry::new();
    registry.register(ForecastTool).expect("registers");
    let ctx = ToolContext::new();
    let payload = if mode == "registry_casts" {
        json!({"city": "Oslo", "days": "3", "metric": "yes"})
    } else {
        json!({"city": "Oslo", "days": 3, "metric": true})
    };
    runtime.block_on(async {
        for _ in 0..iterations {
            let payload = black_box(payload.clone());
            if mode == "baseline" {
                black_box(baseline(payload).await);
            } else {
                black_box(registry.call("forecast", payload, &ctx).await);
            }
        }
    });
}

//! The tool both dispatch benchmarks call: three arguments, one bounded.
//! The baseline is what a hand-written tool does without the SDK: deserialize
//! the arguments struct with serde and call the function.

use serde_json::Value;
use toolsmith::schemars::JsonSchema;
use toolsmith::serde::Deserialize;
use toolsmith::tool;

/// Forecast the weather.
#[tool(read_only)]
pub async fn forecast(
    /// The city.
    city: String,
    /// How many days ahead.
    #[arg(minimum = 1, maximum = 14)]
    days: u32,
    /// Metric units.
    metric: bool,
) -> String {
    format!("{city}:{days}:{metric}")
}

/// The baseline's arguments, as a hand-written tool would declare them.
#[derive(Deserialize, JsonSchema)]
#[serde(crate = "toolsmith::serde")]
#[schemars(crate = "toolsmith::schemars")]
struct ForecastArgs {
    city: String,
    days: u32,
    metric: bool,
}

/// The hand-written baseline.
pub async fn baseline(payload: Value) -> String {
    let args: ForecastArgs = serde_json::from_value(payload).expect("well-typed payload");
    forecast(args.city, args.days, args.metric).await
}

//! Define tools with `#[tool]`, look at what a model is shown, and make a few
//! calls the way a model would: one that needs lenient casting, one that is
//! rejected with a message the model can act on, and one to a tool that does
//! not exist.
//!
//! Run it with `cargo run --example quickstart`.

use serde_json::json;
use toolsmith::{DefinitionFormat, ToolContext, ToolFilter, ToolRegistry, data, tool};

// `#[data]` derives serde's and schemars' traits through toolsmith's
// re-exports; with `serde` and `schemars` as dependencies of your own,
// `#[derive(Deserialize, JsonSchema)]` does the same.

/// Units for a temperature.
#[data(Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[derive(Debug, Clone, Copy)]
enum Unit {
    Celsius,
    Fahrenheit,
}

/// The weather in one city.
#[data(Serialize, JsonSchema)]
struct Weather {
    city: String,
    temperature: f64,
    unit: &'static str,
}

/// Get the current weather for a city.
///
/// Returns the temperature in the requested unit.
#[tool(read_only, open_world, category = network_read)]
async fn get_weather(
    /// City name, such as "Oslo".
    #[arg(min_length = 1)]
    city: String,
    /// Celsius or fahrenheit.
    #[arg(default = Unit::Celsius)]
    unit: Unit,
) -> Weather {
    let celsius = 4.5;
    let (temperature, unit) = match unit {
        Unit::Celsius => (celsius, "°C"),
        Unit::Fahrenheit => (celsius * 9.0 / 5.0 + 32.0, "°F"),
    };
    Weather {
        city,
        temperature,
        unit,
    }
}

/// Wait, then say how long the wait was.
#[tool(read_only)]
async fn wait(
    /// Seconds to wait.
    #[arg(minimum = 0, maximum = 600)]
    seconds: u32,
    /// Say it loudly.
    #[arg(default = false)]
    loud: bool,
) -> String {
    // A real tool would sleep here; the example only reports.
    let text = format!("waited {seconds} s");
    if loud { text.to_uppercase() } else { text }
}

#[tokio::main]
async fn main() {
    let registry = ToolRegistry::from_inventory(&ToolFilter::default())
        .expect("the tools in this file have unique names");
    let ctx = ToolContext::new();

    println!("== What the model is shown (OpenAI function calling) ==");
    for definition in registry.definitions(DefinitionFormat::OpenAi).iter() {
        println!("{}", serde_json::to_string_pretty(definition).unwrap());
    }

    println!("\n== A call that needs lenient casting ==");
    // Models often send numbers and booleans as strings.
    let payload = json!({"seconds": "60", "loud": "yes"});
    println!("model sends: wait {payload}");
    let prepared = registry.prepare("wait", payload.clone()).unwrap();
    for cast in prepared.casts() {
        println!("cast: {cast}");
    }
    println!("result: {}", registry.call("wait", payload, &ctx).await);

    println!("\n== A structured result ==");
    let out = registry
        .call("get_weather", json!({"city": "Oslo"}), &ctx)
        .await;
    println!("result: {out}");

    println!("\n== A call that is rejected ==");
    let payload = json!({"seconds": 900, "lod": true});
    println!("model sends: wait {payload}");
    println!("{}", registry.call("wait", payload, &ctx).await);

    println!("\n== A tool that does not exist ==");
    println!("model calls: getWeather");
    println!(
        "{}",
        registry
            .call("getWeather", json!({"city": "Oslo"}), &ctx)
            .await
    );
}

//! Chapter: testing your tools.

// ANCHOR: tool
use toolsmith::{ToolContext, ToolError, tool};

/// Convert a temperature between Celsius and Fahrenheit.
#[tool(read_only)]
pub async fn convert(
    /// The temperature.
    value: f64,
    /// `c` to convert Celsius to Fahrenheit, `f` for the other way.
    #[arg(pattern = "^[cf]$")]
    from: String,
) -> Result<String, ToolError> {
    match from.as_str() {
        "c" => Ok(format!("{:.1} °F", value * 9.0 / 5.0 + 32.0)),
        _ => Ok(format!("{:.1} °C", (value - 32.0) * 5.0 / 9.0)),
    }
}
// ANCHOR_END: tool

// ANCHOR: tests
#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use toolsmith::{ToolFilter, ToolRegistry};

    // The function is still a function: test its logic directly.
    #[tokio::test]
    async fn converts_both_ways() {
        assert_eq!(convert(100.0, "c".into()).await.unwrap(), "212.0 °F");
        assert_eq!(convert(212.0, "f".into()).await.unwrap(), "100.0 °C");
    }

    // Through a registry: what a model sends, casting and validation included.
    #[tokio::test]
    async fn answers_what_models_send() {
        let registry =
            ToolRegistry::from_inventory(&ToolFilter::default().names(["convert"])).unwrap();
        let ctx = ToolContext::new();
        let out = registry
            .call("convert", json!({"value": "100", "from": "c"}), &ctx)
            .await;
        assert_eq!(out.content, "212.0 °F");

        let out = registry
            .call("convert", json!({"value": 1, "from": "k"}), &ctx)
            .await;
        assert!(out.is_error);
        assert!(out.content.contains("from"), "{}", out.content);
    }
}
// ANCHOR_END: tests

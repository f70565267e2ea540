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

// ANCHOR: robust
#[cfg(test)]
mod robustness {
    use super::ConvertTool;
    use std::time::Duration;
    use toolsmith::testing::{ArgumentGenerator, CaseKind, Robustness};
    use toolsmith::{Tool, ToolFilter, ToolRegistry};

    // Arguments from the schema: valid, sloppy and invalid, the same for
    // the same seed.
    #[test]
    fn generated_cases() {
        let mut generator = ArgumentGenerator::new(ConvertTool.spec(), 7).unwrap();
        let cases = generator.cases(20);
        for case in &cases {
            println!("{:?} ({}): {}", case.kind, case.note, case.arguments);
        }
        assert!(cases.iter().any(|c| c.kind == CaseKind::Invalid));
    }

    // Two hundred calls through the registry: none may crash, every error
    // must say what to fix, and valid arguments must work.
    #[tokio::test]
    async fn convert_is_robust() {
        let registry =
            ToolRegistry::from_inventory(&ToolFilter::default().names(["convert"])).unwrap();
        let run = Robustness::new(&registry, "convert")
            .cases(200)
            .seed(1)
            .assert();
        let report = tokio::time::timeout(Duration::from_secs(30), run)
            .await
            .expect("the calls took too long");
        println!("{report}");
    }
}
// ANCHOR_END: robust

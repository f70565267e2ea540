//! A panic while a tool's future is made (its arguments read, its
//! injected values taken) is the tool's failure on every path, like a panic
//! while it runs: through a layered pipeline, through `registry.call` with
//! no layer (where the tool is started outside any layer's containment),
//! and through the bare steps (`prepare`, then `PreparedCall::run`).

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::json;
use toolsmith::pipeline::{Call, Layer, Next, Pipeline};
use toolsmith::{CallError, ToolContext, ToolError, ToolOutput, ToolRegistry, tool};

struct PassThrough;

#[async_trait]
impl Layer for PassThrough {
    async fn handle(&self, call: &mut Call<'_>, next: Next<'_>) -> Result<ToolOutput, CallError> {
        next.run(call).await
    }
}

/// A value whose reading panics (a host type with a broken `Deserialize`).
#[derive(Debug)]
struct Touchy;

impl<'de> serde::Deserialize<'de> for Touchy {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        if text == "boom" {
            panic!("reading the argument broke");
        }
        Ok(Touchy)
    }
}

impl schemars::JsonSchema for Touchy {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Touchy".into()
    }
    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        String::json_schema(generator)
    }
}

/// Take a touchy value.
#[tool]
async fn touchy(value: Touchy) -> String {
    format!("{value:?}")
}

/// The output of a call of `touchy` that panics while its argument is
/// read, or the panic that escaped the call.
async fn touchy_call(pipeline: Pipeline) -> Result<ToolOutput, String> {
    let registry = ToolRegistry::new().with_pipeline(pipeline);
    registry.register(TouchyTool).unwrap();
    let registry = Arc::new(registry);
    let task = tokio::spawn(async move {
        registry
            .call("touchy", json!({"value": "boom"}), &ToolContext::new())
            .await
    });
    tokio::time::timeout(Duration::from_secs(20), task)
        .await
        .expect("bounded")
        .map_err(|error| error.to_string())
}

#[tokio::test]
async fn a_panic_while_reading_arguments_is_contained_on_both_paths() {
    let layered = touchy_call(Pipeline::new().layer(PassThrough))
        .await
        .expect("the layered path contains the panic");
    assert!(layered.is_error, "{}", layered.content);
    let fast = touchy_call(Pipeline::new())
        .await
        .expect("the call without layers contains the panic");
    assert_eq!(fast.content, layered.content);
}

#[tokio::test]
async fn a_panic_while_reading_arguments_is_contained_by_the_bare_steps() {
    let registry = ToolRegistry::new();
    registry.register(TouchyTool).unwrap();
    let prepared = registry
        .check("touchy", json!({"value": "boom"}))
        .expect("the schema takes any string");
    // `bind` keeps JSON for a hand-written tool; `#[tool]` reads at `start`.
    let prepared = prepared.bind();
    let result = match prepared {
        Ok(prepared) => {
            tokio::time::timeout(Duration::from_secs(20), prepared.run(&ToolContext::new()))
                .await
                .expect("bounded")
        }
        Err(error) => Err(error),
    };
    let error = result.expect_err("the panic is the call's failure");
    assert!(
        matches!(&error, CallError::Tool { error: ToolError::Panicked(said), .. } if said == "reading the argument broke"),
        "{error}"
    );
}

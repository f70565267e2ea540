//! A crate may forbid the naming lints (and `dead_code`, `deprecated`),
//! and then no `allow` of them may appear in it, not even in a macro's
//! output: what `#[tool]` writes for a tool of up to 16 parameters neither
//! trips them nor lifts them. Out of reach: `non_upper_case_globals`,
//! which `inventory`'s registration lifts for a static of its own, and
//! the naming lints for a tool of more than 16 parameters or a flattened
//! one beside others, whose struct serde's derive reads (it lifts them
//! for its own field enum).

#![forbid(non_camel_case_types, non_snake_case, dead_code, deprecated)]
#![deny(warnings)]

use serde_json::json;
use tk::{ToolContext, ToolRegistry, tool};

/// Greet someone.
#[tool]
pub async fn greet(
    /// Who to greet.
    #[arg(default = "you")]
    who: String,
) -> String {
    format!("Hello, {who}!")
}

/// A name with capitals and a dash, which the name marker spells in code.
#[tool(name = "Shout-Back")]
pub fn shout_back(
    /// What to shout.
    text: String,
    context: &ToolContext,
) -> String {
    let _ = context;
    text.to_uppercase()
}

#[tokio::test]
async fn tools_compile_and_run_where_the_naming_lints_are_forbidden() {
    let registry = ToolRegistry::new();
    registry.register(GreetTool).unwrap();
    registry.register(ShoutBackTool).unwrap();
    let ctx = ToolContext::new();
    assert_eq!(
        registry.call("greet", json!({}), &ctx).await.content,
        "Hello, you!"
    );
    assert_eq!(
        registry
            .call("Shout-Back", json!({"text": "hi"}), &ctx)
            .await
            .content,
        "HI"
    );
}

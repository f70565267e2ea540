//! Chapter: provider dialects.

use serde_json::json;
use toolsmith::exec::ToolCall;
use toolsmith::{DefinitionFormat, ToolRegistry, tool};

/// Book a table, with two-factor confirmation.
#[tool(name = "2fa_table")]
async fn book_table(
    /// Guests.
    #[arg(minimum = 1, maximum = 12)]
    guests: u8,
    /// A note for the kitchen.
    note: Option<String>,
) -> String {
    format!(
        "table for {guests}{}",
        note.map(|n| format!(" ({n})")).unwrap_or_default()
    )
}

#[test]
fn one_schema_many_dialects() {
    let registry = ToolRegistry::new();
    registry.register(BookTableTool).unwrap();
    // ANCHOR: dialects
    let openai = &registry.definitions(DefinitionFormat::OpenAi)[0];
    assert_eq!(openai["type"], "function");
    assert_eq!(openai["function"]["name"], "2fa_table");

    // Strict mode: every property required, optional ones nullable.
    let strict = &registry.definitions(DefinitionFormat::OpenAiStrict)[0];
    let parameters = &strict["function"]["parameters"];
    assert_eq!(strict["function"]["strict"], true);
    assert_eq!(parameters["required"], json!(["guests", "note"]));
    assert_eq!(parameters["additionalProperties"], false);

    let anthropic = &registry.definitions(DefinitionFormat::Anthropic)[0];
    assert_eq!(
        anthropic["input_schema"]["properties"]["guests"]["maximum"],
        12
    );

    // Gemini names may not start with a digit: the name is sanitized, and a
    // call under the sanitized name still finds the tool.
    let gemini = &registry.definitions(DefinitionFormat::Gemini)[0];
    assert_eq!(gemini["name"], "_2fa_table");
    assert!(registry.get("_2fa_table").is_some());
    // ANCHOR_END: dialects
}

#[test]
fn calls_arrive_in_each_providers_wire_format() {
    // ANCHOR: wire
    let from_openai = ToolCall::from_openai_chat(&json!({
        "id": "call_1", "type": "function",
        "function": {"name": "2fa_table", "arguments": "{\"guests\": 2}"}
    }))
    .unwrap();
    let from_anthropic = ToolCall::from_anthropic(&json!({
        "type": "tool_use", "id": "toolu_1", "name": "2fa_table", "input": {"guests": 2}
    }))
    .unwrap();
    assert_eq!(from_openai.name, from_anthropic.name);
    // ANCHOR_END: wire
}

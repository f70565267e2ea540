//! The plugin protocol: one JSON object per line, each way.
//!
//! The host starts the plugin executable with no arguments and keeps it
//! running. It writes requests to the plugin's stdin and reads one response
//! line per request from its stdout:
//!
//! ```text
//! → {"id": 1, "method": "describe"}
//! ← {"id": 1, "tools": [{"name": "word_count", "description": "Count words",
//!                        "input_schema": {"type": "object", "properties": {"text": {"type": "string"}}}}]}
//! → {"id": 2, "method": "call", "tool": "word_count", "arguments": {"text": "a b c"}}
//! ← {"id": 2, "content": "3"}
//! ← {"id": 3, "content": "no such file", "is_error": true}   (a failed call)
//! ← {"id": 4, "error": "internal failure"}                    (also a failed call)
//! ```
//!
//! `content` may be any JSON; an object is also kept as structured output.
//! What the plugin writes to stderr is kept (its end) to explain a crash.

use serde_json::{Map, Value, json};
use toolkit::ToolOutput;
use toolkit::args::ArgumentSchema;

use crate::config::error::ConfigError;

/// The request that asks a plugin for its tools.
pub(crate) fn describe_request(id: u64) -> Value {
    json!({"id": id, "method": "describe"})
}

/// The request that runs one tool.
pub(crate) fn call_request(id: u64, tool: &str, arguments: Value) -> Value {
    json!({"id": id, "method": "call", "tool": tool, "arguments": arguments})
}

/// A tool as a plugin describes it.
#[derive(Debug, Clone)]
pub(crate) struct Described {
    pub name: String,
    pub description: String,
    pub input_schema: Value,
}

/// The tools in a `describe` response; every problem names the tool and field.
pub(crate) fn read_description(
    response: &Map<String, Value>,
    file: &str,
) -> Result<Vec<Described>, Vec<ConfigError>> {
    let Some(list) = response.get("tools").and_then(Value::as_array) else {
        return Err(vec![
            ConfigError::in_file(file, "the describe response has no `tools` list").field("tools"),
        ]);
    };
    let mut errors = Vec::new();
    let mut tools = Vec::new();
    for (index, entry) in list.iter().enumerate() {
        let name = entry.get("name").and_then(Value::as_str);
        let tool_label = name.map_or_else(|| format!("#{}", index + 1), str::to_owned);
        let error = |field: &str, message: &str| {
            ConfigError::in_file(file, message)
                .tool(&tool_label)
                .field(field)
        };
        let Some(name) = name.filter(|n| toolkit::is_valid_tool_name(n)) else {
            errors.push(error(
                "name",
                "expected a tool name of 1 to 64 characters from A-Z, a-z, 0-9, '_' and '-'",
            ));
            continue;
        };
        let Some(description) = entry.get("description").and_then(Value::as_str) else {
            errors.push(error("description", "expected a string"));
            continue;
        };
        let schema = entry
            .get("input_schema")
            .cloned()
            .unwrap_or_else(|| json!({"type": "object", "properties": {}}));
        if schema.get("type") != Some(&json!("object")) {
            errors.push(error(
                "input_schema.type",
                "expected \"object\": a tool takes named arguments",
            ));
            continue;
        }
        if let Err(e) = ArgumentSchema::compile(&schema) {
            errors.push(error("input_schema", &e.to_string()));
            continue;
        }
        if tools.iter().any(|t: &Described| t.name == name) {
            errors.push(error("name", "described twice; tool names must be unique"));
            continue;
        }
        tools.push(Described {
            name: name.to_owned(),
            description: description.to_owned(),
            input_schema: schema,
        });
    }
    if errors.is_empty() {
        Ok(tools)
    } else {
        Err(errors)
    }
}

/// The output of a `call` response.
pub(crate) fn read_output(response: &Map<String, Value>) -> Result<ToolOutput, String> {
    if let Some(error) = response.get("error") {
        let text = match error {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        };
        return Ok(ToolOutput::error(text));
    }
    let Some(content) = response.get("content") else {
        return Err("the response has neither `content` nor `error`".into());
    };
    let is_error = response
        .get("is_error")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    Ok(ToolOutput::from_json(content.clone()).with_is_error(is_error))
}

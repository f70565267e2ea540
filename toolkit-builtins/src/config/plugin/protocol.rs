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
//!
//! A described tool may also say how it behaves, which decides how the
//! host runs it (alone or beside other calls, with or without approval):
//!
//! ```text
//! {"name": "delete_note", "description": "...", "input_schema": {...},
//!  "annotations": {"destructive": true, "idempotent": true},
//!  "category": "filesystem_write",
//!  "timeout_seconds": 10}
//! ```
//!
//! `annotations` takes `read_only`, `exclusive`, `destructive`,
//! `idempotent` and `open_world` (booleans, false when left out);
//! `category` one of the [`ToolCategory`] names, which sets the risk
//! level; `timeout_seconds` how long one call may take (more than 0, at
//! most 3600), in place of the plugin-wide timeout.

use std::time::Duration;

use serde_json::{Map, Value, json};
use toolsmith::args::ArgumentSchema;
use toolsmith::{ToolAnnotations, ToolCategory, ToolOutput};

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
    pub annotations: ToolAnnotations,
    pub category: Option<ToolCategory>,
    pub timeout: Option<Duration>,
}

/// The longest call a plugin may declare.
const MAX_TIMEOUT_SECONDS: f64 = 3600.0;

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
        let Some(name) = name.filter(|n| toolsmith::is_valid_tool_name(n)) else {
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
        let behaviour = (
            read_annotations(entry.get("annotations")),
            read_category(entry.get("category")),
            read_timeout(entry.get("timeout_seconds")),
        );
        let (annotations, category, timeout) = match behaviour {
            (Ok(a), Ok(c), Ok(t)) => (a, c, t),
            (a, c, t) => {
                let problems = [a.err(), c.err(), t.err()];
                errors.extend(
                    problems
                        .into_iter()
                        .flatten()
                        .map(|(field, message)| error(&field, &message)),
                );
                continue;
            }
        };
        tools.push(Described {
            name: name.to_owned(),
            description: description.to_owned(),
            input_schema: schema,
            annotations,
            category,
            timeout,
        });
    }
    if errors.is_empty() {
        Ok(tools)
    } else {
        Err(errors)
    }
}

/// A problem with one field: the field's path and what is wrong.
type FieldProblem = (String, String);

/// `annotations`: an object of known flags, each a boolean.
fn read_annotations(value: Option<&Value>) -> Result<ToolAnnotations, FieldProblem> {
    let mut annotations = ToolAnnotations::default();
    let Some(value) = value else {
        return Ok(annotations);
    };
    let Some(flags) = value.as_object() else {
        return Err((
            "annotations".into(),
            "expected an object of booleans".into(),
        ));
    };
    for (key, flag) in flags {
        let slot = match key.as_str() {
            "read_only" => &mut annotations.read_only,
            "exclusive" => &mut annotations.exclusive,
            "destructive" => &mut annotations.destructive,
            "idempotent" => &mut annotations.idempotent,
            "open_world" => &mut annotations.open_world,
            _ => {
                return Err((
                    format!("annotations.{key}"),
                    "unknown; expected read_only, exclusive, destructive, idempotent or open_world"
                        .into(),
                ));
            }
        };
        *slot = flag.as_bool().ok_or_else(|| {
            (
                format!("annotations.{key}"),
                "expected true or false".into(),
            )
        })?;
    }
    Ok(annotations)
}

/// `category`: one of the category names.
fn read_category(value: Option<&Value>) -> Result<Option<ToolCategory>, FieldProblem> {
    let Some(value) = value else {
        return Ok(None);
    };
    let name = value.as_str().unwrap_or_default();
    ToolCategory::ALL
        .into_iter()
        .find(|c| c.as_str() == name)
        .map(Some)
        .ok_or_else(|| {
            let names: Vec<&str> = ToolCategory::ALL.iter().map(|c| c.as_str()).collect();
            (
                "category".into(),
                format!("expected one of {}", names.join(", ")),
            )
        })
}

/// `timeout_seconds`: a number of seconds, more than 0 and at most an hour.
fn read_timeout(value: Option<&Value>) -> Result<Option<Duration>, FieldProblem> {
    let Some(value) = value else {
        return Ok(None);
    };
    match value.as_f64() {
        Some(seconds) if seconds > 0.0 && seconds <= MAX_TIMEOUT_SECONDS => {
            Ok(Some(Duration::from_secs_f64(seconds)))
        }
        _ => Err((
            "timeout_seconds".into(),
            format!("expected a number of seconds, more than 0 and at most {MAX_TIMEOUT_SECONDS}"),
        )),
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

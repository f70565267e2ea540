//! Reading a file of tool definitions: JSON, or TOML by its extension.
//!
//! ```json
//! { "tools": [
//!     { "name": "summarize_url", "description": "...", "action": "Fetch {{url}} and ...",
//!       "parameters": { "url": "string" } },
//!     { "name": "disk_usage", "description": "...", "command": "du -sh {{path}}",
//!       "parameters": { "path": { "type": "string" } }, "timeout_secs": 10 }
//! ] }
//! ```
//!
//! A definition with `action` is a composed tool; one with `command` is a
//! command tool. A top-level array is read as the `tools` list.

use std::path::Path;
use std::sync::Arc;

use serde_json::{Map, Value};
use toolsmith::{Tool, is_valid_tool_name};

use super::composed::ComposedTool;
use super::error::{ConfigError, ConfigErrors};
use super::params::{Params, Place};
use super::template::Template;

/// Read the tools defined in the file at `path` (`.toml` is read as TOML,
/// anything else as JSON). Errors name the file, the tool and the field.
pub fn load_file(path: impl AsRef<Path>) -> Result<Vec<Arc<dyn Tool>>, ConfigErrors> {
    let path = path.as_ref();
    let label = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|e| ConfigError::in_file(&label, format!("cannot read it: {e}")))?;
    let is_toml = path.extension().is_some_and(|ext| ext == "toml");
    let value = if is_toml {
        parse_toml(&text, &label)?
    } else {
        parse_json(&text, &label)?
    };
    parse_definitions(&value, &label)
}

/// Read tools from JSON text; `file` names it in errors.
pub fn parse_json_str(text: &str, file: &str) -> Result<Vec<Arc<dyn Tool>>, ConfigErrors> {
    parse_definitions(&parse_json(text, file)?, file)
}

fn parse_json(text: &str, file: &str) -> Result<Value, ConfigError> {
    serde_json::from_str(text)
        .map_err(|e| ConfigError::in_file(file, format!("not valid JSON: {e}")))
}

fn parse_toml(text: &str, file: &str) -> Result<Value, ConfigError> {
    toml::from_str::<Value>(text).map_err(|e| {
        let at = e.span().map_or_else(String::new, |span| {
            let before = text.get(..span.start).unwrap_or(text);
            let line = before.matches('\n').count() + 1;
            let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
            format!(" at line {line} column {column}")
        });
        ConfigError::in_file(file, format!("not valid TOML{at}: {}", e.message().trim()))
    })
}

/// Build the tools a parsed definition file describes, reporting every problem.
pub fn parse_definitions(value: &Value, file: &str) -> Result<Vec<Arc<dyn Tool>>, ConfigErrors> {
    let list = match value {
        Value::Array(list) => list,
        Value::Object(top) => match top.get("tools") {
            Some(Value::Array(list)) => list,
            Some(_) => {
                return Err(
                    ConfigError::in_file(file, "expected a list of tool definitions")
                        .field("tools")
                        .into(),
                );
            }
            None => {
                return Err(ConfigError::in_file(
                    file,
                    "missing; list the tool definitions under `tools`",
                )
                .field("tools")
                .into());
            }
        },
        _ => {
            return Err(
                ConfigError::in_file(file, "expected an object with a `tools` list").into(),
            );
        }
    };
    let mut errors = Vec::new();
    let mut tools: Vec<Arc<dyn Tool>> = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    for (index, entry) in list.iter().enumerate() {
        let Some(object) = entry.as_object() else {
            errors.push(
                ConfigError::in_file(file, "expected an object").field(format!("tools[{index}]")),
            );
            continue;
        };
        // Until its name is known, a tool is named by its place in the list.
        let name = object
            .get("name")
            .and_then(Value::as_str)
            .map_or_else(|| format!("#{}", index + 1), str::to_owned);
        let place = Place { file, tool: &name };
        if seen.contains(&name) {
            errors.push(place.error(
                "name",
                "defined twice in this file; tool names must be unique",
            ));
            continue;
        }
        seen.push(name.clone());
        if let Some(tool) = parse_tool(object, &place, &mut errors) {
            tools.push(tool);
        }
    }
    if errors.is_empty() {
        Ok(tools)
    } else {
        Err(ConfigErrors(errors))
    }
}

fn parse_tool(
    object: &Map<String, Value>,
    place: &Place<'_>,
    errors: &mut Vec<ConfigError>,
) -> Option<Arc<dyn Tool>> {
    let before = errors.len();
    let name = match object.get("name") {
        Some(Value::String(name)) if is_valid_tool_name(name) => Some(name.clone()),
        Some(Value::String(_)) => {
            errors.push(place.error(
                "name",
                "use 1 to 64 characters from A-Z, a-z, 0-9, '_' and '-'",
            ));
            None
        }
        Some(_) => {
            errors.push(place.error("name", "expected a string"));
            None
        }
        None => {
            errors.push(place.error("name", "missing; every tool needs a name"));
            None
        }
    };
    let description = required_text(object, "description", place, errors);
    let params = Params::parse(object.get("parameters"), place, errors);
    let kind = match (
        object.contains_key("command"),
        object.contains_key("action"),
    ) {
        (true, false) => Kind::Command,
        (false, true) => Kind::Composed,
        (true, true) => {
            errors.push(place.error(
                "command",
                "a tool has either `command` or `action`, not both",
            ));
            return None;
        }
        (false, false) => {
            errors.push(place.error(
                "action",
                "missing; give `action` (an instruction: a composed tool) or `command` (a command tool)",
            ));
            return None;
        }
    };
    let known: &[&str] = match kind {
        Kind::Composed => &["name", "description", "parameters", "action"],
        Kind::Command => &[
            "name",
            "description",
            "parameters",
            "command",
            "timeout_secs",
        ],
    };
    for key in object.keys() {
        if !known.contains(&key.as_str()) {
            errors.push(place.error(
                key.clone(),
                format!("unknown field; expected one of {}", known.join(", ")),
            ));
        }
    }
    let field = match kind {
        Kind::Composed => "action",
        Kind::Command => "command",
    };
    let template = required_text(object, field, place, errors).and_then(|text| {
        Template::parse(&text)
            .map_err(|e| errors.push(place.error(field, e)))
            .ok()
    });
    if let Some(template) = &template {
        for name in template.names() {
            // Checked against every declared name, well formed or not, so
            // one bad declaration is not also reported at each use.
            let declared = object
                .get("parameters")
                .and_then(Value::as_object)
                .is_some_and(|declared| declared.contains_key(name));
            if !declared {
                errors.push(place.error(
                    field,
                    format!("placeholder `{{{{{name}}}}}` names no declared parameter"),
                ));
            }
        }
    }
    let timeout = match object.get("timeout_secs") {
        None => None,
        Some(value) => match value.as_u64() {
            Some(secs) if secs > 0 => Some(secs),
            _ => {
                errors.push(place.error(
                    "timeout_secs",
                    "expected a whole number of seconds, at least 1",
                ));
                None
            }
        },
    };
    if errors.len() > before {
        return None;
    }
    let (name, description, template) = (name?, description?, template?);
    match kind {
        Kind::Composed => Some(Arc::new(ComposedTool::new(
            name,
            description,
            params,
            template,
        ))),
        Kind::Command => {
            super::command_tool(name, description, params, template, timeout, place, errors)
        }
    }
}

#[derive(Clone, Copy)]
enum Kind {
    Composed,
    Command,
}

fn required_text(
    object: &Map<String, Value>,
    field: &str,
    place: &Place<'_>,
    errors: &mut Vec<ConfigError>,
) -> Option<String> {
    match object.get(field) {
        Some(Value::String(text)) if !text.trim().is_empty() => Some(text.clone()),
        Some(Value::String(_)) => {
            errors.push(place.error(field, "is empty"));
            None
        }
        Some(_) => {
            errors.push(place.error(field, "expected a string"));
            None
        }
        None => {
            errors.push(place.error(field, "missing"));
            None
        }
    }
}

//! Strict mode per tool: whether a tool's schema can be enforced while the
//! model writes the call, and Anthropic's form of a strict schema.
//!
//! A tool asks for strict mode with [`ToolSpec::strict`](crate::ToolSpec::strict).
//! Some schemas cannot be strict: an object with free-form keys (a
//! `HashMap`, `additionalProperties` holding a schema) would be closed by
//! the strict transform and could then only be sent empty; a value of any
//! type (`serde_json::Value`) has no grammar; Anthropic's strict tool use
//! does not take recursive schemas. Such a tool is sent non-strict.

use serde_json::{Map, Value};

use super::{keywords, strict, walk};

/// Whose strict mode a schema is judged for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StrictDialect {
    /// OpenAI's Structured Outputs (`"strict": true` on a function).
    OpenAi,
    /// Anthropic's strict tool use (`"strict": true` on a tool).
    Anthropic,
}

/// Why `schema` cannot be strict in `dialect`, or `None` when it can.
pub(crate) fn strict_problem(schema: &Value, dialect: StrictDialect) -> Option<String> {
    let problem = open_part(schema, &mut String::new());
    if problem.is_some() || dialect == StrictDialect::OpenAi {
        return problem;
    }
    recursive_definition(schema).map(|name| {
        format!("the type `{name}` contains itself, and strict tool use takes no recursive schema")
    })
}

/// The first place in `schema` that takes free-form keys or any value.
fn open_part(schema: &Value, path: &mut String) -> Option<String> {
    let here = |path: &str| if path.is_empty() { "/" } else { path }.to_owned();
    let map = match schema {
        Value::Bool(true) => {
            return Some(format!(
                "{} takes any JSON value, which strict mode cannot describe",
                here(path)
            ));
        }
        Value::Object(map) => map,
        _ => return None,
    };
    if takes_any_value(map) {
        return Some(format!(
            "{} takes any JSON value, which strict mode cannot describe",
            here(path)
        ));
    }
    for keyword in ["additionalProperties", "unevaluatedProperties"] {
        if map.get(keyword).is_some_and(|v| *v != Value::Bool(false)) {
            return Some(format!(
                "{} takes free-form keys (`{keyword}`), which strict mode would forbid",
                here(path)
            ));
        }
    }
    if map.contains_key("patternProperties") {
        return Some(format!(
            "{} takes free-form keys (`patternProperties`), which strict mode would forbid",
            here(path)
        ));
    }
    let mut found = None;
    // Named subschemas get their name in the path; the rest their keyword.
    for (keyword, value) in map {
        if found.is_some() {
            break;
        }
        let len = path.len();
        match (keyword.as_str(), value) {
            ("properties" | "$defs" | "definitions", Value::Object(named)) => {
                for (name, sub) in named {
                    path.push_str(&format!("/{keyword}/{name}"));
                    found = open_part(sub, path);
                    path.truncate(len);
                    if found.is_some() {
                        break;
                    }
                }
            }
            _ => {
                let single = Map::from_iter([(keyword.clone(), value.clone())]);
                walk::for_each_subschema(&single, |sub| {
                    if found.is_none() {
                        path.push_str(&format!("/{keyword}"));
                        found = open_part(sub, path);
                        path.truncate(len);
                    }
                });
            }
        }
    }
    found
}

/// A schema that says nothing about its value's type (`{}`, or only a
/// description): it takes any JSON value.
fn takes_any_value(map: &Map<String, Value>) -> bool {
    const SHAPING: &[&str] = &[
        "type",
        "$ref",
        "anyOf",
        "oneOf",
        "allOf",
        "enum",
        "const",
        "properties",
        "items",
        "not",
    ];
    !map.keys().any(|k| SHAPING.contains(&k.as_str()))
}

/// The name of a definition that refers to itself, directly or through others.
fn recursive_definition(schema: &Value) -> Option<String> {
    let definitions = ["$defs", "definitions"]
        .iter()
        .filter_map(|k| schema.get(k)?.as_object().map(|defs| (*k, defs)))
        .flat_map(|(keyword, defs)| {
            defs.iter()
                .map(move |(name, def)| (format!("#/{keyword}/{name}"), (name, def)))
        })
        .collect::<std::collections::HashMap<_, _>>();
    for (start, (name, _)) in &definitions {
        // Depth-first from each definition, looking for a way back to it.
        let mut stack = vec![start.clone()];
        let mut seen = std::collections::HashSet::new();
        while let Some(reference) = stack.pop() {
            let Some((_, def)) = definitions.get(&reference) else {
                continue;
            };
            let mut refs = Vec::new();
            collect_refs(def, &mut refs);
            for next in refs {
                if next == *start {
                    return Some((*name).clone());
                }
                if seen.insert(next.clone()) {
                    stack.push(next);
                }
            }
        }
    }
    None
}

fn collect_refs(schema: &Value, out: &mut Vec<String>) {
    let Value::Object(map) = schema else {
        return;
    };
    if let Some(Value::String(reference)) = map.get("$ref") {
        out.push(reference.clone());
    }
    walk::for_each_subschema(map, |sub| collect_refs(sub, out));
}

/// The keywords Anthropic's strict tool use rejects, dropped and noted.
const ANTHROPIC_DROPPED: &[&str] = &[
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
];

/// The string formats Anthropic's strict tool use accepts.
const ANTHROPIC_FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "uri",
    "ipv4",
    "ipv6",
    "uuid",
];

/// `schema` rewritten for Anthropic's strict tool use: every object says
/// `"additionalProperties": false`; numeric and length constraints, a
/// `minItems` above 1, lookaround patterns and unknown string formats are
/// dropped and noted in the description. Optional properties stay
/// optional. Call only on a schema [`strict_problem`] accepts.
pub(crate) fn anthropic_strict(schema: &Value) -> Value {
    let mut strict = schema.clone();
    rewrite(&mut strict);
    strict
}

fn rewrite(schema: &mut Value) {
    let Value::Object(map) = schema else {
        return;
    };
    walk::for_each_subschema_mut(map, rewrite);
    if strict::is_object(map) && !map.contains_key("additionalProperties") {
        map.insert("additionalProperties".into(), Value::Bool(false));
    }
    let mut notes = Vec::new();
    for keyword in ANTHROPIC_DROPPED {
        if let Some(value) = map.shift_remove(*keyword) {
            notes.push(keywords::note(keyword, &value));
        }
    }
    if map
        .get("minItems")
        .and_then(Value::as_u64)
        .is_some_and(|n| n > 1)
        && let Some(value) = map.shift_remove("minItems")
    {
        notes.push(keywords::note("minItems", &value));
    }
    if let Some(Value::String(pattern)) = map.get("pattern")
        && strict::has_lookaround(pattern)
        && let Some(pattern) = map.shift_remove("pattern")
    {
        notes.push(keywords::note("pattern", &pattern));
    }
    notes.extend(keywords::drop_unknown_format(map, |kind, format| {
        kind == "string" && ANTHROPIC_FORMATS.contains(&format)
    }));
    keywords::add_notes(map, &notes);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn maps_and_any_values_cannot_be_strict() {
        let map = json!({
            "type": "object",
            "properties": {"weights": {"type": "object", "additionalProperties": {"type": "integer"}}},
        });
        assert_eq!(
            strict_problem(&map, StrictDialect::OpenAi).as_deref(),
            Some(
                "/properties/weights takes free-form keys (`additionalProperties`), which strict mode would forbid"
            )
        );
        let any = json!({"type": "object", "properties": {"v": {"description": "Anything."}}});
        assert!(
            strict_problem(&any, StrictDialect::Anthropic)
                .unwrap()
                .starts_with("/properties/v takes any JSON value")
        );
        let fine = json!({
            "type": "object",
            "properties": {"xs": {"type": "array", "items": {"type": "string"}}},
            "additionalProperties": false,
        });
        assert_eq!(strict_problem(&fine, StrictDialect::OpenAi), None);
    }

    #[test]
    fn recursion_is_strict_for_openai_only() {
        let tree = json!({
            "type": "object",
            "properties": {"root": {"$ref": "#/$defs/Node"}},
            "$defs": {"Node": {"type": "object", "properties": {
                "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
            }}},
        });
        assert_eq!(strict_problem(&tree, StrictDialect::OpenAi), None);
        assert!(
            strict_problem(&tree, StrictDialect::Anthropic)
                .unwrap()
                .contains("`Node` contains itself")
        );
    }

    #[test]
    fn anthropic_closes_objects_and_drops_what_it_rejects() {
        let schema = json!({
            "type": "object",
            "properties": {
                "n": {"type": "integer", "minimum": 1, "description": "How many."},
                "tags": {"type": "array", "items": {"type": "string"}, "minItems": 2},
                "when": {"type": "string", "format": "date-time"},
            },
            "required": ["n"],
        });
        assert_eq!(
            anthropic_strict(&schema),
            json!({
                "type": "object",
                "properties": {
                    "n": {"type": "integer", "description": "How many. (minimum: 1)"},
                    "tags": {"type": "array", "items": {"type": "string"}, "description": "minItems: 2"},
                    "when": {"type": "string", "format": "date-time"},
                },
                "required": ["n"],
                "additionalProperties": false,
            })
        );
    }
}

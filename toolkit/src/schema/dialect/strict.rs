//! OpenAI strict mode (`"strict": true`): the subset of JSON Schema that
//! Structured Outputs can enforce.
//!
//! The rules, from OpenAI's Structured Outputs guide ("Supported schemas"):
//! every object sets `additionalProperties: false` and lists all its
//! properties in `required`, so an optional property must say it may be
//! `null` instead; `$defs`/`$ref` and recursion are supported, but a `$ref`
//! may have no sibling keywords; `anyOf` is supported, `oneOf`, `allOf`,
//! `not`, `if`/`then`/`else` and `default` are not; strings may use `pattern`
//! and a few `format`s, numbers `minimum`/`maximum`/`exclusive*`/`multipleOf`,
//! arrays `minItems`/`maxItems`; other keywords are rejected.

use serde_json::{Map, Value, json};

use super::{compose, keywords, nullable, refs, walk};

/// The keywords strict mode accepts.
const STRICT_KEYWORDS: &[&str] = &[
    "type",
    "description",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "anyOf",
    "$ref",
    "$defs",
    "definitions",
    "pattern",
    "format",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minItems",
    "maxItems",
];

/// The string formats strict mode accepts.
const STRING_FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];

/// `schema` rewritten for OpenAI strict mode.
///
/// Objects are closed and list every property in `required`; a property
/// that was optional becomes nullable (`["integer", "null"]`, or `anyOf` with
/// `{"type": "null"}` for references and enums). `oneOf` becomes `anyOf`,
/// `const` a one-value `enum`, `allOf` is merged. Keywords strict mode
/// rejects are dropped, and dropped constraints (`default`, `minLength`, ...)
/// are appended to the description. `$defs` and `$ref`s stay, so recursive
/// types stay recursive.
///
/// A model in strict mode sends `null` for an optional property it leaves
/// out; a map (`HashMap`) would be closed so that only an empty one fits,
/// since strict mode has no way to describe free-form keys: the renderer
/// sends such a tool non-strict instead (`strict_problem` says why).
pub(crate) fn openai_strict(schema: &Value) -> Value {
    let mut strict = schema.clone();
    rewrite(&mut strict, schema, &refs::Copies::default());
    strict
}

fn rewrite(schema: &mut Value, root: &Value, copies: &refs::Copies) {
    let Value::Object(map) = schema else {
        return;
    };
    // A definition is copied into each `allOf` that refers to it, within a
    // budget for the whole schema: past it, `allOf` stays as it is.
    compose::merge_all_of(map, |reference| {
        refs::resolve(root, reference)
            .filter(|target| copies.allow(target))
            .cloned()
    });
    compose::const_to_enum(map);
    compose::tuple_to_items(map);
    if !map.contains_key("anyOf") {
        rename(map, "oneOf", "anyOf");
    }
    walk::for_each_subschema_mut(map, |sub| rewrite(sub, root, copies));
    if is_object(map) {
        close(map);
    }
    let mut notes = Vec::new();
    notes.extend(keywords::drop_unknown_format(map, |kind, format| {
        kind == "string" && STRING_FORMATS.contains(&format)
    }));
    if let Some(Value::String(pattern)) = map.get("pattern")
        && has_lookaround(pattern)
        && let Some(pattern) = map.shift_remove("pattern")
    {
        notes.push(keywords::note("pattern", &pattern));
    }
    notes.extend(keywords::keep_only(map, STRICT_KEYWORDS));
    keywords::add_notes(map, &notes);
    move_ref_siblings_out(map);
}

pub(super) fn is_object(map: &Map<String, Value>) -> bool {
    match map.get("type") {
        Some(Value::String(kind)) => kind == "object",
        Some(Value::Array(kinds)) => kinds.iter().any(|k| k == "object"),
        _ => map.contains_key("properties"),
    }
}

/// No unknown properties, every property required, optional ones nullable.
fn close(map: &mut Map<String, Value>) {
    // A set: a schema may list 100,000 properties and as many required names.
    let was_required: std::collections::HashSet<String> = match map.get("required") {
        Some(Value::Array(names)) => names
            .iter()
            .filter_map(|n| n.as_str().map(str::to_owned))
            .collect(),
        _ => std::collections::HashSet::new(),
    };
    let properties = map
        .entry("properties")
        .or_insert_with(|| Value::Object(Map::new()));
    let mut all = Vec::new();
    if let Value::Object(properties) = properties {
        for (name, schema) in properties.iter_mut() {
            if !was_required.contains(name) {
                *schema = nullable::json_schema_nullable(std::mem::take(schema));
            }
            all.push(Value::String(name.clone()));
        }
    }
    map.insert("required".into(), Value::Array(all));
    map.insert("additionalProperties".into(), Value::Bool(false));
}

/// Strict mode rejects keywords beside a `$ref`, but accepts them beside an
/// `anyOf`: `{"$ref": R, "description": D}` -> `{"anyOf": [{"$ref": R}], "description": D}`.
fn move_ref_siblings_out(map: &mut Map<String, Value>) {
    if map.len() < 2 || map.contains_key("anyOf") {
        return;
    }
    if let Some(reference) = map.shift_remove("$ref") {
        map.insert("anyOf".into(), json!([{"$ref": reference}]));
    }
}

/// Rename a keyword in place, keeping its position.
fn rename(map: &mut Map<String, Value>, from: &str, to: &str) {
    if !map.contains_key(from) {
        return;
    }
    *map = std::mem::take(map)
        .into_iter()
        .map(|(k, v)| {
            if k == from {
                (to.to_owned(), v)
            } else {
                (k, v)
            }
        })
        .collect();
}

/// Whether a regular expression uses lookahead or lookbehind, which strict
/// mode's patterns do not support.
pub(super) fn has_lookaround(pattern: &str) -> bool {
    let bytes = pattern.as_bytes();
    let mut escaped = false;
    for (i, &b) in bytes.iter().enumerate() {
        if escaped {
            escaped = false;
        } else if b == b'\\' {
            escaped = true;
        } else if b == b'(' {
            let rest = &pattern[i..];
            if ["(?=", "(?!", "(?<=", "(?<!"]
                .iter()
                .any(|t| rest.starts_with(t))
            {
                return true;
            }
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_are_closed_and_optional_properties_nullable() {
        let schema = json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "limit": {"type": "integer", "default": 10, "minimum": 1},
                "mode": {"type": "string", "enum": ["a", "b"], "description": "How."},
            },
            "required": ["path"],
        });
        assert_eq!(
            openai_strict(&schema),
            json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string"},
                    "limit": {"type": ["integer", "null"], "minimum": 1, "description": "default: 10"},
                    "mode": {"description": "How.", "anyOf": [{"type": "string", "enum": ["a", "b"]}, {"type": "null"}]},
                },
                "required": ["path", "limit", "mode"],
                "additionalProperties": false,
            })
        );
    }

    #[test]
    fn maps_become_closed_empty_objects() {
        let schema = json!({"type": "object", "additionalProperties": {"type": "integer"}});
        assert_eq!(
            openai_strict(&schema),
            json!({"type": "object", "additionalProperties": false, "properties": {}, "required": []})
        );
    }

    #[test]
    fn references_keep_no_siblings_and_definitions_stay() {
        let schema = json!({
            "type": "object",
            "properties": {"tree": {"$ref": "#/$defs/Tree", "description": "The tree."}},
            "required": ["tree"],
            "$defs": {"Tree": {
                "type": "object",
                "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/Tree"}}},
                "required": ["children"],
            }},
        });
        let strict = openai_strict(&schema);
        assert_eq!(
            strict["properties"]["tree"],
            json!({"description": "The tree.", "anyOf": [{"$ref": "#/$defs/Tree"}]})
        );
        assert_eq!(
            strict["$defs"]["Tree"]["properties"]["children"]["items"],
            json!({"$ref": "#/$defs/Tree"})
        );
        assert_eq!(
            strict["$defs"]["Tree"]["additionalProperties"],
            json!(false)
        );
    }

    #[test]
    fn one_of_becomes_any_of_and_const_an_enum() {
        let schema = json!({"oneOf": [{"const": "a", "description": "A."}, {"const": "b"}]});
        assert_eq!(
            openai_strict(&schema),
            json!({"anyOf": [
                {"description": "A.", "type": "string", "enum": ["a"]},
                {"type": "string", "enum": ["b"]},
            ]})
        );
    }

    #[test]
    fn data_enum_variants_are_closed_objects() {
        let schema = json!({"oneOf": [
            {"type": "string", "const": "none"},
            {"type": "object", "properties": {"glob": {"type": "string"}, "deep": {"type": "boolean"}}, "required": ["glob"]},
        ]});
        assert_eq!(
            openai_strict(&schema),
            json!({"anyOf": [
                {"type": "string", "enum": ["none"]},
                {
                    "type": "object",
                    "properties": {"glob": {"type": "string"}, "deep": {"type": ["boolean", "null"]}},
                    "required": ["glob", "deep"],
                    "additionalProperties": false,
                },
            ]})
        );
    }

    #[test]
    fn unsupported_keywords_are_dropped_with_a_note() {
        let schema = json!({
            "type": "string",
            "title": "Name",
            "minLength": 1,
            "format": "uri",
            "pattern": "^(?!x)",
        });
        assert_eq!(
            openai_strict(&schema),
            json!({"type": "string", "description": "format: uri, pattern: ^(?!x), minLength: 1"})
        );
    }

    #[test]
    fn supported_formats_and_bounds_stay() {
        let schema = json!({"type": "string", "format": "date-time", "pattern": "^[0-9]"});
        assert_eq!(openai_strict(&schema), schema);
        let number = json!({"type": "integer", "format": "uint8", "minimum": 0, "maximum": 255});
        assert_eq!(
            openai_strict(&number),
            json!({"type": "integer", "minimum": 0, "maximum": 255})
        );
    }

    #[test]
    fn lookaround_is_found_outside_escapes_only() {
        assert!(has_lookaround("^(?=a)"));
        assert!(has_lookaround("(?<!b)c"));
        assert!(!has_lookaround(r"\(?=a"));
        assert!(!has_lookaround("(?:a)"));
    }
}

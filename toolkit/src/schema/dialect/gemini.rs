//! Gemini function declarations: `parameters` in the OpenAPI 3.0 subset the
//! Gemini API accepts.
//!
//! The rules, from the Gemini API reference for `Schema` and
//! `FunctionDeclaration` and from its error messages: no `$ref`/`$defs` (so
//! references are inlined and recursion is cut, see [`inline_refs`]); one
//! `type` per schema with `"nullable": true` instead of `"null"` in a type
//! array; no `const`, `oneOf`, `allOf`, `additionalProperties`, `default`,
//! `title` or `$schema` (`Unknown name "additionalProperties"`); `enum`
//! values are strings; `format` only `float`/`double` for numbers,
//! `int32`/`int64` for integers, `enum`/`date-time` for strings; `properties`
//! and `required` only on objects, `properties` never empty
//! (`should be non-empty for OBJECT type`) and `required` naming only
//! declared properties.
//!
//! [`inline_refs`]: super::inline_refs

use serde_json::{Map, Value, json};

use super::{compose, inline_refs, keywords, nullable, walk};

/// The keywords of Gemini's `Schema` object that this dialect emits.
const GEMINI_KEYWORDS: &[&str] = &[
    "type",
    "format",
    "description",
    "nullable",
    "enum",
    "properties",
    "required",
    "items",
    "minItems",
    "maxItems",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "pattern",
    "minProperties",
    "maxProperties",
    "anyOf",
];

/// `schema` rewritten as Gemini function-declaration `parameters`.
///
/// References are inlined with recursion cut after one repetition; type
/// arrays and `null` branches become `"nullable": true`; `const` and a
/// `oneOf` of constants become an `enum` (the variants' descriptions are kept
/// as a list in the description); unsupported keywords are dropped, with
/// dropped constraints (`default`, `exclusiveMinimum`, a string `format`)
/// noted in the description. A map (`HashMap`) becomes an object whose
/// description says its keys are free-form, since Gemini cannot declare
/// values for unnamed keys.
pub(crate) fn gemini_parameters(schema: &Value) -> Value {
    let mut parameters = inline_refs(schema);
    rewrite(&mut parameters);
    parameters
}

fn rewrite(schema: &mut Value) {
    if schema.is_boolean() {
        // `true` allows anything; `false` never describes arguments.
        *schema = json!({});
    }
    let Value::Object(map) = schema else {
        return;
    };
    // A merged `anyOf` branch brings keywords that may need these again.
    loop {
        compose::merge_all_of(map, |_| None);
        compose::const_to_enum(map);
        compose::alternatives_to_enum(map);
        if !nullable::openapi_nullable(map) {
            break;
        }
    }
    if !map.contains_key("anyOf")
        && let Some(branches) = map.shift_remove("oneOf")
    {
        map.insert("anyOf".into(), branches);
    }
    compose::tuple_to_items(map);
    let mut notes = Vec::new();
    notes.extend(describe_free_form_keys(map));
    walk::for_each_subschema_mut(map, rewrite);
    notes.extend(keywords::drop_unknown_format(map, known_format));
    enum_values_as_strings(map);
    tidy_object(map);
    notes.extend(keywords::keep_only(map, GEMINI_KEYWORDS));
    keywords::add_notes(map, &notes);
}

/// The formats Gemini accepts, by type.
fn known_format(kind: &str, format: &str) -> bool {
    matches!(
        (kind, format),
        ("number", "float" | "double")
            | ("integer", "int32" | "int64")
            | ("string", "enum" | "date-time")
    )
}

/// A note for an object whose keys are free-form (`additionalProperties` is a
/// schema), which Gemini cannot declare: `object with any keys; values: integer`.
fn describe_free_form_keys(map: &Map<String, Value>) -> Option<String> {
    let Some(Value::Object(values)) = map.get("additionalProperties") else {
        return None;
    };
    let named = matches!(map.get("properties"), Some(Value::Object(p)) if !p.is_empty());
    let kind = values.get("type").and_then(Value::as_str).unwrap_or("any");
    Some(if named {
        format!("more keys allowed; values: {kind}")
    } else {
        format!("object with any keys; values: {kind}")
    })
}

/// Gemini's `enum` holds strings; other values are written as strings, with
/// `format: enum` as its reference shows for integer enums.
fn enum_values_as_strings(map: &mut Map<String, Value>) {
    let Some(Value::Array(values)) = map.get_mut("enum") else {
        return;
    };
    if values.iter().all(Value::is_string) {
        return;
    }
    for value in values.iter_mut() {
        if !value.is_string() {
            *value = Value::String(value.to_string());
        }
    }
    if map.get("type").and_then(Value::as_str) != Some("string") {
        map.insert("format".into(), json!("enum"));
    }
}

/// `properties` only on objects and never empty; `required` only naming
/// declared properties.
fn tidy_object(map: &mut Map<String, Value>) {
    if !map.contains_key("type") && map.contains_key("properties") {
        map.insert("type".into(), json!("object"));
    }
    if map.get("type").and_then(Value::as_str) != Some("object") {
        map.shift_remove("properties");
        map.shift_remove("required");
        return;
    }
    // Looked up by name, not scanned: a schema may list 100,000 properties
    // and as many required names.
    let declared: std::collections::HashSet<String> = match map.get("properties") {
        Some(Value::Object(properties)) => properties.keys().cloned().collect(),
        _ => std::collections::HashSet::new(),
    };
    if declared.is_empty() {
        map.shift_remove("properties");
    }
    if let Some(Value::Array(required)) = map.get_mut("required") {
        required.retain(|name| name.as_str().is_some_and(|n| declared.contains(n)));
        if required.is_empty() {
            map.shift_remove("required");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gemini(schema: Value) -> Value {
        gemini_parameters(&schema)
    }

    #[test]
    fn type_arrays_become_nullable() {
        assert_eq!(
            gemini(json!({"type": ["integer", "null"], "format": "uint32", "minimum": 0})),
            json!({"type": "integer", "minimum": 0, "nullable": true})
        );
    }

    #[test]
    fn a_nullable_reference_is_inlined_and_marked_nullable() {
        let schema = json!({
            "type": "object",
            "properties": {"filter": {
                "anyOf": [{"$ref": "#/$defs/Filter"}, {"type": "null"}],
                "description": "Only these.",
            }},
            "$defs": {"Filter": {
                "type": "object",
                "description": "A filter.",
                "properties": {"tag": {"type": "string"}},
                "required": ["tag"],
                "additionalProperties": false,
            }},
        });
        assert_eq!(
            gemini(schema),
            json!({
                "type": "object",
                "properties": {"filter": {
                    "type": "object",
                    "description": "Only these.",
                    "properties": {"tag": {"type": "string"}},
                    "required": ["tag"],
                    "nullable": true,
                }},
            })
        );
    }

    #[test]
    fn constants_become_enums_and_documented_variants_a_list() {
        assert_eq!(
            gemini(json!({"const": "fixed"})),
            json!({"type": "string", "enum": ["fixed"]})
        );
        let documented = json!({
            "description": "Order.",
            "anyOf": [
                {"const": "asc", "description": "Oldest first."},
                {"const": "desc", "description": "Newest first."},
                {"type": "null"},
            ],
        });
        assert_eq!(
            gemini(documented),
            json!({
                "description": "Order.\n- `asc`: Oldest first.\n- `desc`: Newest first.",
                "nullable": true,
                "type": "string",
                "enum": ["asc", "desc"],
            })
        );
    }

    #[test]
    fn maps_lose_their_value_schema_but_say_so() {
        assert_eq!(
            gemini(json!({
                "type": "object",
                "description": "Weights.",
                "additionalProperties": {"type": "integer", "format": "uint32", "minimum": 0},
            })),
            json!({"type": "object", "description": "Weights. (object with any keys; values: integer)"})
        );
    }

    #[test]
    fn unsupported_keywords_go_and_constraints_are_noted() {
        assert_eq!(
            gemini(json!({
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "title": "Count",
                "type": "integer",
                "exclusiveMinimum": 0,
                "default": 3,
            })),
            json!({"type": "integer", "description": "exclusiveMinimum: 0, default: 3"})
        );
        assert_eq!(
            gemini(json!({"type": "string", "format": "uri"})),
            json!({"type": "string", "description": "format: uri"})
        );
        assert_eq!(
            gemini(json!({"type": "number", "format": "double"})),
            json!({"type": "number", "format": "double"})
        );
    }

    #[test]
    fn objects_never_have_empty_properties_or_stray_required() {
        assert_eq!(
            gemini(json!({"type": "object", "properties": {}, "required": ["ghost"]})),
            json!({"type": "object"})
        );
    }

    #[test]
    fn non_string_enum_values_are_written_as_strings() {
        assert_eq!(
            gemini(json!({"type": "integer", "enum": [1, 2]})),
            json!({"type": "integer", "enum": ["1", "2"], "format": "enum"})
        );
    }

    #[test]
    fn data_enums_become_any_of_objects() {
        let schema = json!({
            "oneOf": [
                {"type": "string", "const": "none"},
                {
                    "type": "object",
                    "properties": {"glob": {"type": "string"}},
                    "required": ["glob"],
                    "additionalProperties": false,
                },
            ],
        });
        assert_eq!(
            gemini(schema),
            json!({"anyOf": [
                {"type": "string", "enum": ["none"]},
                {"type": "object", "properties": {"glob": {"type": "string"}}, "required": ["glob"]},
            ]})
        );
    }

    #[test]
    fn several_types_become_any_of() {
        assert_eq!(
            gemini(json!({"type": ["string", "integer", "null"]})),
            json!({"anyOf": [{"type": "string"}, {"type": "integer"}], "nullable": true})
        );
    }
}

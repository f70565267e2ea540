//! Saying "this may be null" the way each dialect can: JSON Schema's
//! `"type": [T, "null"]` or `anyOf` with `{"type": "null"}`, and OpenAPI 3.0's
//! `"nullable": true`.

use serde_json::{Map, Value, json};

/// Whether `schema` already lets `null` through (on its own keywords; a
/// `$ref` is assumed not to).
pub(super) fn accepts_null(schema: &Value) -> bool {
    let map = match schema {
        Value::Object(map) => map,
        Value::Bool(accepts) => return *accepts,
        _ => return false,
    };
    if let Some(Value::Array(values)) = map.get("enum") {
        return values.contains(&Value::Null);
    }
    if let Some(value) = map.get("const") {
        return value.is_null();
    }
    if let Some(kind) = map.get("type") {
        return has_type(kind, "null");
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = map.get(key) {
            return branches.iter().any(accepts_null);
        }
    }
    if map.contains_key("$ref") || map.contains_key("allOf") || map.contains_key("not") {
        return false;
    }
    // No type constraint at all: anything goes, `null` included.
    true
}

fn has_type(kind: &Value, name: &str) -> bool {
    match kind {
        Value::String(s) => s == name,
        Value::Array(kinds) => kinds.iter().any(|k| k == name),
        _ => false,
    }
}

/// `schema`, also accepting `null`, in JSON Schema's own terms.
///
/// A plain type grows a type array (`"integer"` -> `["integer", "null"]`); an
/// `anyOf` grows a `{"type": "null"}` branch; anything whose values are pinned
/// (`enum`, `$ref`, `oneOf`) is wrapped as `anyOf: [schema, {"type": "null"}]`
/// with its description moved to the wrapper, since adding `"null"` to the
/// type of an `enum` without adding it to the values would still reject it.
pub(super) fn json_schema_nullable(schema: Value) -> Value {
    if accepts_null(&schema) {
        return schema;
    }
    let Value::Object(mut map) = schema else {
        return schema;
    };
    let pinned = ["enum", "$ref", "oneOf", "allOf", "not"]
        .iter()
        .any(|k| map.contains_key(*k));
    if let Some(Value::Array(branches)) = map.get_mut("anyOf") {
        branches.push(json!({"type": "null"}));
        return Value::Object(map);
    }
    if !pinned {
        match map.get_mut("type") {
            Some(Value::String(kind)) => {
                let kind = std::mem::take(kind);
                map["type"] = json!([kind, "null"]);
                return Value::Object(map);
            }
            Some(Value::Array(kinds)) => {
                kinds.push(json!("null"));
                return Value::Object(map);
            }
            _ => {}
        }
    }
    let mut wrapper = Map::new();
    if let Some(description) = map.shift_remove("description") {
        wrapper.insert("description".into(), description);
    }
    wrapper.insert(
        "anyOf".into(),
        json!([Value::Object(map), {"type": "null"}]),
    );
    Value::Object(wrapper)
}

/// Rewrite JSON Schema's ways of allowing `null` into OpenAPI 3.0's
/// `"nullable": true`, in place, at this level only.
///
/// - `"type": ["integer", "null"]` -> `"type": "integer"`; several non-null
///   types become an `anyOf` of one type each.
/// - `anyOf`/`oneOf` with `null`-only branches: those branches go; when one
///   branch is left it is merged into this schema (this schema's own keywords,
///   such as a field's `description`, win).
/// - `null` among `enum` values is removed.
///
/// Returns whether it changed anything: a merged branch, or the branches
/// left, may need other rewrites before they settle.
pub(super) fn openapi_nullable(map: &mut Map<String, Value>) -> bool {
    let mut nullable = false;
    let mut changed = false;
    if let Some(Value::Array(kinds)) = map.get("type") {
        let rest: Vec<Value> = kinds.iter().filter(|k| *k != "null").cloned().collect();
        nullable |= rest.len() < kinds.len();
        changed = true;
        match rest.len() {
            0 => {
                map.insert("type".into(), json!("null"));
            }
            1 => {
                map.insert("type".into(), rest[0].clone());
            }
            _ if map.contains_key("anyOf") => {
                // Rare enough not to combine two unions; keep the first type.
                map.insert("type".into(), rest[0].clone());
            }
            _ => {
                map.shift_remove("type");
                let branches = rest.into_iter().map(|kind| json!({"type": kind})).collect();
                map.insert("anyOf".into(), Value::Array(branches));
            }
        }
    }
    for key in ["anyOf", "oneOf"] {
        let Some(Value::Array(branches)) = map.get_mut(key) else {
            continue;
        };
        let before = branches.len();
        branches.retain(|branch| !is_null_only(branch));
        if branches.len() == before {
            continue;
        }
        nullable = true;
        changed = true;
        if branches.len() == 1 {
            let Some(Value::Array(mut only)) = map.shift_remove(key) else {
                unreachable!("checked above");
            };
            let mut combined = match only.pop() {
                Some(Value::Object(branch)) => branch,
                _ => Map::new(),
            };
            for (keyword, value) in std::mem::take(map) {
                combined.insert(keyword, value);
            }
            *map = combined;
        }
    }
    if let Some(Value::Array(values)) = map.get_mut("enum") {
        let before = values.len();
        values.retain(|v| !v.is_null());
        let removed = values.len() < before;
        nullable |= removed;
        changed |= removed;
    }
    if nullable {
        map.insert("nullable".into(), Value::Bool(true));
    }
    changed
}

/// Whether a schema allows nothing but `null`.
fn is_null_only(schema: &Value) -> bool {
    let Value::Object(map) = schema else {
        return false;
    };
    map.get("type") == Some(&json!("null"))
        || map.get("const") == Some(&Value::Null)
        || map.get("enum") == Some(&json!([null]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn openapi(schema: Value) -> Value {
        let Value::Object(mut map) = schema else {
            unreachable!("test schemas are objects")
        };
        openapi_nullable(&mut map);
        Value::Object(map)
    }

    #[test]
    fn what_accepts_null() {
        assert!(accepts_null(&json!({"type": ["string", "null"]})));
        assert!(accepts_null(
            &json!({"anyOf": [{"$ref": "#/$defs/A"}, {"type": "null"}]})
        ));
        assert!(accepts_null(&json!({"description": "anything"})));
        assert!(accepts_null(&json!({"enum": ["a", null]})));
        assert!(!accepts_null(&json!({"type": "string", "enum": ["a"]})));
        assert!(!accepts_null(&json!({"$ref": "#/$defs/A"})));
        assert!(!accepts_null(&json!({"const": "a"})));
    }

    #[test]
    fn plain_types_grow_a_type_array() {
        assert_eq!(
            json_schema_nullable(json!({"type": "integer", "minimum": 1})),
            json!({"type": ["integer", "null"], "minimum": 1})
        );
        assert_eq!(
            json_schema_nullable(json!({"type": ["integer", "string"]})),
            json!({"type": ["integer", "string", "null"]})
        );
    }

    #[test]
    fn pinned_values_are_wrapped_with_the_description_outside() {
        assert_eq!(
            json_schema_nullable(json!({"type": "string", "enum": ["a"], "description": "Pick."})),
            json!({"description": "Pick.", "anyOf": [{"type": "string", "enum": ["a"]}, {"type": "null"}]})
        );
        assert_eq!(
            json_schema_nullable(json!({"anyOf": [{"$ref": "#/$defs/A"}], "description": "A."})),
            json!({"anyOf": [{"$ref": "#/$defs/A"}, {"type": "null"}], "description": "A."})
        );
    }

    #[test]
    fn already_nullable_schemas_are_unchanged() {
        let schema = json!({"anyOf": [{"$ref": "#/$defs/A"}, {"type": "null"}]});
        assert_eq!(json_schema_nullable(schema.clone()), schema);
    }

    #[test]
    fn type_arrays_become_openapi_nullable() {
        assert_eq!(
            openapi(json!({"type": ["integer", "null"], "minimum": 0})),
            json!({"type": "integer", "minimum": 0, "nullable": true})
        );
        assert_eq!(
            openapi(json!({"type": ["integer", "string"]})),
            json!({"anyOf": [{"type": "integer"}, {"type": "string"}]})
        );
    }

    #[test]
    fn a_null_branch_is_folded_into_nullable_and_the_field_description_wins() {
        let mut map = match json!({
            "anyOf": [{"type": "object", "description": "A filter.", "properties": {}}, {"type": "null"}],
            "description": "Only these.",
        }) {
            Value::Object(map) => map,
            _ => unreachable!(),
        };
        assert!(openapi_nullable(&mut map));
        assert_eq!(
            Value::Object(map),
            json!({"type": "object", "description": "Only these.", "properties": {}, "nullable": true})
        );
    }

    #[test]
    fn null_among_enum_values_becomes_nullable() {
        assert_eq!(
            openapi(json!({"type": "string", "enum": ["a", null]})),
            json!({"type": "string", "enum": ["a"], "nullable": true})
        );
    }
}

//! Which keywords hold subschemas, so a dialect can walk a schema without
//! listing them again.

use serde_json::{Map, Value};

/// How a keyword holds its subschemas.
enum Slot {
    /// One schema: `items`, `additionalProperties`, `not`, ...
    One,
    /// A list of schemas: `anyOf`, `prefixItems`, ...
    List,
    /// Schemas by name: `properties`, `$defs`, ...
    Named,
}

fn slot(keyword: &str) -> Option<Slot> {
    Some(match keyword {
        "items"
        | "additionalProperties"
        | "additionalItems"
        | "not"
        | "if"
        | "then"
        | "else"
        | "contains"
        | "propertyNames"
        | "unevaluatedProperties"
        | "unevaluatedItems" => Slot::One,
        "anyOf" | "oneOf" | "allOf" | "prefixItems" => Slot::List,
        "properties" | "patternProperties" | "$defs" | "definitions" | "dependentSchemas" => {
            Slot::Named
        }
        _ => return None,
    })
}

/// Whether `value` can be a schema: an object, or `true`/`false`.
fn is_schema(value: &Value) -> bool {
    matches!(value, Value::Object(_) | Value::Bool(_))
}

/// Call `f` on every direct subschema of `schema`, in the order they appear.
///
/// Values that are data (`enum`, `const`, `default`, `examples`) are never
/// visited, even when they look like schemas. A draft-07 `items` array is
/// visited element by element.
pub(super) fn for_each_subschema_mut(
    schema: &mut Map<String, Value>,
    mut f: impl FnMut(&mut Value),
) {
    for (keyword, value) in schema.iter_mut() {
        match (slot(keyword), value) {
            (Some(Slot::List) | Some(Slot::One), Value::Array(items)) => {
                items.iter_mut().filter(|v| is_schema(v)).for_each(&mut f)
            }
            (Some(Slot::One), value) if is_schema(value) => f(value),
            (Some(Slot::Named), Value::Object(named)) => {
                named.values_mut().filter(|v| is_schema(v)).for_each(&mut f)
            }
            _ => {}
        }
    }
}

/// Call `f` on every direct subschema of `schema`, read-only; like
/// [`for_each_subschema_mut`].
pub(super) fn for_each_subschema<'a>(schema: &'a Map<String, Value>, mut f: impl FnMut(&'a Value)) {
    for (keyword, value) in schema {
        match (slot(keyword), value) {
            (Some(Slot::List) | Some(Slot::One), Value::Array(items)) => {
                items.iter().filter(|v| is_schema(v)).for_each(&mut f)
            }
            (Some(Slot::One), value) if is_schema(value) => f(value),
            (Some(Slot::Named), Value::Object(named)) => {
                named.values().filter(|v| is_schema(v)).for_each(&mut f)
            }
            _ => {}
        }
    }
}

/// A copy of `schema` with every direct subschema replaced by
/// `f(keyword, subschema)`, where `keyword` is the keyword holding it.
pub(super) fn map_subschemas<'a>(
    schema: &'a Map<String, Value>,
    mut f: impl FnMut(&str, &'a Value) -> Value,
) -> Map<String, Value> {
    let mut copy = Map::with_capacity(schema.len());
    for (keyword, value) in schema {
        let mut each = |v: &'a Value| {
            if is_schema(v) {
                f(keyword, v)
            } else {
                v.clone()
            }
        };
        let mapped = match (slot(keyword), value) {
            (Some(Slot::List) | Some(Slot::One), Value::Array(items)) => {
                Value::Array(items.iter().map(&mut each).collect())
            }
            (Some(Slot::One), value) => each(value),
            (Some(Slot::Named), Value::Object(named)) => Value::Object(
                named
                    .iter()
                    .map(|(name, v)| (name.clone(), each(v)))
                    .collect(),
            ),
            _ => value.clone(),
        };
        copy.insert(keyword.clone(), mapped);
    }
    copy
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => unreachable!("test schemas are objects"),
        }
    }

    #[test]
    fn visits_subschemas_but_never_data() {
        let mut schema = object(json!({
            "properties": {"a": {"type": "string"}, "enum": {"type": "integer"}},
            "items": {"type": "boolean"},
            "anyOf": [{"type": "null"}, true],
            "enum": [{"type": "not a schema"}],
            "default": {"type": "not a schema"},
            "additionalProperties": false,
        }));
        let mut seen = Vec::new();
        for_each_subschema_mut(&mut schema, |sub| seen.push(sub.clone()));
        assert_eq!(
            seen,
            [
                json!({"type": "string"}),
                json!({"type": "integer"}),
                json!({"type": "boolean"}),
                json!({"type": "null"}),
                json!(true),
                json!(false),
            ]
        );
    }

    #[test]
    fn mapping_keeps_keyword_order_and_data() {
        let schema = object(json!({
            "type": "object",
            "properties": {"a": {"type": "string"}},
            "required": ["a"],
            "const": {"properties": {}},
        }));
        let mapped = map_subschemas(&schema, |_, _| json!({"mapped": true}));
        assert_eq!(
            Value::Object(mapped),
            json!({
                "type": "object",
                "properties": {"a": {"mapped": true}},
                "required": ["a"],
                "const": {"properties": {}},
            })
        );
    }
}

//! Rewrite composition keywords some dialects lack into ones they have:
//! `allOf` merged into one schema, `const` as a one-value `enum`, a `oneOf`
//! of constants as one `enum`, tuple `prefixItems` as `items`.

use serde_json::{Map, Value, json};

/// Merge `allOf` branches into `map`, in place.
///
/// A lone `$ref` branch becomes this schema's `$ref` (schemars 0.8's way of
/// describing a referenced field). Otherwise `resolve` turns `$ref` branches
/// into their targets, properties and `required` are unioned, and other
/// keywords keep the first value seen, `map`'s own first. A branch that
/// cannot be merged (a `$ref` that does not resolve) leaves `allOf` as it is.
pub(super) fn merge_all_of(map: &mut Map<String, Value>, resolve: impl Fn(&str) -> Option<Value>) {
    let Some(Value::Array(branches)) = map.get("allOf") else {
        return;
    };
    if let [Value::Object(only)] = branches.as_slice()
        && only.len() == 1
        && let Some(Value::String(reference)) = only.get("$ref")
        && !map.contains_key("$ref")
    {
        let reference = reference.clone();
        map.shift_remove("allOf");
        map.insert("$ref".into(), Value::String(reference));
        return;
    }
    let mut resolved = Vec::with_capacity(branches.len());
    for branch in branches {
        let branch = match branch.get("$ref").and_then(Value::as_str) {
            Some(reference) => match resolve(reference) {
                Some(target) => target,
                None => return,
            },
            None => branch.clone(),
        };
        match branch {
            Value::Object(branch) => resolved.push(branch),
            Value::Bool(true) => {}
            _ => return,
        }
    }
    map.shift_remove("allOf");
    // The names `required` lists, as a set made once it is first merged
    // into: a scan per name of lists of 100,000 would take minutes.
    let mut listed: Option<std::collections::HashSet<String>> = None;
    for branch in resolved {
        for (keyword, value) in branch {
            match (keyword.as_str(), map.get_mut(&keyword), value) {
                ("properties", Some(Value::Object(mine)), Value::Object(theirs)) => {
                    for (name, schema) in theirs {
                        mine.entry(name).or_insert(schema);
                    }
                }
                ("required", Some(Value::Array(mine)), Value::Array(theirs)) => {
                    let listed =
                        listed.get_or_insert_with(|| mine.iter().map(Value::to_string).collect());
                    for name in theirs {
                        if listed.insert(name.to_string()) {
                            mine.push(name);
                        }
                    }
                }
                (_, Some(_), _) => {}
                (_, None, value) => {
                    map.insert(keyword, value);
                }
            }
        }
    }
}

/// `"const": v` -> `"enum": [v]`, with a `type` inferred from `v` when the
/// schema has none.
pub(super) fn const_to_enum(map: &mut Map<String, Value>) {
    let Some(value) = map.shift_remove("const") else {
        return;
    };
    if !map.contains_key("type")
        && let Some(kind) = json_type(&value)
    {
        map.insert("type".into(), json!(kind));
    }
    map.insert("enum".into(), json!([value]));
}

/// The JSON Schema type of a value.
fn json_type(value: &Value) -> Option<&'static str> {
    Some(match value {
        Value::String(_) => "string",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
        Value::Null => return None,
    })
}

/// A `oneOf`/`anyOf` whose branches are each a single value of one type
/// (schemars' shape for an enum with documented variants) -> one `enum`.
///
/// The variants' descriptions are kept as a list under the schema's own
/// description, `` - `value`: text ``, so the model still reads them.
/// Returns whether it rewrote anything.
pub(super) fn alternatives_to_enum(map: &mut Map<String, Value>) -> bool {
    let Some(key) = ["oneOf", "anyOf"]
        .into_iter()
        .find(|key| matches!(map.get(*key), Some(Value::Array(b)) if !b.is_empty()))
    else {
        return false;
    };
    let Some(Value::Array(branches)) = map.get(key) else {
        return false;
    };
    let mut values = Vec::with_capacity(branches.len());
    let mut documented = Vec::new();
    for branch in branches {
        let Some((value, description)) = single_value(branch) else {
            return false;
        };
        if let Some(text) = description {
            documented.push(format!("- `{}`: {text}", plain(&value)));
        }
        values.push(value);
    }
    let kinds: Vec<_> = values.iter().map(json_type).collect();
    let Some(kind) = kinds[0].filter(|k| kinds.iter().all(|other| *other == Some(*k))) else {
        return false;
    };
    map.shift_remove(key);
    if !map.contains_key("type") {
        map.insert("type".into(), json!(kind));
    }
    map.insert("enum".into(), Value::Array(values));
    if !documented.is_empty() {
        let list = documented.join("\n");
        let description = match map.get("description").and_then(Value::as_str) {
            Some(text) if !text.trim().is_empty() => format!("{}\n{list}", text.trim_end()),
            _ => list,
        };
        map.insert("description".into(), Value::String(description));
    }
    true
}

/// The one value a branch allows, and its description: `{"const": v}` or
/// `{"enum": [v]}`, with at most `type`, `description` and `title` beside.
fn single_value(branch: &Value) -> Option<(Value, Option<String>)> {
    let map = branch.as_object()?;
    let value = match (map.get("const"), map.get("enum")) {
        (Some(value), None) => value.clone(),
        (None, Some(Value::Array(values))) if values.len() == 1 => values[0].clone(),
        _ => return None,
    };
    let only_annotations = map.keys().all(|k| {
        matches!(
            k.as_str(),
            "const" | "enum" | "type" | "description" | "title"
        )
    });
    if !only_annotations || value.is_null() {
        return None;
    }
    let description = map
        .get("description")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|text| !text.is_empty())
        .map(str::to_owned);
    Some((value, description))
}

/// A value as a model would write it in prose: strings without quotes.
fn plain(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A tuple's `prefixItems` -> one `items` schema (the common schema, or an
/// `anyOf` of the positions' schemas); its length stays in
/// `minItems`/`maxItems`.
pub(super) fn tuple_to_items(map: &mut Map<String, Value>) {
    let Some(Value::Array(positions)) = map.shift_remove("prefixItems") else {
        return;
    };
    // Told apart by their JSON text, not compared with each kept one: a
    // tuple may have 100,000 positions.
    let mut seen = std::collections::HashSet::new();
    let mut distinct: Vec<Value> = Vec::new();
    for schema in positions.iter() {
        if seen.insert(schema.to_string()) {
            distinct.push(schema.clone());
        }
    }
    let items = match distinct.len() {
        0 => json!({}),
        1 => distinct.remove(0),
        _ => json!({"anyOf": distinct}),
    };
    map.insert("items".into(), items);
    let length = json!(positions.len());
    map.entry("minItems").or_insert_with(|| length.clone());
    map.entry("maxItems").or_insert(length);
}

#[cfg(test)]
mod tests {
    use super::super::test_support::with;
    use super::*;

    #[test]
    fn all_of_branches_merge_into_one_object() {
        let merged = with(
            json!({
                "description": "Both.",
                "allOf": [
                    {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
                    {"$ref": "#/$defs/B"},
                ],
            }),
            |map| {
                merge_all_of(map, |_| {
                    Some(json!({"properties": {"b": {"type": "integer"}}, "required": ["b"]}))
                })
            },
        );
        assert_eq!(
            merged,
            json!({
                "description": "Both.",
                "type": "object",
                "properties": {"a": {"type": "string"}, "b": {"type": "integer"}},
                "required": ["a", "b"],
            })
        );
    }

    #[test]
    fn a_single_kept_reference_in_all_of_becomes_the_ref() {
        let merged = with(
            json!({"description": "D.", "allOf": [{"$ref": "#/$defs/A"}]}),
            |map| merge_all_of(map, |_| None),
        );
        assert_eq!(merged, json!({"description": "D.", "$ref": "#/$defs/A"}));
    }

    #[test]
    fn const_becomes_a_one_value_enum_with_a_type() {
        assert_eq!(
            with(json!({"const": "a"}), const_to_enum),
            json!({"type": "string", "enum": ["a"]})
        );
        assert_eq!(
            with(json!({"type": "integer", "const": 3}), const_to_enum),
            json!({"type": "integer", "enum": [3]})
        );
    }

    #[test]
    fn documented_variants_become_an_enum_and_a_list() {
        let schema = json!({
            "description": "How hard to try.",
            "oneOf": [
                {"type": "string", "const": "low", "description": "Quick and rough."},
                {"type": "string", "const": "high", "description": "Slow and careful."},
            ],
        });
        let rewritten = with(schema, |map| assert!(alternatives_to_enum(map)));
        assert_eq!(
            rewritten,
            json!({
                "description": "How hard to try.\n- `low`: Quick and rough.\n- `high`: Slow and careful.",
                "type": "string",
                "enum": ["low", "high"],
            })
        );
    }

    #[test]
    fn alternatives_that_are_not_all_values_stay() {
        let schema = json!({"oneOf": [{"const": "a"}, {"type": "object", "properties": {}}]});
        assert_eq!(
            with(schema.clone(), |map| assert!(!alternatives_to_enum(map))),
            schema
        );
        let mixed = json!({"anyOf": [{"const": "a"}, {"const": 1}]});
        assert_eq!(
            with(mixed.clone(), |map| assert!(!alternatives_to_enum(map))),
            mixed
        );
    }

    #[test]
    fn tuples_become_items_with_a_fixed_length() {
        assert_eq!(
            with(
                json!({"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}]}),
                tuple_to_items
            ),
            json!({
                "type": "array",
                "items": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
                "minItems": 2,
                "maxItems": 2,
            })
        );
        assert_eq!(
            with(
                json!({"type": "array", "prefixItems": [{"type": "number"}, {"type": "number"}], "items": false}),
                tuple_to_items
            ),
            json!({"type": "array", "items": {"type": "number"}, "minItems": 2, "maxItems": 2})
        );
    }
}

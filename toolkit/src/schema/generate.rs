//! Generate a tool's argument schema from its Rust type with schemars.

use schemars::JsonSchema;
use schemars::Schema;
use schemars::generate::{SchemaGenerator, SchemaSettings};
use serde_json::{Map, Value, json};

/// The JSON Schema (2020-12) of a tool's argument type, ready for the registry.
///
/// On top of what schemars generates:
/// - every struct-shaped object (one with `properties` and no
///   `additionalProperties`) refuses unknown keys, at any depth, so a
///   misspelled field is reported with a suggestion instead of silently
///   dropped by serde;
/// - integers carry the natural bounds of their width (`u32` gets
///   `maximum: 4294967295`), so a model sees them even where a provider
///   ignores `format`;
/// - the root's own title and description are dropped: the tool's
///   description speaks for it.
///
/// Reached by the code `#[tool]` generates, through the hidden
/// `__private_0_1` module.
pub fn schema_for_args<T: JsonSchema>() -> Value {
    args_schema_from(generator().into_root_schema_for::<T>())
}

/// The generator every tool schema comes from.
fn generator() -> SchemaGenerator {
    SchemaSettings::draft2020_12().into_generator()
}

/// [`schema_for_args`] once the type's schema is generated: the part that
/// does not depend on the type, compiled once rather than for every tool.
fn args_schema_from(schema: Schema) -> Value {
    let mut schema = schema.to_value();
    tighten(&mut schema);
    if let Value::Object(root) = &mut schema {
        root.remove("$schema");
        root.remove("title");
        root.remove("description");
        if root.get("type") == Some(&Value::String("object".into())) {
            root.entry("properties")
                .or_insert_with(|| Value::Object(Default::default()));
            root.insert("additionalProperties".into(), Value::Bool(false));
        }
    }
    schema
}

/// Close struct-shaped objects and add integer bounds, everywhere in `schema`.
fn tighten(schema: &mut Value) {
    match schema {
        Value::Object(map) => {
            if map.contains_key("properties") && !map.contains_key("additionalProperties") {
                map.insert("additionalProperties".into(), Value::Bool(false));
            }
            if let Some((min, max)) = map
                .get("format")
                .and_then(Value::as_str)
                .and_then(integer_bounds)
            {
                map.entry("minimum").or_insert(min);
                map.entry("maximum").or_insert(max);
            }
            for value in map.values_mut() {
                tighten(value);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(tighten),
        _ => {}
    }
}

/// The range of the integer formats schemars emits (`usize` is `uint`, taken as 64-bit).
fn integer_bounds(format: &str) -> Option<(Value, Value)> {
    let (min, max): (i128, i128) = match format {
        "int8" => (i8::MIN.into(), i8::MAX.into()),
        "int16" => (i16::MIN.into(), i16::MAX.into()),
        "int32" => (i32::MIN.into(), i32::MAX.into()),
        "int64" | "int" => (i64::MIN.into(), i64::MAX.into()),
        "uint8" => (0, u8::MAX.into()),
        "uint16" => (0, u16::MAX.into()),
        "uint32" => (0, u32::MAX.into()),
        "uint64" | "uint" => (0, u64::MAX.into()),
        _ => return None,
    };
    let number = |n: i128| -> Value {
        match (i64::try_from(n), u64::try_from(n)) {
            (Ok(i), _) => i.into(),
            (_, Ok(u)) => u.into(),
            _ => Value::Null,
        }
    };
    Some((number(min), number(max)))
}

/// The key that marks an output schema as a wrapper: the tool's value is
/// not an object, so its structured content is `{"result": value}` and the
/// value's own schema is the `result` property. Named in the docs (and the
/// book's outputs chapter) rather than exported, like the `_meta` keys.
pub(crate) const WRAPPED_KEY: &str = "x-toolsmith-wrapped";

/// The name of the wrapper's one property, as FastMCP names it.
pub(crate) const RESULT_KEY: &str = "result";

/// The JSON Schema of a tool's structured result.
///
/// MCP requires `outputSchema` to describe an object. A type whose schema
/// is an object at the root (`"type": "object"`) is described as it is;
/// any other (a list, a number, text, an `Option`, an enum of several
/// shapes) is wrapped, as FastMCP does:
/// `{"type": "object", "properties": {"result": <schema>}, "required": ["result"], "x-toolsmith-wrapped": true}`,
/// and its structured content is `{"result": value}`. The decision is the
/// schema's, never the value's, so the content always fits the schema.
pub(crate) fn schema_for_output<T: JsonSchema>() -> Value {
    output_schema_from(generator().into_root_schema_for::<T>().to_value())
}

/// [`schema_for_output`] for a schema already generated.
pub(crate) fn output_schema_from(mut schema: Value) -> Value {
    if let Value::Object(root) = &mut schema {
        root.remove("$schema");
        if root.get("type") == Some(&Value::String("object".into())) {
            root.remove("title");
            return schema;
        }
    }
    wrap(schema)
}

/// Whether an output schema is a wrapper made by [`schema_for_output`].
pub(crate) fn is_wrapped(schema: &Value) -> bool {
    schema.get(WRAPPED_KEY) == Some(&Value::Bool(true))
}

/// The wrapper around `inner`. Its `$defs` move to the wrapper's root, where
/// their `#/$defs/...` references still find them; a schema that refers to
/// its own root (`"$ref": "#"`, a recursive type) moves into `$defs` too,
/// under its title, with those references pointing there.
fn wrap(mut inner: Value) -> Value {
    let mut defs = match inner.as_object_mut().and_then(|root| root.remove("$defs")) {
        Some(Value::Object(defs)) => defs,
        _ => Map::new(),
    };
    let title = inner
        .as_object_mut()
        .and_then(|root| root.remove("title"))
        .and_then(|t| t.as_str().map(str::to_owned));
    if refers_to_root(&inner) {
        let base = title.unwrap_or_else(|| "Result".to_owned());
        let mut name = base.clone();
        let mut n = 1;
        while defs.contains_key(&name) {
            n += 1;
            name = format!("{base}{n}");
        }
        let pointer = format!("#/$defs/{name}");
        repoint_root(&mut inner, &pointer);
        defs.insert(name, inner);
        inner = json!({"$ref": pointer});
    }
    let mut root = Map::new();
    root.insert("type".into(), "object".into());
    root.insert("properties".into(), json!({ RESULT_KEY: inner }));
    root.insert("required".into(), json!([RESULT_KEY]));
    root.insert(WRAPPED_KEY.into(), Value::Bool(true));
    if !defs.is_empty() {
        root.insert("$defs".into(), Value::Object(defs));
    }
    Value::Object(root)
}

fn refers_to_root(schema: &Value) -> bool {
    match schema {
        Value::Object(map) => map
            .iter()
            .any(|(key, value)| (key == "$ref" && value == "#") || refers_to_root(value)),
        Value::Array(items) => items.iter().any(refers_to_root),
        _ => false,
    }
}

fn repoint_root(schema: &mut Value, pointer: &str) {
    match schema {
        Value::Object(map) => {
            for (key, value) in map.iter_mut() {
                if key == "$ref" && value == "#" {
                    *value = pointer.into();
                } else {
                    repoint_root(value, pointer);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| repoint_root(v, pointer)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Args {
        /// Where to look.
        path: String,
        limit: Option<u32>,
    }

    #[test]
    fn argument_schemas_are_closed_objects_without_a_title() {
        let schema = schema_for_args::<Args>();
        assert_eq!(schema["type"], json!("object"));
        assert_eq!(schema["additionalProperties"], json!(false));
        assert!(schema.get("title").is_none());
        assert!(schema.get("$schema").is_none());
        assert_eq!(
            schema["properties"]["path"]["description"],
            json!("Where to look.")
        );
        assert_eq!(schema["required"], json!(["path"]));
    }

    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Outer {
        inner: Inner,
        counts: std::collections::HashMap<String, u32>,
        small: i8,
        big: u64,
    }

    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Inner {
        flag: bool,
    }

    #[test]
    fn nested_structs_are_closed_but_maps_stay_open() {
        let schema = schema_for_args::<Outer>();
        assert_eq!(
            schema["$defs"]["Inner"]["additionalProperties"],
            json!(false)
        );
        assert_eq!(
            schema["properties"]["counts"]["additionalProperties"]["type"],
            json!("integer")
        );
    }

    #[test]
    fn integers_carry_their_natural_bounds() {
        let schema = schema_for_args::<Outer>();
        assert_eq!(schema["properties"]["small"]["minimum"], json!(-128));
        assert_eq!(schema["properties"]["small"]["maximum"], json!(127));
        assert_eq!(schema["properties"]["big"]["maximum"], json!(u64::MAX));
        assert_eq!(
            schema["properties"]["counts"]["additionalProperties"]["maximum"],
            json!(u32::MAX)
        );
    }

    #[test]
    fn objects_are_output_schemas_as_they_are() {
        let schema = schema_for_output::<Args>();
        assert_eq!(schema["type"], json!("object"));
        assert!(!is_wrapped(&schema));
        assert!(schema.get("title").is_none() && schema.get("$schema").is_none());
        assert_eq!(schema["properties"]["path"]["type"], json!("string"));
    }

    #[test]
    fn other_outputs_are_wrapped_in_a_result_property() {
        let schema = schema_for_output::<String>();
        assert_eq!(
            schema,
            json!({
                "type": "object",
                "properties": {"result": {"type": "string"}},
                "required": ["result"],
                "x-toolsmith-wrapped": true,
            })
        );
        let schema = schema_for_output::<Vec<u8>>();
        assert!(is_wrapped(&schema));
        assert_eq!(schema["properties"]["result"]["type"], json!("array"));
        assert_eq!(
            schema["properties"]["result"]["items"]["format"],
            json!("uint8")
        );
    }

    #[test]
    fn wrapped_definitions_move_to_the_root_and_still_resolve() {
        let list = schema_for_output::<Vec<Inner>>();
        let maybe = schema_for_output::<Option<Inner>>();
        for schema in [&list, &maybe] {
            assert!(is_wrapped(schema), "{schema}");
            let result = &schema["properties"]["result"];
            assert!(result.get("$defs").is_none(), "{schema}");
            assert!(result.get("title").is_none(), "{schema}");
            assert_eq!(schema["$defs"]["Inner"]["type"], json!("object"));
            assert!(result.to_string().contains("\"#/$defs/Inner\""), "{schema}");
        }
        let valid = |schema: &Value, value: Value| {
            let compiled = crate::args::ArgumentSchema::compile(schema).unwrap();
            compiled.validate(&value).is_ok()
        };
        assert!(valid(&list, json!({"result": [{"flag": true}]})));
        assert!(!valid(&list, json!({"result": [{"flag": 1}]})));
        assert!(!valid(&list, json!([{"flag": true}])));
        assert!(valid(&maybe, json!({"result": {"flag": true}})));
        assert!(valid(&maybe, json!({"result": null})));
        assert!(!valid(&maybe, json!({"flag": true})));
    }

    #[derive(JsonSchema)]
    #[allow(dead_code)]
    enum Tree {
        Leaf(u32),
        Branch(Vec<Tree>),
    }

    #[test]
    fn a_recursive_root_moves_into_the_definitions() {
        let schema = schema_for_output::<Tree>();
        assert!(is_wrapped(&schema), "{schema}");
        assert!(!refers_to_root(&schema), "{schema}");
        let compiled = crate::args::ArgumentSchema::compile(&schema).unwrap();
        let tree = json!({"result": {"Branch": [{"Leaf": 1}, {"Branch": [{"Leaf": 2}]}]}});
        assert!(compiled.validate(&tree).is_ok(), "{schema}");
        let bad = json!({"result": {"Branch": [{"Leaf": "x"}]}});
        assert!(compiled.validate(&bad).is_err(), "{schema}");
    }
}

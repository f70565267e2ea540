//! Generate a tool's argument schema from its Rust type with schemars.

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::Value;

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
    let generator = SchemaSettings::draft2020_12().into_generator();
    let mut schema = generator.into_root_schema_for::<T>().to_value();
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

/// The JSON Schema of a tool's structured result, when it is an object.
///
/// MCP requires `outputSchema` to describe an object, so other shapes
/// (strings, lists) get no output schema and travel as text.
pub(crate) fn schema_for_output<T: JsonSchema>() -> Option<Value> {
    let generator = SchemaSettings::draft2020_12().into_generator();
    let mut schema = generator.into_root_schema_for::<T>().to_value();
    let root = schema.as_object_mut()?;
    if root.get("type") != Some(&Value::String("object".into())) {
        return None;
    }
    root.remove("$schema");
    root.remove("title");
    Some(schema)
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
    fn only_objects_get_an_output_schema() {
        assert!(schema_for_output::<Args>().is_some());
        assert!(schema_for_output::<String>().is_none());
        assert!(schema_for_output::<Vec<u8>>().is_none());
    }
}

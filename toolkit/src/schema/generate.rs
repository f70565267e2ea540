//! Generate a tool's argument schema from its Rust type with schemars.

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::Value;

/// The JSON Schema (2020-12) of a tool's argument type, ready for the registry.
///
/// The root is always an object schema that refuses unknown parameters, so a
/// misspelled parameter is reported (with a suggestion) instead of silently ignored.
pub fn schema_for_args<T: JsonSchema>() -> Value {
    let generator = SchemaSettings::draft2020_12().into_generator();
    let mut schema = generator.into_root_schema_for::<T>().to_value();
    if let Value::Object(root) = &mut schema {
        root.remove("$schema");
        root.remove("title");
        if root.get("type") == Some(&Value::String("object".into())) {
            root.entry("properties")
                .or_insert_with(|| Value::Object(Default::default()));
            root.insert("additionalProperties".into(), Value::Bool(false));
        }
    }
    schema
}

/// The JSON Schema of a tool's structured result, when it is an object.
///
/// MCP requires `outputSchema` to describe an object, so other shapes
/// (strings, lists) get no output schema and travel as text.
pub fn schema_for_output<T: JsonSchema>() -> Option<Value> {
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

    #[test]
    fn only_objects_get_an_output_schema() {
        assert!(schema_for_output::<Args>().is_some());
        assert!(schema_for_output::<String>().is_none());
        assert!(schema_for_output::<Vec<u8>>().is_none());
    }
}

//! Every provider sends a call's arguments as one JSON object, so a tool
//! whose input schema does not describe an object is refused when it is
//! registered, instead of failing every call.

use serde_json::{Value, json};
use toolsmith::{
    Arguments, RegistryError, Tool, ToolContext, ToolError, ToolOutput, ToolRegistry, ToolSpec,
    async_trait,
};

struct Plain(ToolSpec);

#[async_trait]
impl Tool for Plain {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }
    async fn call(&self, _: Arguments, _: &ToolContext) -> Result<ToolOutput, ToolError> {
        Ok("done".into())
    }
}

fn register(schema: Value) -> Result<(), RegistryError> {
    ToolRegistry::new().register(Plain(ToolSpec::new("t", "A tool.", schema)))
}

#[test]
fn roots_that_are_not_objects_are_refused_with_the_reason() {
    for schema in [
        json!({"type": "string"}),
        json!({"type": ["object", "null"]}),
        json!({"properties": {"x": {"type": "integer"}}}),
        json!({"anyOf": [{"type": "object"}, {"type": "string"}]}),
        json!(true),
        json!([]),
    ] {
        let error = register(schema.clone()).expect_err(&schema.to_string());
        match &error {
            RegistryError::InvalidSchema { tool, reason } => {
                assert_eq!(tool, "t");
                assert!(reason.contains("\"object\""), "{schema}: {reason}");
            }
            other => panic!("{schema}: {other:?}"),
        }
    }
}

#[test]
fn object_roots_are_accepted() {
    register(json!({"type": "object"})).unwrap();
    register(json!({"type": "object", "properties": {"x": {"type": "integer"}}})).unwrap();
}

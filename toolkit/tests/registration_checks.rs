//! What registration checks of a tool's spec, and where its metadata goes:
//! - every provider sends a call's arguments as one JSON object, so a tool
//!   whose input schema does not describe an object is refused when it is
//!   registered, instead of failing every call;
//! - input examples are checked against the schema at registration;
//! - title, tags, deprecation and examples reach the definitions a provider
//!   and an MCP client are sent.

use serde_json::{Value, json};
use toolsmith::{
    Arguments, DefinitionFormat, RegistryError, Tool, ToolContext, ToolError, ToolOutput,
    ToolRegistry, ToolSpec, async_trait,
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

fn resize() -> ToolSpec {
    ToolSpec::new(
        "resize",
        "Resize an image.",
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "width": {"type": "integer", "minimum": 1}
            },
            "required": ["path", "width"]
        }),
    )
}

#[test]
fn an_example_the_schema_refuses_is_refused_at_registration() {
    let registry = ToolRegistry::new();
    let spec = resize()
        .with_input_example(json!({"path": "a.png", "width": 64}))
        .with_input_example(json!({"path": "b.png", "width": 0}));
    let error = registry.register(Plain(spec)).unwrap_err();
    assert!(
        matches!(&error, RegistryError::InvalidExample { tool, index: 1, .. } if tool == "resize"),
        "{error:?}"
    );
    let message = error.to_string();
    assert!(
        message.contains("input example 1 of tool 'resize'"),
        "{message}"
    );
    assert!(message.contains("width"), "{message}");
    assert!(registry.is_empty());
}

#[test]
fn metadata_reaches_every_definition_that_has_a_place_for_it() {
    let registry = ToolRegistry::new();
    let spec = resize()
        .with_title("Resize image")
        .with_tag("images")
        .with_deprecated("use `transform` with `scale`")
        .with_input_example(json!({"path": "a.png", "width": 64}));
    registry.register(Plain(spec)).unwrap();

    let anthropic = &registry.definitions(DefinitionFormat::Anthropic)[0];
    assert_eq!(
        anthropic["input_examples"],
        json!([{"path": "a.png", "width": 64}])
    );
    let mcp = &registry.definitions(DefinitionFormat::Mcp)[0];
    assert_eq!(mcp["title"], "Resize image");
    assert_eq!(mcp["_meta"]["toolsmith/tags"], json!(["images"]));
    for format in DefinitionFormat::ALL {
        let definition = &registry.definitions(format)[0];
        let text = definition.to_string();
        assert!(
            text.contains("Deprecated: use `transform` with `scale`"),
            "{format:?}: {text}"
        );
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

//! A tool's metadata beyond its schemas: input examples are checked when
//! the tool is registered, and title, tags, deprecation and examples reach
//! the definitions a provider and an MCP client are sent.

use serde_json::json;
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

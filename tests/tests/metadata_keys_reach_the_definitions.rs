//! The metadata keys of `#[tool(...)]` (title, tags, icons, deprecation,
//! examples) end up in the tool's `ToolSpec` and in the definitions an MCP
//! client and a provider are sent; a function's own `#[deprecated]` makes a
//! deprecated tool that still runs; the registry refuses an example the
//! tool's schema refuses.
//!
//! The tools are registered by hand, not collected: `bad_example` must not
//! reach a registry that takes every linked tool.

use serde_json::json;
use tk::{
    DefinitionFormat, IconTheme, RegistryError, Tool, ToolContext, ToolIcon, ToolRegistry, tool,
};

/// Resize an image to a width, keeping its proportions.
#[tool(
    title = "Resize image",
    tags = ["images", "files"],
    icon = "https://example.com/resize.png",
    icon(
        src = "data:image/png;base64,iVBORw0KGgo=",
        mime_type = "image/png",
        sizes = ["any"],
        theme = dark,
    ),
    deprecated = "use `transform` with `scale`",
    example = r#"{"path": "a.png", "width": 64}"#,
    example = r#"{"width": 1024, "path": "photos/b.jpg"}"#,
    meta = r#"{"com.example/owner": "imaging", "com.example/cost": 2}"#,
)]
async fn resize(
    /// The image.
    path: String,
    /// The new width, in pixels.
    #[arg(minimum = 1)]
    width: u32,
) -> String {
    format!("{path} at {width} px")
}

/// Rotate an image a quarter turn clockwise.
#[deprecated(since = "0.2.0", note = "use `transform` with `rotate`")]
#[tool(read_only)]
fn rotate(path: String) -> String {
    format!("{path} rotated")
}

/// Flip an image.
#[deprecated]
#[tool]
async fn flip(path: String) -> String {
    format!("{path} flipped")
}

/// Crop an image.
#[deprecated = "use `transform` with `crop`"]
#[tool(deprecated = "use the `transform` tool with `crop`")]
async fn crop(path: String) -> String {
    format!("{path} cropped")
}

/// Sharpen an image.
#[tool(deprecated)]
async fn sharpen(path: String) -> String {
    format!("{path} sharpened")
}

/// Blur an image.
#[tool(example = r#"{"path": "a.png", "radius": 0}"#)]
async fn bad_example(
    /// The image.
    path: String,
    /// How far to blur, in pixels.
    #[arg(minimum = 1)]
    radius: u32,
) -> String {
    format!("{path} blurred by {radius}")
}

#[test]
fn every_key_reaches_the_spec() {
    let spec = ResizeTool.spec();
    assert_eq!(spec.title.as_deref(), Some("Resize image"));
    assert_eq!(spec.tags, ["images", "files"]);
    assert_eq!(
        spec.icons,
        [
            ToolIcon::new("https://example.com/resize.png"),
            ToolIcon::new("data:image/png;base64,iVBORw0KGgo=")
                .with_mime_type("image/png")
                .with_size("any")
                .with_theme(IconTheme::Dark),
        ]
    );
    assert_eq!(
        spec.deprecated.as_deref(),
        Some("use `transform` with `scale`")
    );
    assert_eq!(
        spec.input_examples,
        [
            json!({"path": "a.png", "width": 64}),
            json!({"width": 1024, "path": "photos/b.jpg"}),
        ]
    );
    // The order the example was written in is kept.
    assert_eq!(
        spec.input_examples[1].to_string(),
        r#"{"width":1024,"path":"photos/b.jpg"}"#
    );
    assert_eq!(
        tk::serde_json::Value::Object(spec.meta.clone()),
        json!({"com.example/owner": "imaging", "com.example/cost": 2})
    );
}

#[test]
fn a_tool_without_the_keys_has_none_of_them() {
    let spec = BadExampleTool.spec();
    assert_eq!(spec.title, None);
    assert!(spec.tags.is_empty());
    assert!(spec.icons.is_empty());
    assert_eq!(spec.deprecated, None);
}

#[test]
fn the_mcp_definition_carries_them() {
    let registry = ToolRegistry::new();
    registry.register(ResizeTool).unwrap();
    let mcp = &registry.definitions(DefinitionFormat::Mcp)[0];
    assert_eq!(mcp["title"], "Resize image");
    assert_eq!(
        mcp["icons"],
        json!([
            {"src": "https://example.com/resize.png"},
            {
                "src": "data:image/png;base64,iVBORw0KGgo=",
                "mimeType": "image/png",
                "sizes": ["any"],
                "theme": "dark"
            }
        ])
    );
    assert_eq!(
        mcp["description"],
        "Resize an image to a width, keeping its proportions.\n\nDeprecated: use `transform` with `scale`"
    );
    assert_eq!(
        mcp["_meta"],
        json!({
            "com.example/owner": "imaging",
            "com.example/cost": 2,
            "toolsmith/tags": ["images", "files"],
            "toolsmith/deprecated": "use `transform` with `scale`",
            "toolsmith/inputExamples": [
                {"path": "a.png", "width": 64},
                {"width": 1024, "path": "photos/b.jpg"}
            ]
        })
    );
}

#[test]
fn examples_that_fit_the_schema_reach_anthropic_definitions() {
    let registry = ToolRegistry::new();
    registry.register(ResizeTool).unwrap();
    let anthropic = &registry.definitions(DefinitionFormat::Anthropic)[0];
    assert_eq!(
        anthropic["input_examples"],
        json!([
            {"path": "a.png", "width": 64},
            {"width": 1024, "path": "photos/b.jpg"}
        ])
    );
}

#[test]
fn an_example_the_schema_refuses_is_refused_at_registration() {
    let registry = ToolRegistry::new();
    let error = registry.register(BadExampleTool).unwrap_err();
    assert!(
        matches!(&error, RegistryError::InvalidExample { tool, index: 0, .. } if tool == "bad_example"),
        "{error:?}"
    );
    let message = error.to_string();
    assert!(
        message.starts_with("input example 0 of tool 'bad_example' does not fit its input schema:"),
        "{message}"
    );
    assert!(message.contains("radius"), "{message}");
    assert!(registry.is_empty());
}

#[test]
fn the_functions_deprecated_note_is_the_tools() {
    assert_eq!(
        RotateTool.spec().deprecated.as_deref(),
        Some("use `transform` with `rotate`")
    );
    // Without a note, the tool is deprecated with nothing to say instead.
    assert_eq!(FlipTool.spec().deprecated.as_deref(), Some(""));
    assert_eq!(SharpenTool.spec().deprecated.as_deref(), Some(""));
    // The key speaks to the model; `#[deprecated]` to the function's callers.
    assert_eq!(
        CropTool.spec().deprecated.as_deref(),
        Some("use the `transform` tool with `crop`")
    );

    let registry = ToolRegistry::new();
    registry.register(FlipTool).unwrap();
    registry.register(RotateTool).unwrap();
    let definitions = registry.definitions(DefinitionFormat::Mcp);
    let description = |name: &str| {
        definitions
            .iter()
            .find(|d| d["name"] == name)
            .map(|d| d["description"].clone())
            .unwrap()
    };
    assert_eq!(description("flip"), "Flip an image.\n\nDeprecated.");
    assert_eq!(
        description("rotate"),
        "Rotate an image a quarter turn clockwise.\n\nDeprecated: use `transform` with `rotate`"
    );
}

#[tokio::test]
async fn deprecated_functions_still_run_as_tools_and_as_functions() {
    let registry = ToolRegistry::new();
    registry.register(RotateTool).unwrap();
    registry.register(FlipTool).unwrap();
    let ctx = ToolContext::new();
    let rotated = registry
        .call("rotate", json!({"path": "a.png"}), &ctx)
        .await;
    assert_eq!(rotated.content, "a.png rotated");
    let flipped = registry.call("flip", json!({"path": "a.png"}), &ctx).await;
    assert_eq!(flipped.content, "a.png flipped");

    // Calling them directly is Rust's own deprecation, warned as usual.
    #[allow(deprecated)]
    {
        assert_eq!(rotate("b.png".into()), "b.png rotated");
        assert_eq!(flip("b.png".into()).await, "b.png flipped");
        assert_eq!(crop("b.png".into()).await, "b.png cropped");
    }
}

/// Look up the weather where a request is routed.
#[tool(read_only)]
async fn routed_weather(
    /// Where to route the call.
    #[arg(header = "Region")]
    region: String,
    /// The city.
    city: String,
) -> String {
    format!("{city} via {region}")
}

#[test]
fn a_parameter_mirrored_in_a_header_is_marked_in_its_schema() {
    let spec = RoutedWeatherTool.spec().clone();
    let properties = &spec.input_schema["properties"];
    assert_eq!(properties["region"]["x-mcp-header"], "Region");
    assert_eq!(properties["region"]["type"], "string");
    assert!(properties["city"].get("x-mcp-header").is_none());
}

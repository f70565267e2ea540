//! Chapter: arguments, descriptions and schemas.

use serde_json::json;
use toolsmith::Tool;

// ANCHOR: search_notes
use schemars::JsonSchema;
use serde::Deserialize;
use toolsmith::tool;

/// How results are ordered.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Order {
    /// Most relevant first.
    Relevance,
    /// Newest first.
    Newest,
}

/// A date range, inclusive.
#[derive(Debug, Deserialize, JsonSchema)]
struct Range {
    /// First day, `YYYY-MM-DD`.
    #[schemars(regex(pattern = r"^\d{4}-\d{2}-\d{2}$"))]
    from: String,
    /// Last day, `YYYY-MM-DD`.
    to: Option<String>,
}

/// Search the user's notes.
///
/// Returns one line per matching note: its title and first sentence.
#[tool(read_only)]
async fn search_notes(
    /// Words to look for.
    #[arg(min_length = 1, max_length = 200)]
    query: String,
    /// How many notes at most.
    #[arg(default = 10, minimum = 1, maximum = 50)]
    limit: u32,
    /// Result order.
    #[arg(default = Order::Relevance)]
    order: Order,
    /// Only notes with all of these tags.
    #[arg(max_items = 5)]
    tags: Vec<String>,
    /// Only notes written in this range.
    written: Option<Range>,
) -> String {
    let written = written.map(|r| format!("{}..{}", r.from, r.to.unwrap_or_default()));
    format!("{query} limit={limit} order={order:?} tags={tags:?} written={written:?}")
}
// ANCHOR_END: search_notes

// ANCHOR: whole_struct
/// Arguments of `create_event`, as one struct.
#[derive(Debug, Deserialize, JsonSchema)]
struct NewEvent {
    /// What the event is called.
    title: String,
    /// Start time, RFC 3339.
    starts_at: String,
    /// Length in minutes.
    #[serde(default = "half_an_hour")]
    minutes: u32,
}

fn half_an_hour() -> u32 {
    30
}

/// Put an event in the calendar.
#[tool(name = "create_event", idempotent)]
async fn create(#[arg(flatten)] event: NewEvent) -> String {
    format!(
        "created {} at {} for {} min",
        event.title, event.starts_at, event.minutes
    )
}
// ANCHOR_END: whole_struct

// ANCHOR: metadata
/// Resize an image to a width, keeping its proportions.
#[tool(
    title = "Resize image",
    tags = ["images"],
    icon = "https://example.com/icons/resize.svg",
    example = r#"{"path": "photos/cat.png", "width": 640}"#,
)]
async fn resize(
    /// The image, relative to the workspace.
    path: String,
    /// The new width in pixels.
    #[arg(minimum = 1)]
    width: u32,
) -> String {
    format!("{path} resized to {width} px")
}

/// Make a 128-pixel-wide copy of an image.
#[deprecated(note = "call `resize` with a width of 128")]
#[tool(tags = ["images"])]
async fn thumbnail(path: String) -> String {
    format!("{path} resized to 128 px")
}
// ANCHOR_END: metadata

#[test]
fn metadata_reaches_the_definitions() {
    // ANCHOR: metadata_definitions
    let registry = toolsmith::ToolRegistry::new();
    registry.register(ResizeTool).unwrap();
    registry.register(ThumbnailTool).unwrap();

    let mcp = registry.definitions(toolsmith::DefinitionFormat::Mcp);
    assert_eq!(mcp[0]["name"], "resize");
    assert_eq!(mcp[0]["title"], "Resize image");
    assert_eq!(
        mcp[0]["icons"],
        json!([{"src": "https://example.com/icons/resize.svg"}])
    );
    assert_eq!(mcp[0]["_meta"]["toolsmith/tags"], json!(["images"]));
    assert_eq!(
        mcp[1]["description"],
        "Make a 128-pixel-wide copy of an image.\n\nDeprecated: call `resize` with a width of 128"
    );

    let anthropic = registry.definitions(toolsmith::DefinitionFormat::Anthropic);
    assert_eq!(
        anthropic[0]["input_examples"],
        json!([{"path": "photos/cat.png", "width": 640}])
    );
    // ANCHOR_END: metadata_definitions
}

#[test]
fn the_schema_comes_from_the_types() {
    // ANCHOR: schema
    let spec = SearchNotesTool.spec();
    assert_eq!(spec.name, "search_notes");
    assert!(spec.description.starts_with("Search the user's notes."));

    let schema = &spec.input_schema;
    assert_eq!(schema["required"], json!(["query", "tags"]));
    let limit = &schema["properties"]["limit"];
    assert_eq!(limit["description"], "How many notes at most.");
    assert_eq!(limit["default"], 10);
    assert_eq!(limit["minimum"], 1);
    assert_eq!(limit["maximum"], 50);
    assert_eq!(schema["properties"]["tags"]["maxItems"], 5);
    // ANCHOR_END: schema
    println!("{}", serde_json::to_string_pretty(schema).unwrap());
}

#[tokio::test]
async fn a_whole_arguments_struct_is_flattened() {
    let spec = CreateTool.spec();
    assert_eq!(spec.name, "create_event");
    let properties = spec.input_schema["properties"].as_object().unwrap();
    assert_eq!(
        properties.keys().collect::<Vec<_>>(),
        ["title", "starts_at", "minutes"]
    );
    let args = CreateTool
        .bind(json!({"title": "Standup", "starts_at": "2026-01-05T09:00:00Z"}))
        .unwrap();
    let out = CreateTool
        .call(args, &toolsmith::ToolContext::new())
        .await
        .unwrap();
    assert_eq!(
        out.content,
        "created Standup at 2026-01-05T09:00:00Z for 30 min"
    );
}

#[tokio::test]
async fn the_function_is_still_a_function() {
    // ANCHOR: plain_call
    let text = search_notes("rust".into(), 3, Order::Newest, vec![], None).await;
    assert_eq!(text, "rust limit=3 order=Newest tags=[] written=None");
    // ANCHOR_END: plain_call
}

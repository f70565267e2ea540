// `meta` holds MCP's `_meta` entries for clients: a JSON object in a string.
// The keys under `toolsmith/` are written from `tags`, `deprecated` and
// `example`, so `meta` may not set them.
use tk::tool;

/// Resize an image.
#[tool(meta = r#"["owner", "imaging"]"#)]
async fn resize(path: String) -> String {
    path
}

/// Crop an image.
#[tool(meta = r#"{"toolsmith/tags": ["images"]}"#)]
async fn crop(path: String) -> String {
    path
}

fn main() {}

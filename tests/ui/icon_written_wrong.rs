// Why this is refused: `icon(...)` takes `src` (required), `mime_type`,
// `sizes` and `theme`, and a theme is `light` or `dark`, the two backgrounds
// MCP knows. A misspelled key or theme would otherwise be lost.

use tk::tool;

/// Resize an image.
#[tool(icon(src = "https://example.com/resize.png", size = ["48x48"], theme = "drak"))]
async fn resize(path: String) -> String {
    path
}

/// Rotate an image.
#[tool(icon(mime_type = "image/png"))]
async fn rotate(path: String) -> String {
    path
}

fn main() {}

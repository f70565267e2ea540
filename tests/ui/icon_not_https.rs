// Why this is refused: MCP clients load an icon only from an `https:` URL or a
// `data:` URI, and definitions leave any other icon out. An `http:` address or
// a local path would be dropped without a word, so it is an error here.

use tk::tool;

/// Resize an image.
#[tool(icon = "http://example.com/resize.png")]
async fn resize(path: String) -> String {
    path
}

/// Rotate an image.
#[tool(icon(
    src = "file:///usr/share/icons/rotate.svg",
    mime_type = "image/svg+xml"
))]
async fn rotate(path: String) -> String {
    path
}

fn main() {}

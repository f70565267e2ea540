// Why this is refused: tags are words compared as text when a registry picks
// tools by tag (`ToolFilter::tags`), so each one is a string literal, in a
// list even when there is only one.

use tk::tool;

/// Resize an image.
#[tool(tags = ["images", files])]
async fn resize(path: String) -> String {
    path
}

/// Rotate an image.
#[tool(tags = "images")]
async fn rotate(path: String) -> String {
    path
}

fn main() {}

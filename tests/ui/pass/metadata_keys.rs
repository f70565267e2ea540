// Must compile: every metadata key of `#[tool(...)]` at once, icons both
// short and long, and a function with Rust's own `#[deprecated]`. The crate
// denies `deprecated`, so the generated code must not call the deprecated
// function in a way that warns; only other callers are warned.

#![deny(deprecated)]

use tk::tool;

/// Resize an image to a width, keeping its proportions.
#[tool(
    title = "Resize image",
    tags = ["images", "files"],
    icon = "https://example.com/resize.png",
    icon(
        src = "data:image/png;base64,iVBORw0KGgo=",
        mime_type = "image/png",
        sizes = ["any"],
        theme = "dark",
    ),
    icon(src = "https://example.com/resize-48.png", sizes = ["48x48", "96x96"], theme = light),
    deprecated = "use `transform` with `scale`",
    example = r#"{"path": "a.png", "width": 64}"#,
    example = r#"{
        "path": "photos/b.jpg",
        "width": 1024
    }"#,
    meta = r#"{"com.example/owner": "imaging"}"#,
)]
async fn resize(path: String, width: u32) -> String {
    format!("{path} at {width} px")
}

/// Rotate an image a quarter turn.
#[deprecated(since = "0.2.0", note = "use `transform` with `rotate`")]
#[tool(read_only)]
fn rotate(path: String) -> String {
    path
}

/// Flip an image.
#[tool]
#[deprecated]
fn flip(path: String) -> String {
    path
}

fn main() {
    let _ = (ResizeTool, RotateTool, FlipTool);
}

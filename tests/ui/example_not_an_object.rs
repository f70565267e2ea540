// Why this is refused: an example is the arguments of one call, and a tool's
// arguments are always a JSON object, named by parameter. A list of values,
// or a lone value, is not something the tool could be called with.

use tk::tool;

/// Resize an image.
#[tool(example = r#"["a.png", 64]"#)]
async fn resize(path: String, width: u32) -> String {
    format!("{path} {width}")
}

/// Rotate an image.
#[tool(example = "90")]
async fn rotate(degrees: u32) -> String {
    degrees.to_string()
}

fn main() {}

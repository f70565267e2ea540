// Why this is refused: an example is shown to the model as a call to copy,
// so it must be JSON; the mistake is found when the crate is compiled, with
// where in the text it is, rather than when the tool is first described.

use tk::tool;

/// Resize an image.
#[tool(example = r#"{"path": "a.png" "width": 64}"#)]
async fn resize(path: String, width: u32) -> String {
    format!("{path} {width}")
}

/// Rotate an image.
#[tool(example = r#"{
    "path": "a.png",
    "degrees": 90,
}"#)]
async fn rotate(path: String, degrees: u32) -> String {
    format!("{path} {degrees}")
}

fn main() {}

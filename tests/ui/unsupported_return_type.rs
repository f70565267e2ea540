// Why this is refused: what a tool returns is sent back to the model, so it
// must be text, a `ToolOutput`, or a value that implements `serde::Serialize`.
// The error points at the return type.

use tk::tool;

/// Create a scratch file.
#[tool]
async fn create_scratch() -> std::fs::File {
    std::fs::File::create("scratch.txt").unwrap()
}

fn main() {}

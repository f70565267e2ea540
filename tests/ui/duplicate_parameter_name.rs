// Why this is refused: after renaming, two parameters would be the same
// property in the JSON Schema, and the model could not fill both.

use tk::tool;

/// Copy a file.
#[tool]
async fn copy_file(from: String, #[arg(rename = "from")] to: String) -> String {
    format!("{from} -> {to}")
}

fn main() {}

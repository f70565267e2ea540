// Why this is refused: with a maximum length below the minimum, no string
// could pass, and every call the model makes would be rejected.

use tk::tool;

/// Rename the file.
#[tool]
async fn rename(#[arg(min_length = 8, max_length = 4)] name: String) -> String {
    name
}

fn main() {}

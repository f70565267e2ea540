// Why this is refused: arguments come from the model as JSON, so an argument's
// type must implement `serde::Deserialize` and `schemars::JsonSchema`. An open
// file cannot be written in JSON; take the path as a `String` and open it in
// the body. The error points at the argument's type.

use tk::tool;

/// Count the bytes in a file.
#[tool]
async fn count_bytes(file: std::fs::File) -> String {
    file.metadata().map(|m| m.len()).unwrap_or(0).to_string()
}

fn main() {}

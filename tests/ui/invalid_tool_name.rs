// Why this is refused: model providers accept tool names made of 1 to 64
// letters, digits, `_` and `-` only; a name with a space is rejected by the
// API when the tool is offered, long after it compiled.

use tk::tool;

/// Read a text file.
#[tool(name = "read file")]
async fn read_file(path: String) -> String {
    path
}

fn main() {}

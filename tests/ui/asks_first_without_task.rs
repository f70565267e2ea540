// Why this is refused: `asks_first` says when a task tool's call becomes a
// task; a tool that never runs as one has nothing for it to change.

use tk::tool;

/// Greet someone.
#[tool(asks_first)]
async fn greet(name: String) -> String {
    format!("Hello, {name}!")
}

fn main() {}

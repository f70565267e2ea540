// Why this is refused: a title is the name people see for the tool, in place
// of its name; an empty one would show them nothing. Give one, or leave the
// key out.

use tk::tool;

/// Resize an image.
#[tool(title = "")]
async fn resize(path: String) -> String {
    path
}

fn main() {}

// Why this is refused: `#[tool]` turns a function into a tool. A struct has no
// body to run and no parameters to describe, so the attribute goes on the
// function that does the work.

use tk::tool;

/// Read a file.
#[tool]
struct ReadFile {
    path: String,
}

fn main() {}

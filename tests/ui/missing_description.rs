// Why this is refused: the description is the model's only guide to when a
// tool should be called. Write a doc comment on the function (or give
// `#[tool(description = "...")]`).

use tk::tool;

#[tool]
async fn read_file(path: String) -> String {
    path
}

fn main() {}

// Why this is refused: the description is the model's only guide to when a
// tool should be called. An empty one is as bad as none.

use tk::tool;

#[tool(description = "  ")]
async fn ping() -> String {
    "pong".into()
}

fn main() {}

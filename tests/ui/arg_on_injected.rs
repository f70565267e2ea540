// Why this is refused: a `&T` parameter is injected from the ToolContext and
// never appears in the schema, so `#[arg]` has nothing to describe there.

use tk::{ToolContext, tool};

/// Show the workspace.
#[tool]
async fn workspace(#[arg(description = "The context")] ctx: &ToolContext) -> String {
    format!("{:?}", ctx.workspace())
}

fn main() {}

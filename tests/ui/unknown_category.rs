// Why this is refused: the category decides a tool's default risk level and
// whether it needs approval, so it must be one the policy knows.

use tk::tool;

/// Run a shell command.
#[tool(category = terminal)]
async fn run(command: String) -> String {
    command
}

fn main() {}

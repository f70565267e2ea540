// Why this is refused: the tool's injected parameter and its return type
// are refused, each by one error at its type. Code that names the tool
// type (registers it, shares it as a `Tool`, reads its spec) adds no error
// of its own: the mistakes are in the function, not where it is used.

use std::rc::Rc;
use std::sync::Arc;

use tk::{Tool, ToolRegistry, tool};

/// Count the users.
#[tool]
async fn count_users(users: &Rc<Vec<String>>) -> String {
    users.len().to_string()
}

/// Create a scratch file.
#[tool]
fn create_scratch() -> std::fs::File {
    std::fs::File::create("scratch.txt").unwrap()
}

fn main() {
    let registry = ToolRegistry::new();
    let _ = registry.register(CountUsersTool);
    let _ = registry.register(CreateScratchTool);
    let _shared: Arc<dyn Tool> = Arc::new(CountUsersTool);
    let _ = CreateScratchTool.spec();
}

// Must compile: injected parameters are recognised by trait, not by how their
// type is spelled, and the attribute itself may be imported under another name.

use tk::ToolContext as Ctx;
use tk::tool as llm_tool;

struct Greeting(String);

/// Greet someone with the configured greeting.
#[llm_tool(read_only)]
async fn greet(ctx: &Ctx, greeting: &Greeting, name: String) -> String {
    let _ = ctx.workspace();
    format!("{}, {name}", greeting.0)
}

fn main() {
    let _ = GreetTool;
}

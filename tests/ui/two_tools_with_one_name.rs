// Why this is refused: a model calls a tool by its name, so two tools cannot
// share one. In one module, the clash is a compile error at both names: the
// macro puts a marker named after the tool beside each function, and the two
// markers collide. Across modules a crate has no such shared place, so the
// registry refuses the second tool when both are registered, naming the
// modules of both.

use tk::tool;

/// Search the notes.
#[tool(name = "search")]
async fn search_notes(query: String) -> String {
    query
}

/// Search the web.
#[tool(name = "search")]
async fn search_web(query: String) -> String {
    query
}

fn main() {}

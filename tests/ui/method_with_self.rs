// Why this is refused: a tool is called by the model with JSON arguments only,
// so there is no `self` to call it on. Make it a free function and reach shared
// state through a `&State` parameter, which is injected from the ToolContext.

use tk::tool;

struct Notes {
    lines: Vec<String>,
}

impl Notes {
    /// Count the notes.
    #[tool]
    async fn count_notes(&self) -> String {
        self.lines.len().to_string()
    }
}

fn main() {}

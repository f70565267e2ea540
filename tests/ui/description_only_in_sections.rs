// Why this is refused: `# Errors`, `# Panics`, `# Safety` and `# Examples`
// are written for programmers and are not shown to the model, so this doc
// comment leaves the tool without a description. Say what the tool does on
// the first line, above the sections.

use tk::tool;

/// # Errors
///
/// When the file cannot be read.
#[tool]
async fn read_file(path: String) -> Result<String, std::io::Error> {
    std::fs::read_to_string(path)
}

fn main() {}

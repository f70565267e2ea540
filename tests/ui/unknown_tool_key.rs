// Why this is refused: a misspelled key would otherwise be ignored, and a tool
// meant to be read-only would silently not be. Unknown keys are errors, with
// the nearest known key suggested.

use tk::tool;

/// List the files in a directory.
#[tool(readonly)]
async fn list_dir(path: String) -> String {
    path
}

fn main() {}

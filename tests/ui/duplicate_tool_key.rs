// Why this is refused: when a key is given twice, one of the two values would
// be dropped without a word. Say it once.

use tk::tool;

/// Fetch a web page.
#[tool(name = "fetch", name = "web_fetch")]
async fn fetch(url: String) -> String {
    url
}

fn main() {}

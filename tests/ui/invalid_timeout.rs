// Why this is refused: a timeout is a positive duration, in seconds or with a
// unit (`"500ms"`, `"30s"`, `"2m"`). A timeout of zero, or a unit the macro does
// not know, is a mistake caught at compile time.

use tk::tool;

/// Fetch a web page.
#[tool(timeout = "2 weeks")]
async fn fetch(url: String) -> String {
    url
}

fn main() {}

// Why this is refused: an argument is parsed from the model's JSON, which is
// gone once the arguments are parsed, so nothing inside an argument can
// borrow from it either: not `&str` inside an `Option`, not a `Cow<'_, str>`.
// The error names the borrow and the owned type to take instead, in place of
// the compiler's errors about lifetimes the code never named.

use std::borrow::Cow;

use tk::tool;

/// Greet someone, by title if one is given.
#[tool]
async fn greet(name: Cow<'_, str>, title: Option<&str>) -> String {
    format!("Hello, {} {name}", title.unwrap_or_default())
}

fn main() {}

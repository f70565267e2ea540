// Why this is refused: the model's arguments are parsed into owned values, so
// an argument cannot borrow (`&str`). A `&T` parameter means "inject `T` from
// the ToolContext" instead, and `str` is not state. Take a `String`.

use tk::tool;

/// Say hello.
#[tool]
async fn greet(name: &str) -> String {
    format!("Hello, {name}")
}

fn main() {}

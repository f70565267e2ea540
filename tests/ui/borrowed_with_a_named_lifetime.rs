// Why this is refused: the same borrow as in `borrowed_argument.rs`, with its
// lifetime named. The lifetime is there only for the borrow, so the borrow is
// the one error: once the argument is a `String`, the lifetime goes with it.

use tk::tool;

/// Say hello.
#[tool]
async fn greet<'a>(name: &'a str) -> String {
    format!("Hello, {name}")
}

fn main() {}

// Why this is refused: `impl Trait` in argument position is a hidden generic
// parameter, and a schema can only be made for a named, concrete type.

use tk::tool;

/// Shout a message.
#[tool]
async fn shout(message: impl Into<String>) -> String {
    message.into().to_uppercase()
}

fn main() {}

// Why this is refused: a tool runs when the model asks for it, never at compile
// time, so `const` says something that cannot be true of it.

use tk::tool;

/// The answer.
#[tool]
const fn answer() -> u32 {
    42
}

fn main() {}

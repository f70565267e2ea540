// Why this is refused: with the minimum above the maximum no value could pass
// validation, so every call would fail. The error points at the maximum.

use tk::tool;

/// Roll a die.
#[tool]
async fn roll(#[arg(minimum = 6, maximum = 1)] sides: u32) -> String {
    sides.to_string()
}

fn main() {}

// Why this is refused: with no values listed, every value the model sends is
// refused, so no call could pass. The error points at the empty list.

use tk::tool;

/// Set the fan's speed.
#[tool]
async fn set_fan(#[arg(one_of = [])] speed: u32) -> String {
    speed.to_string()
}

fn main() {}

// Why this is refused: a bound is written into the schema as a JSON number,
// and one past the 64-bit integers has no exact form there. Bounds past an
// `i32` but within 64 bits are taken as they are, without a suffix.

use tk::tool;

/// Count grains of sand.
#[tool]
async fn count(#[arg(maximum = 100000000000000000000)] grains: u128) -> String {
    grains.to_string()
}

fn main() {}

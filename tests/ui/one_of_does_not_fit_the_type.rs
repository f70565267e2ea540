// Why this is refused: `one_of` lists the values of a number or of text (or
// of the items of an `Option` or a list of one). A flag has its two values
// already, and the macro says so; for a type it cannot read, the compiler
// checks that the type takes what the list holds, at the first number and
// at the first string. A fixed set of named choices is an enum, whose schema
// lists its variants by itself.

use tk::tool;

#[tk::data]
#[derive(Debug)]
struct Speed {
    rpm: u32,
}

/// Set the fan.
#[tool]
async fn set_fan(
    #[arg(one_of = [true])] on: bool,
    #[arg(one_of = ["slow", "fast"])] speed: Speed,
    #[arg(one_of = ["1", "2"])] level: std::num::NonZeroU8,
) -> String {
    format!("{on} {speed:?} {level}")
}

fn main() {}

// Why this is refused: the default is in the schema beside the values
// `one_of` lists, so a default outside them is a value the model is shown
// and would be refused for sending, and the value the function gets
// whenever the argument is left out. The error points at the default.

use tk::tool;

/// Set the fan's speed.
#[tool]
async fn set_fan(#[arg(one_of = [1, 2, 3], default = 5)] speed: u32) -> String {
    speed.to_string()
}

fn main() {}

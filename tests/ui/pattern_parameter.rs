// Why this is refused: every argument is a named property in the JSON the
// model sends, and the parameter's name is the property's name. A pattern has
// no name, so bind the value to a name and destructure it in the body.

use tk::tool;

/// Add two numbers.
#[tool]
async fn add((a, b): (u32, u32)) -> String {
    (a + b).to_string()
}

fn main() {}

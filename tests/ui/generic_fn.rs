// Why this is refused: a tool's JSON Schema is made from its argument types at
// compile time, so every type must be concrete. A generic function is a
// family of functions, and the model could not say which one it means.

use tk::tool;

/// Echo a value back.
#[tool]
async fn echo<T: std::fmt::Display>(value: T) -> String {
    value.to_string()
}

fn main() {}

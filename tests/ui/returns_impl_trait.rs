// Why this is refused: the generated code must know the exact type a tool
// returns to turn it into output (and, for structured results, into an output
// schema). `impl Trait` hides it; name the type.

use tk::tool;

/// List the numbers up to ten.
#[tool]
async fn numbers() -> impl std::fmt::Display {
    (1..=10)
        .map(|n| n.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

fn main() {}

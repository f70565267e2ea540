// Why this is refused: the pattern is checked with the same regular
// expression syntax the validator uses. A pattern that does not compile
// would otherwise be found only when the registry takes the tool.

use tk::tool;

/// Look up an order.
#[tool]
async fn order(#[arg(pattern = "^(ORD-[0-9]+$")] id: String) -> String {
    id
}

fn main() {}

// Why this is refused: `min_length` is for text and `min_items` for lists;
// one parameter is one or the other, and both map to one rule in the schema.

use tk::tool;

/// Tag an item.
#[tool]
async fn tag(#[arg(min_length = 1, min_items = 1)] tags: Vec<String>) -> String {
    tags.join(",")
}

fn main() {}

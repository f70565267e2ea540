// Why this is refused: an `Option` argument is already optional, and absent
// means `None`. A default would mean `None` could never happen. Drop one.

use tk::tool;

/// Search the notes.
#[tool]
async fn search(query: String, #[arg(default = 10)] limit: Option<u32>) -> String {
    format!("{query} {limit:?}")
}

fn main() {}

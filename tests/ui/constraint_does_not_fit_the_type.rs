// Why this is refused: a bound, length, pattern or item count that does not
// fit the parameter's type would be left out of the schema and never
// checked. Each is reported at its key.

use tk::tool;

/// Search the index.
#[tool]
async fn search(
    #[arg(minimum = 1)] query: String,
    #[arg(pattern = "^[0-9]+$")] count: u32,
    #[arg(min_items = 1)] verbose: bool,
    #[arg(max_length = 10)] ids: Vec<u64>,
    #[arg(min_length = 2, maximum = 9)] limit: Option<u8>,
) -> String {
    format!("{query}{count}{verbose}{ids:?}{limit:?}")
}

fn main() {}

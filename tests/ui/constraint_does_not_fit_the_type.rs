// A bound or length that does not fit the parameter's type would be left
// out of the schema and never checked; each is refused at its key.
use toolsmith::tool;

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

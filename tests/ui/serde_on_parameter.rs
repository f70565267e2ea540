// Why this is refused: a parameter is not a struct field, so serde and
// schemars never see attributes written on it. `#[arg(...)]` does their
// work here: `rename`, `default`, `description`, the bounds and `flatten`.
// The error gives the `#[arg]` to write, or says why there is none.

use tk::tool;

/// Search the notes.
#[tool]
async fn search(
    #[serde(alias = "q")] query: String,
    #[serde(rename = "max", default = "ten")] limit: u32,
    #[schemars(range(min = 1, max = 5))] depth: u8,
) -> String {
    format!("{query} {limit} {depth}")
}

fn ten() -> u32 {
    10
}

fn main() {}

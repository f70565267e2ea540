// Why this is refused: `#[arg(flatten)]` makes a struct's fields the tool's
// arguments, so there is no single argument left for `rename` (or a bound, or
// a default) to apply to. Put such keys on the struct's fields instead.

use tk::tool;

#[derive(tk::serde::Deserialize, tk::schemars::JsonSchema)]
#[serde(crate = "tk::serde")]
#[schemars(crate = "tk::schemars")]
struct SearchArgs {
    query: String,
}

/// Search the notes.
#[tool]
async fn search(#[arg(flatten, rename = "search")] args: SearchArgs) -> String {
    args.query
}

fn main() {}

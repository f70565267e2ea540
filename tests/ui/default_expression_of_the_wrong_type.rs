// Why this is refused: a default that is not a literal, or a string literal
// for a type the macro cannot read, is checked by the compiler against the
// parameter's type. The error points at the default, names the type it must
// have, and, for a string, says that the type cannot be made from text,
// rather than listing the type's unrelated `From` impls.

use tk::schemars::JsonSchema;
use tk::serde::{Deserialize, Serialize};
use tk::tool;

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(crate = "tk::serde")]
#[schemars(crate = "tk::schemars")]
enum Order {
    Newest,
    Oldest,
}

const PAGE: i64 = 20;

/// List the notes.
#[tool]
async fn list_notes(
    #[arg(default = "newest")] order: Order,
    #[arg(default = PAGE)] limit: u32,
) -> String {
    format!("{order:?} {limit}")
}

fn main() {}

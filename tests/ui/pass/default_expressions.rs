// Must compile: a default may be any expression of the parameter's type, and
// a string literal makes any type that implements `From<&str>`. The schema
// shows each default to the model.

use std::path::PathBuf;

use tk::schemars::JsonSchema;
use tk::serde::{Deserialize, Serialize};
use tk::{Tool, tool};

#[derive(Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(crate = "tk::serde")]
#[schemars(crate = "tk::schemars")]
enum Order {
    #[default]
    Newest,
    Oldest,
}

const PAGE: u32 = 20;

/// List the notes.
#[tool]
async fn list_notes(
    #[arg(default = Order::Oldest)] order: Order,
    #[arg(default = PAGE)] limit: u32,
    #[arg(default = u64::MAX)] max_bytes: u64,
    #[arg(default = -1)] offset: i32,
    #[arg(default = 0.5)] min_score: f32,
    #[arg(default = "notes")] folder: PathBuf,
    #[arg(default = "all".to_owned())] tag: String,
    #[arg(default = vec!["draft".into()])] skip: Vec<String>,
    #[arg(default = Default::default())] fallback: Order,
    #[arg(default = 'n')] marker: char,
) -> String {
    format!(
        "{order:?} {limit} {max_bytes} {offset} {min_score} {} {tag} {skip:?} {fallback:?} {marker}",
        folder.display()
    )
}

fn main() {
    let schema = &ListNotesTool.spec().input_schema;
    let default = |name: &str| schema["properties"][name]["default"].clone();
    assert_eq!(default("order"), "Oldest");
    assert_eq!(default("limit"), 20);
    assert_eq!(default("max_bytes"), u64::MAX);
    assert_eq!(default("offset"), -1);
    assert_eq!(default("min_score"), 0.5);
    assert_eq!(default("folder"), "notes");
    assert_eq!(default("tag"), "all");
    assert_eq!(default("skip"), tk::serde_json::json!(["draft"]));
    assert_eq!(default("fallback"), "Newest");
    assert_eq!(default("marker"), "n");
}

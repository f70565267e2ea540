//! How a crate of your own lays out its tools: one module per family, each
//! tool annotated where it lives, all of them collected by `inventory`
//! without a central list to keep in sync.
//!
//! ```text
//! downstream/
//!   main.rs          builds the registry and makes a few calls
//!   tools/mod.rs     declares the modules (nothing else)
//!   tools/notes.rs   note tools sharing a `Notebook` from the context
//!   tools/units.rs   pure conversion tools
//! ```
//!
//! Run it with `cargo run --example downstream`.

mod tools;

use std::sync::Arc;

use serde_json::json;
use toolsmith::{ToolContext, ToolFilter, ToolRegistry};

#[tokio::main]
async fn main() {
    // Every tool under `downstream::tools` is taken, wherever it is declared.
    let registry = ToolRegistry::from_inventory(
        &ToolFilter::default().module_prefix(concat!(module_path!(), "::tools")),
    )
    .expect("tool names are unique");
    println!("tools: {}", registry.names().join(", "));

    let notebook = Arc::new(tools::notes::Notebook::default());
    let ctx = ToolContext::new().with_shared_state(notebook);

    let calls = [
        (
            "add_note",
            json!({"title": "groceries", "text": "tea, bread"}),
        ),
        (
            "add_note",
            json!({"title": "ideas", "text": "a tool for every job"}),
        ),
        ("list_notes", json!({})),
        ("celsius_to_fahrenheit", json!({"celsius": "21.5"})),
        ("kilometres_to_miles", json!({"km": 42.195})),
    ];
    for (name, arguments) in calls {
        let out = registry.call(name, arguments, &ctx).await;
        println!("{name}: {}", out.content);
    }
}

//! Tools for the cross-crate integration tests, one module per kind of shape.
//!
//! This crate depends on the core crate under another name (`tk`), so every
//! `#[tool]` here also proves the macro finds it under a renamed dependency,
//! and that `tk::serde` / `tk::schemars` are all a tool crate needs. The tools
//! are spread over several modules so `inventory` has to collect them from
//! each; the integration tests in `tests/` pick them with `ToolFilter`s.
//!
//! The bodies are deliberately trivial: each echoes what it received, so a
//! test can see exactly what the call path delivered.

use tk::{ToolFilter, ToolRegistry};

pub mod attributes;
pub mod collections;
pub mod hand_written;
pub mod injection;
pub mod naming;
pub mod numbers;
pub mod returns;
pub mod whole;

/// The module path of this crate, the prefix `ToolFilter::module_prefix` takes.
pub const MODULE: &str = "toolsmith_tests";

/// Every `#[tool]` of this crate, by module, as the names models call.
pub const TOOLS: &[(&str, &[&str])] = &[
    (
        "attributes",
        &[
            "create_account",
            "exec",
            "fetch_page",
            "purge_cache",
            "launch",
        ],
    ),
    (
        "collections",
        &["lists_and_maps", "paint", "tag_item", "count_nodes"],
    ),
    (
        "injection",
        &[
            "whoami",
            "count_visit",
            "wait_for_cancel",
            "cancel_status",
            "sync_thread",
            "async_thread",
            "block_until_released",
        ],
    ),
    ("naming", &["read_file", "write_file", "list_dir"]),
    (
        "numbers",
        &["integer_widths", "scalars", "ping", "sixteen", "seventeen"],
    ),
    (
        "returns",
        &[
            "shout",
            "summarize_diff",
            "forget",
            "weather",
            "divide",
            "square_root",
            "word_count",
        ],
    ),
    ("whole", &["search"]),
];

/// The module path of one of this crate's modules, e.g. `toolsmith_tests::returns`.
pub fn module(name: &str) -> String {
    format!("{MODULE}::{name}")
}

/// A registry of exactly the named linked `#[tool]`s, however risky.
///
/// # Panics
///
/// When a name is not among the linked tools, so a test never runs against
/// a smaller registry than it asked for.
pub fn registry_of(names: &[&str]) -> ToolRegistry {
    let registry =
        ToolRegistry::from_inventory(&ToolFilter::default().names(names.iter().copied()))
            .expect("the named tools register");
    let mut wanted: Vec<&str> = names.to_vec();
    wanted.sort_unstable();
    let mut found = registry.names();
    found.sort_unstable();
    assert_eq!(found, wanted, "every named tool is linked");
    registry
}

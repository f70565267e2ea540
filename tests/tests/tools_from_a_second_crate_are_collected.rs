//! Tools defined in another library crate (`extra-tools`, which depends on
//! the core crate under its own name) are collected by `from_inventory`.
//!
//! `extra_tools` is used for nothing else here, which is the case the
//! linker caveat in the core crate's `discovery` module is about, so it is
//! referenced the documented way.

use serde_json::json;
use tk::{ToolContext, ToolFilter, ToolRegistry};

tk::link_tools!(extra_tools, toolsmith_tests);

#[test]
fn a_second_library_crate_contributes_its_tools() {
    let registry =
        ToolRegistry::from_inventory(&ToolFilter::default().module_prefix("extra_tools"))
            .expect("registers");
    assert_eq!(registry.names(), ["count_chars", "reverse_text"]);
    let spec = registry.get("reverse_text").expect("collected");
    assert_eq!(spec.spec().module_path, "extra_tools");
    assert_eq!(
        spec.spec().description,
        "Reverse a text, character by character."
    );
}

#[test]
fn tools_of_both_crates_share_one_registry() {
    let registry = ToolRegistry::from_inventory(&ToolFilter::default()).expect("registers");
    for name in ["count_chars", "reverse_text", "read_file", "shout"] {
        assert!(registry.contains(name), "{name} in {:?}", registry.names());
    }
}

#[tokio::test]
async fn tools_from_the_second_crate_are_called_like_any_other() {
    let registry =
        ToolRegistry::from_inventory(&ToolFilter::default().module_prefix("extra_tools"))
            .expect("registers");
    let ctx = ToolContext::new();
    assert_eq!(
        registry
            .call("reverse_text", json!({"text": "draw"}), &ctx)
            .await
            .content,
        "ward"
    );
    // A sync tool of the other crate, with a cast argument.
    assert_eq!(
        registry
            .call("count_chars", json!("{\"text\": \"héllo\"}"), &ctx)
            .await
            .content,
        "5"
    );
}

//! Definition lists stay byte-identical between turns: sorted (the rest
//! alphabetically, then `mcp_` tools), built once, rebuilt only when the set
//! of tools changes. Each tool's rendering is made once and shared: by every
//! list of a registry, and for a `#[tool]` by every registry. Also:
//! selection by names and the compact variant.

use std::sync::Arc;

use serde_json::json;
use tk::toolset::Toolset;
use tk::{Definition, DefinitionFormat, ToolFilter, ToolRegistry};
use toolsmith_tests::hand_written::JsonTool;
use toolsmith_tests::registry_of;

fn registry() -> ToolRegistry {
    let registry = registry_of(&["write_file", "read_file", "exec", "weather", "fetch_page"]);
    registry
        .register(JsonTool::numbered("mcp_x_y"))
        .expect("registers");
    registry
        .register(JsonTool::numbered("mcp_a_b"))
        .expect("registers");
    registry
}

fn openai_names(definitions: &[Definition]) -> Vec<&str> {
    definitions
        .iter()
        .map(|d| d["function"]["name"].as_str().expect("a name"))
        .collect()
}

fn mcp_names(definitions: &[Definition]) -> Vec<&str> {
    definitions
        .iter()
        .map(|d| d["name"].as_str().expect("a name"))
        .collect()
}

#[test]
fn definitions_are_alphabetical_with_mcp_tools_last() {
    let registry = registry();
    let expected = [
        "exec",
        "fetch_page",
        "read_file",
        "weather",
        "write_file",
        "mcp_a_b",
        "mcp_x_y",
    ];
    assert_eq!(
        openai_names(&registry.definitions(DefinitionFormat::OpenAi)),
        expected
    );
    assert_eq!(
        mcp_names(&registry.definitions(DefinitionFormat::Mcp)),
        expected
    );
    assert_eq!(registry.names(), expected);
    let spec_names: Vec<String> = registry
        .specs()
        .iter()
        .map(|s| s.name.to_string())
        .collect();
    assert_eq!(spec_names, expected);
}

#[test]
fn the_order_does_not_depend_on_registration_order() {
    let forwards = registry();
    let backwards = ToolRegistry::new();
    backwards
        .register(JsonTool::numbered("mcp_a_b"))
        .expect("registers");
    backwards
        .register(JsonTool::numbered("mcp_x_y"))
        .expect("registers");
    for name in ["write_file", "weather", "read_file", "fetch_page", "exec"] {
        backwards
            .register_arc(forwards.get(name).expect("registered"))
            .expect("registers");
    }
    assert_eq!(
        serde_json::to_string(&*forwards.definitions(DefinitionFormat::OpenAi)).expect("json"),
        serde_json::to_string(&*backwards.definitions(DefinitionFormat::OpenAi)).expect("json")
    );
}

#[test]
fn definitions_are_built_once_and_shared() {
    let registry = registry();
    for format in [DefinitionFormat::OpenAi, DefinitionFormat::Mcp] {
        let first = registry.definitions(format);
        let second = registry.definitions(format);
        assert!(Arc::ptr_eq(&first, &second), "{format:?}");
        let compact = registry.definitions_compact(format);
        assert!(Arc::ptr_eq(&compact, &registry.definitions_compact(format)));
        assert!(!Arc::ptr_eq(&first, &compact));
    }
    assert!(!Arc::ptr_eq(
        &registry.definitions(DefinitionFormat::OpenAi),
        &registry.definitions(DefinitionFormat::Mcp)
    ));
}

#[test]
fn a_change_to_the_set_of_tools_rebuilds_them() {
    let registry = registry();
    let before = registry.definitions(DefinitionFormat::OpenAi);

    registry
        .register(JsonTool::numbered("list_things"))
        .expect("registers");
    let added = registry.definitions(DefinitionFormat::OpenAi);
    assert!(!Arc::ptr_eq(&before, &added));
    assert_eq!(added.len(), before.len() + 1);
    assert_eq!(openai_names(&added)[2], "list_things");
    // The old list is untouched: whoever holds it keeps a consistent view.
    assert!(!openai_names(&before).contains(&"list_things"));

    registry.unregister("list_things").expect("registered");
    let removed = registry.definitions(DefinitionFormat::OpenAi);
    assert!(!Arc::ptr_eq(&added, &removed));
    assert_eq!(*removed, *before);

    registry
        .replace(
            |name| name.starts_with("mcp_"),
            vec![Arc::new(JsonTool::numbered("mcp_z")) as Arc<dyn tk::Tool>],
        )
        .expect("replaces");
    let replaced = registry.definitions(DefinitionFormat::OpenAi);
    assert_eq!(
        openai_names(&replaced),
        [
            "exec",
            "fetch_page",
            "read_file",
            "weather",
            "write_file",
            "mcp_z"
        ]
    );

    // A failed registration changes nothing, so the cache stays.
    registry
        .register(JsonTool::numbered("exec"))
        .expect_err("taken");
    assert!(Arc::ptr_eq(
        &replaced,
        &registry.definitions(DefinitionFormat::OpenAi)
    ));
}

#[test]
fn definitions_can_be_selected_by_name() {
    let registry = registry();
    let selected = registry.definitions_for(
        &["mcp_x_y", "no_such_tool", "read_file", "exec"],
        DefinitionFormat::Mcp,
    );
    // In definition order, not the order asked; unknown names skipped.
    assert_eq!(mcp_names(&selected), ["exec", "read_file", "mcp_x_y"]);
    let all = registry.definitions(DefinitionFormat::Mcp);
    assert_eq!(selected[1], all[2]);
    assert!(
        registry
            .definitions_for(&[], DefinitionFormat::OpenAi)
            .is_empty()
    );
}

#[test]
fn the_compact_variant_keeps_the_first_sentence() {
    let registry = registry();
    let full = registry.definitions(DefinitionFormat::OpenAi);
    let compact = registry.definitions_compact(DefinitionFormat::OpenAi);
    let description = |defs: &[Definition], name: &str| {
        defs.iter()
            .find(|d| d["function"]["name"] == json!(name))
            .map(|d| d["function"]["description"].clone())
            .expect("present")
    };
    assert_eq!(
        description(&full, "exec"),
        json!(
            "Run a shell command in the workspace. The output is returned.\n\n\
             Nothing is really run: this tool only reports what it would do."
        )
    );
    assert_eq!(
        description(&compact, "exec"),
        json!("Run a shell command in the workspace.")
    );
    assert_eq!(
        description(&compact, "fetch_page"),
        json!("Fetch a web page.")
    );
    assert_eq!(
        description(&compact, "read_file"),
        json!("Read a text file from the workspace.")
    );
    // Only descriptions shrink: the schemas are the same.
    for (full, compact) in full.iter().zip(compact.iter()) {
        assert_eq!(
            full["function"]["parameters"],
            compact["function"]["parameters"]
        );
        assert_eq!(full["function"]["name"], compact["function"]["name"]);
    }
}

/// The definition of the tool called `name` in an OpenAI list.
fn openai_definition<'a>(definitions: &'a [Definition], name: &str) -> &'a Definition {
    definitions
        .iter()
        .find(|d| d["function"]["name"] == json!(name))
        .expect("listed")
}

#[test]
fn a_tool_is_rendered_once_for_every_registry_of_the_program() {
    let first = registry();
    let second = registry();
    let (first, second) = (
        first.definitions(DefinitionFormat::OpenAi),
        second.definitions(DefinitionFormat::OpenAi),
    );
    assert!(!Arc::ptr_eq(&first, &second));
    // `#[tool]`s keep their rendering in their static: the same one in both.
    for name in ["exec", "fetch_page", "read_file", "weather", "write_file"] {
        assert!(
            Definition::ptr_eq(
                openai_definition(&first, name),
                openai_definition(&second, name)
            ),
            "{name}"
        );
    }
    // A hand-written tool without a cache of its own is rendered by each
    // registry it is in, to the same bytes.
    let (a, b) = (
        openai_definition(&first, "mcp_a_b"),
        openai_definition(&second, "mcp_a_b"),
    );
    assert!(!Definition::ptr_eq(a, b));
    assert_eq!(a, b);
    // Every registry from the inventory: the same renderings again.
    let everything = ToolRegistry::from_inventory(&ToolFilter::all()).expect("registers");
    let all = everything.definitions(DefinitionFormat::OpenAi);
    assert!(Definition::ptr_eq(
        openai_definition(&first, "exec"),
        openai_definition(&all, "exec")
    ));
}

#[test]
fn a_rendering_outlives_a_change_to_the_rest_of_the_set() {
    let registry = registry();
    let before = registry.definitions(DefinitionFormat::Mcp);
    registry
        .register(JsonTool::numbered("list_things"))
        .expect("registers");
    let after = registry.definitions(DefinitionFormat::Mcp);
    assert!(!Arc::ptr_eq(&before, &after));
    // The tools that stayed keep their renderings, hand-written ones too.
    for definition in before.iter() {
        let name = &definition["name"];
        let kept = after.iter().find(|d| d["name"] == *name).expect("kept");
        assert!(Definition::ptr_eq(definition, kept), "{name}");
    }
}

#[test]
fn a_tool_renamed_by_a_toolset_is_rendered_under_its_new_name() {
    let registry = registry_of(&["read_file"]);
    let original = registry.definitions(DefinitionFormat::OpenAi);
    let reader = registry.get("read_file").expect("registered");
    let renamed = ToolRegistry::new();
    Toolset::new()
        .with_tool_arc(reader)
        .prefix("docs_")
        .build()
        .expect("builds")
        .register(&renamed)
        .expect("registers");
    let prefixed = renamed.definitions(DefinitionFormat::OpenAi);
    assert_eq!(openai_names(&prefixed), ["docs_read_file"]);
    let (before, after) = (&original[0], &prefixed[0]);
    assert_eq!(before["function"]["name"], "read_file");
    assert_eq!(
        before["function"]["parameters"],
        after["function"]["parameters"]
    );
    // The original tool's own rendering is untouched by the renamed one's.
    assert_eq!(
        registry_of(&["read_file"]).definitions(DefinitionFormat::OpenAi)[0],
        *before
    );
}

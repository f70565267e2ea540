//! Run-time registration beside `#[tool]`s: hand-written tools, unique
//! names, removal and `replace()` of a group of tools in one step.

use std::sync::Arc;

use serde_json::json;
use tk::{RegistryError, Tool, ToolContext, ToolFilter, ToolRegistry};
use toolsmith_tests::hand_written::JsonTool;
use toolsmith_tests::naming::{ListDirTool, ReadFileTool};
use toolsmith_tests::{module, registry_of};

fn shared(tool: impl Tool) -> Arc<dyn Tool> {
    Arc::new(tool)
}

#[tokio::test]
async fn a_hand_written_tool_is_called_beside_macro_tools() {
    let registry = registry_of(&["read_file"]);
    registry
        .register(JsonTool::numbered("mcp_x_y"))
        .expect("registers");
    assert_eq!(registry.names(), ["read_file", "mcp_x_y"]);
    let ctx = ToolContext::new();
    // Its JSON schema drives casting and validation like a generated one.
    assert_eq!(
        registry
            .call("mcp_x_y", json!({"n": "7"}), &ctx)
            .await
            .content,
        "mcp_x_y: 7"
    );
    assert_eq!(
        registry
            .call("mcp_x_y", json!({"n": -1}), &ctx)
            .await
            .content,
        "Error: Invalid parameters for tool 'mcp_x_y': n must be >= 0\n\n\
         [Fix the arguments as described and call the tool again.]"
    );
    assert_eq!(
        registry
            .call("read_file", json!({"path": "x"}), &ctx)
            .await
            .content,
        "read x from line 1 limit None"
    );
}

#[test]
fn a_macro_tool_type_registers_by_hand_too() {
    let registry = ToolRegistry::new();
    registry.register(ReadFileTool).expect("registers");
    registry
        .register_arc(shared(ListDirTool))
        .expect("registers");
    assert_eq!(registry.names(), ["list_dir", "read_file"]);
    assert_eq!(registry.len(), 2);
    assert!(!registry.is_empty());
    assert!(registry.get("read_file").is_some());
}

#[test]
fn a_duplicate_name_is_refused_with_where_the_first_came_from() {
    let registry = ToolRegistry::new();
    registry.register(ReadFileTool).expect("registers");
    let err = registry
        .register(JsonTool::numbered("read_file"))
        .expect_err("the name is taken");
    assert_eq!(
        err,
        RegistryError::Duplicate {
            name: "read_file".into(),
            existing: "run-time registration".into(),
            added: "run-time registration".into(),
        }
    );
    assert_eq!(
        err.to_string(),
        "a tool named 'read_file' is already registered (from run-time registration); the one from run-time registration needs another name: tool names must be unique"
    );

    let registry = registry_of(&["read_file"]);
    let err = registry
        .register(ReadFileTool)
        .expect_err("the name is taken");
    assert_eq!(
        err.to_string(),
        "a tool named 'read_file' is already registered (from #[tool] in toolsmith_tests::naming); the one from run-time registration needs another name: tool names must be unique"
    );
}

#[test]
fn a_failed_batch_adds_nothing() {
    let registry = registry_of(&["list_dir"]);
    let err = registry
        .register_inventory(&ToolFilter::all().module_prefix(module("naming")))
        .expect_err("list_dir is already there");
    assert!(
        matches!(&err, RegistryError::Duplicate { name, .. } if name == "list_dir"),
        "{err:?}"
    );
    assert_eq!(registry.names(), ["list_dir"]);
}

#[test]
fn invalid_names_and_schemas_are_refused() {
    let registry = ToolRegistry::new();
    assert_eq!(
        registry
            .register(JsonTool::numbered("read file"))
            .expect_err("a space is not allowed"),
        RegistryError::InvalidName("read file".into())
    );
    let err = registry
        .register(JsonTool::new(
            "broken",
            "Has a dangling reference.",
            json!({"type": "object", "properties": {"x": {"$ref": "#/$defs/Missing"}}}),
            |_| Ok("never".into()),
        ))
        .expect_err("the schema cannot be used");
    assert!(
        matches!(&err, RegistryError::InvalidSchema { tool, .. } if tool == "broken"),
        "{err:?}"
    );
    assert!(registry.is_empty());
}

#[test]
fn unregister_gives_the_tool_back() {
    let registry = registry_of(&["read_file", "list_dir"]);
    let removed = registry.unregister("read_file").expect("was registered");
    assert_eq!(removed.spec().name, "read_file");
    assert!(registry.unregister("read_file").is_none());
    assert_eq!(registry.names(), ["list_dir"]);
}

#[test]
fn replace_swaps_a_group_of_tools_in_one_step() {
    let registry = registry_of(&["read_file"]);
    let owned = |name: &str| name.starts_with("mcp_docs_");
    registry
        .replace(
            owned,
            vec![
                shared(JsonTool::numbered("mcp_docs_search")),
                shared(JsonTool::numbered("mcp_docs_fetch")),
            ],
        )
        .expect("replaces");
    assert_eq!(
        registry.names(),
        ["read_file", "mcp_docs_fetch", "mcp_docs_search"]
    );

    registry
        .replace(owned, vec![shared(JsonTool::numbered("mcp_docs_list"))])
        .expect("replaces");
    assert_eq!(registry.names(), ["read_file", "mcp_docs_list"]);

    // A new tool outside the group (here one that would collide with a tool
    // the group does not own) is refused, and nothing changes.
    let err = registry
        .replace(
            owned,
            vec![
                shared(JsonTool::numbered("mcp_docs_other")),
                shared(JsonTool::numbered("read_file")),
            ],
        )
        .expect_err("read_file is not the group's");
    assert_eq!(err, RegistryError::NotInGroup("read_file".into()));
    assert_eq!(registry.names(), ["read_file", "mcp_docs_list"]);

    // Replacing with nothing removes the group.
    registry.replace(owned, Vec::new()).expect("replaces");
    assert_eq!(registry.names(), ["read_file"]);
}

#[test]
fn a_macro_tool_keeps_its_compiled_schema_and_it_answers_as_the_spec_does() {
    let tool = ReadFileTool;
    let compiled = tool
        .argument_schema()
        .expect("the generated schema compiles");
    let fresh = tk::args::ArgumentSchema::compile(&tool.spec().input_schema).unwrap();
    // The kept form answers exactly as compiling the spec afresh does.
    for args in [
        json!({"path": "a.txt"}),
        json!({"path": "a.txt", "offset": "3"}),
        json!({"path": 7}),
        json!({}),
        json!({"pth": "a.txt"}),
    ] {
        let (mut kept, mut again) = (args.clone(), args.clone());
        assert_eq!(
            compiled
                .check(&mut kept)
                .map_err(|e| format!("{e:?}"))
                .map(|c| c.len()),
            fresh
                .check(&mut again)
                .map_err(|e| format!("{e:?}"))
                .map(|c| c.len()),
            "{args}"
        );
        assert_eq!(kept, again);
    }
    assert!(compiled.has_parameter("path"));
    // Kept, not compiled again: every registry built after the first reuses it.
    assert!(compiled.same_compilation(&tool.argument_schema().unwrap()));
    assert!(!compiled.same_compilation(&fresh));
}

//! A call to a tool that does not exist lists the tools that do, and
//! suggests the one meant when exactly one is close.

use std::sync::Arc;

use serde_json::json;
use tk::{CallError, Tool, ToolContext, ToolRegistry, UnknownTool};
use toolsmith_tests::hand_written::JsonTool;
use toolsmith_tests::registry_of;

fn files() -> ToolRegistry {
    registry_of(&["read_file", "write_file", "list_dir"])
}

#[tokio::test]
async fn spelling_conventions_of_a_name_are_recognised() {
    let registry = files();
    for typed in [
        "readFile",
        "read-file",
        "READ_FILE",
        "ReadFile",
        "raed_file",
    ] {
        let out = registry
            .call(typed, json!({"path": "a.txt"}), &ToolContext::new())
            .await;
        assert!(out.is_error);
        assert_eq!(
            out.content,
            format!(
                "Error: Tool '{typed}' not found. Did you mean 'read_file'? \
                 Available: list_dir, read_file, write_file\n\n\
                 [Call one of the available tools by its exact name.]"
            )
        );
    }
}

#[tokio::test]
async fn the_host_gets_the_suggestion_as_a_value() {
    let err = files()
        .try_call("listDir", json!({}), &ToolContext::new())
        .await
        .expect_err("no such tool");
    assert_eq!(
        err,
        CallError::UnknownTool(UnknownTool {
            name: "listDir".into(),
            suggestion: Some("list_dir".into()),
            available: vec!["list_dir".into(), "read_file".into(), "write_file".into()],
        })
    );
}

#[test]
fn a_far_name_gets_no_suggestion() {
    let err = files()
        .prepare("delete_everything", json!({}))
        .expect_err("no such tool");
    assert_eq!(
        err.to_string(),
        "Tool 'delete_everything' not found. Available: list_dir, read_file, write_file"
    );
}

#[test]
fn an_ambiguous_name_gets_no_suggestion() {
    let registry = ToolRegistry::new();
    for name in ["read_file", "read-file", "get_time", "set_time"] {
        registry
            .register_arc(Arc::new(JsonTool::numbered(name)) as Arc<dyn Tool>)
            .expect("registers");
    }
    for typed in ["readFile", "let_time"] {
        match registry.prepare(typed, json!({"n": 1})) {
            Err(CallError::UnknownTool(unknown)) => {
                assert_eq!(unknown.suggestion, None, "{typed}");
                assert_eq!(
                    unknown.to_string(),
                    format!(
                        "Tool '{typed}' not found. Available: get_time, read-file, read_file, set_time"
                    )
                );
            }
            other => panic!("{typed}: expected an unknown tool, got {other:?}"),
        }
    }
}

#[test]
fn an_empty_registry_says_so() {
    let err = ToolRegistry::new()
        .prepare("read_file", json!({}))
        .expect_err("nothing is registered");
    assert_eq!(
        err.to_model_text(),
        "Error: Tool 'read_file' not found. No tools are available.\n\n\
         [Call one of the available tools by its exact name.]"
    );
}

/// A provider shown a sanitized name (Gemini wants a letter first) can call
/// the tool back by that name.
#[tokio::test]
async fn a_provider_sanitized_name_finds_its_tool() {
    use tk::{DefinitionFormat, Tool, ToolSpec, async_trait};

    struct Render(ToolSpec);

    #[async_trait]
    impl Tool for Render {
        fn spec(&self) -> &ToolSpec {
            &self.0
        }
        async fn call(
            &self,
            _args: tk::Arguments,
            _ctx: &tk::ToolContext,
        ) -> Result<tk::ToolOutput, tk::ToolError> {
            Ok("rendered".into())
        }
    }

    let registry = tk::ToolRegistry::new();
    registry
        .register(Render(ToolSpec::new(
            "3d_render",
            "Render.",
            serde_json::json!({"type": "object", "properties": {}}),
        )))
        .unwrap();
    let gemini = registry.definitions(DefinitionFormat::Gemini);
    let shown = gemini[0]["name"].as_str().unwrap().to_owned();
    assert_ne!(shown, "3d_render");
    let out = registry
        .call(&shown, serde_json::json!({}), &tk::ToolContext::new())
        .await;
    assert_eq!(out.content, "rendered");
}

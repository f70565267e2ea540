//! Composed tools from configuration files: schemas from declarations,
//! casting and validation by the registry, the filled instruction as the
//! result, errors that name the file, the tool and the field, and reloading.

#![cfg(all(feature = "config", unix))]

use std::path::PathBuf;

use serde_json::json;
use toolsmith::{ToolContext, ToolFilter, ToolRegistry};
use toolsmith_builtins::config::{ToolsFile, load_file, parse_json_str};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/config")
        .join(name)
}

#[tokio::test]
async fn a_composed_tool_returns_its_filled_instruction() {
    let registry = ToolRegistry::new();
    let names = ToolsFile::new(fixture("tools.json"))
        .load_into(&registry)
        .unwrap();
    assert_eq!(names, ["greet_team", "summarize_url"]);
    let out = registry
        .call(
            "summarize_url",
            json!({"url": "https://example.com/a?b=1", "points": "5", "language": "French"}),
            &ToolContext::new(),
        )
        .await;
    assert!(!out.is_error, "{}", out.content);
    assert_eq!(
        out.content,
        "Carry out these instructions now, using your other tools, then report the outcome:\n\n\
         Fetch https://example.com/a?b=1 and write a concise 5-point summary in French"
    );
    // The default fills a missing parameter; an optional one without a default says so.
    let out = registry
        .call("summarize_url", json!({"url": "u"}), &ToolContext::new())
        .await;
    assert!(
        out.content
            .ends_with("Fetch u and write a concise 3-point summary in (not given)"),
        "{}",
        out.content
    );
}

#[tokio::test]
async fn the_registry_validates_against_the_declared_parameters() {
    let registry = ToolRegistry::new();
    ToolsFile::new(fixture("tools.json"))
        .load_into(&registry)
        .unwrap();
    let ctx = ToolContext::new();
    let out = registry
        .call("summarize_url", json!({"points": 2}), &ctx)
        .await;
    assert!(out.is_error);
    assert!(out.content.contains("url is required"), "{}", out.content);
    let out = registry
        .call("summarize_url", json!({"url": "u", "points": "many"}), &ctx)
        .await;
    assert!(
        out.content.contains("points should be integer"),
        "{}",
        out.content
    );
    let out = registry
        .call(
            "summarize_url",
            json!({"url": "u", "language": "German"}),
            &ctx,
        )
        .await;
    assert!(
        out.content
            .contains("language must be one of \"English\", \"French\""),
        "{}",
        out.content
    );
    let out = registry
        .call("summarize_url", json!({"url": "u", "ulr": "x"}), &ctx)
        .await;
    assert!(
        out.content.contains("ulr is not a parameter of this tool"),
        "{}",
        out.content
    );
}

#[test]
fn the_schema_comes_from_the_declarations() {
    let tools = load_file(fixture("tools.json")).unwrap();
    let summarize = tools
        .iter()
        .find(|t| t.spec().name == "summarize_url")
        .unwrap();
    assert_eq!(
        summarize.spec().input_schema,
        json!({
            "type": "object",
            "properties": {
                "url": {"type": "string", "description": "The page to summarize"},
                "points": {"type": "integer", "description": "How many points", "default": 3},
                "language": {"type": "string", "enum": ["English", "French"]}
            },
            "required": ["url"],
            "additionalProperties": false
        })
    );
    assert!(summarize.spec().annotations.read_only);
    let greet = tools
        .iter()
        .find(|t| t.spec().name == "greet_team")
        .unwrap();
    assert_eq!(greet.spec().input_schema["required"], json!(["text"]));
}

#[tokio::test]
async fn toml_files_work_too() {
    let registry = ToolRegistry::new();
    ToolsFile::new(fixture("tools.toml"))
        .load_into(&registry)
        .unwrap();
    let out = registry
        .call(
            "plan_trip",
            json!({"city": "Lyon", "days": 3}),
            &ToolContext::new(),
        )
        .await;
    assert!(
        out.content.ends_with("Plan a 3-day trip to Lyon"),
        "{}",
        out.content
    );
}

#[test]
fn broken_toml_names_the_file() {
    let err = load_file(fixture("broken.toml"))
        .map(drop)
        .expect_err("broken");
    let file = fixture("broken.toml").display().to_string();
    assert!(
        err.to_string()
            .starts_with(&format!("{file}: not valid TOML")),
        "{err}"
    );
}

#[test]
fn every_mistake_is_reported_with_file_tool_and_field() {
    let err = load_file(fixture("broken.json")).err().expect("an error");
    let text = err.to_string();
    let file = fixture("broken.json").display().to_string();
    let expected = [
        format!(
            "{file}: tool `deploy`: field `parameters.env.type`: expected one of string, integer, number, boolean"
        ),
        format!(
            "{file}: tool `deploy`: field `parameters.force.default`: expected a boolean like the parameter's type"
        ),
        format!(
            "{file}: tool `deploy`: field `action`: placeholder `{{{{owner}}}}` names no declared parameter"
        ),
        format!(
            "{file}: tool `bad name!`: field `name`: use 1 to 64 characters from A-Z, a-z, 0-9, '_' and '-'"
        ),
        format!("{file}: tool `#3`: field `name`: missing; every tool needs a name"),
        format!(
            "{file}: tool `#3`: field `colour`: unknown field; expected one of name, description, parameters, action"
        ),
        format!(
            "{file}: tool `neither`: field `action`: missing; give `action` (an instruction: a composed tool) or `command` (a command tool)"
        ),
    ];
    for line in &expected {
        assert!(
            text.lines().any(|l| l == line),
            "missing:\n{line}\nin:\n{text}"
        );
    }
    assert_eq!(err.errors().len(), expected.len(), "{text}");
}

#[test]
fn broken_syntax_names_the_file() {
    let err = parse_json_str("{\"tools\": [", "my-tools.json")
        .err()
        .expect("an error");
    assert!(
        err.to_string().starts_with("my-tools.json: not valid JSON"),
        "{err}"
    );
    let err = parse_json_str("{\"tool\": []}", "t.json")
        .err()
        .expect("an error");
    assert_eq!(
        err.to_string(),
        "t.json: field `tools`: missing; list the tool definitions under `tools`"
    );
    let err = parse_json_str(
        r#"[{"name": "a", "description": "d", "action": "x"}, {"name": "a", "description": "d", "action": "y"}]"#,
        "t.json",
    )
    .err().expect("an error");
    assert_eq!(
        err.to_string(),
        "t.json: tool `a`: field `name`: defined twice in this file; tool names must be unique"
    );
    let err = load_file("/nonexistent/tools.json")
        .err()
        .expect("an error");
    assert!(
        err.to_string()
            .starts_with("/nonexistent/tools.json: cannot read it"),
        "{err}"
    );
}

#[tokio::test]
async fn loading_again_replaces_the_files_tools_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tools.json");
    let registry = ToolRegistry::from_inventory(&ToolFilter::default().names(["echo"])).unwrap();
    let file = ToolsFile::new(&path);
    let write = |tools: serde_json::Value| {
        std::fs::write(&path, json!({"tools": tools}).to_string()).unwrap()
    };

    write(json!([
        {"name": "one", "description": "d", "action": "first"},
        {"name": "two", "description": "d", "action": "second"}
    ]));
    file.load_into(&registry).unwrap();
    assert_eq!(registry.names(), ["echo", "one", "two"]);

    write(json!([
        {"name": "two", "description": "d", "action": "second, changed"},
        {"name": "three", "description": "d", "action": "third"}
    ]));
    assert_eq!(file.load_into(&registry).unwrap(), ["three", "two"]);
    assert_eq!(registry.names(), ["echo", "three", "two"]);
    let out = registry.call("two", json!({}), &ToolContext::new()).await;
    assert!(out.content.ends_with("second, changed"));

    // A broken edit leaves the registry as it was.
    write(json!([{"name": "two", "description": "d"}]));
    assert!(file.load_into(&registry).is_err());
    assert_eq!(registry.names(), ["echo", "three", "two"]);

    // A name another source holds is refused, and nothing changes.
    write(json!([{"name": "echo", "description": "d", "action": "x"}]));
    let err = file.load_into(&registry).expect_err("an error");
    assert!(
        err.to_string().contains("'echo' is already registered"),
        "{err}"
    );
    assert_eq!(registry.names(), ["echo", "three", "two"]);
    let out = registry
        .call(
            "echo",
            json!({"message": "still the builtin"}),
            &ToolContext::new(),
        )
        .await;
    assert_eq!(out.content, "still the builtin");
}

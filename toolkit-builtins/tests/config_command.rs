//! Command tools from configuration: values cannot break out of their
//! place in the command, and every call goes through `exec`'s guards.

#![cfg(all(feature = "config", unix))]

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use toolsmith::{ToolCategory, ToolContext, ToolOutput, ToolRegistry};
use toolsmith_builtins::config::{ToolsFile, parse_json_str};
use toolsmith_builtins::shell::ShellPolicy;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/config")
        .join(name)
}

struct Setup {
    dir: tempfile::TempDir,
    registry: ToolRegistry,
    ctx: ToolContext,
}

impl Setup {
    fn new(policy: ShellPolicy) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let registry = ToolRegistry::new();
        ToolsFile::new(fixture("commands.json"))
            .load_into(&registry)
            .unwrap();
        let ctx = ToolContext::new()
            .with_workspace(dir.path())
            .with_state(policy.allow_env(["PATH"]));
        Self { dir, registry, ctx }
    }

    async fn call(&self, tool: &str, args: Value) -> ToolOutput {
        self.registry.call(tool, args, &self.ctx).await
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }
}

#[tokio::test]
async fn no_value_can_break_out_of_its_place() {
    let s = Setup::new(ShellPolicy::new());
    let attempts = [
        "it's",
        "'; touch pwned; echo '",
        "say \"hi\"\"; touch pwned; \"",
        "a; touch pwned",
        "$(touch pwned)",
        "`touch pwned`",
        "line one\ntouch pwned\nline three",
        "x && touch pwned",
        "x || touch pwned",
        "x | touch pwned",
        "x & touch pwned",
        "> pwned",
        "\\'; touch pwned #",
        "${IFS}touch${IFS}pwned",
        "*",
        "-v",
    ];
    for value in attempts {
        let out = s.call("say", json!({"text": value})).await;
        assert!(!out.is_error, "{value:?}: {}", out.content);
        // printf printed the value back exactly, as one argument.
        assert_eq!(out.content, format!("{value}\nExit code: 0"), "{value:?}");
        assert!(!s.root().join("pwned").exists(), "{value:?} ran a command");
    }
    assert!(!Path::new("pwned").exists());
}

#[tokio::test]
async fn numbers_are_cast_validated_and_defaulted_like_any_arguments() {
    let s = Setup::new(ShellPolicy::new());
    let out = s.call("add", json!({"a": "40", "b": 2})).await;
    assert_eq!(out.content, "42\nExit code: 0");
    let out = s.call("add", json!({"a": 41})).await;
    assert_eq!(out.content, "42\nExit code: 0");
    let out = s.call("add", json!({"a": "$(touch pwned)"})).await;
    assert!(out.is_error);
    assert!(
        out.content.contains("a should be integer"),
        "{}",
        out.content
    );
    let out = s.call("greet", json!({"mood": "angry"})).await;
    assert!(
        out.content.contains("mood must be one of"),
        "{}",
        out.content
    );
    // An optional value not given is an empty word, not a missing one.
    let out = s.call("greet", json!({})).await;
    assert_eq!(out.content, "hello  (calm)\nExit code: 0");
    assert!(!s.root().join("pwned").exists());
}

#[tokio::test]
async fn the_guards_of_exec_apply() {
    let s = Setup::new(ShellPolicy::new().deny_pattern("forbidden").unwrap());
    std::fs::write(s.root().join("notes.txt"), "a\nb\nc\n").unwrap();
    let out = s.call("line_count", json!({"file": "notes.txt"})).await;
    assert_eq!(out.content, "3\nExit code: 0");

    // The workspace restriction sees the value as the path it is.
    let out = s
        .call("line_count", json!({"file": "../../etc/passwd"}))
        .await;
    assert!(out.is_error, "{}", out.content);
    let out = s.call("line_count", json!({"file": "/etc/passwd"})).await;
    assert!(out.is_error, "{}", out.content);

    // The host's deny patterns apply to the filled command.
    let out = s.call("say", json!({"text": "forbidden words"})).await;
    assert!(out.is_error, "{}", out.content);

    // So does the timeout, which kills the command.
    let out = s.call("nap", json!({"seconds": 30})).await;
    assert!(out.is_error);
    assert!(
        out.content.contains("timed out after 1 s"),
        "{}",
        out.content
    );
    assert_eq!(out.metadata["timed_out"], json!(true));
}

#[tokio::test]
async fn without_a_shell_policy_command_tools_do_not_run() {
    let dir = tempfile::tempdir().unwrap();
    let registry = ToolRegistry::new();
    ToolsFile::new(fixture("commands.json"))
        .load_into(&registry)
        .unwrap();
    let ctx = ToolContext::new().with_workspace(dir.path());
    let out = registry.call("say", json!({"text": "hi"}), &ctx).await;
    assert!(out.is_error);
    assert!(out.content.contains("ShellPolicy"), "{}", out.content);
}

#[test]
fn command_tools_are_high_risk_shell_tools_with_declared_schemas() {
    let registry = ToolRegistry::new();
    ToolsFile::new(fixture("commands.json"))
        .load_into(&registry)
        .unwrap();
    let say = registry.get("say").unwrap();
    let spec = say.spec();
    assert_eq!(spec.category, Some(ToolCategory::Shell));
    assert!(spec.annotations.exclusive);
    assert_eq!(
        spec.input_schema,
        json!({
            "type": "object",
            "properties": {"text": {"type": "string", "description": "What to print"}},
            "required": ["text"],
            "additionalProperties": false
        })
    );
    let nap = registry.get("nap").unwrap();
    assert!(nap.spec().timeout.is_some());
}

#[test]
fn templates_where_quoting_would_not_hold_are_refused_with_the_field() {
    let definition = |command: &str| {
        json!({"tools": [{
            "name": "risky",
            "description": "d",
            "command": command,
            "parameters": {"x": "string"}
        }]})
        .to_string()
    };
    for (command, why) in [
        ("echo \"{{x}}\"", "inside quotes"),
        ("echo '{{x}}'", "inside quotes"),
        ("echo `cat {{x}}`", "inside backticks"),
        ("echo hi # {{x}}", "inside a comment"),
        ("cat <<EOF\n{{x}}\nEOF", "after a here-document"),
    ] {
        let err = parse_json_str(&definition(command), "tools.json")
            .map(drop)
            .expect_err(command);
        let text = err.to_string();
        assert!(
            text.starts_with("tools.json: tool `risky`: field `command`: placeholder `{{x}}` is "),
            "{text}"
        );
        assert!(text.contains(why), "{text}");
    }
    let err = parse_json_str(
        &json!({"tools": [{"name": "t", "description": "d", "command": "echo {{y}}", "timeout_secs": 0,
                            "parameters": {"x": "string"}}]})
        .to_string(),
        "tools.json",
    )
    .map(drop)
    .expect_err("bad");
    let text = err.to_string();
    assert!(
        text.contains(
            "tools.json: tool `t`: field `command`: placeholder `{{y}}` names no declared parameter"
        ),
        "{text}"
    );
    assert!(text.contains("tools.json: tool `t`: field `timeout_secs`: expected a whole number of seconds, at least 1"), "{text}");
}

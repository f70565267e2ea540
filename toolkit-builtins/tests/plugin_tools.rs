//! Plugin tools served by a real Python program over JSON lines: described,
//! validated like any tool, and restarted after a crash, a hang or garbage.

#![cfg(all(feature = "config", unix))]

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};
use toolsmith::{RiskLevel, ToolAnnotations, ToolCategory, ToolContext, ToolRegistry};
use toolsmith_builtins::config::{PluginDir, PluginOptions};

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/plugins")
}

/// Generous: the limit only has to be reached by the plugin that hangs.
fn options() -> PluginOptions {
    PluginOptions {
        timeout: Duration::from_secs(5),
    }
}

async fn loaded() -> (ToolRegistry, PluginDir) {
    let registry = ToolRegistry::new();
    let dir = PluginDir::new(fixtures(), options());
    let names = dir.load_into(&registry).await.expect("the plugins load");
    assert_eq!(names, ["plugin_pid", "repeat", "word_count"]);
    (registry, dir)
}

async fn pid(registry: &ToolRegistry) -> u64 {
    let out = registry
        .call("plugin_pid", json!({}), &ToolContext::new())
        .await;
    assert!(!out.is_error, "{}", out.content);
    out.structured.expect("structured")["pid"]
        .as_u64()
        .expect("a pid")
}

#[tokio::test]
async fn plugin_tools_are_described_and_called() {
    let (registry, _dir) = loaded().await;
    let tool = registry.get("word_count").unwrap();
    assert_eq!(tool.spec().description, "Count the words in a text");
    assert_eq!(tool.spec().input_schema["required"], json!(["text"]));
    let ctx = ToolContext::new();
    let out = registry
        .call("word_count", json!({"text": "one two  three"}), &ctx)
        .await;
    assert_eq!(out.content, "3");
    assert!(!out.is_error);
    // The same process serves every call while it behaves.
    assert_eq!(pid(&registry).await, pid(&registry).await);
}

#[tokio::test]
async fn a_plugin_declares_how_its_tools_behave() {
    let (registry, _dir) = loaded().await;
    let word_count = registry.get("word_count").unwrap();
    let spec = word_count.spec();
    assert!(spec.annotations.read_only && spec.annotations.idempotent);
    assert!(!spec.annotations.destructive && !spec.annotations.exclusive);
    // Read-only tools run beside other safe calls, at low risk.
    assert!(spec.concurrency_safe());
    assert_eq!(spec.risk_level(), RiskLevel::Low);
    assert_eq!(spec.timeout, None, "the plugin-wide timeout applies");

    let repeat = registry.get("repeat").unwrap();
    assert_eq!(repeat.spec().category, Some(ToolCategory::Messaging));
    assert_eq!(repeat.spec().risk_level(), RiskLevel::Medium);
    assert_eq!(repeat.spec().timeout, Some(Duration::from_secs(1)));
    assert!(!repeat.spec().concurrency_safe());

    // Saying nothing means nothing is assumed.
    let pid_tool = registry.get("plugin_pid").unwrap();
    assert_eq!(pid_tool.spec().annotations, ToolAnnotations::default());
    assert_eq!(pid_tool.spec().category, None);
}

#[tokio::test]
async fn a_tool_declared_timeout_replaces_the_plugin_wide_one() {
    // The plugin-wide limit is 5 s; `repeat` allows itself one second.
    let (registry, _dir) = loaded().await;
    let ctx = ToolContext::new();
    let before = pid(&registry).await;
    let out = registry
        .call("repeat", json!({"word": "hang", "times": 1}), &ctx)
        .await;
    assert!(out.is_error);
    assert!(
        out.content.contains("did not answer within 1s"),
        "{}",
        out.content
    );
    let out = registry
        .call("repeat", json!({"word": "echo", "times": 2}), &ctx)
        .await;
    assert_eq!(out.content, "echo echo");
    assert_ne!(
        pid(&registry).await,
        before,
        "the hung process was replaced"
    );
}

#[tokio::test]
async fn a_tool_timeout_holds_while_the_plugin_is_busy_with_a_slower_call() {
    let (registry, _dir) = loaded().await;
    let registry = std::sync::Arc::new(registry);
    // `word_count` hangs under the plugin-wide 5 s; `repeat`, with its own
    // 1 s, must not wait all of that for its turn.
    let slow = {
        let registry = std::sync::Arc::clone(&registry);
        tokio::spawn(async move {
            registry
                .call("word_count", json!({"text": "hang"}), &ToolContext::new())
                .await
        })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    let out = registry
        .call(
            "repeat",
            json!({"word": "hi", "times": 1}),
            &ToolContext::new(),
        )
        .await;
    assert!(out.is_error, "{}", out.content);
    assert!(
        out.content
            .contains("was busy with another call for all of 1s; try again later"),
        "{}",
        out.content
    );
    let slow = slow.await.unwrap();
    assert!(
        slow.content.contains("did not answer within 5s"),
        "{}",
        slow.content
    );
}

#[tokio::test]
async fn the_registry_casts_and_validates_before_the_plugin_sees_anything() {
    let (registry, _dir) = loaded().await;
    let ctx = ToolContext::new();
    let out = registry
        .call("repeat", json!({"word": "ha", "times": "3"}), &ctx)
        .await;
    assert_eq!(out.content, "ha ha ha");
    let out = registry
        .call("repeat", json!({"word": "ha", "times": 9}), &ctx)
        .await;
    assert!(out.is_error);
    assert!(
        out.content.contains("times must be <= 5"),
        "{}",
        out.content
    );
    let out = registry.call("word_count", json!({}), &ctx).await;
    assert!(out.content.contains("text is required"), "{}", out.content);
}

#[tokio::test]
async fn a_plugin_error_is_an_error_result() {
    let (registry, _dir) = loaded().await;
    let out = registry
        .call("word_count", json!({"text": "fail"}), &ToolContext::new())
        .await;
    assert!(out.is_error);
    assert_eq!(out.content, "cannot count that");
}

#[tokio::test]
async fn a_crash_is_an_error_result_and_the_next_call_restarts_the_plugin() {
    let (registry, _dir) = loaded().await;
    let ctx = ToolContext::new();
    let before = pid(&registry).await;
    let out = registry
        .call("word_count", json!({"text": "crash"}), &ctx)
        .await;
    assert!(out.is_error);
    assert!(
        out.content
            .contains("exited before answering (exit status: 3)"),
        "{}",
        out.content
    );
    assert!(
        out.content.contains("Traceback: asked to crash"),
        "{}",
        out.content
    );
    assert!(
        out.content
            .contains("it will be restarted on the next call"),
        "{}",
        out.content
    );

    let out = registry
        .call("word_count", json!({"text": "back again"}), &ctx)
        .await;
    assert_eq!(out.content, "2");
    assert_ne!(
        pid(&registry).await,
        before,
        "a new process serves the calls"
    );
}

#[tokio::test]
async fn a_hang_times_out_and_the_next_call_restarts_the_plugin() {
    let registry = ToolRegistry::new();
    let dir = PluginDir::new(
        fixtures(),
        PluginOptions {
            timeout: Duration::from_secs(2),
        },
    );
    dir.load_into(&registry).await.unwrap();
    let ctx = ToolContext::new();
    let before = pid(&registry).await;
    let out = registry
        .call("word_count", json!({"text": "hang"}), &ctx)
        .await;
    assert!(out.is_error);
    assert!(
        out.content.contains("did not answer within 2s"),
        "{}",
        out.content
    );
    let out = registry
        .call("word_count", json!({"text": "still counting"}), &ctx)
        .await;
    assert_eq!(out.content, "2");
    let after = pid(&registry).await;
    assert_ne!(after, before);
    // The hung process was killed, not left behind.
    assert!(!Path::new(&format!("/proc/{before}")).exists() || is_zombie(before));
}

fn is_zombie(pid: u64) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|stat| stat.split_whitespace().nth(2) == Some("Z"))
        .unwrap_or(true)
}

#[tokio::test]
async fn garbage_is_an_error_result_and_the_next_call_restarts_the_plugin() {
    let (registry, _dir) = loaded().await;
    let ctx = ToolContext::new();
    let before = pid(&registry).await;
    let out = registry
        .call("word_count", json!({"text": "garbage"}), &ctx)
        .await;
    assert!(out.is_error);
    assert!(
        out.content
            .contains("answered with something that is not a JSON response: `this is not JSON`"),
        "{}",
        out.content
    );
    let out = registry
        .call("word_count", json!({"text": "a b c d"}), &ctx)
        .await;
    assert_eq!(out.content, "4");
    assert_ne!(pid(&registry).await, before);
}

/// Write an executable script into `dir`.
fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    std::fs::write(&path, body).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

#[tokio::test]
async fn a_bad_description_names_the_plugin_the_tool_and_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let describe = |tools: Value| {
        format!(
            "#!/bin/sh\nread line\necho '{}'\n",
            json!({"id": 1, "tools": tools})
        )
    };
    let plugin = script(
        dir.path(),
        "bad.sh",
        &describe(json!([
            {"name": "ok_tool", "description": "fine", "input_schema": {"type": "object"}},
            {"name": "listy", "description": "d", "input_schema": {"type": "array"}},
            {"name": "no description"},
            {"name": "bad_pattern", "description": "d",
             "input_schema": {"type": "object", "properties": {"x": {"type": "string", "pattern": "("}}}},
            {"name": "odd_flag", "description": "d", "annotations": {"fast": true}},
            {"name": "wordy_flag", "description": "d", "annotations": {"read_only": "yes"}},
            {"name": "odd_kind", "description": "d", "category": "weather"},
            {"name": "no_time", "description": "d", "timeout_seconds": 0},
            {"name": "all_wrong", "description": "d", "annotations": [], "category": 3,
             "timeout_seconds": "soon"}
        ])),
    );
    // Not executable: not a plugin.
    std::fs::write(dir.path().join("README.txt"), "notes").unwrap();
    let registry = ToolRegistry::new();
    let err = PluginDir::new(dir.path(), options())
        .load_into(&registry)
        .await
        .expect_err("a bad description");
    let file = plugin.display().to_string();
    let text = err.to_string();
    assert!(
        text.contains(&format!(
            "{file}: tool `listy`: field `input_schema.type`: expected \"object\""
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!("{file}: tool `no description`: field `name`")),
        "{text}"
    );
    assert!(
        text.contains(&format!("{file}: tool `bad_pattern`: field `input_schema`")),
        "{text}"
    );
    for expected in [
        "tool `odd_flag`: field `annotations.fast`: unknown; expected read_only, exclusive, destructive, idempotent or open_world",
        "tool `wordy_flag`: field `annotations.read_only`: expected true or false",
        "tool `odd_kind`: field `category`: expected one of filesystem_read, filesystem_write,",
        "tool `no_time`: field `timeout_seconds`: expected a number of seconds, more than 0 and at most 3600",
        "tool `all_wrong`: field `annotations`: expected an object of booleans",
        "tool `all_wrong`: field `category`",
        "tool `all_wrong`: field `timeout_seconds`",
    ] {
        assert!(
            text.contains(&format!("{file}: {expected}")),
            "{expected}\n{text}"
        );
    }
    assert_eq!(err.errors().len(), 10, "{text}");
    assert!(
        registry.is_empty(),
        "nothing is loaded from a broken directory"
    );
}

#[tokio::test]
async fn a_plugin_that_cannot_describe_itself_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let plugin = script(dir.path(), "mute.sh", "#!/bin/sh\nexit 1\n");
    let err = PluginDir::new(dir.path(), options())
        .load_into(&ToolRegistry::new())
        .await
        .expect_err("no description");
    let text = err.to_string();
    assert!(
        text.starts_with(&format!(
            "{}: the plugin exited before answering",
            plugin.display()
        )),
        "{text}"
    );
    assert!(text.ends_with("when asked to describe its tools"), "{text}");
}

#[tokio::test]
async fn loading_again_picks_up_new_and_removed_plugins() {
    let dir = tempfile::tempdir().unwrap();
    let source = fixtures().join("words.py");
    std::fs::copy(&source, dir.path().join("words.py")).unwrap();
    let registry = ToolRegistry::new();
    let plugins = PluginDir::new(dir.path(), options());
    plugins.load_into(&registry).await.unwrap();
    assert_eq!(registry.len(), 3);

    let echo = r#"#!/bin/sh
while read line; do
  id=$(printf '%s' "$line" | sed 's/.*"id":\([0-9]*\).*/\1/')
  case "$line" in
    *describe*) printf '{"id":%s,"tools":[{"name":"shell_hello","description":"Say hello","input_schema":{"type":"object","properties":{}}}]}\n' "$id" ;;
    *) printf '{"id":%s,"content":"hello from sh"}\n' "$id" ;;
  esac
done
"#;
    script(dir.path(), "hello.sh", echo);
    std::fs::remove_file(dir.path().join("words.py")).unwrap();
    assert_eq!(plugins.load_into(&registry).await.unwrap(), ["shell_hello"]);
    assert_eq!(registry.names(), ["shell_hello"]);
    let out = registry
        .call("shell_hello", json!({}), &ToolContext::new())
        .await;
    assert_eq!(out.content, "hello from sh");
}

#[tokio::test]
async fn a_call_the_caller_gave_up_on_leaves_no_half_read_answer_behind() {
    let (registry, _dir) = loaded().await;
    let ctx = ToolContext::new();
    let before = pid(&registry).await;
    // The caller stops waiting while the plugin hangs; the call's future is dropped.
    let abandoned = tokio::time::timeout(
        Duration::from_millis(300),
        registry.call("word_count", json!({"text": "hang"}), &ctx),
    )
    .await;
    assert!(abandoned.is_err());
    // A fresh process answers the next call: it cannot receive the old answer.
    let out = registry
        .call("word_count", json!({"text": "one two"}), &ctx)
        .await;
    assert_eq!(out.content, "2");
    assert_ne!(pid(&registry).await, before);
}

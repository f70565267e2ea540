//! Chapter: what models send, and how casting and validation answer it.

use serde_json::json;
use toolsmith::{ToolContext, ToolRegistry, tool};

// ANCHOR: remind
/// Set a reminder.
#[tool]
async fn remind(
    /// What to remind the user of.
    #[arg(min_length = 1)]
    text: String,
    /// Minutes from now.
    #[arg(minimum = 1, maximum = 1440)]
    minutes: u32,
    /// Ring loudly.
    #[arg(default = false)]
    loud: bool,
    /// People to notify as well.
    #[arg(default = Vec::new())]
    notify: Vec<String>,
) -> String {
    format!("in {minutes} min: {text} (loud={loud}, notify={notify:?})")
}
// ANCHOR_END: remind

fn registry() -> ToolRegistry {
    let registry = ToolRegistry::new();
    registry.register(RemindTool).unwrap();
    registry
}

#[tokio::test]
async fn strings_become_the_types_the_schema_asks_for() {
    let registry = registry();
    let ctx = ToolContext::new();
    // ANCHOR: casts
    // What a model often sends: numbers and booleans as strings, a list as
    // the text of a JSON array.
    let sent = json!({"text": "stretch", "minutes": "60", "loud": "true",
                      "notify": "[\"ada\", \"grace\"]"});
    let prepared = registry.prepare("remind", sent.clone()).unwrap();
    let casts: Vec<String> = prepared.casts().iter().map(|c| c.to_string()).collect();
    assert_eq!(casts.len(), 3);
    assert!(casts[0].contains("minutes"));

    let out = registry.call("remind", sent, &ctx).await;
    assert_eq!(
        out.content,
        r#"in 60 min: stretch (loud=true, notify=["ada", "grace"])"#
    );
    // ANCHOR_END: casts
    for cast in casts {
        println!("{cast}");
    }
}

#[tokio::test]
async fn payloads_in_every_shape_models_use() {
    let registry = registry();
    let ctx = ToolContext::new();
    // ANCHOR: payloads
    let object = json!({"text": "tea", "minutes": 5});
    let as_string = json!("{\"text\": \"tea\", \"minutes\": 5}");
    let wrapped = json!({"arguments": "{\"text\": \"tea\", \"minutes\": 5}"});
    for payload in [object, as_string, wrapped] {
        let out = registry.call("remind", payload, &ctx).await;
        assert_eq!(out.content, "in 5 min: tea (loud=false, notify=[])");
    }
    // ANCHOR_END: payloads
}

#[tokio::test]
async fn every_problem_is_reported_at_once() {
    let registry = registry();
    // ANCHOR: errors
    let out = registry
        .call(
            "remind",
            json!({"txt": "tea", "minutes": 5000}),
            &ToolContext::new(),
        )
        .await;
    assert!(out.is_error);
    let message = out.content;
    assert!(message.contains("minutes"), "{message}");
    assert!(message.contains("1440"), "{message}");
    assert!(message.contains("did you mean 'text'"), "{message}");
    // ANCHOR_END: errors
    println!("{message}");
}

#[tokio::test]
async fn unknown_tools_get_a_suggestion() {
    let registry = registry();
    // ANCHOR: unknown
    let out = registry
        .call("Remind-Me", json!({}), &ToolContext::new())
        .await;
    assert!(out.is_error);
    assert!(out.content.contains("remind"), "{}", out.content);
    // ANCHOR_END: unknown
    println!("{}", out.content);
}

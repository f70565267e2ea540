//! This crate has neither `serde` nor `schemars` as a dependency (see its
//! Cargo.toml): `#[tk::data]` derives what a tool's own types need through
//! the core crate's re-exports, found under the name `tk`.

use tk::serde_json::json;
use tk::{Tool, ToolContext, ToolRegistry, data, tool};

/// How urgent a reminder is.
#[data]
#[serde(rename_all = "lowercase")]
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Priority {
    /// Whenever.
    Low,
    /// Now.
    High,
}

/// Where to send a reminder.
#[data(Deserialize, JsonSchema)]
#[derive(Debug)]
pub struct Target {
    /// Who gets it.
    pub person: String,
    /// By which channel.
    #[serde(default = "email")]
    pub channel: String,
}

/// A type that already says where serde is keeps its own attribute, and
/// `crate` may be written as serde writes it, a path in a string.
#[data(crate = "tk")]
#[serde(crate = "tk::serde", rename_all = "UPPERCASE")]
#[derive(Debug, PartialEq)]
pub enum Channel {
    /// By e-mail.
    Email,
}

#[test]
fn a_type_with_its_own_crate_attribute_keeps_it() {
    let channel: Channel = tk::serde_json::from_value(json!("EMAIL")).unwrap();
    assert_eq!(channel, Channel::Email);
}

fn email() -> String {
    "email".into()
}

/// What was scheduled.
#[data(Serialize, JsonSchema)]
pub struct Scheduled {
    /// Minutes from now.
    pub in_minutes: u32,
    /// How urgent.
    pub priority: Priority,
    /// Who and how.
    pub to: String,
}

/// Schedule a reminder.
#[tool]
async fn remind(
    /// Minutes from now.
    in_minutes: u32,
    /// How urgent.
    priority: Priority,
    /// Where to send it.
    target: Target,
) -> Scheduled {
    Scheduled {
        in_minutes,
        priority,
        to: format!("{} by {}", target.person, target.channel),
    }
}

#[tokio::test]
async fn types_marked_data_are_arguments_and_outputs() {
    let registry = ToolRegistry::new();
    registry.register(RemindTool).unwrap();
    let out = registry
        .call(
            "remind",
            json!({"in_minutes": "5", "priority": "high", "target": {"person": "ana"}}),
            &ToolContext::new(),
        )
        .await;
    assert!(!out.is_error, "{}", out.content);
    assert_eq!(
        out.structured.as_deref(),
        Some(&json!({"in_minutes": 5, "priority": "high", "to": "ana by email"}))
    );
    let schema = tk::serde_json::to_string(&RemindTool.spec().input_schema).unwrap();
    assert!(
        schema.contains("\"low\"") && schema.contains("\"high\""),
        "{schema}"
    );
    let wrong = registry
        .call(
            "remind",
            json!({"in_minutes": 5, "priority": "urgent", "target": {"person": "ana"}}),
            &ToolContext::new(),
        )
        .await;
    assert!(wrong.is_error);
}

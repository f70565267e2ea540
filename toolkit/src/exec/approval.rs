//! Approval: how risky a call is, whether a person must say yes, and who asks.

use std::collections::{HashMap, HashSet};

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::tool::{RiskLevel, ToolCategory, ToolSpec};

/// When a call needs approval before it runs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "policy", rename_all = "snake_case")]
pub enum ApprovalPolicy {
    /// Nothing needs approval.
    #[default]
    AlwaysAllow,
    /// Every call needs approval.
    AlwaysRequire,
    /// Calls of the named tools need approval.
    RequireForTools {
        /// The tools.
        tools: HashSet<String>,
    },
    /// Calls of medium- and high-risk tools need approval.
    RequireForDangerous,
}

/// Risk levels by tool name, overriding what tools say of themselves.
///
/// A tool the table does not name keeps its own [`ToolSpec::risk_level`]; a
/// tool that is not registered at all counts as [`RiskLevel::Medium`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RiskTable {
    /// Per-tool overrides.
    #[serde(default)]
    pub overrides: HashMap<String, RiskLevel>,
}

impl RiskTable {
    /// Set a tool's risk.
    pub fn with(mut self, tool: impl Into<String>, risk: RiskLevel) -> Self {
        self.overrides.insert(tool.into(), risk);
        self
    }

    /// The risk of calling `tool`, whose spec is `spec` if it is registered.
    pub fn risk_of(&self, tool: &str, spec: Option<&ToolSpec>) -> RiskLevel {
        self.overrides
            .get(tool)
            .copied()
            .or_else(|| spec.map(ToolSpec::risk_level))
            .unwrap_or(RiskLevel::Medium)
    }
}

impl ApprovalPolicy {
    /// Whether a call of `tool` at `risk` needs approval.
    pub fn requires(&self, tool: &str, risk: RiskLevel) -> bool {
        match self {
            Self::AlwaysAllow => false,
            Self::AlwaysRequire => true,
            Self::RequireForTools { tools } => tools.contains(tool),
            Self::RequireForDangerous => risk >= RiskLevel::Medium,
        }
    }
}

/// What an approver is asked.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ApprovalRequest {
    /// The call's id, as the provider gave it.
    pub call_id: String,
    /// The tool's own name, even when the model called it by the name a
    /// provider's rules made of it.
    pub tool: String,
    /// The arguments the tool will receive, after casting and validation.
    pub arguments: Value,
    /// How risky the call is.
    pub risk: RiskLevel,
    /// For a high-risk call, what to tell the person before they say yes,
    /// so that it does not look like any other request; `None` below high.
    pub warning: Option<String>,
}

/// The warning a high-risk call of a tool with `spec` comes with: what the
/// tool may do, from its category and annotations, and to check the
/// arguments.
pub(crate) fn warning_for(tool: &str, risk: RiskLevel, spec: Option<&ToolSpec>) -> Option<String> {
    if risk < RiskLevel::High {
        return None;
    }
    let does = match spec {
        Some(spec) if spec.category == Some(ToolCategory::Shell) => "runs commands on this machine",
        Some(spec) if spec.category == Some(ToolCategory::Hardware) => "drives hardware",
        Some(spec)
            if spec.annotations.destructive || spec.category == Some(ToolCategory::Destructive) =>
        {
            "may destroy data or make changes that cannot be undone"
        }
        Some(spec) if spec.annotations.open_world => "acts outside this machine",
        _ => "is marked high risk",
    };
    Some(format!(
        "HIGH RISK: `{tool}` {does}. Read the arguments before approving."
    ))
}

/// An approver's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApprovalDecision {
    /// Run it.
    Approve,
    /// Do not run it; the reason (if any) is shown to the model.
    Deny(Option<String>),
}

/// Decides whether a call may run: a terminal prompt, a chat button, a rule engine.
#[async_trait]
pub trait Approver: Send + Sync {
    /// Decide on one call.
    async fn approve(&self, request: &ApprovalRequest) -> ApprovalDecision;
}

/// Denies everything, saying nobody is there to approve: the safe default
/// when a policy requires approval and the host configured no approver.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoApprover;

#[async_trait]
impl Approver for NoApprover {
    async fn approve(&self, _request: &ApprovalRequest) -> ApprovalDecision {
        ApprovalDecision::Deny(Some(
            "approval is required and no approver is configured".into(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_high_risk_calls_carry_a_warning_that_says_what_the_tool_does() {
        let shell = ToolSpec::new("exec", "d", json!({"type": "object"}))
            .with_category(ToolCategory::Shell);
        assert_eq!(warning_for("exec", RiskLevel::Medium, Some(&shell)), None);
        let warning = warning_for("exec", RiskLevel::High, Some(&shell)).unwrap();
        assert!(
            warning.starts_with("HIGH RISK: `exec` runs commands"),
            "{warning}"
        );
        let unknown = warning_for("gone", RiskLevel::High, None).unwrap();
        assert!(unknown.contains("marked high risk"), "{unknown}");
    }

    #[test]
    fn policies() {
        let named = ApprovalPolicy::RequireForTools {
            tools: ["exec".to_owned()].into(),
        };
        assert!(named.requires("exec", RiskLevel::Low));
        assert!(!named.requires("read_file", RiskLevel::High));
        assert!(ApprovalPolicy::RequireForDangerous.requires("x", RiskLevel::Medium));
        assert!(ApprovalPolicy::RequireForDangerous.requires("x", RiskLevel::High));
        assert!(!ApprovalPolicy::RequireForDangerous.requires("x", RiskLevel::Low));
        assert!(ApprovalPolicy::AlwaysRequire.requires("x", RiskLevel::Low));
        assert!(!ApprovalPolicy::AlwaysAllow.requires("x", RiskLevel::High));
    }

    #[test]
    fn risk_comes_from_the_table_then_the_tool_then_medium() {
        let spec =
            ToolSpec::new("read", "d", json!({})).with_category(ToolCategory::FilesystemRead);
        let table = RiskTable::default().with("exec", RiskLevel::High);
        assert_eq!(table.risk_of("read", Some(&spec)), RiskLevel::Low);
        assert_eq!(table.risk_of("exec", None), RiskLevel::High);
        assert_eq!(table.risk_of("unknown", None), RiskLevel::Medium);
        let table = table.with("read", RiskLevel::High);
        assert_eq!(table.risk_of("read", Some(&spec)), RiskLevel::High);
    }

    #[test]
    fn policies_read_from_configuration() {
        let policy: ApprovalPolicy =
            serde_json::from_value(json!({"policy": "require_for_tools", "tools": ["exec"]}))
                .unwrap();
        assert!(policy.requires("exec", RiskLevel::Low));
        let policy: ApprovalPolicy =
            serde_json::from_value(json!({"policy": "require_for_dangerous"})).unwrap();
        assert_eq!(policy, ApprovalPolicy::RequireForDangerous);
    }
}

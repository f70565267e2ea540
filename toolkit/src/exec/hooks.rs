//! Hooks around every call: before (rewrite the arguments, or refuse) and
//! after (observe or rewrite the output).

use async_trait::async_trait;
use serde_json::Value;

use crate::output::ToolOutput;
use crate::tool::ToolSpec;

/// What a hook knows about the call it is looking at.
#[derive(Debug, Clone, Copy)]
pub struct CallInfo<'a> {
    /// The call's id.
    pub call_id: &'a str,
    /// The tool's name as the model wrote it.
    pub tool: &'a str,
    /// The tool's spec, when the tool exists.
    pub spec: Option<&'a ToolSpec>,
}

/// A before-hook's verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BeforeCall {
    /// Go on (with the arguments as the hook left them).
    Proceed,
    /// Do not run the call; the reason is shown to the model.
    Refuse(String),
}

/// Code that runs around every call a runner makes.
///
/// Before-hooks see the model's arguments before casting and validation, so
/// whatever they rewrite is still checked against the schema.
#[async_trait]
pub trait Hook: Send + Sync {
    /// Called before the arguments are checked; may rewrite them or refuse the call.
    async fn before(&self, call: CallInfo<'_>, arguments: &mut Value) -> BeforeCall {
        let _ = (call, arguments);
        BeforeCall::Proceed
    }

    /// Called with the output before it is shaped for the model; may change it.
    async fn after(&self, call: CallInfo<'_>, output: &mut ToolOutput) {
        let _ = (call, output);
    }
}

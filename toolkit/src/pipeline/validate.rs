//! [`Validators`]: the host's own checks of a tool's arguments.

use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;

use super::{Call, Layer, Next, Stage};
use crate::error::{ArgumentError, CallError, InvalidArguments};
use crate::output::ToolOutput;

type Rule = Arc<dyn Fn(&Value) -> Result<(), ArgumentError> + Send + Sync>;

/// Checks a schema cannot say ("`path` must stay inside `src/`", "at most
/// one of `a` and `b`"), run on the arguments after casting and validation
/// and before approval: a model that breaks one is told what to fix, like
/// any refusal of its arguments, and nobody is asked to approve a call that
/// could not run.
///
/// ```
/// use toolsmith::ArgumentError;
/// use toolsmith::pipeline::Validators;
///
/// let validators = Validators::new().check("exec", |args| {
///     match args["command"].as_str() {
///         Some(command) if command.contains("sudo") => {
///             Err(ArgumentError::other("command", "must not use sudo"))
///         }
///         _ => Ok(()),
///     }
/// });
/// # let _ = validators;
/// ```
#[derive(Clone, Default)]
pub struct Validators {
    /// By the tool's own name.
    rules: HashMap<String, Vec<Rule>>,
}

impl Validators {
    /// No checks yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Check the arguments of the tool named `tool` (its own name, not an
    /// alias) with `rule`; a tool's rules run in the order added, and every
    /// problem they find is reported at once.
    pub fn check(
        mut self,
        tool: impl Into<String>,
        rule: impl Fn(&Value) -> Result<(), ArgumentError> + Send + Sync + 'static,
    ) -> Self {
        self.rules
            .entry(tool.into())
            .or_default()
            .push(Arc::new(rule));
        self
    }
}

impl std::fmt::Debug for Validators {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut tools: Vec<&String> = self.rules.keys().collect();
        tools.sort();
        f.debug_struct("Validators").field("tools", &tools).finish()
    }
}

#[async_trait]
impl Layer for Validators {
    fn stage(&self) -> Stage {
        Stage::Checked
    }

    async fn handle(&self, call: &mut Call<'_>, next: Next<'_>) -> Result<ToolOutput, CallError> {
        if let Some(rules) = self.rules.get(call.tool_name()) {
            let errors: Vec<ArgumentError> = rules
                .iter()
                .filter_map(|rule| rule(call.arguments()).err())
                .collect();
            if !errors.is_empty() {
                return Err(CallError::InvalidArguments(InvalidArguments {
                    tool: call.tool_name().to_owned(),
                    errors,
                }));
            }
        }
        next.run(call).await
    }
}

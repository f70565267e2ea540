//! Composed tools: a name, parameters and an action written in natural
//! language. Calling one hands the filled-in instruction back to the agent,
//! which carries it out with its other tools.

use serde_json::Value;
use toolsmith::{
    Arguments, Tool, ToolAnnotations, ToolContext, ToolError, ToolOutput, ToolSpec, async_trait,
};

use super::params::Params;
use super::template::Template;

/// A tool whose body is an instruction for the agent.
///
/// ```json
/// {
///   "name": "summarize_url",
///   "description": "Fetch a URL and return a 3-point summary",
///   "action": "Fetch {{url}} and write a concise 3-point summary of it",
///   "parameters": { "url": { "type": "string", "description": "The URL" } }
/// }
/// ```
#[derive(Debug)]
pub struct ComposedTool {
    spec: ToolSpec,
    params: Params,
    action: Template,
}

impl ComposedTool {
    pub(crate) fn new(name: String, description: String, params: Params, action: Template) -> Self {
        // It only returns text: calling it changes nothing, however often.
        let annotations = ToolAnnotations {
            read_only: true,
            idempotent: true,
            ..ToolAnnotations::default()
        };
        let spec = ToolSpec::new(name, description, params.schema()).with_annotations(annotations);
        Self {
            spec,
            params,
            action,
        }
    }

    /// The instruction with `args` filled in.
    pub fn instruction(&self, args: &Value) -> String {
        let values = self.params.values(args);
        self.action.fill(
            |name| match values.iter().find(|(n, _)| n == name).map(|(_, v)| v) {
                Some(Value::String(text)) => text.clone(),
                Some(other) => other.to_string(),
                None => "(not given)".to_owned(),
            },
        )
    }
}

#[async_trait]
impl Tool for ComposedTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn call(&self, args: Arguments, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let instruction = self.instruction(&args.into_json());
        Ok(ToolOutput::text(format!(
            "Carry out these instructions now, using your other tools, then report the outcome:\n\n{instruction}"
        )))
    }
}

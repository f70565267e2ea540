//! A hand-written [`Tool`]: a JSON Schema known only at run time and a
//! handler over JSON, the way a tool mounted from an MCP server looks.

use tk::serde_json::{Value, json};
use tk::{Arguments, Tool, ToolContext, ToolError, ToolOutput, ToolSpec, async_trait};

/// What a [`JsonTool`] does with its (validated) JSON arguments.
pub type Handler = fn(Value) -> Result<ToolOutput, ToolError>;

/// A tool defined by a spec and a function over JSON.
pub struct JsonTool {
    spec: ToolSpec,
    handler: Handler,
}

impl JsonTool {
    /// A tool with this name, description, input schema and handler.
    pub fn new(name: &str, description: &str, schema: Value, handler: Handler) -> Self {
        Self {
            spec: ToolSpec::new(name.to_owned(), description.to_owned(), schema),
            handler,
        }
    }

    /// A tool that takes `{"n": integer}` and answers `"{name}: {n}"`.
    pub fn numbered(name: &str) -> Self {
        Self::new(
            name,
            "Echo a number with the tool's name. Used in tests.",
            json!({
                "type": "object",
                "properties": {"n": {"type": "integer", "minimum": 0, "description": "A number."}},
                "required": ["n"],
                "additionalProperties": false
            }),
            |args| Ok(ToolOutput::text(args["n"].to_string())),
        )
    }
}

#[async_trait]
impl Tool for JsonTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn call(&self, args: Arguments, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let args = args.into_json();
        (self.handler)(args).map(|out| {
            let text = format!("{}: {}", self.spec.name, out.content);
            ToolOutput::text(text)
        })
    }
}

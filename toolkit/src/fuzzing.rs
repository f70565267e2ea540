//! Entry points for the fuzz targets in the repository's `fuzz/` directory.
//!
//! Not part of the API: hidden from the documentation, and free to change
//! or go away in any release. Each function reaches one crate-private step
//! that has no public entry of its own, and does nothing else.

use serde_json::Value;

use crate::PayloadError;
#[cfg(feature = "mcp")]
use crate::{Attachment, ToolAnnotations, ToolOutput, ToolSpec};

/// Step 1 of a call: what the model sent as an object of named arguments,
/// for a tool that has (`takes_arguments_param`) or lacks a parameter named
/// `arguments`.
pub fn normalize_payload(
    payload: Value,
    takes_arguments_param: bool,
) -> Result<Value, PayloadError> {
    crate::args::normalize_payload(payload, takes_arguments_param)
}

/// The spec of a tool an MCP server listed (`definition` is one entry of
/// `tools/list`), mounted under `wrapped_name`.
#[cfg(feature = "mcp")]
pub fn spec_from_mcp_tool(wrapped_name: &str, server: &str, definition: &Value) -> ToolSpec {
    crate::mcp::convert::spec_from_mcp_tool(wrapped_name, server, definition)
}

/// Our annotations from an MCP tool's `annotations` object.
#[cfg(feature = "mcp")]
pub fn annotations_from_mcp(annotations: Option<&Value>) -> ToolAnnotations {
    crate::mcp::convert::annotations_from_mcp(annotations)
}

/// MCP's `annotations` object for our annotations.
#[cfg(feature = "mcp")]
pub fn annotations_to_mcp(annotations: &ToolAnnotations) -> Value {
    crate::mcp::convert::annotations_to_mcp(annotations)
}

/// Our result from an MCP `CallToolResult`.
#[cfg(feature = "mcp")]
pub fn output_from_call_result(result: &Value) -> ToolOutput {
    crate::mcp::convert::output_from_call_result(result)
}

/// MCP's `CallToolResult` for our result.
#[cfg(feature = "mcp")]
pub fn call_result_from_output(output: &ToolOutput) -> Value {
    crate::mcp::convert::call_result_from_output(output)
}

/// One MCP content block added to `out`; text for the model goes to `texts`.
#[cfg(feature = "mcp")]
pub fn add_content_block(out: &mut ToolOutput, texts: &mut Vec<String>, block: &Value) {
    crate::mcp::convert::add_content_block(out, texts, block)
}

/// An attachment from one entry of MCP `ResourceContents`.
#[cfg(feature = "mcp")]
pub fn resource_attachment(resource: &Value) -> Attachment {
    crate::mcp::convert::resource_attachment(resource)
}

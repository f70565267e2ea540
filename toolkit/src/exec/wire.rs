//! Tool calls in, and results out, in the wire formats of the main
//! providers, so every host does not write the same mapping again.

use serde_json::{Value, json};

use super::lifecycle::{BatchState, CallRecord, CallStatus, ToolCall};

/// A provider's tool call that is missing something the format requires.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a {format} tool call: {missing} is missing or not a string")]
pub struct WireError {
    /// The format that was expected.
    pub format: &'static str,
    /// The field that was missing.
    pub missing: &'static str,
}

fn text<'a>(
    value: &'a Value,
    pointer: &'static str,
    format: &'static str,
) -> Result<&'a str, WireError> {
    value
        .pointer(pointer)
        .and_then(Value::as_str)
        .ok_or(WireError {
            format,
            missing: pointer,
        })
}

impl ToolCall {
    /// From an OpenAI chat completions `tool_calls` entry:
    /// `{"id", "type": "function", "function": {"name", "arguments": "<json>"}}`.
    /// The arguments string is kept as sent: the registry reads JSON strings.
    pub fn from_openai_chat(value: &Value) -> Result<Self, WireError> {
        const FORMAT: &str = "OpenAI chat";
        Ok(Self::new(
            text(value, "/id", FORMAT)?,
            text(value, "/function/name", FORMAT)?,
            value
                .pointer("/function/arguments")
                .cloned()
                .unwrap_or(Value::Null),
        ))
    }

    /// From an OpenAI responses `function_call` item:
    /// `{"type": "function_call", "call_id", "name", "arguments": "<json>"}`.
    pub fn from_openai_responses(value: &Value) -> Result<Self, WireError> {
        const FORMAT: &str = "OpenAI responses";
        Ok(Self::new(
            text(value, "/call_id", FORMAT)?,
            text(value, "/name", FORMAT)?,
            value.get("arguments").cloned().unwrap_or(Value::Null),
        ))
    }

    /// From an Anthropic `tool_use` content block: `{"type": "tool_use", "id", "name", "input"}`.
    pub fn from_anthropic(value: &Value) -> Result<Self, WireError> {
        const FORMAT: &str = "Anthropic";
        Ok(Self::new(
            text(value, "/id", FORMAT)?,
            text(value, "/name", FORMAT)?,
            value.get("input").cloned().unwrap_or(Value::Null),
        ))
    }
}

impl CallRecord {
    /// The text the model reads for this call. A call that has not finished
    /// (possible only for interrupted calls left by a recovered checkpoint)
    /// says so, so every call can always be answered.
    pub fn content(&self) -> &str {
        match &self.output {
            Some(output) => &output.content,
            None => match self.status {
                CallStatus::Interrupted => {
                    "Error: the call was interrupted and its effect is unknown; check before retrying."
                }
                _ => "Error: the call did not run.",
            },
        }
    }

    /// Whether the model should read this result as a failure.
    pub fn is_error(&self) -> bool {
        self.status != CallStatus::Success || self.output.as_ref().is_some_and(|o| o.is_error)
    }
}

impl BatchState {
    /// One OpenAI chat `{"role": "tool", "tool_call_id", "content"}` message per call, in call order.
    pub fn openai_chat_messages(&self) -> Vec<Value> {
        self.calls
            .iter()
            .map(|r| json!({"role": "tool", "tool_call_id": r.call.id, "content": r.content()}))
            .collect()
    }

    /// One OpenAI responses `{"type": "function_call_output", "call_id", "output"}` item per call.
    pub fn openai_responses_items(&self) -> Vec<Value> {
        self.calls
            .iter()
            .map(|r| json!({"type": "function_call_output", "call_id": r.call.id, "output": r.content()}))
            .collect()
    }

    /// One Anthropic `tool_result` content block per call, with `is_error`;
    /// images travel as image blocks beside the text.
    pub fn anthropic_tool_results(&self) -> Vec<Value> {
        self.calls
            .iter()
            .map(|r| {
                let mut content = vec![json!({"type": "text", "text": r.content()})];
                for image in r.output.iter().flat_map(|o| &o.images) {
                    content.push(json!({
                        "type": "image",
                        "source": {"type": "base64", "media_type": image.mime_type, "data": image.data},
                    }));
                }
                json!({
                    "type": "tool_result",
                    "tool_use_id": r.call.id,
                    "content": content,
                    "is_error": r.is_error(),
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::ToolOutput;

    #[test]
    fn calls_come_in_from_each_format() {
        let chat = json!({"id": "c1", "type": "function", "function": {"name": "add", "arguments": "{\"a\":1}"}});
        assert_eq!(
            ToolCall::from_openai_chat(&chat).unwrap(),
            ToolCall::new("c1", "add", json!("{\"a\":1}"))
        );
        let responses =
            json!({"type": "function_call", "call_id": "c2", "name": "add", "arguments": "{}"});
        assert_eq!(
            ToolCall::from_openai_responses(&responses).unwrap(),
            ToolCall::new("c2", "add", json!("{}"))
        );
        let anthropic = json!({"type": "tool_use", "id": "c3", "name": "add", "input": {"a": 1}});
        assert_eq!(
            ToolCall::from_anthropic(&anthropic).unwrap(),
            ToolCall::new("c3", "add", json!({"a": 1}))
        );
    }

    #[test]
    fn a_malformed_call_names_what_is_missing() {
        let error = ToolCall::from_openai_chat(&json!({"id": "c1", "function": {}})).unwrap_err();
        assert_eq!(
            error.to_string(),
            "not a OpenAI chat tool call: /function/name is missing or not a string"
        );
    }

    #[test]
    fn results_go_out_in_call_order_in_each_format() {
        let mut state = BatchState::new([
            ToolCall::new("a", "t", json!({})),
            ToolCall::new("b", "t", json!({})),
        ]);
        state.calls[0].status = CallStatus::Success;
        state.calls[0].output = Some(ToolOutput::text("ok").with_image("aGk=", "image/png"));
        state.calls[1].status = CallStatus::Interrupted;
        assert_eq!(
            state.openai_chat_messages(),
            vec![
                json!({"role": "tool", "tool_call_id": "a", "content": "ok"}),
                json!({"role": "tool", "tool_call_id": "b", "content": "Error: the call was interrupted and its effect is unknown; check before retrying."}),
            ]
        );
        assert_eq!(state.openai_responses_items()[0]["output"], json!("ok"));
        let anthropic = state.anthropic_tool_results();
        assert_eq!(anthropic[0]["is_error"], json!(false));
        assert_eq!(
            anthropic[0]["content"][1]["source"]["media_type"],
            json!("image/png")
        );
        assert_eq!(anthropic[1]["is_error"], json!(true));
    }
}

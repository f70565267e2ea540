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

    /// From Gemini's `functionCall` parts (`{"functionCall": {"name",
    /// "args", "id"?}}`, or the inner object alone), in order; other parts
    /// (text, thoughts) are skipped. Gemini gives ids only on newer models:
    /// a call without one gets `gemini-call-N` (its position), which
    /// [`BatchState::gemini_function_responses`] leaves out again.
    pub fn from_gemini_parts(parts: &[Value]) -> Result<Vec<Self>, WireError> {
        const FORMAT: &str = "Gemini";
        let calls = parts
            .iter()
            .filter_map(|part| match part.get("functionCall") {
                Some(call) => Some(call),
                None if part.get("name").is_some() && part.get("args").is_some() => Some(part),
                None => None,
            })
            .enumerate()
            .map(|(index, call)| {
                let id = match call.get("id").and_then(Value::as_str) {
                    Some(id) if !id.is_empty() => id.to_owned(),
                    _ => format!("{GEMINI_ID_PREFIX}{index}"),
                };
                Ok(Self::new(
                    id,
                    text(call, "/name", FORMAT)?,
                    call.get("args").cloned().unwrap_or(Value::Null),
                ))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(calls)
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

/// The start of the ids given to Gemini calls that came without one.
const GEMINI_ID_PREFIX: &str = "gemini-call-";

/// The images of a call's output, as `(media type, base64 data)`.
fn images(record: &CallRecord) -> impl Iterator<Item = (&str, &str)> {
    record
        .output
        .iter()
        .flat_map(|o| &o.images)
        .map(|image| (image.mime_type.as_str(), image.data.as_str()))
}

impl BatchState {
    /// One OpenAI chat `{"role": "tool", "tool_call_id", "name", "content"}`
    /// message per call, in call order. (Chat messages carry text only: a
    /// result's images reach the model through the Responses or Anthropic
    /// formats.)
    pub fn openai_chat_messages(&self) -> Vec<Value> {
        self.calls
            .iter()
            .map(|r| {
                json!({
                    "role": "tool",
                    "tool_call_id": r.call.id,
                    "name": r.call.name,
                    "content": r.content(),
                })
            })
            .collect()
    }

    /// One OpenAI responses `{"type": "function_call_output", "call_id",
    /// "output"}` item per call. `output` is the text, or, when the result
    /// has images, a list of `input_text` and `input_image` items.
    pub fn openai_responses_items(&self) -> Vec<Value> {
        self.calls
            .iter()
            .map(|r| {
                let output = if images(r).next().is_none() {
                    Value::from(r.content())
                } else {
                    let mut items = vec![json!({"type": "input_text", "text": r.content()})];
                    items.extend(images(r).map(|(media_type, data)| {
                        json!({
                            "type": "input_image",
                            "image_url": format!("data:{media_type};base64,{data}"),
                        })
                    }));
                    Value::Array(items)
                };
                json!({"type": "function_call_output", "call_id": r.call.id, "output": output})
            })
            .collect()
    }

    /// Gemini parts answering the calls, in call order: a
    /// `{"functionResponse": {"name", "id"?, "response": {"output"|"error": text}}}`
    /// per call (the id only where Gemini gave one), each followed by its
    /// result's images as `inlineData` parts.
    pub fn gemini_function_responses(&self) -> Vec<Value> {
        let mut parts = Vec::with_capacity(self.calls.len());
        for record in &self.calls {
            let key = if record.is_error() { "error" } else { "output" };
            let mut response = json!({
                "name": record.call.name,
                "response": {key: record.content()},
            });
            if !record.call.id.starts_with(GEMINI_ID_PREFIX) {
                response["id"] = Value::from(record.call.id.as_str());
            }
            parts.push(json!({"functionResponse": response}));
            parts.extend(images(record).map(
                |(media_type, data)| json!({"inlineData": {"mimeType": media_type, "data": data}}),
            ));
        }
        parts
    }

    /// One Anthropic `tool_result` content block per call, with `is_error`;
    /// images travel as image blocks beside the text.
    pub fn anthropic_tool_results(&self) -> Vec<Value> {
        self.calls
            .iter()
            .map(|r| {
                let mut content = vec![json!({"type": "text", "text": r.content()})];
                content.extend(images(r).map(|(media_type, data)| {
                    json!({
                        "type": "image",
                        "source": {"type": "base64", "media_type": media_type, "data": data},
                    })
                }));
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
                json!({"role": "tool", "tool_call_id": "a", "name": "t", "content": "ok"}),
                json!({"role": "tool", "tool_call_id": "b", "name": "t", "content": "Error: the call was interrupted and its effect is unknown; check before retrying."}),
            ]
        );
        let responses = state.openai_responses_items();
        assert_eq!(
            responses[0]["output"],
            json!([
                {"type": "input_text", "text": "ok"},
                {"type": "input_image", "image_url": "data:image/png;base64,aGk="},
            ])
        );
        assert!(responses[1]["output"].is_string());
        let anthropic = state.anthropic_tool_results();
        assert_eq!(anthropic[0]["is_error"], json!(false));
        assert_eq!(
            anthropic[0]["content"][1]["source"]["media_type"],
            json!("image/png")
        );
        assert_eq!(anthropic[1]["is_error"], json!(true));
    }

    #[test]
    fn gemini_calls_come_in_and_answers_go_out_with_their_ids_where_given() {
        let parts = [
            json!({"text": "Let me look."}),
            json!({"functionCall": {"name": "add", "args": {"a": 1}, "id": "g1"}}),
            json!({"functionCall": {"name": "add", "args": {"a": 2}}}),
        ];
        let calls = ToolCall::from_gemini_parts(&parts).unwrap();
        assert_eq!(
            calls,
            [
                ToolCall::new("g1", "add", json!({"a": 1})),
                ToolCall::new("gemini-call-1", "add", json!({"a": 2})),
            ]
        );
        let error = ToolCall::from_gemini_parts(&[json!({"functionCall": {"args": {}}})]);
        assert!(error.is_err());

        let mut state = BatchState::new(calls);
        state.calls[0].status = CallStatus::Success;
        state.calls[0].output = Some(ToolOutput::text("3").with_image("aGk=", "image/png"));
        state.calls[1].status = CallStatus::Error;
        state.calls[1].output = Some(ToolOutput::error("Error: no"));
        assert_eq!(
            state.gemini_function_responses(),
            vec![
                json!({"functionResponse": {"name": "add", "id": "g1", "response": {"output": "3"}}}),
                json!({"inlineData": {"mimeType": "image/png", "data": "aGk="}}),
                json!({"functionResponse": {"name": "add", "response": {"error": "Error: no"}}}),
            ]
        );
    }
}

//! Sampling through the host: a server asks for a completion
//! (`sampling/createMessage`) and the host's own model answers.
//!
//! Our types, not the SDK's: the request is read from MCP's JSON form, which
//! the specification fixes, so hosts do not depend on the SDK's shapes.

use std::error::Error;

use async_trait::async_trait;
use serde_json::{Value, json};

/// The host's model, answering the completions MCP servers ask for.
///
/// Set one with [`McpClients::with_sampler`](crate::mcp::McpClients::with_sampler):
/// the client then declares the `sampling` capability when it connects, and
/// a server's `sampling/createMessage` request reaches [`sample`](Self::sample).
/// Without one the capability is not declared and such requests are refused.
/// An error returned here reaches the server as a JSON-RPC error with its
/// message; a panic is caught and answered with an error too (its message
/// goes to the log, not to the server). A sampler still working when the
/// server cancels the request, or after the server's `toolTimeout`, is
/// dropped and the server told.
///
/// Any connected server can ask: the sampler is where a host decides
/// whether to answer (ask its user, keep a budget), since it spends the
/// host's model. Before it is asked, each server's requests are held to a
/// [`QuestionRate`](crate::mcp::QuestionRate) (by default 8 at once, then
/// one a second; see
/// [`McpClients::with_question_rate`](crate::mcp::McpClients::with_question_rate)):
/// past it, a request is refused with a rate-limited error and never
/// reaches the sampler.
///
/// ```
/// use toolsmith::mcp::{Sampled, Sampler, SamplingRequest};
///
/// /// Answers with the last message, shouted (a host would call its model here).
/// struct Shout;
///
/// #[toolsmith::async_trait]
/// impl Sampler for Shout {
///     async fn sample(
///         &self,
///         request: SamplingRequest,
///     ) -> Result<Sampled, Box<dyn std::error::Error + Send + Sync>> {
///         let last = request.messages.last().ok_or("no messages to answer")?;
///         Ok(Sampled::new(last.text.to_uppercase(), "shout-1"))
///     }
/// }
/// ```
#[async_trait]
pub trait Sampler: Send + Sync + 'static {
    /// Answer `request` with the host's model.
    async fn sample(
        &self,
        request: SamplingRequest,
    ) -> Result<Sampled, Box<dyn Error + Send + Sync>>;
}

/// A server's request for a completion, in the form a model call takes.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SamplingRequest {
    /// The configured name of the server asking.
    pub server: String,
    /// The conversation to continue, oldest first.
    pub messages: Vec<SamplingMessage>,
    /// The system prompt the server suggests, if any.
    pub system_prompt: Option<String>,
    /// The most tokens the answer may have.
    pub max_tokens: u32,
    /// The sampling temperature the server suggests, if any.
    pub temperature: Option<f64>,
    /// Where the answer should stop, if anywhere.
    pub stop_sequences: Vec<String>,
    /// The model names the server hints at, most preferred first.
    pub model_hints: Vec<String>,
    /// All of the request's parameters in MCP's JSON form, for what the
    /// fields above leave out (model preferences, tools, metadata).
    pub params: Value,
}

/// One message of the conversation a server sends to sample.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SamplingMessage {
    /// `user` or `assistant`.
    pub role: String,
    /// The message's text blocks, joined by new lines; an image or audio
    /// block reads `[image: image/png]`.
    pub text: String,
    /// The message's content blocks as sent (images keep their data here).
    pub content: Vec<Value>,
}

/// The host model's answer to a [`SamplingRequest`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Sampled {
    /// The answer's text.
    pub text: String,
    /// The name of the model that wrote it.
    pub model: String,
    /// Why it stopped (`endTurn`, `maxTokens`, `stopSequence`); `endTurn` when not set.
    pub stop_reason: Option<String>,
}

impl Sampled {
    /// `text`, written by `model`, ended at the end of its turn.
    pub fn new(text: impl Into<String>, model: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            model: model.into(),
            stop_reason: None,
        }
    }

    /// With the reason the model stopped.
    pub fn with_stop_reason(mut self, reason: impl Into<String>) -> Self {
        self.stop_reason = Some(reason.into());
        self
    }

    /// MCP's `CreateMessageResult` for this answer.
    pub(crate) fn to_result(&self) -> Value {
        json!({
            "role": "assistant",
            "content": {"type": "text", "text": self.text},
            "model": self.model,
            "stopReason": self.stop_reason.as_deref().unwrap_or("endTurn"),
        })
    }
}

impl SamplingRequest {
    /// The request `server` sent, from the `params` of its
    /// `sampling/createMessage` request in MCP's JSON form (what a host's
    /// tests of its sampler start from too). What is missing reads as
    /// empty; a missing `maxTokens` as no limit (`u32::MAX`).
    ///
    /// ```
    /// use serde_json::json;
    /// use toolsmith::mcp::SamplingRequest;
    ///
    /// let request = SamplingRequest::from_params("notes", json!({
    ///     "messages": [{"role": "user", "content": {"type": "text", "text": "Summarize"}}],
    ///     "systemPrompt": "Be brief.",
    ///     "maxTokens": 50
    /// }));
    /// assert_eq!(request.messages[0].text, "Summarize");
    /// assert_eq!(request.max_tokens, 50);
    /// ```
    pub fn from_params(server: &str, params: Value) -> Self {
        let strings = |value: Option<&Value>| -> Vec<String> {
            value
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        };
        let messages = params
            .get("messages")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(SamplingMessage::from_json)
            .collect();
        let model_hints = params
            .pointer("/modelPreferences/hints")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|hint| hint.get("name")?.as_str().map(str::to_owned))
            .collect();
        Self {
            server: server.to_owned(),
            messages,
            system_prompt: params
                .get("systemPrompt")
                .and_then(Value::as_str)
                .map(str::to_owned),
            max_tokens: params
                .get("maxTokens")
                .and_then(Value::as_u64)
                .map_or(u32::MAX, |n| u32::try_from(n).unwrap_or(u32::MAX)),
            // The SDK carries the temperature as an `f32`: its shortest
            // decimal form is what the server wrote (0.7, not 0.69999998).
            temperature: params
                .get("temperature")
                .and_then(Value::as_f64)
                .map(|t| (t as f32).to_string().parse().unwrap_or(t)),
            stop_sequences: strings(params.get("stopSequences")),
            model_hints,
            params,
        }
    }
}

impl SamplingMessage {
    fn from_json(message: &Value) -> Self {
        // One block or a list of blocks, as the protocol allows both.
        let content: Vec<Value> = match message.get("content") {
            Some(Value::Array(blocks)) => blocks.clone(),
            Some(block @ Value::Object(_)) => vec![block.clone()],
            _ => Vec::new(),
        };
        let text = content
            .iter()
            .map(|block| {
                let str_of = |k: &str| block.get(k).and_then(Value::as_str).unwrap_or_default();
                match str_of("type") {
                    "text" => str_of("text").to_owned(),
                    kind => format!("[{kind}: {}]", str_of("mimeType")).replace(": ]", "]"),
                }
            })
            .collect::<Vec<_>>()
            .join("\n");
        Self {
            role: message
                .get("role")
                .and_then(Value::as_str)
                .unwrap_or("user")
                .to_owned(),
            text,
            content,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_create_message_request_is_read_into_our_form() {
        let params = json!({
            "messages": [
                {"role": "user", "content": {"type": "text", "text": "Hello"}},
                {"role": "assistant", "content": [
                    {"type": "text", "text": "Look:"},
                    {"type": "image", "data": "aW1n", "mimeType": "image/png"}
                ]}
            ],
            "systemPrompt": "Be brief.",
            "maxTokens": 100,
            "temperature": 0.699999988079071,
            "stopSequences": ["\n\n"],
            "modelPreferences": {"hints": [{"name": "claude-3"}, {"name": "gpt"}]}
        });
        let request = SamplingRequest::from_params("srv", params.clone());
        assert_eq!(request.server, "srv");
        assert_eq!(request.messages.len(), 2);
        assert_eq!(request.messages[0].role, "user");
        assert_eq!(request.messages[0].text, "Hello");
        assert_eq!(request.messages[1].text, "Look:\n[image: image/png]");
        assert_eq!(request.messages[1].content.len(), 2);
        assert_eq!(request.system_prompt.as_deref(), Some("Be brief."));
        assert_eq!(request.max_tokens, 100);
        assert_eq!(request.temperature, Some(0.7));
        assert_eq!(request.stop_sequences, ["\n\n"]);
        assert_eq!(request.model_hints, ["claude-3", "gpt"]);
        assert_eq!(request.params, params);
    }

    #[test]
    fn an_answer_becomes_an_assistant_message() {
        let result = Sampled::new("Hi", "m1").to_result();
        assert_eq!(
            result,
            json!({"role": "assistant", "content": {"type": "text", "text": "Hi"},
                   "model": "m1", "stopReason": "endTurn"})
        );
        let cut = Sampled::new("H", "m1").with_stop_reason("maxTokens");
        assert_eq!(cut.to_result()["stopReason"], "maxTokens");
    }
}

//! [`compact_history`]: microcompact over OpenAI chat-format JSON messages.
//!
//! OpenAI tool messages carry only a `tool_call_id`; the tool's name is in
//! the assistant message that made the call. This module finds the names and
//! hands the messages to the generic [`compact`]; it decides nothing itself.

use std::collections::HashMap;

use serde_json::Value;

use super::compact::{CompactConfig, ToolResultMessage, compact};

/// Clear old results of bulky tools in an OpenAI chat-format history, as
/// [`compact`] does, and return how many were cleared.
///
/// Tool results are the `{"role": "tool", "tool_call_id": ..., "content": ...}`
/// messages; each is named by the `tool_calls[].function.name` of the
/// assistant message with the same call id, or failing that by its own
/// `name` field (as some hosts store it). Content given as an array of text
/// parts is read as their text joined, and becomes a plain string when
/// cleared. Other messages, and tool results whose tool cannot be found, are
/// never changed.
///
/// ```
/// use toolsmith::exec::shape::{CompactConfig, compact_history};
/// use serde_json::json;
///
/// let big = "x".repeat(5_000);
/// let mut history = vec![
///     json!({"role": "user", "content": "Read both files."}),
///     json!({"role": "assistant", "tool_calls": [
///         {"id": "a", "type": "function", "function": {"name": "read_file", "arguments": "{}"}},
///     ]}),
///     json!({"role": "tool", "tool_call_id": "a", "content": big}),
///     json!({"role": "assistant", "tool_calls": [
///         {"id": "b", "type": "function", "function": {"name": "read_file", "arguments": "{}"}},
///     ]}),
///     json!({"role": "tool", "tool_call_id": "b", "content": big}),
/// ];
/// let cleared = compact_history(&mut history, &CompactConfig::default().keep_recent(1));
/// assert_eq!(cleared, 1);
/// assert_eq!(
///     history[2]["content"],
///     "[Earlier read_file result (5,000 characters) cleared to save context; \
///      call the tool again if you need it]"
/// );
/// assert_eq!(history[4]["content"], big);
/// ```
pub fn compact_history(messages: &mut [Value], config: &CompactConfig) -> usize {
    let names = tool_names_by_call_id(messages);
    let mut views: Vec<JsonMessage<'_>> = messages
        .iter_mut()
        .map(|message| JsonMessage::new(message, &names))
        .collect();
    compact(&mut views, config)
}

/// `tool_calls[].id` -> `tool_calls[].function.name`, from assistant messages.
fn tool_names_by_call_id(messages: &[Value]) -> HashMap<String, String> {
    messages
        .iter()
        .filter(|message| message["role"] == "assistant")
        .filter_map(|message| message["tool_calls"].as_array())
        .flatten()
        .filter_map(|call| {
            let id = call["id"].as_str()?;
            let name = call["function"]["name"].as_str()?;
            Some((id.to_owned(), name.to_owned()))
        })
        .collect()
}

/// One JSON message as [`compact`] sees it.
struct JsonMessage<'a> {
    message: &'a mut Value,
    /// `None` unless this is a tool result; `Some("")` when its tool is unknown.
    tool: Option<String>,
    /// The joined text of array content, which has no `&str` to borrow.
    joined: Option<String>,
}

impl<'a> JsonMessage<'a> {
    fn new(message: &'a mut Value, names: &HashMap<String, String>) -> Self {
        let tool = (message["role"] == "tool").then(|| {
            let by_call = message["tool_call_id"]
                .as_str()
                .and_then(|id| names.get(id))
                .map(String::as_str);
            by_call
                .or_else(|| message["name"].as_str())
                .unwrap_or_default()
                .to_owned()
        });
        let joined = message["content"].as_array().map(|parts| {
            parts
                .iter()
                .filter_map(|part| part["text"].as_str())
                .collect::<String>()
        });
        Self {
            message,
            tool,
            joined,
        }
    }
}

impl ToolResultMessage for JsonMessage<'_> {
    fn tool_name(&self) -> Option<&str> {
        self.tool.as_deref()
    }

    fn content(&self) -> &str {
        match &self.joined {
            Some(text) => text,
            None => self.message["content"].as_str().unwrap_or_default(),
        }
    }

    fn set_content(&mut self, content: String) {
        // Only objects reach here (a tool message has a role), so this never
        // has to invent structure.
        if let Some(object) = self.message.as_object_mut() {
            object.insert("content".into(), Value::String(content));
            self.joined = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::compact::tests::Message;
    use super::*;

    /// The OpenAI history of `(tool, content)` calls, one call per assistant turn.
    fn history(calls: &[(&str, &str)]) -> Vec<Value> {
        let mut messages = vec![json!({"role": "system", "content": "You are helpful."})];
        for (index, (tool, content)) in calls.iter().enumerate() {
            let id = format!("call_{index}");
            messages.push(json!({"role": "assistant", "content": null, "tool_calls": [
                {"id": id, "type": "function", "function": {"name": tool, "arguments": "{}"}},
            ]}));
            messages.push(json!({"role": "tool", "tool_call_id": id, "content": content}));
        }
        messages
    }

    /// The same conversation in the host type of the generic tests.
    fn generic(calls: &[(&str, &str)]) -> Vec<Message> {
        let mut messages = vec![Message::Text("You are helpful.".into())];
        for (tool, content) in calls {
            messages.push(Message::Text(String::new()));
            messages.push(Message::Result {
                tool: (*tool).into(),
                text: (*content).into(),
            });
        }
        messages
    }

    fn contents(messages: &[Value]) -> Vec<&str> {
        messages
            .iter()
            .filter(|m| m["role"] == "tool")
            .map(|m| m["content"].as_str().unwrap())
            .collect()
    }

    #[test]
    fn the_json_and_generic_apis_agree() {
        let long = "y".repeat(3_000);
        let short = "z".repeat(300);
        let calls = [
            ("read_file", long.as_str()),
            ("write_file", long.as_str()),
            ("grep", short.as_str()),
            ("exec", long.as_str()),
            ("web_fetch", long.as_str()),
            ("read_file", long.as_str()),
            ("glob", long.as_str()),
        ];
        for keep_recent in 0..4 {
            let config = CompactConfig::default().keep_recent(keep_recent);
            let mut json_history = history(&calls);
            let mut generic_history = generic(&calls);
            let json_cleared = compact_history(&mut json_history, &config);
            let generic_cleared = compact(&mut generic_history, &config);
            assert_eq!(json_cleared, generic_cleared);
            let generic_contents: Vec<&str> = generic_history
                .iter()
                .filter(|m| m.tool_name().is_some())
                .map(ToolResultMessage::content)
                .collect();
            assert_eq!(
                contents(&json_history),
                generic_contents,
                "keep_recent {keep_recent}"
            );
        }
    }

    #[test]
    fn names_come_from_the_assistant_call_or_the_message_itself() {
        let big = "x".repeat(2_000);
        let mut messages = history(&[("read_file", &big)]);
        messages.push(
            json!({"role": "tool", "tool_call_id": "elsewhere", "name": "grep", "content": big}),
        );
        messages.push(json!({"role": "tool", "tool_call_id": "unknown", "content": big}));
        messages.push(json!({"role": "user", "content": big}));
        messages.push(json!({"role": "tool", "tool_call_id": "call_0", "content": "latest"}));
        let cleared = compact_history(&mut messages, &CompactConfig::default().keep_recent(0));
        assert_eq!(cleared, 2);
        assert!(
            messages[2]["content"]
                .as_str()
                .unwrap()
                .contains("read_file result")
        );
        assert!(
            messages[3]["content"]
                .as_str()
                .unwrap()
                .contains("grep result")
        );
        assert_eq!(messages[4]["content"], big, "an unknown tool is left alone");
        assert_eq!(messages[5]["content"], big, "a user message is left alone");
    }

    #[test]
    fn array_content_is_measured_by_its_text_and_cleared_to_a_string() {
        let part = "p".repeat(1_500);
        let mut messages = history(&[("exec", "placeholder"), ("exec", "latest")]);
        messages[2]["content"] =
            json!([{"type": "text", "text": part}, {"type": "text", "text": part}]);
        assert_eq!(
            compact_history(&mut messages, &CompactConfig::default().keep_recent(0)),
            1
        );
        assert!(
            messages[2]["content"]
                .as_str()
                .unwrap()
                .contains("(3,000 characters)")
        );
    }

    #[test]
    fn compacting_json_twice_changes_nothing_the_second_time() {
        let big = "x".repeat(2_000);
        let mut messages = history(&[("grep", &big), ("grep", &big), ("grep", &big)]);
        let config = CompactConfig::default().keep_recent(1);
        assert_eq!(compact_history(&mut messages, &config), 2);
        let once = messages.clone();
        assert_eq!(compact_history(&mut messages, &config), 0);
        assert_eq!(messages, once);
    }

    #[test]
    fn odd_messages_do_not_panic() {
        let mut messages = vec![
            json!(null),
            json!("text"),
            json!({"role": "assistant", "tool_calls": "not an array"}),
            json!({"role": "assistant", "tool_calls": [{"id": 1}, null]}),
            json!({"role": "tool"}),
            json!({"role": "tool", "content": {"odd": true}}),
        ];
        assert_eq!(
            compact_history(&mut messages, &CompactConfig::default().keep_recent(0)),
            0
        );
    }
}

//! Microcompact: clearing old bulky tool results from a conversation.
//!
//! A file read ten steps ago still costs its full size on every later turn,
//! though the model has long since acted on it. Replacing old results of
//! bulky tools with a one-line placeholder keeps the context for what is
//! current; the model can call the tool again if it needs the text back.
//!
//! The core works on any message type through [`ToolResultMessage`];
//! [`compact_history`](super::compact_history) adapts it to OpenAI-style
//! JSON messages.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use super::count::{count_chars, thousands};

/// The default placeholder; `{tool}` and `{chars}` are filled in.
const DEFAULT_PLACEHOLDER: &str = "[Earlier {tool} result ({chars} characters) cleared to save context; call the tool again if you need it]";

/// Which results [`compact`] clears, and what it leaves in their place.
///
/// ```
/// use toolsmith::exec::shape::CompactConfig;
///
/// let config = CompactConfig::default().keep_recent(2).bulky_tool("search_docs");
/// assert!(config.bulky_tools.contains("read_file"));
/// assert!(config.bulky_tools.contains("search_docs"));
///
/// let from_file: CompactConfig = serde_json::from_str(r#"{"keep_recent": 2}"#).unwrap();
/// assert_eq!(from_file.min_chars, 1_000);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
#[non_exhaustive]
pub struct CompactConfig {
    /// Tools whose results are large and go stale; only these are cleared.
    ///
    /// Default: `read_file`, `grep`, `glob`, `list_dir`, `exec`, `web_fetch`,
    /// `web_search`, the built-ins that return file contents, listings,
    /// command output and pages. Tools whose results are short or are
    /// decisions the model must remember (`write_file`, `message`, `spawn`)
    /// are not in it.
    pub bulky_tools: BTreeSet<String>,
    /// How many of the most recent bulky results stay whole.
    ///
    /// Default 5: the model usually acts on the last few results (read a
    /// file, then edit it), and five covers a read-several-then-edit step.
    /// The latest batch (the last run of consecutive tool results) is always
    /// kept whole as well, however many results it has, so results the model
    /// has not yet seen are never cleared.
    pub keep_recent: usize,
    /// Results shorter than this many characters are left alone.
    ///
    /// Default 1,000 (about 250 tokens): clearing a short result saves little
    /// and loses its facts, and the placeholder itself is about 110 characters.
    pub min_chars: usize,
    /// What replaces a cleared result; `{tool}` becomes the tool name and
    /// `{chars}` the cleared result's length (as `12,345`).
    ///
    /// Default: `[Earlier {tool} result ({chars} characters) cleared to save
    /// context; call the tool again if you need it]`.
    ///
    /// It is also how a cleared result is recognised, so it is never cleared
    /// twice; keep some fixed text in it.
    pub placeholder: String,
}

impl Default for CompactConfig {
    fn default() -> Self {
        let bulky = [
            "read_file",
            "grep",
            "glob",
            "list_dir",
            "exec",
            "web_fetch",
            "web_search",
        ];
        Self {
            bulky_tools: bulky.into_iter().map(String::from).collect(),
            keep_recent: 5,
            min_chars: 1_000,
            placeholder: DEFAULT_PLACEHOLDER.to_owned(),
        }
    }
}

impl CompactConfig {
    /// The defaults described on each field.
    pub fn new() -> Self {
        Self::default()
    }

    /// Replace the set of [`bulky_tools`](Self::bulky_tools).
    pub fn bulky_tools<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.bulky_tools = names.into_iter().map(Into::into).collect();
        self
    }

    /// Add one tool to [`bulky_tools`](Self::bulky_tools).
    pub fn bulky_tool(mut self, name: impl Into<String>) -> Self {
        self.bulky_tools.insert(name.into());
        self
    }

    /// Set [`keep_recent`](Self::keep_recent).
    pub fn keep_recent(mut self, keep_recent: usize) -> Self {
        self.keep_recent = keep_recent;
        self
    }

    /// Set [`min_chars`](Self::min_chars).
    pub fn min_chars(mut self, min_chars: usize) -> Self {
        self.min_chars = min_chars;
        self
    }

    /// Set [`placeholder`](Self::placeholder).
    pub fn placeholder(mut self, placeholder: impl Into<String>) -> Self {
        self.placeholder = placeholder.into();
        self
    }

    fn is_bulky(&self, tool_name: &str) -> bool {
        !tool_name.is_empty() && self.bulky_tools.contains(tool_name)
    }

    fn render(&self, tool_name: &str, chars: usize) -> String {
        self.placeholder
            .replace("{tool}", tool_name)
            .replace("{chars}", &thousands(chars))
    }

    /// Whether `text` is a placeholder: the template's fixed text, in order,
    /// with anything where `{tool}` and `{chars}` stand.
    fn is_placeholder(&self, text: &str) -> bool {
        let fixed: Vec<&str> = self
            .placeholder
            .split("{tool}")
            .flat_map(|part| part.split("{chars}"))
            .collect();
        let [first, middle @ .., last] = fixed.as_slice() else {
            return text == self.placeholder;
        };
        let Some(rest) = text.strip_prefix(first) else {
            return false;
        };
        let Some(mut rest) = rest.strip_suffix(last) else {
            return false;
        };
        for part in middle {
            match rest.find(part) {
                Some(at) => rest = &rest[at + part.len()..],
                None => return false,
            }
        }
        true
    }
}

/// A message in a host's own history type, as [`compact`] needs to see it.
///
/// ```
/// use toolsmith::exec::shape::ToolResultMessage;
///
/// enum Message {
///     User(String),
///     ToolResult { tool: String, text: String },
/// }
///
/// impl ToolResultMessage for Message {
///     fn tool_name(&self) -> Option<&str> {
///         match self {
///             Message::ToolResult { tool, .. } => Some(tool),
///             Message::User(_) => None,
///         }
///     }
///     fn content(&self) -> &str {
///         match self {
///             Message::ToolResult { text, .. } | Message::User(text) => text,
///         }
///     }
///     fn set_content(&mut self, content: String) {
///         if let Message::ToolResult { text, .. } = self {
///             *text = content;
///         }
///     }
/// }
/// ```
pub trait ToolResultMessage {
    /// The tool whose result this message carries; `None` when it is not a
    /// tool result (a user or assistant message). A tool result whose tool
    /// is unknown should answer `Some("")`: it is never cleared, but it still
    /// belongs to its batch.
    fn tool_name(&self) -> Option<&str>;
    /// The result's text.
    fn content(&self) -> &str;
    /// Replace the result's text.
    fn set_content(&mut self, content: String);
}

/// Clear old results of bulky tools, oldest first, and return how many were
/// cleared.
///
/// A result is cleared when its tool is in
/// [`bulky_tools`](CompactConfig::bulky_tools), it is older than the
/// [`keep_recent`](CompactConfig::keep_recent) most recent bulky results and
/// than the latest batch, it has at least
/// [`min_chars`](CompactConfig::min_chars) characters, and it is not a
/// placeholder already. Everything else is left exactly as it was, so running
/// this before every model call is cheap and a second run changes nothing.
///
/// ```
/// use toolsmith::exec::shape::{CompactConfig, ToolResultMessage, compact};
///
/// /// A history entry: a tool's result, or (`tool: None`) anything else.
/// struct Entry {
///     tool: Option<&'static str>,
///     text: String,
/// }
///
/// impl ToolResultMessage for Entry {
///     fn tool_name(&self) -> Option<&str> { self.tool }
///     fn content(&self) -> &str { &self.text }
///     fn set_content(&mut self, content: String) { self.text = content; }
/// }
///
/// let entry = |tool, chars| Entry { tool, text: "x".repeat(chars) };
/// let mut history = vec![
///     entry(None, 10), entry(Some("read_file"), 5_000),
///     entry(None, 10), entry(Some("write_file"), 5_000),
///     entry(None, 10), entry(Some("read_file"), 5_000),
/// ];
/// let config = CompactConfig::default().keep_recent(1);
/// assert_eq!(compact(&mut history, &config), 1);
/// assert!(history[1].text.starts_with("[Earlier read_file result (5,000 characters) cleared"));
/// assert_eq!(history[3].text.len(), 5_000, "write_file is not bulky");
/// assert_eq!(history[5].text.len(), 5_000, "the most recent read is kept");
/// assert_eq!(compact(&mut history, &config), 0, "nothing is cleared twice");
/// ```
pub fn compact<M: ToolResultMessage>(messages: &mut [M], config: &CompactConfig) -> usize {
    let latest_batch = latest_batch_start(messages);
    let bulky: Vec<usize> = messages
        .iter()
        .enumerate()
        .filter(|(_, message)| {
            message
                .tool_name()
                .is_some_and(|name| config.is_bulky(name))
        })
        .map(|(index, _)| index)
        .collect();
    let stale = &bulky[..bulky.len().saturating_sub(config.keep_recent)];
    let mut cleared = 0;
    for &index in stale.iter().take_while(|&&index| index < latest_batch) {
        let message = &mut messages[index];
        let Some(placeholder) = placeholder_for(message, config) else {
            continue;
        };
        message.set_content(placeholder);
        cleared += 1;
    }
    cleared
}

/// The placeholder to put in place of `message`, if it should be cleared.
fn placeholder_for<M: ToolResultMessage>(message: &M, config: &CompactConfig) -> Option<String> {
    let tool = message.tool_name()?;
    let content = message.content();
    if config.is_placeholder(content) {
        return None;
    }
    let chars = count_chars(content);
    if chars < config.min_chars {
        return None;
    }
    let placeholder = config.render(tool, chars);
    // With a tiny `min_chars` a placeholder could be longer than the result.
    (count_chars(&placeholder) < chars).then_some(placeholder)
}

/// The index where the last run of consecutive tool results begins, or the
/// length when there are no tool results.
fn latest_batch_start<M: ToolResultMessage>(messages: &[M]) -> usize {
    let is_result = |message: &M| message.tool_name().is_some();
    let Some(last) = messages.iter().rposition(is_result) else {
        return messages.len();
    };
    messages[..last]
        .iter()
        .rposition(|message| !is_result(message))
        .map_or(0, |before| before + 1)
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// A minimal host message type.
    #[derive(Debug, Clone, PartialEq)]
    pub(in super::super) enum Message {
        Text(String),
        Result { tool: String, text: String },
    }

    impl ToolResultMessage for Message {
        fn tool_name(&self) -> Option<&str> {
            match self {
                Message::Result { tool, .. } => Some(tool),
                Message::Text(_) => None,
            }
        }
        fn content(&self) -> &str {
            match self {
                Message::Result { text, .. } | Message::Text(text) => text,
            }
        }
        fn set_content(&mut self, content: String) {
            if let Message::Result { text, .. } = self {
                *text = content;
            }
        }
    }

    fn result(tool: &str, chars: usize) -> Message {
        Message::Result {
            tool: tool.into(),
            text: "r".repeat(chars),
        }
    }

    /// A short result of a tool that is not bulky, to end a history with.
    fn other() -> Message {
        result("write_file", 10)
    }

    fn text() -> Message {
        Message::Text("thinking ".repeat(500))
    }

    /// One call per turn: text, result, text, result, ...
    fn turns(tools: &[&str]) -> Vec<Message> {
        tools
            .iter()
            .flat_map(|tool| [text(), result(tool, 5_000)])
            .collect()
    }

    fn is_cleared(message: &Message) -> bool {
        message.content().starts_with("[Earlier ")
    }

    #[test]
    fn the_most_recent_results_are_kept_and_older_ones_cleared() {
        let mut history = turns(&["read_file"; 6]);
        let cleared = compact(&mut history, &CompactConfig::default().keep_recent(2));
        assert_eq!(cleared, 4);
        let flags: Vec<bool> = history.iter().skip(1).step_by(2).map(is_cleared).collect();
        assert_eq!(flags, [true, true, true, true, false, false]);
        assert_eq!(
            history[1].content(),
            "[Earlier read_file result (5,000 characters) cleared to save context; \
             call the tool again if you need it]"
        );
    }

    #[test]
    fn other_tools_and_other_messages_are_never_touched() {
        let mut history = turns(&["write_file", "read_file", "message", "grep", "grep"]);
        let before = history.clone();
        assert_eq!(
            compact(&mut history, &CompactConfig::default().keep_recent(1)),
            2
        );
        for (index, (now, was)) in history.iter().zip(&before).enumerate() {
            let bulky_and_old = index == 3 || index == 7;
            assert_eq!(now != was, bulky_and_old, "message {index}");
        }
    }

    #[test]
    fn compacting_twice_changes_nothing_the_second_time() {
        let mut history = turns(&["read_file", "exec", "glob", "grep", "web_fetch", "exec"]);
        let config = CompactConfig::default().keep_recent(2).min_chars(0);
        assert_eq!(compact(&mut history, &config), 4);
        let once = history.clone();
        assert_eq!(compact(&mut history, &config), 0);
        assert_eq!(history, once);
    }

    #[test]
    fn short_results_are_left_alone() {
        let mut history = vec![
            text(),
            result("grep", 999),
            text(),
            result("grep", 1_000),
            text(),
            other(),
        ];
        assert_eq!(
            compact(&mut history, &CompactConfig::default().keep_recent(0)),
            1
        );
        assert!(!is_cleared(&history[1]));
        assert!(is_cleared(&history[3]));
    }

    #[test]
    fn the_latest_batch_is_kept_whole_however_large() {
        let mut history = vec![text(), result("grep", 5_000), text()];
        history.extend((0..4).map(|_| result("read_file", 5_000)));
        assert_eq!(
            compact(&mut history, &CompactConfig::default().keep_recent(1)),
            1
        );
        assert!(is_cleared(&history[1]));
        assert!(history[3..].iter().all(|m| !is_cleared(m)));
    }

    #[test]
    fn a_placeholder_longer_than_the_result_is_not_used() {
        let mut history = vec![
            result("grep", 20),
            text(),
            result("grep", 500),
            text(),
            other(),
        ];
        let config = CompactConfig::default().keep_recent(0).min_chars(0);
        assert_eq!(compact(&mut history, &config), 1);
        assert!(!is_cleared(&history[0]));
    }

    #[test]
    fn a_custom_placeholder_is_recognised_as_well() {
        let config = CompactConfig::default()
            .keep_recent(0)
            .min_chars(0)
            .placeholder("<{tool}: {chars} chars gone>");
        let mut history = vec![
            result("exec", 2_000),
            text(),
            result("exec", 2_000),
            text(),
            other(),
        ];
        assert_eq!(compact(&mut history, &config), 2);
        assert_eq!(history[0].content(), "<exec: 2,000 chars gone>");
        assert_eq!(compact(&mut history, &config), 0);
        assert!(config.is_placeholder("<exec: 2,000 chars gone>"));
        assert!(!config.is_placeholder("<exec: 2,000 chars>"));
    }

    #[test]
    fn the_default_placeholder_is_recognised_for_any_tool_and_size() {
        let config = CompactConfig::default();
        assert!(config.is_placeholder(&config.render("web_fetch", 1_234_567)));
        assert!(config.is_placeholder(&config.render("", 0)));
        assert!(!config.is_placeholder("[Earlier notes]"));
    }

    #[test]
    fn unknown_tools_are_never_cleared() {
        let mut history = vec![result("", 5_000), text(), result("", 5_000), text()];
        let config = CompactConfig::default().keep_recent(0).bulky_tool("");
        assert_eq!(compact(&mut history, &config), 0);
    }

    #[test]
    fn an_empty_history_is_fine() {
        let mut history: Vec<Message> = Vec::new();
        assert_eq!(compact(&mut history, &CompactConfig::default()), 0);
        assert_eq!(latest_batch_start(&history), 0);
    }
}

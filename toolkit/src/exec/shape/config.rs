//! [`ShapeConfig`]: how large a result may be and what happens when it is larger.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// The smallest `max_chars` honoured: below this the truncation marker and
/// the persistence reference would not fit, and a limit of zero would empty
/// every result.
const MIN_MAX_CHARS: usize = 200;

/// Limits for one tool result, applied by [`shape_output`](super::shape_output).
///
/// Every field has a default, so a config file may set only what it changes;
/// unknown fields are an error rather than a silently ignored typo.
///
/// ```
/// use toolsmith::exec::shape::ShapeConfig;
///
/// let config = ShapeConfig::default()
///     .max_chars(8_000)
///     .persist_dir(".tool-results");
/// assert_eq!(config.head_fraction, 0.6);
///
/// let from_file: ShapeConfig =
///     serde_json::from_str(r#"{"max_chars": 8000, "persist_dir": ".tool-results"}"#).unwrap();
/// assert_eq!(from_file, config);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
#[non_exhaustive]
pub struct ShapeConfig {
    /// Most characters (not bytes) of `content` the model receives.
    ///
    /// Default 16,000: about 4,000 tokens, room for a few hundred lines of
    /// code or a long command output, while several results still fit in one
    /// turn of a 128k context. Values below 200 count as 200: a smaller
    /// limit would leave no room for the truncation marker or the reference
    /// to a saved result.
    pub max_chars: usize,
    /// Share of a truncated result's budget kept from the head; the rest is
    /// kept from the tail.
    ///
    /// Default 0.6: the head says what the output is (a file's imports, a
    /// listing's first entries) and the tail holds how it ended (a command's
    /// error, a test summary); the head usually carries slightly more.
    pub head_fraction: f64,
    /// Where results over `max_chars` are saved in full; relative paths are
    /// resolved against the call's workspace.
    ///
    /// Default none (truncate instead): writing files into someone's
    /// workspace is opt-in. Choose a directory inside the workspace, so the
    /// model's `read_file` may open it, and ignored by version control.
    pub persist_dir: Option<PathBuf>,
    /// How many characters of a saved result are shown before the reference
    /// to its file.
    ///
    /// Default 2,000: enough to see what the result is and decide whether to
    /// read on, at an eighth of the default budget.
    pub persist_preview_chars: usize,
    /// The tool the reference tells the model to read a saved result with.
    ///
    /// Default `read_file`, the built-in; set it if the host names its
    /// reading tool differently.
    pub read_tool: String,
    /// Most characters of `display`, the text for the user.
    ///
    /// Default 100,000: a person's screen is not a context window, so this is
    /// larger, but a terminal or a chat message still has limits. Values
    /// below 200 count as 200, as for `max_chars`.
    pub max_display_chars: usize,
    /// Most characters of `structured` (measured as compact JSON) before it is
    /// dropped; none means the same as `max_chars`.
    ///
    /// Structured content is dropped rather than cut, since cut JSON is not
    /// JSON and a partial value may not match the tool's output schema. The
    /// text in `content` (truncated or saved) still carries the result, and
    /// some MCP clients hand `structuredContent` to the model, so letting it
    /// through would undo the limit on `content`.
    pub max_structured_chars: Option<usize>,
}

impl Default for ShapeConfig {
    fn default() -> Self {
        Self {
            max_chars: 16_000,
            head_fraction: 0.6,
            persist_dir: None,
            persist_preview_chars: 2_000,
            read_tool: "read_file".to_owned(),
            max_display_chars: 100_000,
            max_structured_chars: None,
        }
    }
}

impl ShapeConfig {
    /// The defaults described on each field.
    pub fn new() -> Self {
        Self::default()
    }

    /// Set [`max_chars`](Self::max_chars).
    pub fn max_chars(mut self, max_chars: usize) -> Self {
        self.max_chars = max_chars;
        self
    }

    /// Set [`head_fraction`](Self::head_fraction).
    pub fn head_fraction(mut self, head_fraction: f64) -> Self {
        self.head_fraction = head_fraction;
        self
    }

    /// Set [`persist_dir`](Self::persist_dir), enabling persistence.
    pub fn persist_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.persist_dir = Some(dir.into());
        self
    }

    /// Set [`persist_preview_chars`](Self::persist_preview_chars).
    pub fn persist_preview_chars(mut self, chars: usize) -> Self {
        self.persist_preview_chars = chars;
        self
    }

    /// Set [`read_tool`](Self::read_tool).
    pub fn read_tool(mut self, name: impl Into<String>) -> Self {
        self.read_tool = name.into();
        self
    }

    /// Set [`max_display_chars`](Self::max_display_chars).
    pub fn max_display_chars(mut self, chars: usize) -> Self {
        self.max_display_chars = chars;
        self
    }

    /// Set [`max_structured_chars`](Self::max_structured_chars).
    pub fn max_structured_chars(mut self, chars: usize) -> Self {
        self.max_structured_chars = Some(chars);
        self
    }

    /// `max_chars`, raised to [`MIN_MAX_CHARS`].
    #[inline]
    pub(super) fn content_limit(&self) -> usize {
        self.max_chars.max(MIN_MAX_CHARS)
    }

    /// `max_display_chars`, raised to [`MIN_MAX_CHARS`].
    pub(super) fn display_limit(&self) -> usize {
        self.max_display_chars.max(MIN_MAX_CHARS)
    }

    /// The limit for structured content.
    pub(super) fn structured_limit(&self) -> usize {
        self.max_structured_chars
            .unwrap_or_else(|| self.content_limit())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_config_file_means_the_defaults() {
        let config: ShapeConfig = serde_json::from_str("{}").unwrap();
        assert_eq!(config, ShapeConfig::default());
    }

    #[test]
    fn a_misspelled_field_is_an_error() {
        assert!(serde_json::from_str::<ShapeConfig>(r#"{"max_char": 10}"#).is_err());
    }

    #[test]
    fn tiny_limits_are_raised_to_the_minimum() {
        let config = ShapeConfig::new().max_chars(0).max_display_chars(1);
        // The value the docs of `max_chars` and `max_display_chars` state.
        assert_eq!(MIN_MAX_CHARS, 200);
        assert_eq!(config.content_limit(), 200);
        assert_eq!(config.display_limit(), 200);
        assert_eq!(config.structured_limit(), 200);
        assert_eq!(config.max_structured_chars(7).structured_limit(), 7);
    }
}

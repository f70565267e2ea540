//! Errors as types. Every message is written for the model that made the call:
//! it says what was wrong and what to send instead.
//!
//! Each type and variant has one meaning. Arguments the model must fix are
//! [`PayloadError`] (not an object of named arguments),
//! [`InvalidArguments`] (refused by the tool's schema or argument type, every
//! problem at once) and [`ToolError::InvalidArguments`] (refused by the tool
//! itself); [`CallError`] says which step refused a call, and [`ToolError`]
//! why a tool that was found and given valid arguments did not produce its
//! output.

use std::fmt;
use std::time::Duration;

use serde_json::Value;

/// One thing wrong with a call's arguments, found by validation or by
/// binding them to the tool's argument type; [`InvalidArguments`] lists them.
#[derive(Debug, Clone, PartialEq)]
pub struct ArgumentError {
    /// Where the problem is, as `meta.flags[0]`; empty for the arguments object itself.
    pub path: String,
    /// What is wrong there.
    pub problem: Problem,
}

impl ArgumentError {
    /// An error at `path`.
    pub fn new(path: impl Into<String>, problem: Problem) -> Self {
        Self {
            path: path.into(),
            problem,
        }
    }

    /// An error at `path` said in words: `message` follows the path, as in
    /// `command must not use sudo`.
    pub fn other(path: impl Into<String>, message: impl Into<String>) -> Self {
        Self::new(path, Problem::Other(message.into()))
    }

    /// The path as the message names it; a huge key (a model can send one)
    /// is cut so it cannot bloat the error text.
    fn subject(&self) -> std::borrow::Cow<'_, str> {
        const MAX_CHARS: usize = 120;
        if self.path.is_empty() {
            return "arguments".into();
        }
        match self.path.char_indices().nth(MAX_CHARS) {
            Some((cut, _)) => format!("{}…", &self.path[..cut]).into(),
            None => self.path.as_str().into(),
        }
    }
}

/// What is wrong at an [`ArgumentError`]'s path.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Problem {
    /// A required value is absent.
    Missing,
    /// The value has the wrong JSON type.
    WrongType {
        /// What the schema wants, e.g. `integer` or `string or null`.
        expected: String,
        /// What was sent, e.g. `string "abc"`.
        found: String,
    },
    /// A number below `minimum` (or at it, when exclusive).
    TooSmall {
        /// The bound.
        limit: serde_json::Number,
        /// Whether the bound itself is excluded.
        exclusive: bool,
    },
    /// A number above `maximum` (or at it, when exclusive).
    TooLarge {
        /// The bound.
        limit: serde_json::Number,
        /// Whether the bound itself is excluded.
        exclusive: bool,
    },
    /// A number that is not a multiple of `multipleOf`.
    NotMultipleOf(serde_json::Number),
    /// A number that is NaN or infinite.
    NotFinite,
    /// A string shorter than `minLength` characters.
    TooShort(u64),
    /// A string longer than `maxLength` characters.
    TooLong(u64),
    /// An array with fewer than `minItems` items.
    TooFewItems(u64),
    /// An array with more than `maxItems` items.
    TooManyItems(u64),
    /// An array whose items must be unique but are not.
    DuplicateItems,
    /// An object with fewer than `minProperties` entries.
    TooFewProperties(u64),
    /// An object with more than `maxProperties` entries.
    TooManyProperties(u64),
    /// A value outside the allowed set.
    NotOneOf(Vec<Value>),
    /// A string that does not match `pattern`.
    PatternMismatch(String),
    /// A parameter the tool does not have.
    Unknown {
        /// The closest parameter name, when exactly one is close.
        suggestion: Option<String>,
        /// The names that are allowed here.
        allowed: Vec<String>,
    },
    /// A value that fits none of the alternatives a schema allows.
    NoAlternative(Vec<String>),
    /// The value passed validation but could not be turned into the tool's type.
    Deserialize(String),
    /// Anything else, said in words.
    Other(String),
}

impl fmt::Display for ArgumentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = self.subject();
        match &self.problem {
            Problem::Missing => write!(f, "{at} is required"),
            Problem::WrongType { expected, found } => {
                write!(f, "{at} should be {expected}, got {found}")
            }
            Problem::TooSmall { limit, exclusive } => {
                write!(
                    f,
                    "{at} must be {} {limit}",
                    if *exclusive { ">" } else { ">=" }
                )
            }
            Problem::TooLarge { limit, exclusive } => {
                write!(
                    f,
                    "{at} must be {} {limit}",
                    if *exclusive { "<" } else { "<=" }
                )
            }
            Problem::NotMultipleOf(n) => write!(f, "{at} must be a multiple of {n}"),
            Problem::NotFinite => write!(f, "{at} must be a finite number"),
            Problem::TooShort(n) => {
                write!(f, "{at} must be at least {n} {}", plural(*n, "character"))
            }
            Problem::TooLong(n) => {
                write!(f, "{at} must be at most {n} {}", plural(*n, "character"))
            }
            Problem::TooFewItems(n) => {
                write!(f, "{at} must have at least {n} {}", plural(*n, "item"))
            }
            Problem::TooManyItems(n) => {
                write!(f, "{at} must have at most {n} {}", plural(*n, "item"))
            }
            Problem::DuplicateItems => write!(f, "{at} must not repeat items"),
            Problem::TooFewProperties(n) => {
                write!(f, "{at} must have at least {n} {}", plural(*n, "entry"))
            }
            Problem::TooManyProperties(n) => {
                write!(f, "{at} must have at most {n} {}", plural(*n, "entry"))
            }
            Problem::NotOneOf(allowed) => {
                write!(f, "{at} must be one of ")?;
                for (i, v) in allowed.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{v}")?;
                }
                Ok(())
            }
            Problem::PatternMismatch(p) => write!(f, "{at} must match the pattern {p}"),
            Problem::Unknown {
                suggestion,
                allowed,
            } => {
                // A top-level key is a parameter; a nested one is a field of some value.
                if self.path.contains(['.', '[']) {
                    write!(f, "{at} is not a known field")?;
                } else {
                    write!(f, "{at} is not a parameter of this tool")?;
                }
                match suggestion {
                    Some(s) => write!(f, "; did you mean '{s}'?"),
                    None if allowed.is_empty() => write!(f, "; it takes no parameters here"),
                    None => write!(f, "; allowed: {}", allowed.join(", ")),
                }
            }
            Problem::NoAlternative(reasons) => {
                write!(f, "{at} matches none of the allowed forms")?;
                if !reasons.is_empty() {
                    write!(f, " ({})", reasons.join("; or "))?;
                }
                Ok(())
            }
            Problem::Deserialize(msg) => write!(f, "{at}: {msg}"),
            Problem::Other(msg) => write!(f, "{at} {msg}"),
        }
    }
}

impl std::error::Error for ArgumentError {}

fn plural(n: u64, word: &str) -> String {
    match (n, word) {
        (1, _) => word.to_owned(),
        (_, "entry") => "entries".to_owned(),
        _ => format!("{word}s"),
    }
}

/// Why a payload could not even be read as named arguments, before any
/// parameter is looked at; the model should send a JSON object.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PayloadError {
    /// A string that is not JSON, even after the repairs that need no
    /// guess: why, at which line and column, and that line with a caret
    /// under the place.
    #[error("arguments are not valid JSON ({0}); send a JSON object of named parameters")]
    NotJson(String),
    /// JSON that is not an object: an array, a number, a bare string.
    #[error("arguments must be a JSON object of named parameters, got {0}")]
    NotAnObject(String),
}

/// The arguments did not fit the tool's schema, or could not be bound to its
/// argument type: every problem at once, for the model to fix.
///
/// Found by the registry before the tool runs. A tool that finds its
/// arguments wrong itself says so with [`ToolError::InvalidArguments`].
#[derive(Debug, Clone, PartialEq)]
pub struct InvalidArguments {
    /// The tool that was called.
    pub tool: String,
    /// Every problem found, in schema order.
    pub errors: Vec<ArgumentError>,
}

impl fmt::Display for InvalidArguments {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Invalid parameters for tool '{}': ", self.tool)?;
        for (i, e) in self.errors.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for InvalidArguments {}

/// A call named a tool that is not in the registry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownTool {
    /// The name the model used.
    pub name: String,
    /// The registered tool it most likely meant, when exactly one is close.
    pub suggestion: Option<String>,
    /// The registered names, sorted as in the definitions.
    pub available: Vec<String>,
}

impl fmt::Display for UnknownTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Tool '{}' not found.", self.name)?;
        if let Some(s) = &self.suggestion {
            write!(f, " Did you mean '{s}'?")?;
        }
        if self.available.is_empty() {
            f.write_str(" No tools are available.")
        } else {
            write!(f, " Available: {}", self.available.join(", "))
        }
    }
}

impl std::error::Error for UnknownTool {}

/// Why a tool that was found, and given arguments that fit its schema, did
/// not produce its output: returned by [`Tool::call`](crate::Tool::call)
/// and by the runner around it. Each variant is one cause, and
/// [`CallError::to_model_text`] tells the model what to do about it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ToolError {
    /// The tool could not do what was asked, and says why in words the
    /// model can act on: a file that does not exist, a server that refused
    /// or did not answer. The error of a `#[tool]` function that is not a
    /// `ToolError` becomes this, with its text.
    #[error("{0}")]
    Failed(String),
    /// The model's arguments are wrong in a way the schema cannot say
    /// (`chat_id is required when sending to another channel`), or do not
    /// fit the type [`Arguments::parse`](crate::Arguments::parse) reads them
    /// as; the text says what to send instead, and the model is told to fix
    /// the arguments and call again. Only for what the model sent: a request
    /// the tool's own code built wrong is [`Internal`](Self::Internal).
    #[error("invalid arguments: {0}")]
    InvalidArguments(String),
    /// The tool needs a value of the named type in its context, which the
    /// host did not put there: the host's setup is incomplete.
    #[error(
        "this tool is not set up: it needs a `{0}` in its context, which the host did not provide"
    )]
    MissingState(&'static str),
    /// The call ran longer than its timeout and was stopped.
    #[error("the tool did not finish within {} and was stopped", humantime(*.0))]
    Timeout(Duration),
    /// The call was cancelled, through its context's token, before it finished.
    #[error("the call was cancelled before it finished")]
    Cancelled,
    /// The user did not approve the call; the reason, when one was given.
    #[error("the user did not approve this call{}", reason_suffix(.0))]
    Denied(Option<String>),
    /// The tool panicked; the panic was contained, and this is its message.
    #[error("the tool crashed: {0}")]
    Panicked(String),
    /// A failure that may pass if the same call is made again later: a
    /// network error, a rate limit, a service that is down. `kind` says
    /// which ([`ErrorKind::Network`], [`ErrorKind::RateLimited`] or
    /// [`ErrorKind::Unavailable`]); a retry layer retries these for tools
    /// that are safe to call twice.
    #[error("{message}")]
    Transient {
        /// What kind of passing failure.
        kind: ErrorKind,
        /// What happened, in words the model can act on.
        message: String,
        /// When the other side said to try again, if it did.
        retry_after: Option<Duration>,
    },
    /// A fault in the program rather than in the model's request: in the
    /// host, in a tool's own code (a malformed request it built, arguments
    /// bound to another type than it reads) or in this crate. The model is
    /// told that its arguments are not the cause.
    #[error("internal error: {0}")]
    Internal(String),
}

impl ToolError {
    /// [`Failed`](Self::Failed): the tool could not do what was asked, and says why.
    pub fn failed(message: impl fmt::Display) -> Self {
        Self::Failed(message.to_string())
    }

    /// [`Internal`](Self::Internal): a fault in the program, not the model's doing.
    pub fn internal(message: impl fmt::Display) -> Self {
        Self::Internal(message.to_string())
    }

    /// A network failure (a refused or reset connection, a DNS error) that
    /// may pass on a later try.
    pub fn network(message: impl fmt::Display) -> Self {
        Self::transient(ErrorKind::Network, message, None)
    }

    /// The other side said to slow down, and when to try again if it said.
    pub fn rate_limited(message: impl fmt::Display, retry_after: Option<Duration>) -> Self {
        Self::transient(ErrorKind::RateLimited, message, retry_after)
    }

    /// A service that is down or overloaded for now (an HTTP 502, 503 or 504).
    pub fn unavailable(message: impl fmt::Display) -> Self {
        Self::transient(ErrorKind::Unavailable, message, None)
    }

    fn transient(
        kind: ErrorKind,
        message: impl fmt::Display,
        retry_after: Option<Duration>,
    ) -> Self {
        Self::Transient {
            kind,
            message: message.to_string(),
            retry_after,
        }
    }

    /// The kind of failure, for a host's logs, retries and metrics.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Self::Failed(_) => ErrorKind::Failed,
            Self::InvalidArguments(_) => ErrorKind::InvalidArguments,
            Self::MissingState(_) => ErrorKind::Setup,
            Self::Timeout(_) => ErrorKind::Timeout,
            Self::Cancelled => ErrorKind::Cancelled,
            Self::Denied(_) => ErrorKind::Denied,
            Self::Panicked(_) => ErrorKind::Panicked,
            Self::Transient { kind, .. } => *kind,
            Self::Internal(_) => ErrorKind::Internal,
        }
    }
}

/// What kind of failure a call ended in: one name per cause, the same on
/// every path a call can take, for logs, metrics (`error.type` on a call's
/// span), retries and the host's decisions. A result that reports a failure
/// carries it under [`meta::ERROR_KIND`](crate::exec::meta::ERROR_KIND).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ErrorKind {
    /// No tool by the name the model used.
    UnknownTool,
    /// The arguments were not an object, did not fit the schema, or were
    /// refused by the tool or a validator: the model can fix them.
    InvalidArguments,
    /// The call was refused before it ran: a hook, a limit, a budget.
    Refused,
    /// The tool could not do what was asked.
    Failed,
    /// A network failure that may pass.
    Network,
    /// The other side asked to slow down.
    RateLimited,
    /// A service that is down or overloaded for now.
    Unavailable,
    /// The call ran past its timeout.
    Timeout,
    /// The call was cancelled.
    Cancelled,
    /// A person or the host's policy did not approve the call.
    Denied,
    /// The tool panicked.
    Panicked,
    /// The host did not give the tool what it needs.
    Setup,
    /// A fault in the program.
    Internal,
}

impl ErrorKind {
    /// The snake_case name, as `error.type` and the metadata carry it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::UnknownTool => "unknown_tool",
            Self::InvalidArguments => "invalid_arguments",
            Self::Refused => "refused",
            Self::Failed => "failed",
            Self::Network => "network",
            Self::RateLimited => "rate_limited",
            Self::Unavailable => "unavailable",
            Self::Timeout => "timeout",
            Self::Cancelled => "cancelled",
            Self::Denied => "denied",
            Self::Panicked => "panicked",
            Self::Setup => "setup",
            Self::Internal => "internal",
        }
    }

    /// Whether the same call may succeed if made again later, unchanged.
    pub fn is_transient(self) -> bool {
        matches!(
            self,
            Self::Network | Self::RateLimited | Self::Unavailable | Self::Timeout
        )
    }

    /// Whether the model caused the failure and can fix it by changing the call.
    pub fn is_model_correctable(self) -> bool {
        matches!(self, Self::UnknownTool | Self::InvalidArguments)
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

fn reason_suffix(reason: &Option<String>) -> String {
    match reason {
        Some(r) if !r.is_empty() => format!(": {r}"),
        _ => String::new(),
    }
}

fn humantime(d: Duration) -> String {
    let ms = d.as_millis();
    if ms.is_multiple_of(1000) {
        format!("{} s", ms / 1000)
    } else {
        format!("{ms} ms")
    }
}

/// Why a call through the registry did not produce the tool's own output:
/// one variant for each part of the call that can refuse it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum CallError {
    /// No tool by that name.
    #[error("{0}")]
    UnknownTool(UnknownTool),
    /// The payload was not an object of named arguments.
    #[error("Invalid arguments for tool '{tool}': {error}")]
    InvalidPayload {
        /// The tool that was called.
        tool: String,
        /// What was wrong with the payload.
        error: PayloadError,
    },
    /// The arguments did not fit the tool's schema or argument type.
    #[error("{0}")]
    InvalidArguments(InvalidArguments),
    /// The call was refused before the tool ran, by a hook, a limit or a
    /// budget of the pipeline; the reason is shown to the model.
    #[error("the call to '{tool}' was refused before it ran: {reason}")]
    Refused {
        /// The tool that was called, as the model named it.
        tool: String,
        /// Why.
        reason: String,
    },
    /// The tool ran, or was stopped, and did not produce its output.
    #[error("Tool '{tool}' failed: {error}")]
    Tool {
        /// The tool that was called.
        tool: String,
        /// What went wrong.
        error: ToolError,
    },
}

impl CallError {
    /// The failure of the tool named `name` (as the registry filed it).
    #[cold]
    pub(crate) fn tool_failed(name: &str, error: ToolError) -> Self {
        Self::Tool {
            tool: name.to_owned(),
            error,
        }
    }

    /// The kind of failure.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Self::UnknownTool(_) => ErrorKind::UnknownTool,
            Self::InvalidPayload { .. } | Self::InvalidArguments(_) => ErrorKind::InvalidArguments,
            Self::Refused { .. } => ErrorKind::Refused,
            Self::Tool { error, .. } => error.kind(),
        }
    }

    /// The text a model reads as the tool result: the error and what to do next.
    pub fn to_model_text(&self) -> String {
        let hint = match self {
            Self::UnknownTool(_) => "Call one of the available tools by its exact name.",
            Self::InvalidPayload { .. } | Self::InvalidArguments(_) => {
                "Fix the arguments as described and call the tool again."
            }
            Self::Refused { .. } => "Try a different approach.",
            Self::Tool { error, .. } => match error {
                ToolError::Denied(_) | ToolError::Cancelled => {
                    "Do not retry this call unless the user asks; continue without it."
                }
                ToolError::InvalidArguments(_) => {
                    "Fix the arguments as described and call the tool again."
                }
                ToolError::MissingState(_) | ToolError::Internal(_) => {
                    "This is not caused by your arguments; tell the user, or use another tool."
                }
                _ => "Analyze the error above and try a different approach.",
            },
        };
        format!("Error: {self}\n\n[{hint}]")
    }
}

/// A registry could not take a tool.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RegistryError {
    /// Two tools with one name.
    #[error(
        "a tool named '{name}' is already registered (from {existing}); the one from {added} needs another name: tool names must be unique"
    )]
    Duplicate {
        /// The contested name.
        name: String,
        /// Where the tool that holds the name came from.
        existing: String,
        /// Where the tool that was refused came from, so that two linked
        /// `#[tool]`s of one name are both named by their modules.
        added: String,
    },
    /// A name models cannot call.
    #[error("invalid tool name '{0}': use 1 to 64 characters from A-Z, a-z, 0-9, '_' and '-'")]
    InvalidName(String),
    /// `replace()` was given a tool outside the group it replaces, which a
    /// later `replace()` of that group could then never remove.
    #[error("tool '{0}' is outside the group this replace() swaps; add it with register() instead")]
    NotInGroup(String),
    /// An input example the tool's own schema refuses.
    #[error("input example {index} of tool '{tool}' does not fit its input schema: {reason}")]
    InvalidExample {
        /// The tool.
        tool: String,
        /// The example's position in `ToolSpec::input_examples`, from 0.
        index: usize,
        /// What validation found.
        reason: String,
    },
    /// A schema the registry cannot use.
    #[error("tool '{tool}' has an unusable input schema: {reason}")]
    InvalidSchema {
        /// The tool.
        tool: String,
        /// Why the schema was refused.
        reason: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn messages_read_like_nanobot() {
        let e = InvalidArguments {
            tool: "exec".into(),
            errors: vec![ArgumentError::new(
                "timeout",
                Problem::TooLarge {
                    limit: 600.into(),
                    exclusive: false,
                },
            )],
        };
        assert_eq!(
            e.to_string(),
            "Invalid parameters for tool 'exec': timeout must be <= 600"
        );
        let text = CallError::InvalidArguments(e).to_model_text();
        assert!(
            text.starts_with("Error: Invalid parameters for tool 'exec': timeout must be <= 600")
        );
        assert!(text.contains("call the tool again"));
    }

    #[test]
    fn unknown_tool_lists_and_suggests() {
        let e = UnknownTool {
            name: "readFile".into(),
            suggestion: Some("read_file".into()),
            available: vec!["read_file".into(), "write_file".into()],
        };
        assert_eq!(
            e.to_string(),
            "Tool 'readFile' not found. Did you mean 'read_file'? Available: read_file, write_file"
        );
    }

    #[test]
    fn root_errors_name_the_arguments() {
        let e = ArgumentError::new("", Problem::NotOneOf(vec![json!("a"), json!(1)]));
        assert_eq!(e.to_string(), "arguments must be one of \"a\", 1");
    }

    #[test]
    fn a_huge_key_is_cut_in_the_message() {
        let key = "k".repeat(100_000);
        let text = ArgumentError::new(key, Problem::Missing).to_string();
        assert!(text.len() < 200, "{}", text.len());
        assert!(text.ends_with("… is required"));
    }

    #[test]
    fn plurals() {
        assert_eq!(
            ArgumentError::new("name", Problem::TooShort(1)).to_string(),
            "name must be at least 1 character"
        );
        assert_eq!(
            ArgumentError::new("tags", Problem::TooManyItems(3)).to_string(),
            "tags must have at most 3 items"
        );
    }

    #[test]
    fn timeout_says_how_long() {
        assert_eq!(
            ToolError::Timeout(Duration::from_millis(1500)).to_string(),
            "the tool did not finish within 1500 ms and was stopped"
        );
        assert_eq!(
            ToolError::Timeout(Duration::from_secs(30)).to_string(),
            "the tool did not finish within 30 s and was stopped"
        );
    }
}

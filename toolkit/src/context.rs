//! [`ToolContext`]: what a tool knows about the call it serves.

use std::any::{Any, TypeId, type_name};
use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use tokio_util::sync::CancellationToken;

use crate::error::ToolError;

/// Where a call comes from and what it may use: the workspace, the chat it
/// serves, a cancellation token, and shared state looked up by type.
///
/// Cloning is cheap (one reference count), so a context can be handed to
/// spawned work.
///
/// ```
/// use toolsmith::ToolContext;
///
/// struct Database { url: String }
///
/// let ctx = ToolContext::new()
///     .with_workspace("/srv/agent")
///     .with_channel("telegram", "42")
///     .with_state(Database { url: "postgres://localhost".into() });
///
/// assert_eq!(ctx.chat_id(), Some("42"));
/// assert_eq!(ctx.state::<Database>().unwrap().url, "postgres://localhost");
/// assert!(ctx.state::<String>().is_none());
/// ```
#[derive(Clone, Default)]
pub struct ToolContext {
    inner: Arc<Inner>,
}

#[derive(Clone, Default)]
struct Inner {
    workspace: Option<PathBuf>,
    channel: Option<String>,
    chat_id: Option<String>,
    message_id: Option<String>,
    session_key: Option<String>,
    agent_id: Option<String>,
    call_id: Option<String>,
    cancellation: CancellationToken,
    progress: Option<Arc<dyn ProgressReporter>>,
    extensions: HashMap<TypeId, Arc<dyn Any + Send + Sync>>,
}

impl ToolContext {
    /// An empty context with a fresh cancellation token.
    pub fn new() -> Self {
        Self::default()
    }

    fn edit(&mut self) -> &mut Inner {
        Arc::make_mut(&mut self.inner)
    }

    /// Set the workspace directory file tools resolve paths in.
    pub fn with_workspace(mut self, path: impl Into<PathBuf>) -> Self {
        self.edit().workspace = Some(path.into());
        self
    }

    /// Set the channel (e.g. `telegram`) and the chat within it.
    pub fn with_channel(mut self, channel: impl Into<String>, chat_id: impl Into<String>) -> Self {
        let inner = self.edit();
        inner.channel = Some(channel.into());
        inner.chat_id = Some(chat_id.into());
        self
    }

    /// Set the id of the message being answered.
    pub fn with_message_id(mut self, id: impl Into<String>) -> Self {
        self.edit().message_id = Some(id.into());
        self
    }

    /// Set the key of the conversation session.
    pub fn with_session_key(mut self, key: impl Into<String>) -> Self {
        self.edit().session_key = Some(key.into());
        self
    }

    /// Set the id of the agent making the call: one host may run several
    /// agents (a main one and the subagents it spawns), and a tool that
    /// keeps state per agent, or logs, tells them apart by this id.
    pub fn with_agent_id(mut self, id: impl Into<String>) -> Self {
        self.edit().agent_id = Some(id.into());
        self
    }

    /// Set the id of the call being run (a [`Runner`](crate::exec::Runner)
    /// sets it for each call), so that work a tool starts can be matched
    /// with its call when it ends (see [`LateResults`](crate::LateResults)).
    pub fn with_call_id(mut self, id: impl Into<String>) -> Self {
        self.edit().call_id = Some(id.into());
        self
    }

    /// Use this cancellation token (for example a child of the batch's token).
    pub fn with_cancellation(mut self, token: CancellationToken) -> Self {
        self.edit().cancellation = token;
        self
    }

    /// Send the progress a tool reports to `reporter` (an MCP server sends it
    /// on to its client as progress notifications).
    pub fn with_progress_reporter(mut self, reporter: Arc<dyn ProgressReporter>) -> Self {
        self.edit().progress = Some(reporter);
        self
    }

    /// Report how far the call has got; nothing happens when nobody listens.
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use toolsmith::{Progress, ProgressReporter, ToolContext};
    ///
    /// #[derive(Default)]
    /// struct Log(Mutex<Vec<f64>>);
    /// impl ProgressReporter for Log {
    ///     fn report(&self, progress: Progress) {
    ///         self.0.lock().unwrap().push(progress.progress);
    ///     }
    /// }
    ///
    /// let log = Arc::new(Log::default());
    /// let ctx = ToolContext::new().with_progress_reporter(log.clone());
    /// ctx.report_progress(Progress::new(1.0).with_total(3.0));
    /// ToolContext::new().report_progress(Progress::new(2.0)); // nobody listens
    /// assert_eq!(*log.0.lock().unwrap(), [1.0]);
    /// ```
    pub fn report_progress(&self, progress: Progress) {
        if let Some(reporter) = &self.inner.progress {
            reporter.report(progress);
        }
    }

    /// Whether someone listens to progress reports.
    pub fn reports_progress(&self) -> bool {
        self.inner.progress.is_some()
    }

    /// Add shared state that tools ask for by type; replaces a value of the same type.
    pub fn with_state<T: Send + Sync + 'static>(self, value: T) -> Self {
        self.with_shared_state(Arc::new(value))
    }

    /// Add shared state already behind an `Arc`.
    pub fn with_shared_state<T: Send + Sync + 'static>(mut self, value: Arc<T>) -> Self {
        self.edit().extensions.insert(TypeId::of::<T>(), value);
        self
    }

    /// The workspace directory, if one is set.
    pub fn workspace(&self) -> Option<&Path> {
        self.inner.workspace.as_deref()
    }

    /// The channel the call came from.
    pub fn channel(&self) -> Option<&str> {
        self.inner.channel.as_deref()
    }

    /// The chat within the channel.
    pub fn chat_id(&self) -> Option<&str> {
        self.inner.chat_id.as_deref()
    }

    /// The message being answered.
    pub fn message_id(&self) -> Option<&str> {
        self.inner.message_id.as_deref()
    }

    /// The conversation session.
    pub fn session_key(&self) -> Option<&str> {
        self.inner.session_key.as_deref()
    }

    /// The agent making the call, when the host said.
    ///
    /// ```
    /// use toolsmith::ToolContext;
    ///
    /// let ctx = ToolContext::new().with_agent_id("researcher-2");
    /// assert_eq!(ctx.agent_id(), Some("researcher-2"));
    /// assert_eq!(ToolContext::new().agent_id(), None);
    /// ```
    pub fn agent_id(&self) -> Option<&str> {
        self.inner.agent_id.as_deref()
    }

    /// The id of the call being run, when the caller gave one.
    pub fn call_id(&self) -> Option<&str> {
        self.inner.call_id.as_deref()
    }

    /// The token that is cancelled when the call should stop.
    pub fn cancellation(&self) -> &CancellationToken {
        &self.inner.cancellation
    }

    /// Whether the call has been cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancellation.is_cancelled()
    }

    /// Shared state of type `T`, if the host provided it.
    pub fn state<T: Send + Sync + 'static>(&self) -> Option<&T> {
        self.inner
            .extensions
            .get(&TypeId::of::<T>())
            .and_then(|value| value.downcast_ref::<T>())
    }

    /// Shared state of type `T` as an `Arc`, for work that outlives the borrow.
    pub fn shared_state<T: Send + Sync + 'static>(&self) -> Option<Arc<T>> {
        self.inner
            .extensions
            .get(&TypeId::of::<T>())
            .and_then(|value| Arc::clone(value).downcast::<T>().ok())
    }

    /// Shared state of type `T`, or an error the model can relay.
    pub fn require<T: Send + Sync + 'static>(&self) -> Result<&T, ToolError> {
        self.state::<T>()
            .ok_or(ToolError::MissingState(type_name::<T>()))
    }
}

impl fmt::Debug for ToolContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let inner = &self.inner;
        f.debug_struct("ToolContext")
            .field("workspace", &inner.workspace)
            .field("channel", &inner.channel)
            .field("chat_id", &inner.chat_id)
            .field("message_id", &inner.message_id)
            .field("session_key", &inner.session_key)
            .field("cancelled", &inner.cancellation.is_cancelled())
            .field("reports_progress", &inner.progress.is_some())
            .field("state_types", &inner.extensions.len())
            .finish()
    }
}

/// How far a call has got: `progress` of `total` (when known), with a message.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Progress {
    /// Work done so far; grows with every report.
    pub progress: f64,
    /// The total amount of work, when known.
    pub total: Option<f64>,
    /// What is happening now, for a person.
    pub message: Option<String>,
}

impl Progress {
    /// Progress with no total and no message.
    pub fn new(progress: f64) -> Self {
        Self {
            progress,
            total: None,
            message: None,
        }
    }

    /// Set the total.
    pub fn with_total(mut self, total: f64) -> Self {
        self.total = Some(total);
        self
    }

    /// Set the message.
    pub fn with_message(mut self, message: impl Into<String>) -> Self {
        self.message = Some(message.into());
        self
    }
}

/// Receives the progress tools report through [`ToolContext::report_progress`].
pub trait ProgressReporter: Send + Sync + 'static {
    /// One report. Called on the tool's task: must not block.
    fn report(&self, progress: Progress);
}

/// A type a tool can take by reference to have it injected from the context.
///
/// `&ToolContext` and `&CancellationToken` implement it. Any other
/// `&T` parameter of a `#[tool]` function is looked up as shared state
/// ([`ToolContext::state`]); implement this trait to inject something else
/// (a value derived from the context, say).
pub trait FromContext: Send + Sync + 'static {
    /// Borrow `Self` from the context.
    fn from_context(ctx: &ToolContext) -> Result<&Self, ToolError>;
}

impl FromContext for ToolContext {
    fn from_context(ctx: &ToolContext) -> Result<&Self, ToolError> {
        Ok(ctx)
    }
}

impl FromContext for CancellationToken {
    fn from_context(ctx: &ToolContext) -> Result<&Self, ToolError> {
        Ok(ctx.cancellation())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builders_do_not_disturb_clones() {
        let base = ToolContext::new().with_channel("cli", "1");
        let other = base.clone().with_channel("slack", "2").with_message_id("m");
        assert_eq!(base.channel(), Some("cli"));
        assert_eq!(base.message_id(), None);
        assert_eq!(other.channel(), Some("slack"));
        assert_eq!(other.message_id(), Some("m"));
    }

    #[test]
    fn missing_state_names_the_type() {
        let err = ToolContext::new().require::<u32>().unwrap_err();
        assert_eq!(err, ToolError::MissingState("u32"));
        assert!(err.to_string().contains("`u32`"));
    }

    #[test]
    fn clones_share_the_cancellation_token() {
        let ctx = ToolContext::new();
        let clone = ctx.clone();
        ctx.cancellation().cancel();
        assert!(clone.is_cancelled());
    }

    #[test]
    fn shared_state_outlives_the_borrow() {
        let ctx = ToolContext::new().with_state(String::from("hello"));
        let arc = ctx.shared_state::<String>().unwrap();
        drop(ctx);
        assert_eq!(*arc, "hello");
    }
}

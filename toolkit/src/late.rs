//! Results that arrive after their call returned.
//!
//! A tool that starts long work (a subagent, a build) answers at once with
//! [`ToolOutput::started`], and delivers the outcome later through the
//! [`LateResults`] it finds in the context's state. The host holds the
//! [`LateReceiver`] and hands each [`LateResult`] to the model as a new
//! message (for example as a user turn that quotes the call id).

use tokio::sync::mpsc;

use crate::output::ToolOutput;

/// The outcome of work a call started, delivered after the call returned.
#[derive(Debug, Clone, PartialEq)]
pub struct LateResult {
    /// The id of the call that started the work, when the caller gave one
    /// (a [`Runner`](crate::exec::Runner) always does; see
    /// [`ToolContext::call_id`](crate::ToolContext::call_id)).
    pub call_id: Option<String>,
    /// The tool that started it.
    pub tool: String,
    /// The outcome.
    pub output: ToolOutput,
}

/// Where tools deliver late results: put it in the context with
/// [`ToolContext::with_state`](crate::ToolContext::with_state).
///
/// ```
/// use toolsmith::{LateResult, LateResults, ToolOutput};
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let (late, mut receiver) = LateResults::channel(16);
/// late.deliver(LateResult {
///     call_id: Some("call_7".into()),
///     tool: "build".into(),
///     output: ToolOutput::text("build finished"),
/// })
/// .await
/// .unwrap();
/// let result = receiver.recv().await.unwrap();
/// assert_eq!(result.output.content, "build finished");
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct LateResults {
    sender: mpsc::Sender<LateResult>,
}

/// The host's end of [`LateResults`].
#[derive(Debug)]
pub struct LateReceiver {
    receiver: mpsc::Receiver<LateResult>,
}

/// The host dropped its [`LateReceiver`]: nobody will read the result.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("late result of '{}' not delivered: nobody receives late results", .0.tool)]
pub struct NotDelivered(pub LateResult);

impl LateResults {
    /// A sender for tools and a receiver for the host. At most `capacity`
    /// results wait unread; a tool delivering beyond that waits for room,
    /// so a host that stops reading slows the work down instead of
    /// growing memory without bound.
    pub fn channel(capacity: usize) -> (Self, LateReceiver) {
        let (sender, receiver) = mpsc::channel(capacity.max(1));
        (Self { sender }, LateReceiver { receiver })
    }

    /// Deliver a result to the host.
    pub async fn deliver(&self, result: LateResult) -> Result<(), NotDelivered> {
        self.sender
            .send(result)
            .await
            .map_err(|mpsc::error::SendError(result)| NotDelivered(result))
    }
}

impl LateReceiver {
    /// The next late result; `None` once every [`LateResults`] is dropped
    /// and all were read.
    pub async fn recv(&mut self) -> Option<LateResult> {
        self.receiver.recv().await
    }

    /// A result that is already waiting, without waiting for one.
    pub fn try_recv(&mut self) -> Option<LateResult> {
        self.receiver.try_recv().ok()
    }
}

//! `spawn`: start a subagent in the background through the host's [`Spawner`].

use std::collections::HashMap;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use futures_util::FutureExt;
use tokio::task::AbortHandle;
use toolsmith::{LateResult, LateResults, ToolContext, ToolError, ToolOutput, async_trait, tool};

use super::files::fresh_id;
use super::message::{MessageSink, OutboundMessage};

/// The chat a background task reports back to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    /// The channel, such as `telegram`.
    pub channel: String,
    /// The chat within the channel.
    pub chat_id: String,
}

/// A background task to start.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SpawnRequest {
    /// What the subagent should do, in words.
    pub task: String,
    /// A short name for the task, shown to the user.
    pub label: String,
    /// Where the result goes.
    pub origin: Origin,
    /// The scheduled job whose turn asked for this task, if one did. Give
    /// the subagent's turns a [`FiredJob`](crate::agent::cron::FiredJob)
    /// with it, so that a job cannot schedule more jobs through a subagent.
    pub fired_job: Option<String>,
    /// The id of the `spawn` call that asked, when the caller gave one:
    /// the late result is delivered under it.
    pub call_id: Option<String>,
}

/// Why a task could not be started.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SpawnError(pub String);

/// Starts background tasks for the agent. Implement it to run subagents your
/// way; [`TaskSpawner`] runs them on tokio and reports through a [`MessageSink`].
#[async_trait]
pub trait Spawner: Send + Sync + 'static {
    /// Start `request` and return its id at once, without waiting for it.
    async fn spawn(&self, request: SpawnRequest) -> Result<String, SpawnError>;
}

/// The state the `spawn` tool needs: the spawner it starts tasks with.
#[derive(Clone)]
pub struct Subagents {
    spawner: Arc<dyn Spawner>,
}

impl Subagents {
    /// Tasks are started by `spawner`.
    pub fn new(spawner: impl Spawner) -> Self {
        Self {
            spawner: Arc::new(spawner),
        }
    }

    /// Tasks are started by a spawner that is already shared.
    pub fn from_arc(spawner: Arc<dyn Spawner>) -> Self {
        Self { spawner }
    }
}

impl std::fmt::Debug for Subagents {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Subagents")
    }
}

/// The future a [`TaskSpawner`]'s work function returns: the result text, or why it failed.
pub type TaskFuture = Pin<Box<dyn Future<Output = Result<String, String>> + Send>>;

type Work = dyn Fn(SpawnRequest) -> TaskFuture + Send + Sync;

/// The most tasks a [`TaskSpawner`] runs at once: each is a model's whole
/// turn, and a model spawning in a loop would start thousands. A finished
/// task counts until its report is handed to the [`MessageSink`], so a
/// host that stops reading holds at most this many results.
pub const MAX_RUNNING: usize = 32;

/// The ready-made [`Spawner`]: runs the host's async work function for each
/// request on tokio and delivers the result (or the failure) to the chat the
/// request came from, through a [`MessageSink`].
///
/// ```
/// use toolsmith::ToolContext;
/// use toolsmith_builtins::agent::{ChannelSink, Subagents, TaskSpawner};
///
/// let (sink, _outbox) = ChannelSink::new(16);
/// let spawner = TaskSpawner::new(sink, |request| async move {
///     // Run a subagent on `request.task` here.
///     Ok(format!("done: {}", request.task))
/// });
/// let ctx = ToolContext::new().with_state(Subagents::new(spawner));
/// # let _ = ctx;
/// ```
#[derive(Clone)]
pub struct TaskSpawner {
    work: Arc<Work>,
    sink: Arc<dyn MessageSink>,
    late: Option<LateResults>,
    running: Arc<Mutex<HashMap<String, AbortHandle>>>,
}

impl TaskSpawner {
    /// Run `work` for each request; results go to `sink`.
    pub fn new<F, Fut>(sink: impl MessageSink, work: F) -> Self
    where
        F: Fn(SpawnRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<String, String>> + Send + 'static,
    {
        Self {
            work: Arc::new(move |request| Box::pin(work(request)) as TaskFuture),
            sink: Arc::new(sink),
            late: None,
            running: Arc::default(),
        }
    }

    /// Also deliver each outcome to `late`, as the late result of the
    /// `spawn` call that started the task, for a host that hands results
    /// to the model itself (the chat message is still sent).
    pub fn with_late_results(mut self, late: LateResults) -> Self {
        self.late = Some(late);
        self
    }

    /// The ids of the tasks still running.
    pub fn running(&self) -> Vec<String> {
        let mut ids: Vec<String> = self.lock().keys().cloned().collect();
        ids.sort();
        ids
    }

    /// Stop a running task; its result is never delivered. Returns whether it was running.
    pub fn cancel(&self, id: &str) -> bool {
        match self.lock().remove(id) {
            Some(handle) => {
                handle.abort();
                true
            }
            None => false,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, AbortHandle>> {
        self.running.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl std::fmt::Debug for TaskSpawner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskSpawner")
            .field("running", &self.running())
            .finish()
    }
}

#[async_trait]
impl Spawner for TaskSpawner {
    async fn spawn(&self, request: SpawnRequest) -> Result<String, SpawnError> {
        let runtime = tokio::runtime::Handle::try_current()
            .map_err(|_| SpawnError("no tokio runtime to run the task on".into()))?;
        let mut running = self.lock();
        if running.len() >= MAX_RUNNING {
            return Err(SpawnError(format!(
                "{MAX_RUNNING} tasks are running, as many as run at once; wait for one to finish"
            )));
        }
        let id = fresh_id(|id| running.contains_key(id));
        let work = Arc::clone(&self.work);
        let sink = Arc::clone(&self.sink);
        let late = self.late.clone();
        let registry = Arc::clone(&self.running);
        let task_id = id.clone();
        // The task waits for the lock we hold, so it cannot finish (and
        // remove its entry) before the entry is inserted below.
        let task = runtime.spawn(async move {
            // A panic in the host's work is reported like a failure, not lost.
            let outcome = AssertUnwindSafe(work(request.clone()))
                .catch_unwind()
                .await
                .unwrap_or_else(|panic| {
                    toolsmith::discard_panic(panic);
                    Err("the task crashed".to_owned())
                });
            // Counted as running until its report is handed over: a host
            // that stops reading would otherwise let finished tasks, each
            // holding its result, pile up past the bound. A cancel while it
            // waits stops the delivery.
            let still_wanted = registry
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .contains_key(&task_id);
            if still_wanted {
                if let Some(late) = late {
                    let output = match &outcome {
                        Ok(result) => ToolOutput::text(result.clone()),
                        Err(error) => ToolOutput::error(format!("Error: {error}")),
                    };
                    let result = LateResult {
                        call_id: request.call_id.clone(),
                        tool: "spawn".into(),
                        output,
                    };
                    // A host that stopped reading late results still gets
                    // the chat message below.
                    let _ = late.deliver(result).await;
                }
                let _ = sink.send(report(&request, outcome)).await;
            }
            registry
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .remove(&task_id);
        });
        running.insert(id.clone(), task.abort_handle());
        Ok(id)
    }
}

/// The message that tells the origin chat how a task ended.
fn report(request: &SpawnRequest, outcome: Result<String, String>) -> OutboundMessage {
    let (status, body) = match outcome {
        Ok(result) => ("completed", format!("Result:\n{result}")),
        Err(error) => ("failed", format!("Error:\n{error}")),
    };
    let content = format!(
        "[Subagent '{}' {status}]\n\nTask: {}\n\n{body}",
        request.label, request.task
    );
    OutboundMessage::new(&request.origin.channel, &request.origin.chat_id, content)
}

/// A label made from the task: its first 30 characters.
fn default_label(task: &str) -> String {
    let task = task.split_whitespace().collect::<Vec<_>>().join(" ");
    match task.char_indices().nth(30) {
        Some((cut, _)) => format!("{}...", &task[..cut]),
        None => task,
    }
}

/// Spawn a subagent to handle a task in the background. Use this for complex
/// or time-consuming work that can run independently; you can go on with the
/// conversation. The subagent reports to this chat when it is done.
///
/// The result says the task started ([`ToolOutput::started`]); its outcome
/// comes later, to the chat and, when the spawner has them, to the host's
/// [`LateResults`].
#[tool(category = messaging)]
pub async fn spawn(
    ctx: &ToolContext,
    subagents: &Subagents,
    /// The task for the subagent, self-contained: it does not see this conversation.
    #[arg(min_length = 1, max_length = 20000)]
    task: String,
    /// A short label for the task, shown to the user.
    #[arg(max_length = 100)]
    label: Option<String>,
) -> Result<ToolOutput, ToolError> {
    if task.trim().is_empty() {
        return Err(ToolError::InvalidArguments("task is blank".into()));
    }
    let label = label
        .filter(|l| !l.trim().is_empty())
        .unwrap_or_else(|| default_label(&task));
    // A call from no chat at all is a local run: report to the console, as nanobot does.
    let origin = Origin {
        channel: ctx.channel().unwrap_or("cli").to_owned(),
        chat_id: ctx.chat_id().unwrap_or("direct").to_owned(),
    };
    let request = SpawnRequest {
        task,
        label: label.clone(),
        origin,
        fired_job: ctx
            .state::<crate::agent::cron::FiredJob>()
            .map(|fired| fired.job_id.clone()),
        call_id: ctx.call_id().map(str::to_owned),
    };
    let id = subagents
        .spawner
        .spawn(request)
        .await
        .map_err(|e| ToolError::failed(format!("the task was not started: {e}")))?;
    Ok(ToolOutput::started(format!(
        "Subagent [{label}] started (id: {id}). I'll notify you when it completes."
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_tasks_get_a_short_label() {
        assert_eq!(default_label("sum  the\nnumbers"), "sum the numbers");
        let long = "é".repeat(40);
        assert_eq!(default_label(&long), format!("{}...", "é".repeat(30)));
    }
}

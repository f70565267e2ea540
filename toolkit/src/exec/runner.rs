//! [`Runner`]: run the tool calls of one model turn.
//!
//! Calls are taken in order. A run of consecutive concurrency-safe calls
//! (read-only, not exclusive) runs at the same time; any other call runs
//! alone. Each call goes through the runner's [`Pipeline`]: the registry's,
//! with the runner's hooks and approval added. Every status change is
//! recorded in the [`BatchState`] and offered to a [`Checkpoint`].

use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use futures_util::StreamExt;

use super::approval::{ApprovalPolicy, Approver, RiskTable};
use super::hooks::Hook;
use super::lifecycle::{BatchState, CallStatus, ToolCall};
use super::shape::{ShapeConfig, meta};
use crate::context::ToolContext;
use crate::error::{CallError, ErrorKind, ToolError};
use crate::output::ToolOutput;
use crate::pipeline::{Approval, ApprovalMark, Call, Hooks, Phase, Pipeline, error_output};
use crate::registry::ToolRegistry;

/// Receives the batch state after every status change, to persist it.
pub trait Checkpoint: Send + Sync {
    /// Save (or send, or log) the state. Called with the runner's lock held: keep it short.
    fn save(&self, state: &BatchState);
}

impl<F: Fn(&BatchState) + Send + Sync> Checkpoint for F {
    fn save(&self, state: &BatchState) {
        self(state)
    }
}

/// Runs batches of tool calls against a registry.
///
/// ```
/// use std::sync::Arc;
/// use toolsmith::exec::{Runner, ToolCall, CallStatus};
/// use toolsmith::{ToolContext, ToolRegistry, tool};
/// use serde_json::json;
///
/// /// Add two numbers.
/// #[tool(read_only)]
/// async fn add(a: i64, b: i64) -> i64 { a + b }
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let registry = Arc::new(ToolRegistry::new());
/// registry.register(AddTool).unwrap();
/// let runner = Runner::new(registry);
/// let state = runner
///     .run(vec![ToolCall::new("call_1", "add", json!({"a": 1, "b": "2"}))], &ToolContext::new())
///     .await;
/// assert_eq!(state.calls[0].status, CallStatus::Success);
/// assert_eq!(state.calls[0].output.as_ref().unwrap().content, "3");
/// # }
/// ```
#[derive(Clone)]
pub struct Runner {
    registry: Arc<ToolRegistry>,
    /// The pipeline the runner's own layers are added to.
    base: Pipeline,
    /// `base` with the hooks and approval: what calls run through.
    pipeline: Pipeline,
    max_concurrency: usize,
    policy: ApprovalPolicy,
    risks: RiskTable,
    approver: Option<Arc<dyn Approver>>,
    hooks: Hooks,
    checkpoint: Option<Arc<dyn Checkpoint>>,
}

impl Runner {
    /// A runner with the registry's pipeline (a 60 s default timeout and
    /// default shaping unless the registry's says otherwise) and no approval.
    pub fn new(registry: Arc<ToolRegistry>) -> Self {
        let base = registry.pipeline().clone();
        Self {
            registry,
            pipeline: base.clone(),
            base,
            max_concurrency: 16,
            policy: ApprovalPolicy::AlwaysAllow,
            risks: RiskTable::default(),
            approver: None,
            hooks: Hooks::new(),
            checkpoint: None,
        }
    }

    /// Run calls through `pipeline` (its timeout, shaping and layers); the
    /// runner's hooks and approval are added to it.
    pub fn with_pipeline(mut self, pipeline: Pipeline) -> Self {
        self.base = pipeline;
        self.rebuild()
    }

    /// The pipeline calls run through, hooks and approval included.
    pub fn pipeline(&self) -> &Pipeline {
        &self.pipeline
    }

    fn rebuild(mut self) -> Self {
        let mut pipeline = self.base.clone();
        if !self.hooks.is_empty() {
            pipeline = pipeline.layer(self.hooks.clone());
        }
        if self.policy != ApprovalPolicy::AlwaysAllow || self.approver.is_some() {
            let approver = self
                .approver
                .clone()
                .unwrap_or_else(|| Arc::new(super::approval::NoApprover));
            let approval = Approval::with_arc(self.policy.clone(), approver)
                .with_risk_table(self.risks.clone());
            pipeline = pipeline.layer(approval);
        }
        self.pipeline = pipeline;
        self
    }

    /// The timeout for tools that do not set their own.
    pub fn with_default_timeout(mut self, timeout: Duration) -> Self {
        self.base = self.base.with_timeout(timeout);
        self.rebuild()
    }

    /// How many concurrency-safe calls may run at once (at least 1).
    pub fn with_max_concurrency(mut self, max: usize) -> Self {
        self.max_concurrency = max.max(1);
        self
    }

    /// When calls need approval.
    pub fn with_policy(mut self, policy: ApprovalPolicy) -> Self {
        self.policy = policy;
        self.rebuild()
    }

    /// Risk overrides by tool name.
    pub fn with_risk_table(mut self, risks: RiskTable) -> Self {
        self.risks = risks;
        self.rebuild()
    }

    /// Who approves calls the policy holds back (nobody until set: such
    /// calls are denied).
    pub fn with_approver(mut self, approver: impl Approver + 'static) -> Self {
        self.approver = Some(Arc::new(approver));
        self.rebuild()
    }

    /// Add a hook; hooks run in the order they were added.
    pub fn with_hook(mut self, hook: impl Hook + 'static) -> Self {
        self.hooks = self.hooks.with(hook);
        self.rebuild()
    }

    /// How results are cut or persisted for the model.
    pub fn with_shape(mut self, shape: ShapeConfig) -> Self {
        self.base = self.base.with_shape(shape);
        self.rebuild()
    }

    /// Where to send the batch state after every change.
    pub fn with_checkpoint(mut self, checkpoint: impl Checkpoint + 'static) -> Self {
        self.checkpoint = Some(Arc::new(checkpoint));
        self
    }

    /// The registry calls are looked up in.
    pub fn registry(&self) -> &Arc<ToolRegistry> {
        &self.registry
    }

    /// Run the calls of one model turn; the returned state holds every result, in call order.
    pub async fn run(&self, calls: Vec<ToolCall>, ctx: &ToolContext) -> BatchState {
        let mut state = BatchState::new(calls);
        self.resume(&mut state, ctx).await;
        state
    }

    /// Run whatever in `state` can still run: pending calls, and calls
    /// awaiting approval (asked again). Final calls are never re-run;
    /// interrupted calls wait for [`BatchState::retry`] or [`BatchState::cancel`].
    /// Cancelling `ctx`'s token stops the calls that are running and cancels
    /// the ones that have not started.
    pub async fn resume(&self, state: &mut BatchState, ctx: &ToolContext) {
        // The state is edited in place, so a `resume` that is dropped half
        // way (a host timeout, a panicking approver) leaves every change so
        // far in the caller's state, as a checkpoint would have recorded it.
        let batch = Batch {
            runner: self,
            state: Mutex::new(state),
        };
        for group in batch.groups() {
            if ctx.is_cancelled() {
                batch.cancel_unstarted(&group);
                continue;
            }
            futures_util::stream::iter(group.into_iter().map(|index| batch.process(index, ctx)))
                .buffer_unordered(self.max_concurrency)
                .collect::<Vec<()>>()
                .await;
        }
    }
}

/// One `resume` in progress: the state behind a lock, shared by concurrent calls.
struct Batch<'r, 's> {
    runner: &'r Runner,
    state: Mutex<&'s mut BatchState>,
}

impl Batch<'_, '_> {
    fn read<T>(&self, f: impl FnOnce(&BatchState) -> T) -> T {
        f(&self.state.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Change the state and offer the result to the checkpoint.
    fn update<T>(&self, f: impl FnOnce(&mut BatchState) -> T) -> T {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let result = f(&mut state);
        if let Some(checkpoint) = &self.runner.checkpoint {
            checkpoint.save(&state);
        }
        result
    }

    /// Move a call on; the runner only takes legal steps, and a refused
    /// step would mean a bug here: the state is better left as it was than
    /// corrupted.
    fn step(&self, index: usize, status: CallStatus) {
        self.update(|state| {
            let _ = state.transition(index, status);
        });
    }

    /// Indexes of runnable calls, grouped: consecutive concurrency-safe calls
    /// together, every other call alone. An unknown tool counts as safe: it
    /// will only produce an error.
    fn groups(&self) -> Vec<Vec<usize>> {
        let state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let mut groups: Vec<Vec<usize>> = Vec::new();
        let mut open_safe_group = false;
        for (index, record) in state.calls.iter().enumerate() {
            if !matches!(
                record.status,
                CallStatus::Pending | CallStatus::AwaitingApproval
            ) {
                continue;
            }
            let safe = self
                .runner
                .registry
                .get(&record.call.name)
                .is_none_or(|tool| concurrency_safe(tool.as_ref()));
            match groups.last_mut() {
                Some(group) if safe && open_safe_group => group.push(index),
                _ => groups.push(vec![index]),
            }
            open_safe_group = safe;
        }
        groups
    }

    fn cancel_unstarted(&self, group: &[usize]) {
        for &index in group {
            let tool = self.read(|s| s.calls[index].call.name.clone());
            let output = error_output(&CallError::Tool {
                tool,
                error: ToolError::Cancelled,
            });
            // Both pending and awaiting_approval may become cancelled.
            self.finish(index, CallStatus::Cancelled, output);
        }
    }

    fn finish(&self, index: usize, status: CallStatus, output: ToolOutput) {
        self.update(|state| {
            if state.transition(index, status).is_ok() {
                state.calls[index].output = Some(output);
            }
        });
    }

    /// Run one call through the pipeline, recording each step it takes.
    async fn process(&self, index: usize, ctx: &ToolContext) {
        let (
            ToolCall {
                id,
                name,
                arguments,
            },
            status,
            approved,
        ) = self.read(|s| {
            let record = &s.calls[index];
            (record.call.clone(), record.status, record.approved)
        });
        let mark = if approved {
            ApprovalMark::Approved
        } else if status == CallStatus::AwaitingApproval {
            ApprovalMark::Asked
        } else {
            ApprovalMark::NotAsked
        };
        let started = OnceLock::new();
        let observer = |phase: Phase| match phase {
            // A call resumed while awaiting approval is awaiting it already.
            Phase::AwaitingApproval if status == CallStatus::Pending => {
                self.step(index, CallStatus::AwaitingApproval);
            }
            Phase::AwaitingApproval => {}
            Phase::Approved => self.update(|state| {
                if state.transition(index, CallStatus::Pending).is_ok() {
                    state.calls[index].approved = true;
                }
            }),
            Phase::Executing => {
                let _ = started.set(Instant::now());
                self.step(index, CallStatus::Executing);
            }
        };
        // The call's own token: a timeout cancels it without touching the batch.
        let call_ctx = ctx
            .clone()
            .with_cancellation(ctx.cancellation().child_token())
            .with_call_id(id.as_str());
        let pipeline = &self.runner.pipeline;
        let mut call = Call::new(&self.runner.registry, &id, &name, arguments, &call_ctx)
            .with_approval(mark)
            .with_observer(&observer);
        let result = pipeline.run(&mut call).await;
        let casts = call.casts().to_vec();
        drop(call);
        // A success says nothing of a failure's kind, whatever its metadata holds.
        let kind = match &result {
            Err(error) => Some(error.kind()),
            Ok(output) if output.is_error => output.metadata.read(&meta::ERROR_KIND),
            Ok(_) => None,
        };
        if result.is_err() {
            call_ctx.cancellation().cancel();
        }
        let mut output = pipeline.finish(result, &name, &id, ctx).await;
        if let Some(started) = started.get() {
            output
                .metadata
                .write(&meta::DURATION_MS, &(started.elapsed().as_millis() as u64));
        }
        if !casts.is_empty() {
            output.metadata.write(&meta::CASTS, &casts);
        }
        let now = self.read(|s| s.calls[index].status);
        let status = match (now, kind) {
            // The only way out of awaiting approval besides approval.
            (CallStatus::AwaitingApproval, _) => CallStatus::Cancelled,
            (_, Some(ErrorKind::Cancelled | ErrorKind::Denied)) => CallStatus::Cancelled,
            _ if output.is_error => CallStatus::Error,
            (CallStatus::Pending, None) => {
                // Answered without running the tool (a cached result).
                self.step(index, CallStatus::Executing);
                CallStatus::Success
            }
            _ => CallStatus::Success,
        };
        self.finish(index, status, output);
    }
}

/// Whether `tool` says it may run beside others. Its `spec()` is its own
/// code: one that panics runs alone, and the panic stays here.
fn concurrency_safe(tool: &dyn crate::Tool) -> bool {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        tool.spec().concurrency_safe()
    })) {
        Ok(safe) => safe,
        Err(panic) => {
            crate::panics::discard(panic);
            false
        }
    }
}

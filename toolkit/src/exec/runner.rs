//! [`Runner`]: run the tool calls of one model turn.
//!
//! Calls are taken in order. A run of consecutive concurrency-safe calls
//! (read-only, not exclusive) runs at the same time; any other call runs
//! alone. Each call goes: before-hooks -> prepare (cast, validate, bind) ->
//! approval -> execute (timeout, cancellation, panic containment) ->
//! after-hooks -> shaping. Every status change is recorded in the
//! [`BatchState`] and offered to a [`Checkpoint`].

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use tracing::Instrument;

use super::approval::{
    ApprovalDecision, ApprovalPolicy, ApprovalRequest, Approver, NoApprover, RiskTable, warning_for,
};
use super::guard::run_guarded;
use super::hooks::{BeforeCall, CallInfo, Hook};
use super::lifecycle::{BatchState, CallStatus, ToolCall};
use super::shape::{ShapeConfig, meta, shape_output};
use crate::context::ToolContext;
use crate::error::{CallError, ToolError};
use crate::output::ToolOutput;
use crate::registry::{PreparedCall, ToolRegistry};
use crate::tool::Tool;

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
    default_timeout: Duration,
    max_concurrency: usize,
    policy: ApprovalPolicy,
    risks: RiskTable,
    approver: Arc<dyn Approver>,
    hooks: Vec<Arc<dyn Hook>>,
    shape: ShapeConfig,
    checkpoint: Option<Arc<dyn Checkpoint>>,
}

impl Runner {
    /// A runner with a 60 s default timeout, no approval, and default shaping.
    pub fn new(registry: Arc<ToolRegistry>) -> Self {
        Self {
            registry,
            default_timeout: Duration::from_secs(60),
            max_concurrency: 16,
            policy: ApprovalPolicy::AlwaysAllow,
            risks: RiskTable::default(),
            approver: Arc::new(NoApprover),
            hooks: Vec::new(),
            shape: ShapeConfig::default(),
            checkpoint: None,
        }
    }

    /// The timeout for tools that do not set their own.
    pub fn with_default_timeout(mut self, timeout: Duration) -> Self {
        self.default_timeout = timeout;
        self
    }

    /// How many concurrency-safe calls may run at once (at least 1).
    pub fn with_max_concurrency(mut self, max: usize) -> Self {
        self.max_concurrency = max.max(1);
        self
    }

    /// When calls need approval.
    pub fn with_policy(mut self, policy: ApprovalPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// Risk overrides by tool name.
    pub fn with_risk_table(mut self, risks: RiskTable) -> Self {
        self.risks = risks;
        self
    }

    /// Who approves calls the policy holds back.
    pub fn with_approver(mut self, approver: impl Approver + 'static) -> Self {
        self.approver = Arc::new(approver);
        self
    }

    /// Add a hook; hooks run in the order they were added.
    pub fn with_hook(mut self, hook: impl Hook + 'static) -> Self {
        self.hooks.push(Arc::new(hook));
        self
    }

    /// How results are cut or persisted for the model.
    pub fn with_shape(mut self, shape: ShapeConfig) -> Self {
        self.shape = shape;
        self
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
            let mut ready = Vec::with_capacity(group.len());
            for index in group {
                if let Some(prepared) = batch.admit(index, ctx).await {
                    ready.push((index, prepared));
                }
            }
            futures_util::stream::iter(
                ready
                    .into_iter()
                    .map(|(index, prepared)| batch.execute(index, prepared, ctx)),
            )
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

    fn record(&self, index: usize, status: CallStatus, output: Option<ToolOutput>) {
        self.update(|state| {
            // The runner only takes legal steps; a refused step would mean a
            // bug here, and the state is better left as it was than corrupted.
            if state.transition(index, status).is_ok() && output.is_some() {
                state.calls[index].output = output;
            }
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
                .is_none_or(|tool| tool.spec().concurrency_safe());
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
            let text = CallError::Tool {
                tool,
                error: ToolError::Cancelled,
            }
            .to_model_text();
            // Both pending and awaiting_approval may become cancelled.
            self.record(index, CallStatus::Cancelled, Some(ToolOutput::error(text)));
        }
    }

    /// Hooks, checks and approval. Returns the call ready to run, or `None`
    /// when it was refused (its record then holds the reason).
    async fn admit(&self, index: usize, ctx: &ToolContext) -> Option<PreparedCall> {
        let (
            ToolCall {
                id,
                name,
                mut arguments,
            },
            status,
            approved,
        ) = self.read(|s| {
            let record = &s.calls[index];
            (record.call.clone(), record.status, record.approved)
        });
        let tool = self.runner.registry.get(&name);
        let spec = tool.as_deref().map(Tool::spec);
        let info = CallInfo {
            call_id: &id,
            tool: &name,
            spec,
        };
        for hook in &self.runner.hooks {
            if let BeforeCall::Refuse(reason) = hook.before(info, &mut arguments).await {
                let text = format!(
                    "Error: the call to '{name}' was refused before it ran: {reason}\n\n[Try a different approach.]"
                );
                self.refuse(index, status, CallStatus::Error, text);
                return None;
            }
        }
        // Policy and risk go by the tool's own name, whatever alias the
        // model used for it.
        let canonical = spec.map_or(name.as_str(), |spec| spec.name.as_ref());
        let risk = self.runner.risks.risk_of(canonical, spec);
        // A call a person already approved (before an interruption) is
        // not asked about again.
        let needs_approval = !approved
            && (status == CallStatus::AwaitingApproval
                || self.runner.policy.requires(canonical, risk));
        let checked = match self.runner.registry.check(&name, arguments) {
            Ok(checked) => checked,
            Err(error) => {
                self.refuse(index, status, CallStatus::Error, error.to_model_text());
                return None;
            }
        };
        if needs_approval {
            if status == CallStatus::Pending {
                self.record(index, CallStatus::AwaitingApproval, None);
            }
            let request = ApprovalRequest {
                call_id: id,
                tool: canonical.to_owned(),
                arguments: checked.arguments().clone(),
                risk,
                warning: warning_for(canonical, risk, spec),
            };
            let decision = tokio::select! {
                _ = ctx.cancellation().cancelled() => None,
                decision = self.runner.approver.approve(&request) => Some(decision),
            };
            let refusal = match decision {
                Some(ApprovalDecision::Approve) => None,
                Some(ApprovalDecision::Deny(reason)) => Some(ToolError::Denied(reason)),
                // Nobody said no: the batch was stopped while asking.
                None => Some(ToolError::Cancelled),
            };
            match refusal {
                None => self.update(|state| {
                    if state.transition(index, CallStatus::Pending).is_ok() {
                        state.calls[index].approved = true;
                    }
                }),
                Some(error) => {
                    let text = CallError::Tool { tool: name, error }.to_model_text();
                    self.record(index, CallStatus::Cancelled, Some(ToolOutput::error(text)));
                    return None;
                }
            }
        }
        let prepared = match checked.bind() {
            Ok(prepared) => prepared,
            Err(error) => {
                // Approved calls are pending again; others never left it.
                self.refuse(
                    index,
                    CallStatus::Pending,
                    CallStatus::Error,
                    error.to_model_text(),
                );
                return None;
            }
        };
        Some(prepared)
    }

    /// Refuse a call before it ran; a call awaiting approval goes through
    /// cancelled, the only way out of that status besides approval.
    fn refuse(&self, index: usize, status: CallStatus, to: CallStatus, text: String) {
        let to = if status == CallStatus::AwaitingApproval {
            CallStatus::Cancelled
        } else {
            to
        };
        self.record(index, to, Some(ToolOutput::error(text)));
    }

    /// Shape a result; when it may be written to a file, off the async threads.
    async fn shape(
        &self,
        output: ToolOutput,
        name: &str,
        id: &str,
        ctx: &ToolContext,
    ) -> ToolOutput {
        let config = &self.runner.shape;
        if config.persist_dir.is_none() {
            return shape_output(output, name, id, config, ctx.workspace());
        }
        let (config, name, id) = (config.clone(), name.to_owned(), id.to_owned());
        let workspace = ctx.workspace().map(ToOwned::to_owned);
        let fallback = ToolOutput::error(format!(
            "Error: the result of '{name}' could not be shaped."
        ));
        tokio::task::spawn_blocking(move || {
            shape_output(output, &name, &id, &config, workspace.as_deref())
        })
        .await
        .unwrap_or(fallback)
    }

    async fn execute(&self, index: usize, prepared: PreparedCall, ctx: &ToolContext) {
        let (id, name) = self.update(|s| {
            // pending -> executing; admit() left the call pending.
            let _ = s.transition(index, CallStatus::Executing);
            let call = &s.calls[index].call;
            (call.id.clone(), call.name.clone())
        });
        let tool = Arc::clone(prepared.tool());
        let spec = tool.spec();
        let casts = prepared.casts().to_vec();
        let span = tracing::info_span!(
            "tool_call",
            tool = %name,
            call_id = %id,
            casts = ?casts.iter().map(ToString::to_string).collect::<Vec<_>>(),
            outcome = tracing::field::Empty,
            duration_ms = tracing::field::Empty,
        );
        // The call's own token: a timeout cancels it without touching the batch.
        let call_ctx = ctx
            .clone()
            .with_cancellation(ctx.cancellation().child_token())
            .with_call_id(id.as_str());
        let timeout = spec.timeout.unwrap_or(self.runner.default_timeout);
        let started = Instant::now();
        let result = run_guarded(prepared, &call_ctx, timeout)
            .instrument(span.clone())
            .await;
        let elapsed = started.elapsed();
        let (status, output) = match result {
            Ok(output) if output.is_error => (CallStatus::Error, output),
            Ok(output) => (CallStatus::Success, output),
            Err(error) => {
                let status = if error == ToolError::Cancelled {
                    CallStatus::Cancelled
                } else {
                    CallStatus::Error
                };
                let text = CallError::Tool {
                    tool: name.clone(),
                    error,
                }
                .to_model_text();
                (status, ToolOutput::error(text))
            }
        };
        span.record("outcome", status.as_str());
        span.record("duration_ms", elapsed.as_millis() as u64);
        let mut output = output;
        let info = CallInfo {
            call_id: &id,
            tool: &name,
            spec: Some(spec),
        };
        for hook in &self.runner.hooks {
            hook.after(info, &mut output).await;
        }
        let mut output = self.shape(output, &name, &id, ctx).await;
        output
            .metadata
            .write(&meta::DURATION_MS, &(elapsed.as_millis() as u64));
        if !casts.is_empty() {
            output.metadata.write(&meta::CASTS, &casts);
        }
        self.record(index, status, Some(output));
    }
}

//! The pipeline's defaults (timeout, cancellation, panic containment,
//! shaping) on `registry.call` and the runner, and the layers that ship
//! with the core (hooks, validators, approval), with real tools.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};
use toolsmith::exec::{
    ApprovalDecision, ApprovalPolicy, ApprovalRequest, Approver, BeforeCall, CallInfo, CallStatus,
    Hook, Runner, ShapeConfig, ToolCall, meta,
};
use toolsmith::pipeline::{Approval, Call, Hooks, Layer, Next, Pipeline, Stage, Validators};
use toolsmith::{ArgumentError, CallError, ErrorKind, ToolContext, ToolOutput, ToolRegistry, tool};

/// Sleep for a while, then say so.
#[tool(read_only, timeout = "100ms")]
async fn slow_nap() -> String {
    tokio::time::sleep(Duration::from_secs(30)).await;
    "woke".into()
}

/// Sleep for the given milliseconds.
#[tool(read_only)]
async fn nap(ms: u64) -> String {
    tokio::time::sleep(Duration::from_millis(ms)).await;
    format!("slept {ms}")
}

/// Crash.
#[tool]
async fn crash() -> String {
    panic!("the tool broke")
}

/// Write a lot.
#[tool(read_only)]
async fn flood(chars: usize) -> String {
    "y".repeat(chars)
}

/// Yield once, then answer.
#[tool(read_only)]
async fn yielding() -> String {
    tokio::task::yield_now().await;
    "done".into()
}

static SYNC_STOPPED: AtomicBool = AtomicBool::new(false);

/// A synchronous tool that waits for its token, up to 10 s.
#[tool(timeout = "100ms")]
fn patient(ctx: &ToolContext) -> String {
    for _ in 0..1000 {
        if ctx.is_cancelled() {
            SYNC_STOPPED.store(true, Ordering::SeqCst);
            return "stopped".into();
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    "finished".into()
}

/// Delete a file (not really).
#[tool(destructive)]
async fn remove(path: String) -> String {
    format!("removed {path}")
}

fn registry(pipeline: Pipeline) -> Arc<ToolRegistry> {
    let registry = ToolRegistry::new().with_pipeline(pipeline);
    registry.register(SlowNapTool).unwrap();
    registry.register(NapTool).unwrap();
    registry.register(CrashTool).unwrap();
    registry.register(FloodTool).unwrap();
    registry.register(YieldingTool).unwrap();
    registry.register(PatientTool).unwrap();
    registry.register(RemoveTool).unwrap();
    Arc::new(registry)
}

async fn run_one(runner: &Runner, name: &str, args: Value) -> (CallStatus, ToolOutput) {
    let state = runner
        .run(vec![ToolCall::new("c1", name, args)], &ToolContext::new())
        .await;
    let record = &state.calls[0];
    (record.status, record.output.clone().unwrap())
}

#[tokio::test]
async fn a_tool_past_its_timeout_is_stopped_with_the_same_text_on_both_paths() {
    let registry = registry(Pipeline::new());
    let direct = registry
        .call("slow_nap", json!({}), &ToolContext::new())
        .await;
    assert!(direct.is_error);
    assert_eq!(
        direct.content,
        "Error: Tool 'slow_nap' failed: the tool did not finish within 100 ms and was stopped\n\n[Analyze the error above and try a different approach.]"
    );
    assert_eq!(
        direct.metadata.read(&meta::ERROR_KIND),
        Some(ErrorKind::Timeout)
    );
    let (status, through_runner) =
        run_one(&Runner::new(Arc::clone(&registry)), "slow_nap", json!({})).await;
    assert_eq!(status, CallStatus::Error);
    assert_eq!(through_runner.content, direct.content);
}

#[tokio::test]
async fn the_pipeline_timeout_applies_to_tools_that_set_none() {
    let registry = registry(Pipeline::new().with_timeout(Duration::from_millis(50)));
    let out = registry
        .call("nap", json!({"ms": 20_000}), &ToolContext::new())
        .await;
    assert!(
        out.content.contains("did not finish within 50 ms"),
        "{}",
        out.content
    );
    let quick = registry
        .call("nap", json!({"ms": 1}), &ToolContext::new())
        .await;
    assert_eq!(quick.content, "slept 1");
}

#[tokio::test]
async fn a_cancelled_context_stops_the_call() {
    let registry = registry(Pipeline::new());
    let ctx = ToolContext::new();
    let token = ctx.cancellation().clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(30)).await;
        token.cancel();
    });
    let out = registry.call("nap", json!({"ms": 20_000}), &ctx).await;
    assert_eq!(
        out.metadata.read(&meta::ERROR_KIND),
        Some(ErrorKind::Cancelled)
    );
    // Already cancelled: the tool does not start.
    let out = registry.call("nap", json!({"ms": 1}), &ctx).await;
    assert!(out.content.contains("cancelled"), "{}", out.content);
}

#[tokio::test]
async fn a_panic_is_an_error_for_that_call_alone() {
    let registry = registry(Pipeline::new());
    let out = registry.call("crash", json!({}), &ToolContext::new()).await;
    assert!(
        out.content.contains("the tool crashed: the tool broke"),
        "{}",
        out.content
    );
    assert_eq!(
        out.metadata.read(&meta::ERROR_KIND),
        Some(ErrorKind::Panicked)
    );
}

#[tokio::test]
async fn results_are_bounded_by_the_pipeline_shaping() {
    let registry = registry(Pipeline::new().with_shape(ShapeConfig::default().max_chars(500)));
    let out = registry
        .call("flood", json!({"chars": 100_000}), &ToolContext::new())
        .await;
    assert!(out.content.chars().count() <= 500);
    assert!(out.metadata.read(&meta::TRUNCATED).is_some());
}

#[tokio::test]
async fn a_synchronous_tool_past_its_timeout_is_told_to_stop() {
    SYNC_STOPPED.store(false, Ordering::SeqCst);
    let registry = registry(Pipeline::new());
    let out = registry
        .call("patient", json!({}), &ToolContext::new())
        .await;
    assert_eq!(
        out.metadata.read(&meta::ERROR_KIND),
        Some(ErrorKind::Timeout)
    );
    for _ in 0..500 {
        if SYNC_STOPPED.load(Ordering::SeqCst) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the body never saw its token cancelled");
}

#[test]
fn a_runtime_without_timers_runs_calls_without_a_timeout() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let registry = registry(Pipeline::new());
    let out = runtime.block_on(registry.call("yielding", json!({}), &ToolContext::new()));
    assert_eq!(out.content, "done");
}

/// Counts the questions it is asked, and says yes.
#[derive(Default, Clone)]
struct CountingApprover(Arc<AtomicUsize>);

#[async_trait]
impl Approver for CountingApprover {
    async fn approve(&self, _request: &ApprovalRequest) -> ApprovalDecision {
        self.0.fetch_add(1, Ordering::SeqCst);
        ApprovalDecision::Approve
    }
}

#[tokio::test]
async fn validators_refuse_before_anyone_is_asked() {
    let asked = CountingApprover::default();
    let pipeline = Pipeline::new()
        .layer(Approval::new(ApprovalPolicy::AlwaysRequire, asked.clone()))
        .layer(Validators::new().check("remove", |args| {
            if args["path"].as_str().is_some_and(|p| p.starts_with('/')) {
                Err(ArgumentError::other("path", "must be relative"))
            } else {
                Ok(())
            }
        }));
    let registry = registry(pipeline);
    let ctx = ToolContext::new();
    let out = registry.call("remove", json!({"path": "/etc"}), &ctx).await;
    assert_eq!(
        out.content,
        "Error: Invalid parameters for tool 'remove': path must be relative\n\n[Fix the arguments as described and call the tool again.]"
    );
    assert_eq!(asked.0.load(Ordering::SeqCst), 0);
    let out = registry
        .call("remove", json!({"path": "notes.txt"}), &ctx)
        .await;
    assert_eq!(out.content, "removed notes.txt");
    assert_eq!(asked.0.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_policy_can_deny_without_asking_anyone() {
    let pipeline = Pipeline::new().layer(Approval::deny(ApprovalPolicy::RequireForDangerous));
    let registry = registry(pipeline);
    let out = registry
        .call("remove", json!({"path": "a"}), &ToolContext::new())
        .await;
    assert!(
        out.content.contains("the user did not approve this call"),
        "{}",
        out.content
    );
    assert_eq!(
        out.metadata.read(&meta::ERROR_KIND),
        Some(ErrorKind::Denied)
    );
    let low = registry
        .call("nap", json!({"ms": 1}), &ToolContext::new())
        .await;
    assert_eq!(low.content, "slept 1");
}

struct NoSecrets;

#[async_trait]
impl Hook for NoSecrets {
    async fn before(&self, _call: CallInfo<'_>, arguments: &mut Value) -> BeforeCall {
        if arguments.to_string().contains("secret") {
            BeforeCall::Refuse("secrets stay here".into())
        } else {
            BeforeCall::Proceed
        }
    }

    async fn after(&self, _call: CallInfo<'_>, output: &mut ToolOutput) {
        output.content.push_str(" (seen)");
    }
}

#[tokio::test]
async fn hooks_are_a_layer_with_the_runner_texts() {
    let hooked = registry(Pipeline::new().layer(Hooks::new().with(NoSecrets)));
    let ctx = ToolContext::new();
    let out = hooked.call("remove", json!({"path": "secret"}), &ctx).await;
    assert_eq!(
        out.content,
        "Error: the call to 'remove' was refused before it ran: secrets stay here\n\n[Try a different approach.]"
    );
    let runner = Runner::new(registry(Pipeline::new())).with_hook(NoSecrets);
    let (status, output) = run_one(&runner, "remove", json!({"path": "secret"})).await;
    assert_eq!(status, CallStatus::Error);
    assert_eq!(output.content, out.content);
}

/// Records the order layers run in.
struct Mark(
    &'static str,
    Stage,
    Arc<std::sync::Mutex<Vec<&'static str>>>,
);

#[async_trait]
impl Layer for Mark {
    fn stage(&self) -> Stage {
        self.1
    }

    async fn handle(&self, call: &mut Call<'_>, next: Next<'_>) -> Result<ToolOutput, CallError> {
        self.2.lock().unwrap().push(self.0);
        let checked = call.is_checked();
        assert_eq!(checked, self.1 != Stage::Received, "{}", self.0);
        next.run(call).await
    }
}

#[tokio::test]
async fn layers_run_by_stage_then_in_the_order_added() {
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let pipeline = Pipeline::new()
        .layer(Mark("execute", Stage::Execute, Arc::clone(&seen)))
        .layer(Mark("checked 1", Stage::Checked, Arc::clone(&seen)))
        .layer(Mark("received", Stage::Received, Arc::clone(&seen)))
        .layer(Mark("approval", Stage::Approval, Arc::clone(&seen)))
        .layer(Mark("checked 2", Stage::Checked, Arc::clone(&seen)));
    let registry = registry(pipeline);
    let out = registry
        .call("nap", json!({"ms": "1"}), &ToolContext::new())
        .await;
    assert_eq!(out.content, "slept 1");
    assert_eq!(
        *seen.lock().unwrap(),
        ["received", "checked 1", "checked 2", "approval", "execute"]
    );
    // A refused payload stops at the check: only the received layer saw it.
    seen.lock().unwrap().clear();
    registry
        .call("nap", json!({"ms": "x"}), &ToolContext::new())
        .await;
    assert_eq!(*seen.lock().unwrap(), ["received"]);
}

#[tokio::test]
async fn a_call_left_awaiting_approval_is_not_run_by_a_runner_without_an_approver() {
    // A checkpoint taken while a person was being asked, resumed by a
    // runner that has no approval of its own: nobody said yes, so the call
    // must not run.
    let runner = Runner::new(registry(Pipeline::new()));
    let mut state =
        toolsmith::exec::BatchState::new([ToolCall::new("c1", "remove", json!({"path": "a"}))]);
    state.calls[0].status = CallStatus::AwaitingApproval;
    runner.resume(&mut state, &ToolContext::new()).await;
    let record = &state.calls[0];
    let output = record.output.as_ref().expect("a final call has an output");
    assert!(!output.content.contains("removed"), "{}", output.content);
    assert_eq!(record.status, CallStatus::Cancelled);
    assert_eq!(
        output.metadata.read(&meta::ERROR_KIND),
        Some(ErrorKind::Denied)
    );
    assert!(output.content.contains("no approver"), "{}", output.content);
}

/// Panics before every call.
struct PanickingHook;

#[async_trait]
impl Hook for PanickingHook {
    async fn before(&self, _call: CallInfo<'_>, _arguments: &mut Value) -> BeforeCall {
        panic!("the hook broke")
    }
}

/// Panics when asked.
struct PanickingApprover;

#[async_trait]
impl Approver for PanickingApprover {
    async fn approve(&self, _request: &ApprovalRequest) -> ApprovalDecision {
        panic!("the approver broke")
    }
}

#[tokio::test]
async fn a_panicking_layer_is_an_error_for_that_call_alone() {
    let ctx = ToolContext::new();
    let validated = registry(
        Pipeline::new().layer(Validators::new().check("nap", |_| panic!("the rule broke"))),
    );
    let out = validated.call("nap", json!({"ms": 1}), &ctx).await;
    assert!(out.is_error, "{}", out.content);
    assert_eq!(
        out.metadata.read(&meta::ERROR_KIND),
        Some(ErrorKind::Panicked)
    );
    let error = validated
        .try_call("nap", json!({"ms": 1}), &ctx)
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Panicked);
    assert_eq!(error.to_model_text(), out.content);

    let hooked = Runner::new(registry(Pipeline::new())).with_hook(PanickingHook);
    let (status, output) = run_one(&hooked, "nap", json!({"ms": 1})).await;
    assert_eq!(status, CallStatus::Error);
    assert!(
        output.content.contains("the hook broke"),
        "{}",
        output.content
    );

    let asked = Runner::new(registry(Pipeline::new()))
        .with_policy(ApprovalPolicy::AlwaysRequire)
        .with_approver(PanickingApprover);
    let (status, output) = run_one(&asked, "remove", json!({"path": "a"})).await;
    // Out of awaiting approval without a yes: cancelled, and never run.
    assert_eq!(status, CallStatus::Cancelled);
    assert!(!output.content.contains("removed"), "{}", output.content);
    assert_eq!(
        output.metadata.read(&meta::ERROR_KIND),
        Some(ErrorKind::Panicked)
    );
}

/// Answers every call itself, with a success whose metadata happens to
/// carry an error kind (as a host's layer may copy metadata around).
struct AnswerFromElsewhere;

#[async_trait]
impl Layer for AnswerFromElsewhere {
    async fn handle(&self, _call: &mut Call<'_>, _next: Next<'_>) -> Result<ToolOutput, CallError> {
        let mut output = ToolOutput::text("from elsewhere");
        output
            .metadata
            .write(&meta::ERROR_KIND, &ErrorKind::Timeout);
        Ok(output)
    }
}

#[tokio::test]
async fn a_success_a_layer_gives_without_the_tool_ends_as_a_success() {
    let runner = Runner::new(registry(Pipeline::new().layer(AnswerFromElsewhere)));
    let (status, output) = run_one(&runner, "nap", json!({"ms": 1})).await;
    assert_eq!(status, CallStatus::Success);
    assert_eq!(output.content, "from elsewhere");
}

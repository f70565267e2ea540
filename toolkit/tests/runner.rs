//! The batch runner: concurrency, timeouts, panics, cancellation, approval,
//! hooks, and checkpoints. No test asserts on wall time: overlap is proven
//! with a barrier only concurrent calls can pass, and stopping with a guard
//! that records being dropped.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};
use tokio::sync::Barrier;
use toolsmith::exec::{
    ApprovalDecision, ApprovalPolicy, ApprovalRequest, Approver, BatchState, BeforeCall, CallInfo,
    CallStatus, Hook, Runner, ToolCall, meta,
};
use toolsmith::{ToolContext, ToolError, ToolOutput, ToolRegistry, tool};

/// Shared by the tools below.
#[derive(Default)]
struct Probe {
    barrier: Option<Arc<Barrier>>,
    active: AtomicUsize,
    max_active: AtomicUsize,
    runs: AtomicUsize,
    finished_sleeping: AtomicBool,
    dropped: AtomicBool,
    /// The most calls running at once while an exclusive call ran.
    beside_exclusive: AtomicUsize,
}

impl Probe {
    fn enter(&self) -> ActiveGuard<'_> {
        let now = self.active.fetch_add(1, Ordering::SeqCst) + 1;
        self.max_active.fetch_max(now, Ordering::SeqCst);
        self.runs.fetch_add(1, Ordering::SeqCst);
        ActiveGuard(self)
    }
}

struct ActiveGuard<'a>(&'a Probe);

impl Drop for ActiveGuard<'_> {
    fn drop(&mut self) {
        self.0.active.fetch_sub(1, Ordering::SeqCst);
        self.0.dropped.store(true, Ordering::SeqCst);
    }
}

/// Waits at the barrier: only passes when another call waits at the same time.
#[tool(read_only)]
async fn meet(probe: &Probe, who: String) -> Result<String, ToolError> {
    let _active = probe.enter();
    let barrier = probe
        .barrier
        .clone()
        .ok_or(ToolError::failed("no barrier"))?;
    barrier.wait().await;
    Ok(format!("{who} met"))
}

/// Counts how many calls run at once.
#[tool(read_only)]
async fn look(probe: &Probe) -> String {
    let _active = probe.enter();
    for _ in 0..20 {
        tokio::task::yield_now().await;
    }
    "looked".into()
}

/// Must run alone.
#[tool(exclusive)]
async fn change(probe: &Probe) -> String {
    let _active = probe.enter();
    for _ in 0..20 {
        let now = probe.active.load(Ordering::SeqCst);
        probe.beside_exclusive.fetch_max(now, Ordering::SeqCst);
        tokio::task::yield_now().await;
    }
    "changed".into()
}

/// Sleeps far past its timeout.
#[tool(read_only, timeout = "50ms")]
async fn sleepy(probe: &Probe) -> String {
    let _active = probe.enter();
    tokio::time::sleep(Duration::from_secs(3600)).await;
    probe.finished_sleeping.store(true, Ordering::SeqCst);
    "woke".into()
}

/// Panics.
#[tool(read_only)]
async fn explode() -> String {
    panic!("boom")
}

/// Panics in a sync tool, on the blocking pool.
#[tool(read_only)]
fn explode_sync() -> String {
    panic!("sync boom")
}

/// Deletes things.
#[tool(destructive, category = destructive)]
async fn wipe(probe: &Probe) -> String {
    let _active = probe.enter();
    "wiped".into()
}

/// Echoes.
#[tool(read_only)]
async fn echo(text: String) -> String {
    text
}

fn registry() -> Arc<ToolRegistry> {
    let registry = ToolRegistry::new();
    for tool in [
        Arc::new(MeetTool) as Arc<dyn toolsmith::Tool>,
        Arc::new(LookTool),
        Arc::new(ChangeTool),
        Arc::new(SleepyTool),
        Arc::new(ExplodeTool),
        Arc::new(ExplodeSyncTool),
        Arc::new(WipeTool),
        Arc::new(EchoTool),
    ] {
        registry.register_arc(tool).unwrap();
    }
    Arc::new(registry)
}

/// The probe a test put in its context, as the tools left it.
fn probe_of(ctx: &ToolContext) -> &Probe {
    ctx.state::<Probe>()
        .expect("the test put a Probe in the context")
}

fn call(id: &str, name: &str, arguments: Value) -> ToolCall {
    ToolCall::new(id, name, arguments)
}

fn statuses(state: &BatchState) -> Vec<CallStatus> {
    state.calls.iter().map(|r| r.status).collect()
}

fn content(state: &BatchState, index: usize) -> &str {
    &state.calls[index]
        .output
        .as_ref()
        .expect("an output")
        .content
}

#[tokio::test]
async fn two_read_only_calls_overlap() {
    let probe = Probe {
        barrier: Some(Arc::new(Barrier::new(2))),
        ..Probe::default()
    };
    let ctx = ToolContext::new().with_state(probe);
    // If the two calls ran one after the other, the first would wait at the
    // barrier forever and time out.
    let runner = Runner::new(registry()).with_default_timeout(Duration::from_secs(30));
    let state = runner
        .run(
            vec![
                call("1", "meet", json!({"who": "a"})),
                call("2", "meet", json!({"who": "b"})),
            ],
            &ctx,
        )
        .await;
    assert_eq!(statuses(&state), [CallStatus::Success, CallStatus::Success]);
    assert_eq!(content(&state, 0), "a met");
    assert_eq!(content(&state, 1), "b met");
    assert_eq!(probe_of(&ctx).max_active.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn sequential_mode_never_overlaps_calls() {
    // Read-only calls that would run together (the test above shows they
    // do) run one after the other with a concurrency of 1: the most calls
    // running at once is 1, counted inside the tools.
    let ctx = ToolContext::new().with_state(Probe::default());
    let runner = Runner::new(registry()).with_max_concurrency(1);
    let calls = (0..6)
        .map(|i| call(&i.to_string(), "look", json!({})))
        .collect();
    let state = runner.run(calls, &ctx).await;
    assert!(statuses(&state).iter().all(|s| *s == CallStatus::Success));
    let probe = probe_of(&ctx);
    assert_eq!(probe.runs.load(Ordering::SeqCst), 6);
    assert_eq!(probe.max_active.load(Ordering::SeqCst), 1);

    // The same batch with room for more does overlap, so the count above
    // can tell.
    let ctx = ToolContext::new().with_state(Probe::default());
    let calls = (0..6)
        .map(|i| call(&i.to_string(), "look", json!({})))
        .collect();
    Runner::new(registry()).run(calls, &ctx).await;
    assert!(probe_of(&ctx).max_active.load(Ordering::SeqCst) > 1);
}

#[tokio::test]
async fn an_exclusive_call_runs_alone_and_results_keep_call_order() {
    let ctx = ToolContext::new().with_state(Probe::default());
    let runner = Runner::new(registry());
    let calls = vec![
        call("1", "look", json!({})),
        call("2", "look", json!({})),
        call("3", "change", json!({})),
        call("4", "look", json!({})),
        call("5", "look", json!({})),
    ];
    let state = runner.run(calls, &ctx).await;
    let probe = probe_of(&ctx);
    assert_eq!(probe.runs.load(Ordering::SeqCst), 5);
    // While `change` ran, it was the only call running...
    assert_eq!(probe.beside_exclusive.load(Ordering::SeqCst), 1);
    // ...and the read-only neighbours on each side did run together.
    assert_eq!(probe.max_active.load(Ordering::SeqCst), 2);
    let ids: Vec<&str> = state.calls.iter().map(|r| r.call.id.as_str()).collect();
    assert_eq!(ids, ["1", "2", "3", "4", "5"]);
    assert_eq!(content(&state, 2), "changed");
}

#[tokio::test]
async fn exclusive_calls_never_overlap() {
    let ctx = ToolContext::new().with_state(Probe::default());
    let calls = (0..6)
        .map(|i| call(&i.to_string(), "change", json!({})))
        .collect();
    let state = Runner::new(registry()).run(calls, &ctx).await;
    assert!(state.calls.iter().all(|r| r.status == CallStatus::Success));
    assert_eq!(probe_of(&ctx).max_active.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_tool_past_its_timeout_is_stopped_and_reported() {
    let ctx = ToolContext::new().with_state(Probe::default());
    let state = Runner::new(registry())
        .run(
            vec![
                call("1", "sleepy", json!({})),
                call("2", "echo", json!({"text": "after"})),
            ],
            &ctx,
        )
        .await;
    assert_eq!(statuses(&state), [CallStatus::Error, CallStatus::Success]);
    assert!(
        content(&state, 0).contains("did not finish within 50 ms and was stopped"),
        "{}",
        content(&state, 0)
    );
    let probe = probe_of(&ctx);
    // The tool's future was dropped mid-sleep: its guard ran, its tail never did.
    assert!(probe.dropped.load(Ordering::SeqCst));
    assert!(!probe.finished_sleeping.load(Ordering::SeqCst));
    assert_eq!(probe.active.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn the_default_timeout_applies_to_tools_without_one() {
    let probe = Probe {
        barrier: Some(Arc::new(Barrier::new(2))),
        ..Probe::default()
    };
    let ctx = ToolContext::new().with_state(probe);
    // Alone, `meet` waits for a partner that never comes.
    let state = Runner::new(registry())
        .with_default_timeout(Duration::from_millis(20))
        .run(vec![call("1", "meet", json!({"who": "a"}))], &ctx)
        .await;
    assert_eq!(statuses(&state), [CallStatus::Error]);
    assert!(content(&state, 0).contains("did not finish within 20 ms"));
}

#[tokio::test]
async fn a_panicking_tool_is_an_error_and_the_batch_goes_on() {
    let ctx = ToolContext::new();
    let state = Runner::new(registry())
        .run(
            vec![
                call("1", "explode", json!({})),
                call("2", "explode_sync", json!({})),
                call("3", "echo", json!({"text": "still here"})),
            ],
            &ctx,
        )
        .await;
    assert_eq!(
        statuses(&state),
        [CallStatus::Error, CallStatus::Error, CallStatus::Success]
    );
    assert!(
        content(&state, 0).contains("the tool crashed: boom"),
        "{}",
        content(&state, 0)
    );
    assert!(content(&state, 1).contains("the tool crashed: sync boom"));
    assert_eq!(content(&state, 2), "still here");
}

#[tokio::test]
async fn bad_calls_become_errors_without_running() {
    let ctx = ToolContext::new().with_state(Probe::default());
    let state = Runner::new(registry())
        .run(
            vec![
                call("1", "ech0", json!({"text": "x"})),
                call("2", "echo", json!({"txt": "x"})),
                call("3", "echo", json!("[1]")),
            ],
            &ctx,
        )
        .await;
    assert_eq!(statuses(&state), [CallStatus::Error; 3]);
    assert!(content(&state, 0).starts_with("Error: Tool 'ech0' not found. Did you mean 'echo'?"));
    assert!(
        content(&state, 1).contains("txt is not a parameter of this tool; did you mean 'text'?")
    );
    assert!(content(&state, 2).contains("must be a JSON object"));
}

/// The batch's own token, for a tool that stops the batch.
struct BatchToken(toolsmith::CancellationToken);

/// Cancels the whole batch, then waits: only cancellation ends it.
#[tool(exclusive)]
async fn stop_batch(batch: &BatchToken) -> String {
    batch.0.cancel();
    std::future::pending::<()>().await;
    unreachable!()
}

#[tokio::test]
async fn cancelling_the_batch_stops_running_calls_and_skips_the_rest() {
    let registry = registry();
    registry.register(StopBatchTool).unwrap();
    let ctx = ToolContext::new().with_state(Probe::default());
    let ctx = ctx
        .clone()
        .with_state(BatchToken(ctx.cancellation().clone()));
    let runner = Runner::new(registry).with_default_timeout(Duration::from_secs(3600));
    let state = runner
        .run(
            vec![
                call("1", "change", json!({})),
                call("2", "stop_batch", json!({})),
                call("3", "change", json!({})),
            ],
            &ctx,
        )
        .await;
    assert_eq!(
        statuses(&state),
        [
            CallStatus::Success,
            CallStatus::Cancelled,
            CallStatus::Cancelled
        ]
    );
    assert!(content(&state, 1).contains("cancelled before it finished"));
    assert_eq!(probe_of(&ctx).runs.load(Ordering::SeqCst), 1);
}

/// Approves or denies by tool name, and remembers what it was asked.
struct ScriptedApprover {
    deny: &'static str,
    asked: Mutex<Vec<String>>,
}

#[async_trait]
impl Approver for ScriptedApprover {
    async fn approve(&self, request: &ApprovalRequest) -> ApprovalDecision {
        self.asked.lock().unwrap().push(request.tool.clone());
        if request.tool == self.deny {
            ApprovalDecision::Deny(Some("not today".into()))
        } else {
            ApprovalDecision::Approve
        }
    }
}

#[tokio::test]
async fn dangerous_calls_ask_and_a_denial_cancels_with_a_readable_message() {
    let ctx = ToolContext::new().with_state(Probe::default());
    let approver = Arc::new(ScriptedApprover {
        deny: "wipe",
        asked: Mutex::default(),
    });
    struct Shared(Arc<ScriptedApprover>);
    #[async_trait]
    impl Approver for Shared {
        async fn approve(&self, request: &ApprovalRequest) -> ApprovalDecision {
            self.0.approve(request).await
        }
    }
    let runner = Runner::new(registry())
        .with_policy(ApprovalPolicy::RequireForDangerous)
        .with_approver(Shared(approver.clone()));
    let state = runner
        .run(
            vec![
                call("1", "echo", json!({"text": "hi"})),
                call("2", "change", json!({})),
                call("3", "wipe", json!({})),
            ],
            &ctx,
        )
        .await;
    assert_eq!(
        statuses(&state),
        [
            CallStatus::Success,
            CallStatus::Success,
            CallStatus::Cancelled
        ]
    );
    // echo is read-only (low risk): not asked. change is medium, wipe is high.
    assert_eq!(*approver.asked.lock().unwrap(), ["change", "wipe"]);
    assert_eq!(
        content(&state, 2),
        "Error: Tool 'wipe' failed: the user did not approve this call: not today\n\n[Do not retry this call unless the user asks; continue without it.]"
    );
    assert_eq!(
        probe_of(&ctx).runs.load(Ordering::SeqCst),
        1,
        "wipe must not run"
    );
}

/// Each tool an approver was asked about, with the request's warning.
type Asked = Arc<Mutex<Vec<(String, Option<String>)>>>;

/// Approves everything, and remembers each tool asked about with its warning.
struct WarningsSeen(Asked);

#[async_trait]
impl Approver for WarningsSeen {
    async fn approve(&self, request: &ApprovalRequest) -> ApprovalDecision {
        let asked = (request.tool.clone(), request.warning.clone());
        self.0.lock().unwrap().push(asked);
        ApprovalDecision::Approve
    }
}

#[tokio::test]
async fn high_risk_requests_carry_a_warning_and_an_approval_is_not_asked_twice() {
    let ctx = ToolContext::new().with_state(Probe::default());
    let asked = Arc::new(Mutex::new(Vec::new()));
    let runner = Runner::new(registry())
        .with_policy(ApprovalPolicy::RequireForDangerous)
        .with_approver(WarningsSeen(asked.clone()));
    let calls = vec![call("1", "change", json!({})), call("2", "wipe", json!({}))];
    let mut state = runner.run(calls, &ctx).await;
    assert_eq!(statuses(&state), [CallStatus::Success, CallStatus::Success]);
    {
        let asked = asked.lock().unwrap();
        assert_eq!(asked[0], ("change".to_owned(), None), "medium: no warning");
        assert_eq!(asked[1].0, "wipe");
        let warning = asked[1].1.as_deref().expect("high risk: a warning");
        assert!(
            warning.starts_with("HIGH RISK: `wipe` may destroy data"),
            "{warning}"
        );
    }
    assert!(state.calls.iter().all(|record| record.approved));

    // The host stopped while `wipe` ran: its checkpoint says executing.
    // Recovered, retried and resumed, it runs without asking again, and the
    // approval survives the checkpoint's JSON.
    state.calls[1].status = CallStatus::Executing;
    state.calls[1].output = None;
    let mut state: BatchState =
        serde_json::from_value(serde_json::to_value(&state).unwrap()).unwrap();
    state.recover();
    state.retry("2").unwrap();
    asked.lock().unwrap().clear();
    runner.resume(&mut state, &ctx).await;
    assert_eq!(state.calls[1].status, CallStatus::Success);
    assert!(asked.lock().unwrap().is_empty());
}

#[tokio::test]
async fn without_an_approver_required_calls_are_denied() {
    let ctx = ToolContext::new().with_state(Probe::default());
    let state = Runner::new(registry())
        .with_policy(ApprovalPolicy::AlwaysRequire)
        .run(vec![call("1", "echo", json!({"text": "hi"}))], &ctx)
        .await;
    assert_eq!(statuses(&state), [CallStatus::Cancelled]);
    assert!(content(&state, 0).contains("no approver is configured"));
}

struct Rewriter;

#[async_trait]
impl Hook for Rewriter {
    async fn before(&self, call: CallInfo<'_>, arguments: &mut Value) -> BeforeCall {
        if call.tool == "wipe" {
            return BeforeCall::Refuse("wiping is disabled here".into());
        }
        if let Some(text) = arguments.get_mut("text") {
            *text = json!(format!("[{}]", text.as_str().unwrap_or_default()));
        }
        BeforeCall::Proceed
    }

    async fn after(&self, call: CallInfo<'_>, output: &mut ToolOutput) {
        output.content.push_str(&format!(" (via {})", call.tool));
    }
}

#[tokio::test]
async fn hooks_rewrite_refuse_and_observe() {
    let ctx = ToolContext::new().with_state(Probe::default());
    let state = Runner::new(registry())
        .with_hook(Rewriter)
        .run(
            vec![
                call("1", "echo", json!({"text": "hi"})),
                call("2", "wipe", json!({})),
            ],
            &ctx,
        )
        .await;
    assert_eq!(content(&state, 0), "[hi] (via echo)");
    assert_eq!(state.calls[1].status, CallStatus::Error);
    assert!(content(&state, 1).contains("refused before it ran: wiping is disabled here"));
    assert_eq!(probe_of(&ctx).runs.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn casts_and_timing_are_recorded_for_the_host_only() {
    let state = Runner::new(registry())
        .run(
            vec![call("1", "echo", json!({"text": true}))],
            &ToolContext::new(),
        )
        .await;
    // A boolean is not cast to text: validation says so.
    assert_eq!(state.calls[0].status, CallStatus::Error);
    let state = Runner::new(registry())
        .run(
            vec![call("1", "echo", json!("{\"text\": \"x\"}"))],
            &ToolContext::new(),
        )
        .await;
    let output = state.calls[0].output.as_ref().unwrap();
    assert_eq!(output.content, "x");
    assert!(output.metadata.contains_key("duration_ms"));
    assert!(output.metadata.read(&meta::DURATION_MS).is_some());
    assert!(!output.metadata.contains_key("casts"));

    let state = Runner::new(registry())
        .run(
            vec![call("1", "echo", json!({"TEXT": "x"}))],
            &ToolContext::new(),
        )
        .await;
    let output = state.calls[0].output.as_ref().unwrap();
    assert_eq!(output.content, "x");
    assert_eq!(
        output.metadata["casts"],
        json!([{"path": "text", "from": "parameter name \"TEXT\"", "to": "renamed"}])
    );
    let casts = output.metadata.read(&meta::CASTS).unwrap();
    assert_eq!(
        casts[0].to_string(),
        "text: parameter name \"TEXT\" -> renamed"
    );
}

#[tokio::test]
async fn a_checkpoint_taken_mid_batch_restores_to_the_documented_states() {
    // Call 1 succeeds, call 2 hangs (executing), call 3 waits behind it.
    let snapshots: Arc<Mutex<Vec<BatchState>>> = Arc::default();
    let saved = snapshots.clone();
    let ctx = ToolContext::new().with_state(Probe {
        barrier: Some(Arc::new(Barrier::new(2))),
        ..Probe::default()
    });
    let token = ctx.cancellation().clone();
    let runner = Runner::new(registry())
        .with_default_timeout(Duration::from_secs(3600))
        .with_checkpoint(move |state: &BatchState| {
            saved.lock().unwrap().push(state.clone());
            // Once call 2 is executing, stop the process (cancel the batch).
            if state.calls[1].status == CallStatus::Executing {
                token.cancel();
            }
        });
    let calls = vec![
        call("1", "change", json!({})),
        call("2", "meet", json!({"who": "alone"})),
        call("3", "wipe", json!({})),
    ];
    runner.run(calls, &ctx).await;

    // The checkpoint a crash would have left: call 2 executing.
    let mid = snapshots
        .lock()
        .unwrap()
        .iter()
        .find(|s| s.calls[1].status == CallStatus::Executing)
        .cloned()
        .expect("a checkpoint with call 2 executing");
    assert_eq!(
        statuses(&mid),
        [
            CallStatus::Success,
            CallStatus::Executing,
            CallStatus::Pending
        ]
    );

    // Restore it in a "new process": serialize, parse, recover.
    let mut restored: BatchState =
        serde_json::from_str(&serde_json::to_string(&mid).unwrap()).unwrap();
    restored.recover();
    assert_eq!(
        statuses(&restored),
        [
            CallStatus::Success,
            CallStatus::Interrupted,
            CallStatus::Pending
        ]
    );

    // Resuming runs only the pending call: success is never re-run, the
    // interrupted call waits for an explicit decision.
    let probe_ctx = ToolContext::new().with_state(Probe::default());
    Runner::new(registry())
        .resume(&mut restored, &probe_ctx)
        .await;
    assert_eq!(
        statuses(&restored),
        [
            CallStatus::Success,
            CallStatus::Interrupted,
            CallStatus::Success
        ]
    );
    assert_eq!(probe_of(&probe_ctx).runs.load(Ordering::SeqCst), 1);

    // An explicit cancel finishes the batch.
    restored.cancel("2").unwrap();
    assert!(restored.is_finished());
}

#[tokio::test]
async fn a_call_awaiting_approval_in_a_checkpoint_is_asked_again() {
    let mut state = BatchState::new([call("1", "wipe", json!({}))]);
    state.calls[0].status = CallStatus::AwaitingApproval;
    state.recover();
    let approver = ScriptedApprover {
        deny: "nothing",
        asked: Mutex::default(),
    };
    let ctx = ToolContext::new().with_state(Probe::default());
    // Even with a policy that would not ask, the pending question is asked.
    let runner = Runner::new(registry()).with_approver(approver);
    runner.resume(&mut state, &ctx).await;
    assert_eq!(statuses(&state), [CallStatus::Success]);
    assert_eq!(probe_of(&ctx).runs.load(Ordering::SeqCst), 1);
}

/// Resize something (changes state, so it is medium risk).
#[tool]
async fn resize(width: u32) -> String {
    format!("width {width}")
}

/// Remembers the arguments it was asked to approve.
#[derive(Default, Clone)]
struct Recording(Arc<Mutex<Vec<Value>>>);

#[async_trait]
impl Approver for Recording {
    async fn approve(&self, request: &ApprovalRequest) -> ApprovalDecision {
        self.0.lock().unwrap().push(request.arguments.clone());
        ApprovalDecision::Approve
    }
}

#[tokio::test]
async fn the_approver_sees_the_arguments_after_casting() {
    let registry = ToolRegistry::new();
    registry.register(ResizeTool).unwrap();
    let recording = Recording::default();
    let state = Runner::new(Arc::new(registry))
        .with_policy(ApprovalPolicy::RequireForDangerous)
        .with_approver(recording.clone())
        .run(
            vec![call("1", "resize", json!("{\"width\": \"7\"}"))],
            &ToolContext::new(),
        )
        .await;
    assert_eq!(content(&state, 0), "width 7");
    assert_eq!(*recording.0.lock().unwrap(), [json!({"width": 7})]);
}

/// Signals that it started, then waits forever.
#[tool(read_only)]
async fn hang(started: &tokio::sync::Notify) -> String {
    started.notify_one();
    std::future::pending::<()>().await;
    unreachable!()
}

#[tokio::test]
async fn a_resume_dropped_half_way_leaves_its_progress_in_the_state() {
    let registry = registry();
    registry.register(HangTool).unwrap();
    let ctx = ToolContext::new()
        .with_state(Probe::default())
        .with_state(tokio::sync::Notify::new());
    let runner = Runner::new(registry).with_default_timeout(Duration::from_secs(3600));
    let mut state = BatchState::new([call("1", "change", json!({})), call("2", "hang", json!({}))]);
    let started = ctx.state::<tokio::sync::Notify>().unwrap();
    tokio::select! {
        _ = runner.resume(&mut state, &ctx) => panic!("hang never finishes"),
        _ = started.notified() => {} // the host gives up here, dropping `resume`
    }
    assert_eq!(
        statuses(&state),
        [CallStatus::Success, CallStatus::Executing]
    );
    state.recover();
    assert_eq!(
        statuses(&state),
        [CallStatus::Success, CallStatus::Interrupted]
    );
}

/// Archive files (a name Gemini is shown as `_7zip`).
#[tool(name = "7zip")]
async fn seven_zip() -> String {
    "archived".into()
}

#[tokio::test]
async fn a_call_by_a_provider_alias_meets_the_same_policy() {
    let registry = ToolRegistry::new();
    registry.register(SevenZipTool).unwrap();
    let runner = Runner::new(Arc::new(registry)).with_policy(ApprovalPolicy::RequireForTools {
        tools: ["7zip".to_owned()].into(),
    });
    let state = runner
        .run(
            vec![call("1", "7zip", json!({})), call("2", "_7zip", json!({}))],
            &ToolContext::new(),
        )
        .await;
    // No approver is configured, so both are denied: the alias is no way around it.
    assert_eq!(
        statuses(&state),
        [CallStatus::Cancelled, CallStatus::Cancelled]
    );
}

/// Archive files under the name `7zip` is shown as.
#[tool(name = "_7zip")]
async fn underscore_seven_zip() -> String {
    "archived".into()
}

#[test]
fn names_that_a_provider_would_show_alike_cannot_both_register() {
    let registry = ToolRegistry::new();
    registry.register(SevenZipTool).unwrap();
    let error = registry.register(UnderscoreSevenZipTool).unwrap_err();
    assert!(
        error.to_string().contains("'_7zip' is already registered"),
        "{error}"
    );
    // And the other way round: `7zip` would be shown as the `_7zip` there.
    let registry = ToolRegistry::new();
    registry.register(UnderscoreSevenZipTool).unwrap();
    let error = registry.register(SevenZipTool).unwrap_err();
    assert!(
        error.to_string().contains("'7zip' is already registered")
            && error.to_string().contains("shown as '_7zip'"),
        "{error}"
    );
    // Apart, each is found under its own name and `7zip` under its alias.
    let registry = ToolRegistry::new();
    registry.register(SevenZipTool).unwrap();
    assert!(registry.get("_7zip").is_some());
    assert!(registry.get("7zip").is_some());
}

/// Returns about 10 MB of text in one-, two-, three- and four-byte characters.
#[tool(read_only)]
async fn flood() -> String {
    "aé漢🙂\n".repeat(1_000_000)
}

#[tokio::test]
async fn a_ten_megabyte_result_is_cut_on_character_boundaries() {
    let registry = registry();
    registry.register(FloodTool).unwrap();
    let state = Runner::new(registry)
        .with_shape(toolsmith::exec::ShapeConfig::new().max_chars(2_000))
        .run(vec![call("1", "flood", json!({}))], &ToolContext::new())
        .await;
    let output = state.calls[0].output.as_ref().unwrap();
    // A `String` is always valid UTF-8; what matters is that nothing was
    // split and the result fits the limit, with the cut said out loud.
    assert!(output.content.chars().count() <= 2_000);
    assert!(output.content.starts_with("aé漢🙂\naé漢🙂\n"));
    assert!(output.content.trim_end().ends_with("aé漢🙂"));
    assert!(output.content.contains("characters (") && output.content.contains("removed"));
    let cut = output.metadata.read(&meta::TRUNCATED);
    assert_eq!(cut.map(|cut| cut.original_chars), Some(5_000_000));
}

#[tokio::test]
async fn a_large_result_is_saved_in_the_workspace_with_a_reference() {
    let workspace =
        std::env::temp_dir().join(format!("toolsmith-runner-persist-{}", std::process::id()));
    std::fs::create_dir_all(&workspace).unwrap();
    let registry = registry();
    registry.register(FloodTool).unwrap();
    let state = Runner::new(registry)
        .with_shape(
            toolsmith::exec::ShapeConfig::new()
                .max_chars(2_000)
                .persist_dir(".tool-results"),
        )
        .run(
            vec![call("call_9", "flood", json!({}))],
            &ToolContext::new().with_workspace(&workspace),
        )
        .await;
    let output = state.calls[0].output.as_ref().unwrap();
    assert!(
        output.content.contains(".tool-results/flood-call_9.txt"),
        "{}",
        output.content
    );
    let saved = std::fs::read_to_string(workspace.join(".tool-results/flood-call_9.txt")).unwrap();
    assert_eq!(saved, "aé漢🙂\n".repeat(1_000_000));
    std::fs::remove_dir_all(&workspace).unwrap();
}

//! Chapter: the registry and running calls.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use toolsmith::exec::{
    ApprovalDecision, ApprovalPolicy, ApprovalRequest, BatchState, BeforeCall, CallInfo,
    CallStatus, Hook, Runner, ShapeConfig, ToolCall, meta,
};
use toolsmith::pipeline::{Approval, Cache, CallLimits, Mask, Pipeline, Retry, Validators};
use toolsmith::{
    ArgumentError, ErrorKind, ToolContext, ToolFilter, ToolRegistry, async_trait, tool,
};

/// Look up a word in the dictionary.
#[tool(read_only)]
async fn define(
    /// The word.
    word: String,
) -> String {
    tokio::time::sleep(Duration::from_millis(20)).await;
    format!("{word}: a word")
}

/// Delete a note for good.
#[tool(destructive, category = filesystem_write)]
async fn delete_note(
    /// The note's title.
    title: String,
) -> String {
    format!("deleted {title}")
}

/// Think for far too long.
#[tool(read_only, timeout = "50ms")]
async fn ponder() -> String {
    tokio::time::sleep(Duration::from_secs(30)).await;
    "done".into()
}

#[test]
fn the_registry_takes_what_the_filter_selects() {
    // ANCHOR: discovery
    // Every `#[tool]` in the program is registered with `inventory`; the
    // registry takes the ones the filter selects.
    let mine = ToolFilter::default()
        .module_prefix(module_path!())
        .exclude(["ponder"]);
    let registry = ToolRegistry::from_inventory(&mine).unwrap();
    // `delete_note` is destructive, so high risk: it is taken only when
    // the filter names it or allows high-risk tools.
    assert_eq!(registry.names(), ["define"]);
    let registry = ToolRegistry::from_inventory(&mine.allow_high_risk()).unwrap();
    assert_eq!(registry.names(), ["define", "delete_note"]);
    // ANCHOR_END: discovery
}

// ANCHOR: approver
/// Approves everything but deletions, and remembers what it was asked.
struct CautiousApprover {
    asked: Arc<Mutex<Vec<String>>>,
}

#[async_trait]
impl toolsmith::exec::Approver for CautiousApprover {
    async fn approve(&self, request: &ApprovalRequest) -> ApprovalDecision {
        self.asked.lock().unwrap().push(request.tool.clone());
        if request.tool.starts_with("delete") {
            ApprovalDecision::Deny(Some("the user keeps their notes".into()))
        } else {
            ApprovalDecision::Approve
        }
    }
}
// ANCHOR_END: approver

// ANCHOR: hook
/// Lower-cases every `word` argument before it is checked.
struct LowerCaseWords;

#[async_trait]
impl Hook for LowerCaseWords {
    async fn before(&self, _call: CallInfo<'_>, arguments: &mut Value) -> BeforeCall {
        if let Some(Value::String(word)) = arguments.get_mut("word") {
            *word = word.to_lowercase();
        }
        BeforeCall::Proceed
    }
}
// ANCHOR_END: hook

#[tokio::test]
async fn a_batch_runs_with_approval_hooks_and_timeouts() {
    let registry = Arc::new(
        ToolRegistry::from_inventory(&ToolFilter::all().module_prefix(module_path!())).unwrap(),
    );
    // ANCHOR: runner
    let asked = Arc::new(Mutex::new(Vec::new()));
    let saved = Arc::new(Mutex::new(Vec::<BatchState>::new()));
    let checkpoint = {
        let saved = Arc::clone(&saved);
        move |state: &BatchState| saved.lock().unwrap().push(state.clone())
    };
    let runner = Runner::new(registry)
        .with_policy(ApprovalPolicy::RequireForDangerous)
        .with_approver(CautiousApprover {
            asked: Arc::clone(&asked),
        })
        .with_hook(LowerCaseWords)
        .with_shape(ShapeConfig::new().max_chars(2_000))
        .with_checkpoint(checkpoint);

    let calls = vec![
        ToolCall::new("1", "define", json!({"word": "Ferris"})),
        ToolCall::new("2", "define", json!({"word": "crab"})),
        ToolCall::new("3", "delete_note", json!({"title": "groceries"})),
        ToolCall::new("4", "ponder", json!({})),
    ];
    let state = runner.run(calls, &ToolContext::new()).await;

    let statuses: Vec<CallStatus> = state.calls.iter().map(|c| c.status).collect();
    use CallStatus::*;
    assert_eq!(statuses, [Success, Success, Cancelled, Error]);
    let text = |i: usize| state.calls[i].output.as_ref().unwrap().content.clone();
    assert_eq!(text(0), "ferris: a word"); // the hook lower-cased it
    assert!(text(2).contains("the user keeps their notes"));
    assert!(text(3).contains("did not finish within 50 ms"));
    // Only the risky call needed a person's yes.
    assert_eq!(*asked.lock().unwrap(), ["delete_note"]);
    // ANCHOR_END: runner
    // Every status change was checkpointed; the last one is the final state.
    assert_eq!(saved.lock().unwrap().last(), Some(&state));
}

#[tokio::test]
async fn one_pipeline_for_every_call() {
    // ANCHOR: pipeline
    // The host's own rule, checked after casting and before anyone is asked.
    let no_system_notes =
        Validators::new().check("delete_note", |args| match args["title"].as_str() {
            Some(title) if title.starts_with("system") => {
                Err(ArgumentError::other("title", "must not name a system note"))
            }
            _ => Ok(()),
        });
    let pipeline = Pipeline::new()
        .with_timeout(Duration::from_secs(30))
        .with_shape(ShapeConfig::new().max_chars(2_000))
        .layer(no_system_notes)
        .layer(CallLimits::new().per_turn(20))
        // Nobody to ask here: the policy alone refuses risky calls.
        .layer(Approval::deny(ApprovalPolicy::RequireForDangerous))
        // Around the tool, outermost first: what the model reads of a
        // failure, answers kept for a minute, and passing failures retried.
        .layer(Mask::new())
        .layer(Cache::new(Duration::from_secs(60)))
        .layer(Retry::new());
    let registry = Arc::new(
        ToolRegistry::from_inventory(&ToolFilter::all().module_prefix(module_path!()))
            .unwrap()
            .with_pipeline(pipeline),
    );
    let ctx = ToolContext::new();

    let answer = registry.call("define", json!({"word": "crab"}), &ctx).await;
    assert_eq!(answer.content, "crab: a word");

    // A bad argument is for the model to fix: no approval is asked for it.
    let refused = registry
        .call("delete_note", json!({"title": "system index"}), &ctx)
        .await;
    assert!(
        refused
            .content
            .contains("title must not name a system note")
    );
    assert_eq!(
        refused.metadata.read(&meta::ERROR_KIND),
        Some(ErrorKind::InvalidArguments)
    );

    let denied = registry
        .call("delete_note", json!({"title": "groceries"}), &ctx)
        .await;
    assert_eq!(
        denied.metadata.read(&meta::ERROR_KIND),
        Some(ErrorKind::Denied)
    );

    // The runner takes the registry's pipeline: the same call, the same text.
    let runner = Runner::new(Arc::clone(&registry));
    let state = runner
        .run(
            vec![ToolCall::new(
                "1",
                "delete_note",
                json!({"title": "system index"}),
            )],
            &ctx,
        )
        .await;
    assert_eq!(
        state.calls[0].output.as_ref().unwrap().content,
        refused.content
    );
    // ANCHOR_END: pipeline
}

//! `spawn` with the ready-made tokio spawner: the id comes back at once, the
//! result arrives later in the chat the task came from.

#![cfg(feature = "agent")]

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tokio::sync::{Mutex, oneshot};
use toolsmith::{ToolContext, ToolFilter, ToolRegistry};
use toolsmith_builtins::agent::{ChannelSink, Subagents, TaskSpawner};

fn registry() -> ToolRegistry {
    ToolRegistry::from_inventory(&ToolFilter::default().names(["spawn"])).unwrap()
}

/// The id in "Subagent [label] started (id: ID). ..."
fn id_of(text: &str) -> String {
    let start = text.find("(id: ").expect("an id") + 5;
    text[start..start + 8].to_owned()
}

#[tokio::test]
async fn the_id_comes_back_before_the_task_ends_and_the_result_reaches_the_origin() {
    let (sink, mut outbox) = ChannelSink::new(8);
    let (release, gate) = oneshot::channel::<()>();
    let gate = Arc::new(Mutex::new(Some(gate)));
    let spawner = TaskSpawner::new(sink, move |request| {
        let gate = Arc::clone(&gate);
        async move {
            if let Some(gate) = gate.lock().await.take() {
                gate.await.map_err(|e| e.to_string())?;
            }
            Ok(format!(
                "counted {} words",
                request.task.split_whitespace().count()
            ))
        }
    });
    let ctx = ToolContext::new()
        .with_channel("telegram", "42")
        .with_message_id("m1")
        .with_state(Subagents::new(spawner.clone()));
    let out = registry()
        .call(
            "spawn",
            json!({"task": "count the words in this task", "label": "count"}),
            &ctx,
        )
        .await;
    assert!(!out.is_error, "{}", out.content);
    assert!(
        out.content.starts_with("Subagent [count] started (id: "),
        "{}",
        out.content
    );
    assert!(out.content.ends_with("I'll notify you when it completes."));
    let id = id_of(&out.content);
    // The task is still waiting at its gate: the call did not wait for it.
    assert_eq!(spawner.running(), std::slice::from_ref(&id));
    assert!(outbox.try_recv().is_err());

    release.send(()).unwrap();
    let report = outbox.recv().await.unwrap();
    assert_eq!(
        (report.channel.as_str(), report.chat_id.as_str()),
        ("telegram", "42")
    );
    assert_eq!(
        report.content,
        "[Subagent 'count' completed]\n\nTask: count the words in this task\n\nResult:\ncounted 6 words"
    );
    assert_eq!(report.reply_to, None);
    assert!(spawner.running().is_empty());
}

#[tokio::test]
async fn the_call_answers_started_and_the_outcome_arrives_as_its_late_result() {
    use toolsmith::LateResults;
    use toolsmith::exec::{Runner, ToolCall};

    let (sink, mut outbox) = ChannelSink::new(8);
    let (late, mut late_results) = LateResults::channel(8);
    let spawner = TaskSpawner::new(sink, |request| async move {
        Ok(format!(
            "read {} words",
            request.task.split_whitespace().count()
        ))
    })
    .with_late_results(late);
    let ctx = ToolContext::new().with_state(Subagents::new(spawner));
    let runner = Runner::new(Arc::new(registry()));
    let state = runner
        .run(
            vec![ToolCall::new(
                "call_9",
                "spawn",
                json!({"task": "read the three files"}),
            )],
            &ctx,
        )
        .await;
    let out = state.calls[0].output.as_ref().unwrap();
    assert!(out.is_async && !out.is_error, "{}", out.content);

    let result = tokio::time::timeout(Duration::from_secs(10), late_results.recv())
        .await
        .expect("the late result within 10 s")
        .expect("a late result");
    assert_eq!(result.call_id.as_deref(), Some("call_9"));
    assert_eq!(result.tool, "spawn");
    assert_eq!(result.output.content, "read 4 words");
    // The chat still hears of it.
    assert!(
        outbox
            .recv()
            .await
            .unwrap()
            .content
            .contains("read 4 words")
    );
}

#[tokio::test]
async fn a_failed_task_is_reported_as_failed_under_a_default_label() {
    let (sink, mut outbox) = ChannelSink::new(8);
    let spawner = TaskSpawner::new(sink, |_request| async { Err("the API is down".to_owned()) });
    let ctx = ToolContext::new()
        .with_channel("slack", "C1")
        .with_state(Subagents::new(spawner));
    let task = "research the history of the Rust borrow checker in depth";
    let out = registry().call("spawn", json!({"task": task}), &ctx).await;
    assert!(
        out.content
            .starts_with("Subagent [research the history of the Ru...] started"),
        "{}",
        out.content
    );
    let report = outbox.recv().await.unwrap();
    assert_eq!(report.chat_id, "C1");
    assert!(
        report
            .content
            .starts_with("[Subagent 'research the history of the Ru...' failed]"),
        "{}",
        report.content
    );
    assert!(report.content.ends_with("Error:\nthe API is down"));
}

// Paused time: were the task not aborted, tokio would jump past its sleep
// and its report would arrive.
#[tokio::test(start_paused = true)]
async fn a_cancelled_task_reports_nothing() {
    let (sink, mut outbox) = ChannelSink::new(8);
    let spawner = TaskSpawner::new(sink, |_request| async {
        tokio::time::sleep(Duration::from_secs(3600)).await;
        Ok("too late".to_owned())
    });
    let ctx = ToolContext::new()
        .with_channel("cli", "direct")
        .with_state(Subagents::new(spawner.clone()));
    let out = registry()
        .call("spawn", json!({"task": "wait"}), &ctx)
        .await;
    let id = id_of(&out.content);
    assert!(spawner.cancel(&id));
    assert!(!spawner.cancel(&id));
    assert!(spawner.running().is_empty());
    drop(spawner);
    drop(ctx);
    // Every sender is gone once the aborted task is dropped: the outbox ends empty.
    assert!(outbox.recv().await.is_none());
}

#[tokio::test]
async fn several_tasks_get_distinct_ids() {
    let (sink, _outbox) = ChannelSink::new(64);
    let spawner = TaskSpawner::new(sink, |_request| async {
        tokio::time::sleep(Duration::from_secs(3600)).await;
        Ok(String::new())
    });
    let ctx = ToolContext::new().with_state(Subagents::new(spawner.clone()));
    let registry = registry();
    let mut ids = Vec::new();
    for i in 0..20 {
        let out = registry
            .call("spawn", json!({"task": format!("t{i}")}), &ctx)
            .await;
        ids.push(id_of(&out.content));
    }
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 20);
    assert_eq!(spawner.running().len(), 20);
}

/// A host's own spawner, here one that has no room for more work.
struct Full;

#[toolsmith::async_trait]
impl toolsmith_builtins::agent::Spawner for Full {
    async fn spawn(
        &self,
        request: toolsmith_builtins::agent::SpawnRequest,
    ) -> Result<String, toolsmith_builtins::agent::SpawnError> {
        Err(toolsmith_builtins::agent::SpawnError(format!(
            "too many tasks to start '{}'",
            request.label
        )))
    }
}

#[tokio::test]
async fn a_spawner_that_refuses_gives_an_error_result() {
    let ctx = ToolContext::new().with_state(Subagents::new(Full));
    let out = registry()
        .call("spawn", json!({"task": "x", "label": "big job"}), &ctx)
        .await;
    assert!(out.is_error);
    assert!(
        out.content
            .contains("the task was not started: too many tasks to start 'big job'"),
        "{}",
        out.content
    );
}

#[tokio::test]
async fn a_panicking_task_is_reported_as_failed() {
    let (sink, mut outbox) = ChannelSink::new(8);
    let spawner = TaskSpawner::new(sink, |request| async move {
        if request.task == "explode" {
            panic!("boom");
        }
        Ok(String::new())
    });
    let ctx = ToolContext::new()
        .with_channel("cli", "direct")
        .with_state(Subagents::new(spawner.clone()));
    let out = registry()
        .call("spawn", json!({"task": "explode"}), &ctx)
        .await;
    assert!(!out.is_error, "{}", out.content);
    let report = outbox.recv().await.unwrap();
    assert_eq!(
        report.content,
        "[Subagent 'explode' failed]\n\nTask: explode\n\nError:\nthe task crashed"
    );
    assert!(spawner.running().is_empty());
}

/// Keeps the requests it is asked to start.
#[derive(Clone, Default)]
struct Recorder(Arc<std::sync::Mutex<Vec<toolsmith_builtins::agent::SpawnRequest>>>);

#[toolsmith::async_trait]
impl toolsmith_builtins::agent::Spawner for Recorder {
    async fn spawn(
        &self,
        request: toolsmith_builtins::agent::SpawnRequest,
    ) -> Result<String, toolsmith_builtins::agent::SpawnError> {
        self.0.lock().unwrap().push(request);
        Ok("task0001".into())
    }
}

#[tokio::test]
async fn a_task_asked_for_by_a_fired_job_says_which_job() {
    use toolsmith_builtins::agent::cron::FiredJob;
    let recorder = Recorder::default();
    let ctx = ToolContext::new().with_state(Subagents::new(recorder.clone()));
    let fired = ctx.clone().with_state(FiredJob {
        job_id: "job00042".into(),
    });
    for context in [&ctx, &fired] {
        let out = registry()
            .call("spawn", json!({"task": "look around"}), context)
            .await;
        assert!(!out.is_error, "{}", out.content);
    }
    let requests = recorder.0.lock().unwrap().clone();
    assert_eq!(requests[0].fired_job, None);
    assert_eq!(requests[1].fired_job.as_deref(), Some("job00042"));
}

/// A model spawning in a loop runs [`MAX_RUNNING`] tasks at once, not
/// thousands: past them `spawn` is refused with the reason, and a task
/// that ends makes room again.
#[tokio::test]
async fn tasks_past_the_bound_are_refused_until_one_ends() {
    use toolsmith_builtins::agent::MAX_RUNNING;
    let (sink, _outbox) = ChannelSink::new(64);
    let spawner = TaskSpawner::new(sink, |_request| async {
        tokio::time::sleep(Duration::from_secs(3600)).await;
        Ok(String::new())
    });
    let ctx = ToolContext::new()
        .with_channel("cli", "direct")
        .with_state(Subagents::new(spawner.clone()));
    let registry = registry();
    let mut ids = Vec::new();
    for _ in 0..MAX_RUNNING {
        let out = registry.call("spawn", json!({"task": "wait"}), &ctx).await;
        assert!(!out.is_error, "{}", out.content);
        ids.push(id_of(&out.content));
    }
    let refused = registry.call("spawn", json!({"task": "wait"}), &ctx).await;
    assert!(refused.is_error, "{}", refused.content);
    assert!(
        refused.content.contains("as many as run at once"),
        "{}",
        refused.content
    );
    assert!(spawner.cancel(&ids[0]));
    let again = registry.call("spawn", json!({"task": "wait"}), &ctx).await;
    assert!(!again.is_error, "{}", again.content);
}

/// A host that stops reading its outbox: a finished task waiting to
/// report still counts as running, so a model spawning in a loop is
/// refused past [`MAX_RUNNING`] instead of piling up finished tasks (and
/// their results) without bound; once the host reads again, the reports
/// arrive and make room.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn finished_tasks_waiting_on_a_stalled_outbox_still_count() {
    use toolsmith_builtins::agent::MAX_RUNNING;
    tokio::time::timeout(Duration::from_secs(60), async {
        let (sink, mut outbox) = ChannelSink::new(1);
        let spawner = TaskSpawner::new(sink, |_request| async { Ok("done".to_owned()) });
        let ctx = ToolContext::new()
            .with_channel("cli", "direct")
            .with_state(Subagents::new(spawner.clone()));
        let registry = registry();
        let mut started = 0;
        let mut refused = None;
        for _ in 0..4 * MAX_RUNNING {
            let out = registry.call("spawn", json!({"task": "quick"}), &ctx).await;
            if out.is_error {
                refused = Some(out.content);
                break;
            }
            started += 1;
            // Time for the task to finish and queue its report.
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let refused = refused
            .unwrap_or_else(|| panic!("{started} tasks started with nobody reading their reports"));
        assert!(refused.contains("as many as run at once"), "{refused}");
        // One report fits in the outbox; the others wait, counted.
        assert!(started <= MAX_RUNNING + 1, "{started} started");
        for _ in 0..started {
            outbox.recv().await.expect("a report");
        }
        let mut again = registry.call("spawn", json!({"task": "quick"}), &ctx).await;
        while again.is_error {
            tokio::time::sleep(Duration::from_millis(10)).await;
            again = registry.call("spawn", json!({"task": "quick"}), &ctx).await;
        }
        assert!(again.content.contains("started"), "{}", again.content);
    })
    .await
    .expect("bounded");
}

/// Tasks and labels a model may write: odd Unicode (combining marks with
/// no base, a right-to-left override, NUL, a lone joiner, a long word of
/// two-byte letters with no space to cut at), labels of blanks. Each call
/// answers in time without a panic, each report arrives, and the label
/// made from a task is cut on a character, never past 30 of them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn odd_unicode_tasks_and_labels_never_panic() {
    let (sink, mut outbox) = ChannelSink::new(64);
    let spawner = TaskSpawner::new(sink, |request| async move { Ok(request.label) });
    let ctx = ToolContext::new()
        .with_channel("telegram", "42")
        .with_state(Subagents::new(spawner));
    let registry = registry();
    let cases = [
        json!({"task": "é".repeat(20_000)}),
        json!({"task": "\u{301}".repeat(50)}),
        json!({"task": "\u{202e}drow\u{0}\u{200d}", "label": "\u{202e}"}),
        json!({"task": "👩‍👩‍👧‍👦".repeat(40), "label": " \n\t "}),
        json!({"task": "x", "label": "🦀".repeat(100)}),
        json!({"task": "x", "label": "🦀".repeat(101)}),
        json!({"task": " \u{3000}\u{85} "}),
        json!({"task": "x", "label": 7}),
    ];
    let (mut tried, mut refused, mut started) = (0, 0, 0);
    for args in cases {
        tried += 1;
        let call = registry.call("spawn", args.clone(), &ctx);
        let out = tokio::time::timeout(Duration::from_secs(30), call)
            .await
            .unwrap_or_else(|_| panic!("{args}: no answer in time"));
        assert!(
            !out.content.contains("internal error"),
            "{args}: {}",
            out.content
        );
        if out.is_error {
            refused += 1;
            continue;
        }
        started += 1;
        let report = tokio::time::timeout(Duration::from_secs(30), outbox.recv())
            .await
            .unwrap()
            .unwrap();
        let label = report.content.lines().last().unwrap().to_owned();
        if args.get("label").is_none() {
            assert!(label.chars().count() <= 33, "{args}: {label:?}");
        }
    }
    eprintln!("spawn: tried {tried}, refused {refused}, started {started}");
    assert!(refused > 0 && started > 0);
}

//! The layers that ship with the pipeline for retries, retry budgets,
//! caching, limits and error masking, each with real tools, and each
//! attacked the way a model (or a bug) would.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use toolsmith::exec::meta;
use toolsmith::pipeline::{
    Cache, CallLimits, Hooks, Mask, Pipeline, Rate, RateLimit, Retry, RetryBudget,
};
use toolsmith::{ErrorKind, ToolContext, ToolError, ToolOutput, ToolRegistry, tool};

/// What the tools of one test do: how often they ran, and the failures
/// they give before they succeed.
#[derive(Default)]
struct Probe {
    runs: AtomicUsize,
    failures: Vec<ToolError>,
}

impl Probe {
    fn failing(failures: Vec<ToolError>) -> Arc<Self> {
        Arc::new(Self {
            runs: AtomicUsize::new(0),
            failures,
        })
    }

    fn run(&self) -> Result<(), ToolError> {
        let run = self.runs.fetch_add(1, Ordering::SeqCst);
        match self.failures.get(run) {
            Some(error) => Err(error.clone()),
            None => Ok(()),
        }
    }

    fn runs(&self) -> usize {
        self.runs.load(Ordering::SeqCst)
    }
}

/// Fetch a page (read-only).
#[tool(read_only)]
async fn fetch_page(probe: &Probe, url: String) -> Result<String, ToolError> {
    probe.run()?;
    Ok(format!("page {url}"))
}

/// Send a mail (neither read-only nor idempotent).
#[tool]
async fn send_mail(probe: &Probe, to: String) -> Result<String, ToolError> {
    probe.run()?;
    Ok(format!("sent to {to}"))
}

/// Set a flag (idempotent).
#[tool(idempotent)]
async fn set_flag(probe: &Probe, on: bool) -> Result<String, ToolError> {
    probe.run()?;
    Ok(format!("flag {on}"))
}

/// Add two numbers (read-only).
#[tool(read_only)]
async fn lookup(probe: &Probe, a: i64, b: i64) -> Result<String, ToolError> {
    probe.run()?;
    Ok(format!("{}", a + b))
}

/// Search (read-only; some providers are shown it as `_7search`).
#[tool(name = "7search", read_only)]
async fn seven_search(probe: &Probe, q: String) -> Result<String, ToolError> {
    probe.run()?;
    Ok(format!("results for {q}"))
}

/// Start a long job (read-only), answering later.
#[tool(read_only)]
async fn start_job(probe: &Probe) -> Result<ToolOutput, ToolError> {
    probe.run()?;
    Ok(ToolOutput::started("started"))
}

/// Count up to a small number.
#[tool(read_only)]
async fn count_to(probe: &Probe, #[arg(maximum = 10)] n: u32) -> Result<String, ToolError> {
    probe.run()?;
    Ok(format!("counted to {n}"))
}

/// Crash with a secret in the message.
#[tool]
async fn boom() -> String {
    panic!("the database password is hunter2")
}

/// Fail with an internal error that names a secret.
#[tool]
async fn broken() -> Result<String, ToolError> {
    Err(ToolError::internal(
        "connection string postgres://admin:hunter2@db",
    ))
}

fn registry(pipeline: Pipeline) -> ToolRegistry {
    let registry = ToolRegistry::new().with_pipeline(pipeline);
    registry.register(FetchPageTool).unwrap();
    registry.register(SendMailTool).unwrap();
    registry.register(SetFlagTool).unwrap();
    registry.register(LookupTool).unwrap();
    registry.register(SevenSearchTool).unwrap();
    registry.register(StartJobTool).unwrap();
    registry.register(CountToTool).unwrap();
    registry.register(BoomTool).unwrap();
    registry.register(BrokenTool).unwrap();
    registry
}

fn ctx(probe: &Arc<Probe>) -> ToolContext {
    ToolContext::new().with_shared_state(Arc::clone(probe))
}

/// Every call of these tests is bounded in time.
async fn call(registry: &ToolRegistry, name: &str, args: Value, ctx: &ToolContext) -> ToolOutput {
    tokio::time::timeout(Duration::from_secs(20), registry.call(name, args, ctx))
        .await
        .expect("the call finished")
}

fn quick_retry() -> Retry {
    Retry::new()
        .with_max_attempts(3)
        .with_backoff(Duration::ZERO, Duration::ZERO)
}

fn network() -> ToolError {
    ToolError::network("connection reset by peer")
}

// ---- Retry ----

#[tokio::test]
async fn a_read_only_tool_is_retried_through_transient_failures() {
    let registry = registry(Pipeline::new().layer(quick_retry()));
    let probe = Probe::failing(vec![network(), ToolError::unavailable("HTTP 503")]);
    let out = call(&registry, "fetch_page", json!({"url": "u"}), &ctx(&probe)).await;
    assert_eq!(out.content, "page u");
    assert!(!out.is_error);
    assert_eq!(probe.runs(), 3);
    assert_eq!(out.metadata.read(&meta::ATTEMPTS), Some(3));
}

#[tokio::test]
async fn a_tool_that_is_not_safe_to_repeat_runs_once() {
    let registry = registry(Pipeline::new().layer(quick_retry()));
    let probe = Probe::failing(vec![network(); 5]);
    let out = call(&registry, "send_mail", json!({"to": "a@b"}), &ctx(&probe)).await;
    assert!(out.is_error);
    assert_eq!(
        probe.runs(),
        1,
        "a mail that may have gone out is not sent again"
    );
    assert_eq!(
        out.metadata.read(&meta::ERROR_KIND),
        Some(ErrorKind::Network)
    );
    assert_eq!(out.metadata.read(&meta::ATTEMPTS), None);
    // An idempotent tool is retried.
    let probe = Probe::failing(vec![network()]);
    let out = call(&registry, "set_flag", json!({"on": true}), &ctx(&probe)).await;
    assert_eq!(out.content, "flag true");
    assert_eq!(probe.runs(), 2);
}

#[tokio::test]
async fn a_failure_that_will_not_pass_is_not_retried_and_a_retried_one_gives_up() {
    let registry = registry(Pipeline::new().layer(quick_retry()));
    let probe = Probe::failing(vec![ToolError::failed("404 Not Found"), network()]);
    let out = call(&registry, "fetch_page", json!({"url": "u"}), &ctx(&probe)).await;
    assert!(out.content.contains("404 Not Found"), "{}", out.content);
    assert_eq!(probe.runs(), 1);
    // Always failing: three tries, then the last failure, counted.
    let probe = Probe::failing(vec![network(); 10]);
    let out = call(&registry, "fetch_page", json!({"url": "u"}), &ctx(&probe)).await;
    assert_eq!(probe.runs(), 3);
    assert!(out.is_error);
    assert!(
        out.content.contains("connection reset by peer"),
        "{}",
        out.content
    );
    assert_eq!(
        out.metadata.read(&meta::ERROR_KIND),
        Some(ErrorKind::Network)
    );
    assert_eq!(out.metadata.read(&meta::ATTEMPTS), Some(3));
    // The typed error stays typed when nothing was retried.
    let probe = Probe::failing(vec![ToolError::failed("gone")]);
    let error = registry
        .try_call("fetch_page", json!({"url": "u"}), &ctx(&probe))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Failed);
}

#[tokio::test]
async fn retry_after_is_waited_for_up_to_a_cap() {
    let retry = quick_retry().with_max_retry_after(Duration::from_secs(1));
    let registry = registry(Pipeline::new().layer(retry));
    let probe = Probe::failing(vec![ToolError::rate_limited(
        "slow down",
        Some(Duration::from_millis(5)),
    )]);
    let out = call(&registry, "fetch_page", json!({"url": "u"}), &ctx(&probe)).await;
    assert_eq!(out.content, "page u");
    assert_eq!(probe.runs(), 2);
    // An hour is more than the layer waits: the failure comes back at once.
    let probe = Probe::failing(vec![ToolError::rate_limited(
        "slow down",
        Some(Duration::from_secs(3600)),
    )]);
    let out = call(&registry, "fetch_page", json!({"url": "u"}), &ctx(&probe)).await;
    assert_eq!(probe.runs(), 1);
    assert_eq!(
        out.metadata.read(&meta::ERROR_KIND),
        Some(ErrorKind::RateLimited)
    );
    // The waits grow, and stay under their cap.
    let retry = Retry::new()
        .with_jitter(false)
        .with_backoff(Duration::from_millis(100), Duration::from_millis(300));
    assert_eq!(retry.delay(1, None), Some(Duration::from_millis(100)));
    assert_eq!(retry.delay(2, None), Some(Duration::from_millis(200)));
    assert_eq!(retry.delay(3, None), Some(Duration::from_millis(300)));
    assert_eq!(retry.delay(40, None), Some(Duration::from_millis(300)));
    assert_eq!(
        retry.delay(1, Some(Duration::from_secs(2))),
        Some(Duration::from_secs(2))
    );
    let jittered = Retry::new().with_backoff(Duration::from_millis(100), Duration::from_secs(1));
    let wait = jittered.delay(1, None).unwrap();
    assert!(wait >= Duration::from_millis(50) && wait <= Duration::from_millis(100));
}

#[tokio::test]
async fn a_cancelled_call_stops_waiting_to_retry() {
    let retry = Retry::new().with_backoff(Duration::from_secs(3600), Duration::from_secs(3600));
    let registry = registry(Pipeline::new().layer(retry));
    let probe = Probe::failing(vec![network(); 10]);
    let ctx = ctx(&probe);
    let token = ctx.cancellation().clone();
    let cancel = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(20)).await;
        token.cancel();
    });
    let out = call(&registry, "fetch_page", json!({"url": "u"}), &ctx).await;
    cancel.await.unwrap();
    assert_eq!(probe.runs(), 1);
    assert_eq!(
        out.metadata.read(&meta::ERROR_KIND),
        Some(ErrorKind::Cancelled)
    );
}

// ---- RetryBudget ----

#[tokio::test]
async fn a_model_that_keeps_sending_bad_arguments_is_stopped() {
    let registry = registry(Pipeline::new().layer(RetryBudget::new(3)));
    let probe = Probe::failing(vec![]);
    let turn = ctx(&probe).with_session_key("s1").with_message_id("m1");
    for n in [11, 12, 13] {
        let out = call(&registry, "count_to", json!({ "n": n }), &turn).await;
        assert_eq!(
            out.metadata.read(&meta::ERROR_KIND),
            Some(ErrorKind::InvalidArguments)
        );
    }
    // The fourth call is refused, even a valid one: the model is told to stop.
    let out = call(&registry, "count_to", json!({"n": 3}), &turn).await;
    assert_eq!(
        out.metadata.read(&meta::ERROR_KIND),
        Some(ErrorKind::Refused)
    );
    assert!(
        out.content.contains("Stop retrying 'count_to'"),
        "{}",
        out.content
    );
    assert!(out.content.contains("n must be <= 10"), "{}", out.content);
    assert_eq!(probe.runs(), 0);
    // Another session is not affected, nor another tool.
    let other = ctx(&probe).with_session_key("s2").with_message_id("m1");
    let out = call(&registry, "count_to", json!({"n": 3}), &other).await;
    assert_eq!(out.content, "counted to 3");
    let out = call(&registry, "lookup", json!({"a": 1, "b": 2}), &turn).await;
    assert_eq!(out.content, "3");
    // A new turn gives one more try; one more failure stops it again.
    let next_turn = ctx(&probe).with_session_key("s1").with_message_id("m2");
    let out = call(&registry, "count_to", json!({"n": 99}), &next_turn).await;
    assert_eq!(
        out.metadata.read(&meta::ERROR_KIND),
        Some(ErrorKind::InvalidArguments)
    );
    let out = call(&registry, "count_to", json!({"n": 3}), &next_turn).await;
    assert_eq!(
        out.metadata.read(&meta::ERROR_KIND),
        Some(ErrorKind::Refused)
    );
    // A success in a later turn clears the count.
    let third = ctx(&probe).with_session_key("s1").with_message_id("m3");
    assert_eq!(
        call(&registry, "count_to", json!({"n": 3}), &third)
            .await
            .content,
        "counted to 3"
    );
    for n in [11, 12] {
        call(&registry, "count_to", json!({ "n": n }), &third).await;
    }
    let out = call(&registry, "count_to", json!({"n": 4}), &third).await;
    assert_eq!(out.content, "counted to 4");
}

#[tokio::test]
async fn inventing_tool_names_uses_up_one_budget() {
    let registry = registry(Pipeline::new().layer(RetryBudget::new(3)));
    let probe = Probe::failing(vec![]);
    let ctx = ctx(&probe);
    for name in ["fetch", "get_page", "download"] {
        let out = call(&registry, name, json!({}), &ctx).await;
        assert_eq!(
            out.metadata.read(&meta::ERROR_KIND),
            Some(ErrorKind::UnknownTool)
        );
    }
    let out = call(&registry, "browse", json!({}), &ctx).await;
    assert_eq!(
        out.metadata.read(&meta::ERROR_KIND),
        Some(ErrorKind::Refused)
    );
    assert!(
        out.content.contains("Stop guessing tool names"),
        "{}",
        out.content
    );
    assert!(
        out.content.contains("'download' not found"),
        "{}",
        out.content
    );
    // Real tools still work.
    assert_eq!(
        call(&registry, "fetch_page", json!({"url": "u"}), &ctx)
            .await
            .content,
        "page u"
    );
}

#[tokio::test]
async fn the_budget_keeps_a_bounded_number_of_counts() {
    let budget = RetryBudget::new(2).with_max_tracked(2);
    let registry = registry(Pipeline::new().layer(budget.clone()));
    let probe = Probe::failing(vec![]);
    for session in 0..50 {
        let ctx = ctx(&probe).with_session_key(format!("s{session}"));
        call(&registry, "count_to", json!({"n": 50}), &ctx).await;
    }
    assert_eq!(budget.tracked(), 2);
    let last = ctx(&probe).with_session_key("s49");
    call(&registry, "count_to", json!({"n": 50}), &last).await;
    let out = call(&registry, "count_to", json!({"n": 1}), &last).await;
    assert_eq!(
        out.metadata.read(&meta::ERROR_KIND),
        Some(ErrorKind::Refused)
    );
    budget.forgive(Some("s49"));
    let out = call(&registry, "count_to", json!({"n": 1}), &last).await;
    assert_eq!(out.content, "counted to 1");
}

#[tokio::test]
async fn the_budget_counts_failures_that_inner_layers_made_results() {
    // Hooks inside the budget turn every failure into a result.
    let pipeline = Pipeline::new()
        .layer(RetryBudget::new(2))
        .layer(Hooks::new());
    let registry = registry(pipeline);
    let probe = Probe::failing(vec![ToolError::InvalidArguments(
        "the date is in the past".into(),
    )]);
    let ctx = ctx(&probe);
    let out = call(&registry, "count_to", json!({"n": 50}), &ctx).await;
    assert_eq!(
        out.metadata.read(&meta::ERROR_KIND),
        Some(ErrorKind::InvalidArguments)
    );
    // The tool's own refusal of its arguments counts too.
    let out = call(&registry, "count_to", json!({"n": 5}), &ctx).await;
    assert!(
        out.content.contains("the date is in the past"),
        "{}",
        out.content
    );
    let out = call(&registry, "count_to", json!({"n": 5}), &ctx).await;
    assert_eq!(
        out.metadata.read(&meta::ERROR_KIND),
        Some(ErrorKind::Refused)
    );
    assert!(
        out.content.contains("the date is in the past"),
        "{}",
        out.content
    );
    assert_eq!(probe.runs(), 1);
}

// ---- Cache ----

#[tokio::test]
async fn the_cache_answers_the_same_checked_call_whatever_its_key_order() {
    let registry = registry(Pipeline::new().layer(Cache::new(Duration::from_secs(3600))));
    let probe = Probe::failing(vec![]);
    let ctx = ctx(&probe).with_session_key("s1");
    let first = call(&registry, "lookup", json!({"a": 1, "b": 2}), &ctx).await;
    assert_eq!(first.content, "3");
    assert_eq!(first.metadata.read(&meta::CACHE_HIT), None);
    let again = call(&registry, "lookup", json!({"b": 2, "a": 1}), &ctx).await;
    assert_eq!(again.content, "3");
    assert_eq!(again.metadata.read(&meta::CACHE_HIT), Some(true));
    // The arguments compared are the checked ones: "1" is cast to 1.
    let cast = call(&registry, "lookup", json!({"a": "1", "b": 2}), &ctx).await;
    assert_eq!(cast.metadata.read(&meta::CACHE_HIT), Some(true));
    assert_eq!(probe.runs(), 1);
    // Other arguments are another call.
    call(&registry, "lookup", json!({"a": 2, "b": 2}), &ctx).await;
    assert_eq!(probe.runs(), 2);
}

#[tokio::test]
async fn the_cache_never_answers_one_session_with_anothers_result() {
    let cache = Cache::new(Duration::from_secs(3600));
    let registry = registry(Pipeline::new().layer(cache.clone()));
    let probe = Probe::failing(vec![]);
    let alice = ctx(&probe).with_session_key("alice");
    let bob = ctx(&probe).with_session_key("bob");
    call(&registry, "fetch_page", json!({"url": "inbox"}), &alice).await;
    let out = call(&registry, "fetch_page", json!({"url": "inbox"}), &bob).await;
    assert_eq!(out.metadata.read(&meta::CACHE_HIT), None);
    assert_eq!(probe.runs(), 2);
    // Calls without a session do not see the sessions' results either.
    let anonymous = ctx(&probe);
    let out = call(&registry, "fetch_page", json!({"url": "inbox"}), &anonymous).await;
    assert_eq!(out.metadata.read(&meta::CACHE_HIT), None);
    assert_eq!(cache.len(), 3);
    // A host that says its tools answer alike for everyone may share them.
    let shared = registry_with_shared_cache();
    let probe = Probe::failing(vec![]);
    call(
        &shared,
        "fetch_page",
        json!({"url": "x"}),
        &ctx(&probe).with_session_key("a"),
    )
    .await;
    let out = call(
        &shared,
        "fetch_page",
        json!({"url": "x"}),
        &ctx(&probe).with_session_key("b"),
    )
    .await;
    assert_eq!(out.metadata.read(&meta::CACHE_HIT), Some(true));
}

fn registry_with_shared_cache() -> ToolRegistry {
    registry(Pipeline::new().layer(Cache::new(Duration::from_secs(3600)).shared_across_sessions()))
}

#[tokio::test]
async fn the_cache_keeps_no_failures_no_writes_no_started_work_and_no_stale_results() {
    let cache = Cache::new(Duration::from_secs(3600));
    let registry = registry(Pipeline::new().layer(cache.clone()));
    let probe = Probe::failing(vec![ToolError::failed("not yet")]);
    let ctx = ctx(&probe);
    let failed = call(&registry, "fetch_page", json!({"url": "u"}), &ctx).await;
    assert!(failed.is_error);
    let out = call(&registry, "fetch_page", json!({"url": "u"}), &ctx).await;
    assert_eq!(out.content, "page u");
    assert_eq!(out.metadata.read(&meta::CACHE_HIT), None);
    assert_eq!(probe.runs(), 2);
    // A tool that changes things always runs.
    call(&registry, "send_mail", json!({"to": "x"}), &ctx).await;
    call(&registry, "send_mail", json!({"to": "x"}), &ctx).await;
    assert_eq!(probe.runs(), 4);
    // A result that only says the work started is not an answer to keep.
    call(&registry, "start_job", json!({}), &ctx).await;
    call(&registry, "start_job", json!({}), &ctx).await;
    assert_eq!(probe.runs(), 6);
    assert_eq!(cache.len(), 1);
    // Past its time a result is not used.
    let short = registry_with_ttl(Duration::from_millis(1));
    let probe = Probe::failing(vec![]);
    call(&short, "fetch_page", json!({"url": "u"}), &ctx_of(&probe)).await;
    tokio::time::sleep(Duration::from_millis(20)).await;
    let out = call(&short, "fetch_page", json!({"url": "u"}), &ctx_of(&probe)).await;
    assert_eq!(out.metadata.read(&meta::CACHE_HIT), None);
    assert_eq!(probe.runs(), 2);
}

fn registry_with_ttl(ttl: Duration) -> ToolRegistry {
    registry(Pipeline::new().layer(Cache::new(ttl)))
}

fn ctx_of(probe: &Arc<Probe>) -> ToolContext {
    ctx(probe)
}

#[tokio::test]
async fn the_cache_keeps_a_bounded_number_of_results() {
    let cache = Cache::new(Duration::from_secs(3600)).with_max_entries(2);
    let registry = registry(Pipeline::new().layer(cache.clone()));
    let probe = Probe::failing(vec![]);
    for url in 0..20 {
        call(
            &registry,
            "fetch_page",
            json!({ "url": url.to_string() }),
            &ctx(&probe),
        )
        .await;
    }
    assert_eq!(cache.len(), 2);
    // A result too large is not kept.
    let small = Cache::new(Duration::from_secs(3600)).with_max_entry_bytes(10);
    let registry = registry_with(small.clone());
    call(
        &registry,
        "fetch_page",
        json!({"url": "a long page name"}),
        &ctx(&probe),
    )
    .await;
    assert!(small.is_empty());
}

fn registry_with(cache: Cache) -> ToolRegistry {
    registry(Pipeline::new().layer(cache))
}

// ---- CallLimits and RateLimit ----

#[tokio::test]
async fn call_limits_count_turns_and_sessions() {
    let limits = CallLimits::new().per_turn(2).per_session(3);
    let registry = registry(Pipeline::new().layer(limits));
    let probe = Probe::failing(vec![]);
    let m1 = ctx(&probe).with_session_key("s").with_message_id("m1");
    for _ in 0..2 {
        assert_eq!(
            call(&registry, "lookup", json!({"a": 1, "b": 1}), &m1)
                .await
                .content,
            "2"
        );
    }
    // A call refused for its arguments is not counted, but is still refused.
    let bad = call(&registry, "lookup", json!({"a": "x", "b": 1}), &m1).await;
    assert_eq!(
        bad.metadata.read(&meta::ERROR_KIND),
        Some(ErrorKind::InvalidArguments)
    );
    let out = call(&registry, "lookup", json!({"a": 1, "b": 1}), &m1).await;
    assert_eq!(
        out.metadata.read(&meta::ERROR_KIND),
        Some(ErrorKind::Refused)
    );
    assert!(
        out.content.contains("limit of 2 tool calls per turn"),
        "{}",
        out.content
    );
    // The next turn may call again, until the session's limit.
    let m2 = ctx(&probe).with_session_key("s").with_message_id("m2");
    assert_eq!(
        call(&registry, "lookup", json!({"a": 1, "b": 1}), &m2)
            .await
            .content,
        "2"
    );
    let out = call(&registry, "lookup", json!({"a": 1, "b": 1}), &m2).await;
    assert!(
        out.content.contains("limit of 3 tool calls per session"),
        "{}",
        out.content
    );
    // Another session has its own counts.
    let other = ctx(&probe).with_session_key("t").with_message_id("m2");
    assert_eq!(
        call(&registry, "lookup", json!({"a": 1, "b": 1}), &other)
            .await
            .content,
        "2"
    );
    assert_eq!(probe.runs(), 4);
}

#[tokio::test]
async fn a_tool_limit_cannot_be_bypassed_by_an_alias() {
    let limits = CallLimits::new().tool_per_turn("7search", 1);
    let registry = registry(Pipeline::new().layer(limits));
    let probe = Probe::failing(vec![]);
    let ctx = ctx(&probe).with_message_id("m1");
    let out = call(&registry, "7search", json!({"q": "x"}), &ctx).await;
    assert_eq!(out.content, "results for x");
    let out = call(&registry, "_7search", json!({"q": "x"}), &ctx).await;
    assert_eq!(
        out.metadata.read(&meta::ERROR_KIND),
        Some(ErrorKind::Refused)
    );
    assert!(
        out.content
            .contains("limit of 1 call of '7search' per turn"),
        "{}",
        out.content
    );
    // Other tools are not limited.
    assert_eq!(
        call(&registry, "lookup", json!({"a": 1, "b": 1}), &ctx)
            .await
            .content,
        "2"
    );
    assert_eq!(probe.runs(), 2);
}

/// The whole seconds a refusal says to wait.
fn wait_in(text: &str) -> u64 {
    let after = text.split("try again in ").nth(1).expect(text);
    after.split(' ').next().unwrap().parse().expect(text)
}

#[tokio::test]
async fn a_rate_limit_cannot_be_bypassed_by_an_alias_and_says_when_to_try() {
    let limit = RateLimit::new().tool("7search", Rate::new(1, Duration::from_secs(3600)));
    let registry = registry(Pipeline::new().layer(limit));
    let probe = Probe::failing(vec![]);
    let ctx = ctx(&probe);
    assert_eq!(
        call(&registry, "7search", json!({"q": "x"}), &ctx)
            .await
            .content,
        "results for x"
    );
    let out = call(&registry, "_7search", json!({"q": "y"}), &ctx).await;
    assert_eq!(
        out.metadata.read(&meta::ERROR_KIND),
        Some(ErrorKind::Refused)
    );
    assert!(
        out.content
            .contains("'7search' may be called at most once per 3600 s"),
        "{}",
        out.content
    );
    let wait = wait_in(&out.content);
    assert!((3500..=3600).contains(&wait), "{}", out.content);
    assert_eq!(probe.runs(), 1);
    // Tools without a rate are not held back.
    assert_eq!(
        call(&registry, "lookup", json!({"a": 1, "b": 1}), &ctx)
            .await
            .content,
        "2"
    );
}

#[tokio::test]
async fn an_overall_rate_counts_every_tool_and_each_tool_rate_keeps_few_buckets() {
    let limit = RateLimit::new().overall(Rate::new(2, Duration::from_secs(3600)));
    let registry = registry(Pipeline::new().layer(limit));
    let probe = Probe::failing(vec![]);
    let ctx = ctx(&probe);
    call(&registry, "lookup", json!({"a": 1, "b": 1}), &ctx).await;
    call(&registry, "fetch_page", json!({"url": "u"}), &ctx).await;
    let out = call(&registry, "set_flag", json!({"on": true}), &ctx).await;
    assert!(
        out.content
            .contains("tools may be called at most 2 times per 3600 s in all"),
        "{}",
        out.content
    );
    assert!(wait_in(&out.content) >= 1700, "{}", out.content);
    assert_eq!(probe.runs(), 2);
    // Each tool on its own: one per tool, and the buckets stay bounded.
    let limit = RateLimit::new()
        .each_tool(Rate::new(1, Duration::from_secs(3600)))
        .with_max_tools(2);
    let registry = registry_with_rate(limit);
    let probe = Probe::failing(vec![]);
    let ctx = self::ctx(&probe);
    call(&registry, "lookup", json!({"a": 1, "b": 1}), &ctx).await;
    call(&registry, "fetch_page", json!({"url": "u"}), &ctx).await;
    let out = call(&registry, "lookup", json!({"a": 1, "b": 1}), &ctx).await;
    assert_eq!(
        out.metadata.read(&meta::ERROR_KIND),
        Some(ErrorKind::Refused)
    );
    assert_eq!(probe.runs(), 2);
}

fn registry_with_rate(limit: RateLimit) -> ToolRegistry {
    registry(Pipeline::new().layer(limit))
}

// ---- Mask ----

#[tokio::test]
async fn panics_and_internal_errors_are_hidden_from_the_model_and_kept_for_the_host() {
    let registry = registry(Pipeline::new().layer(Mask::new()));
    let ctx = ToolContext::new();
    let out = call(&registry, "boom", json!({}), &ctx).await;
    assert!(out.is_error);
    assert!(!out.content.contains("hunter2"), "{}", out.content);
    assert!(
        out.content
            .contains("Tool 'boom' failed because of an internal error")
    );
    assert_eq!(
        out.metadata.read(&meta::ERROR_KIND),
        Some(ErrorKind::Panicked)
    );
    let original = out.metadata.read(&meta::MASKED_ERROR).unwrap();
    assert!(
        original.contains("the database password is hunter2"),
        "{original}"
    );
    let out = call(&registry, "broken", json!({}), &ctx).await;
    assert!(!out.content.contains("hunter2"), "{}", out.content);
    assert_eq!(
        out.metadata.read(&meta::ERROR_KIND),
        Some(ErrorKind::Internal)
    );
    // What the model can act on is shown as it is.
    let probe = Probe::failing(vec![ToolError::failed("404 Not Found")]);
    let out = call(
        &registry,
        "fetch_page",
        json!({"url": "u"}),
        &self::ctx(&probe),
    )
    .await;
    assert!(out.content.contains("404 Not Found"));
    assert_eq!(out.metadata.read(&meta::MASKED_ERROR), None);
}

#[tokio::test]
async fn the_host_decides_the_text_and_masking_wraps_cache_and_retry() {
    let mask = Mask::with(|failure| {
        failure.kind.is_transient().then(|| {
            format!(
                "Error: '{}' is unreachable right now; try later.",
                failure.tool
            )
        })
    });
    let pipeline = Pipeline::new()
        .layer(mask)
        .layer(Cache::new(Duration::from_secs(3600)))
        .layer(quick_retry());
    let registry = registry(pipeline);
    // Always failing: retried, then masked, kind and attempts kept.
    let probe = Probe::failing(vec![network(); 10]);
    let ctx = ctx(&probe);
    let out = call(&registry, "fetch_page", json!({"url": "down"}), &ctx).await;
    assert_eq!(
        out.content,
        "Error: 'fetch_page' is unreachable right now; try later."
    );
    assert_eq!(
        out.metadata.read(&meta::ERROR_KIND),
        Some(ErrorKind::Network)
    );
    assert_eq!(out.metadata.read(&meta::ATTEMPTS), Some(3));
    assert!(
        out.metadata
            .read(&meta::MASKED_ERROR)
            .unwrap()
            .contains("connection reset")
    );
    // Failing once, then answering: retried, cached, then answered from the cache.
    let probe = Probe::failing(vec![network()]);
    let ctx = self::ctx(&probe);
    let first = call(&registry, "fetch_page", json!({"url": "up"}), &ctx).await;
    assert_eq!(first.content, "page up");
    assert_eq!(first.metadata.read(&meta::ATTEMPTS), Some(2));
    let second = call(&registry, "fetch_page", json!({"url": "up"}), &ctx).await;
    assert_eq!(second.content, "page up");
    assert_eq!(second.metadata.read(&meta::CACHE_HIT), Some(true));
    assert_eq!(second.metadata.read(&meta::ATTEMPTS), None);
    assert_eq!(probe.runs(), 2);
}

#[tokio::test]
async fn calls_refused_after_the_limits_do_not_use_them_up() {
    use toolsmith::exec::ApprovalPolicy;
    use toolsmith::pipeline::{Approval, Validators};
    let probe = Arc::new(Probe::default());
    let ctx = ctx(&probe).with_session_key("s").with_message_id("m1");
    // Limits added before a validator and a denying policy: the calls
    // those refuse never ran, and must not count.
    let registry = registry(
        Pipeline::new()
            .layer(CallLimits::new().per_turn(1))
            .layer(RateLimit::new().overall(Rate::new(1, Duration::from_secs(3600))))
            .layer(Validators::new().check("lookup", |args| {
                if args["a"].as_i64() < Some(0) {
                    Err(toolsmith::ArgumentError::other("a", "must not be negative"))
                } else {
                    Ok(())
                }
            }))
            .layer(Approval::deny(ApprovalPolicy::RequireForTools {
                tools: std::collections::HashSet::from(["send_mail".to_owned()]),
            })),
    );
    let refused = call(&registry, "lookup", json!({"a": -1, "b": 2}), &ctx).await;
    assert!(
        refused.content.contains("must not be negative"),
        "{}",
        refused.content
    );
    let denied = call(&registry, "send_mail", json!({"to": "x"}), &ctx).await;
    assert_eq!(
        denied.metadata.read(&meta::ERROR_KIND),
        Some(ErrorKind::Denied),
        "{}",
        denied.content
    );
    assert_eq!(probe.runs(), 0);
    let out = call(&registry, "lookup", json!({"a": 1, "b": 2}), &ctx).await;
    assert_eq!(out.content, "3");
    // The one call that ran used the limits up.
    let over = call(&registry, "lookup", json!({"a": 1, "b": 2}), &ctx).await;
    assert_eq!(
        over.metadata.read(&meta::ERROR_KIND),
        Some(ErrorKind::Refused)
    );
}

#[tokio::test]
async fn a_rate_of_once_in_the_longest_period_refuses_without_panicking() {
    let registry = registry_with_rate(RateLimit::new().overall(Rate::new(1, Duration::MAX)));
    let probe = Arc::new(Probe::default());
    let ctx = ctx(&probe);
    assert_eq!(
        call(&registry, "lookup", json!({"a": 1, "b": 2}), &ctx)
            .await
            .content,
        "3"
    );
    let over = call(&registry, "lookup", json!({"a": 1, "b": 2}), &ctx).await;
    assert_eq!(
        over.metadata.read(&meta::ERROR_KIND),
        Some(ErrorKind::Refused),
        "{}",
        over.content
    );
}

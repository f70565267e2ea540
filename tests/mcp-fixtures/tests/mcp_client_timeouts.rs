//! A mounted tool's timeouts, against the fixture server's `pulse` tool,
//! which reports progress at a pace it is told and then goes silent: each
//! progress report starts the server's `toolTimeout` again, up to its
//! `maxTotalTimeout`; a call that goes silent is stopped at `toolTimeout`.
//! Either way one timer decides, and the failure reads as any tool's
//! timeout does.

#[path = "../peers.rs"]
mod peers;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tk::exec::meta;
use tk::mcp::{McpClients, McpConfig};
use tk::{ErrorKind, Progress, ProgressReporter, ToolContext, ToolOutput, ToolRegistry};

async fn mount(settings: Value) -> (Arc<ToolRegistry>, McpClients) {
    let mut server = json!({"command": peers::fixture_server(), "args": ["--stdio"]});
    for (k, v) in settings.as_object().unwrap() {
        server[k] = v.clone();
    }
    let config = McpConfig::from_json(&json!({"mcpServers": {"fx": server}})).unwrap();
    let registry = Arc::new(ToolRegistry::new());
    let clients = McpClients::new(config, &registry);
    for (server, outcome) in clients.connect().await {
        outcome.unwrap_or_else(|e| panic!("{server}: {e}"));
    }
    (registry, clients)
}

/// Every test's body runs within this, so a server that hangs fails the
/// test instead of holding the suite.
async fn bounded<F: std::future::Future>(body: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(60), body)
        .await
        .expect("the test did not finish within 60 s")
}

/// The progress a call reported, as it reached the caller.
#[derive(Default)]
struct Reports(Mutex<Vec<f64>>);

impl ProgressReporter for Reports {
    fn report(&self, progress: Progress) {
        self.0.lock().unwrap().push(progress.progress);
    }
}

/// Call `pulse` and return what came back and the progress the caller saw.
async fn pulse(
    registry: &ToolRegistry,
    beats: u64,
    every_ms: u64,
    silent_ms: u64,
) -> (ToolOutput, Vec<f64>) {
    let reports = Arc::new(Reports::default());
    let ctx = ToolContext::new().with_progress_reporter(reports.clone());
    let args = json!({"beats": beats, "every_ms": every_ms, "silent_ms": silent_ms});
    let out = registry.call("mcp_fx_pulse", args, &ctx).await;
    let seen = reports.0.lock().unwrap().clone();
    (out, seen)
}

fn timed_out(within: &str) -> String {
    format!(
        "Error: Tool 'mcp_fx_pulse' failed: the tool did not finish within {within} and was stopped\n\n[Analyze the error above and try a different approach.]"
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_that_keeps_reporting_progress_outlives_the_idle_timeout() {
    bounded(async {
        let (registry, clients) = mount(json!({"toolTimeout": 1, "maxTotalTimeout": 30})).await;
        // Eight reports 400 ms apart: 3.2 s in all, more than three idle
        // timeouts, never 1 s without a word.
        let (out, seen) = pulse(&registry, 8, 400, 0).await;
        assert!(!out.is_error, "{out:?}");
        assert_eq!(out.content, "8 beats");
        // Progress was asked for, and reached the caller.
        assert_eq!(seen, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]);
        clients.disconnect().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_that_keeps_reporting_progress_is_stopped_at_the_maximum_total_time() {
    bounded(async {
        let (registry, clients) = mount(json!({"toolTimeout": 1, "max_total_timeout": 3})).await;
        // A report every 250 ms for a minute: only the total can stop it.
        let (out, seen) = pulse(&registry, 240, 250, 0).await;
        assert!(out.is_error, "{out:?}");
        assert_eq!(out.content, timed_out("3 s"));
        assert_eq!(
            out.metadata.read(&meta::ERROR_KIND),
            Some(ErrorKind::Timeout)
        );
        // It outlived the idle timeout: reports came for longer than 1 s.
        assert!(seen.len() > 4, "{seen:?}");
        // The server is still there for the next call.
        let (out, _) = pulse(&registry, 1, 10, 0).await;
        assert_eq!(out.content, "1 beats");
        clients.disconnect().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_that_goes_silent_is_stopped_at_the_idle_timeout() {
    bounded(async {
        let (registry, clients) = mount(json!({"toolTimeout": 1, "maxTotalTimeout": 30})).await;
        // Three reports, then twenty seconds without a word.
        let (out, seen) = pulse(&registry, 3, 200, 20_000).await;
        assert!(out.is_error, "{out:?}");
        assert_eq!(out.content, timed_out("1 s"));
        assert_eq!(
            out.metadata.read(&meta::ERROR_KIND),
            Some(ErrorKind::Timeout)
        );
        assert_eq!(seen, [1.0, 2.0, 3.0]);
        clients.disconnect().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_resets_the_tool_timeout_is_the_whole_call() {
    bounded(async {
        let (registry, clients) =
            mount(json!({"toolTimeout": 2, "resetTimeoutOnProgress": false})).await;
        assert_eq!(
            registry.get("mcp_fx_pulse").unwrap().spec().timeout,
            Some(Duration::from_secs(2))
        );
        let (out, seen) = pulse(&registry, 240, 250, 0).await;
        assert_eq!(out.content, timed_out("2 s"));
        // Progress still reaches the caller.
        assert!(!seen.is_empty());
        clients.disconnect().await;
    })
    .await;
}

//! A call reads the same wherever it comes from: the tools of
//! `bad_calls.rs` called in process (`registry.call`, the runner), served
//! by the fixture server to the official Python SDK's client (stdio,
//! streamable HTTP), and mounted by our client from our server. The
//! pipeline's defaults (the timeout, panic containment, the check) apply on
//! every path, and its failures are one text. A host's approval policy
//! applies to served calls too.
//!
//! The Python peer comes from `scripts/mcp_peers.sh`.

#[path = "../bad_calls.rs"]
mod bad_calls;
#[path = "../peers.rs"]
mod peers;

use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tk::exec::{CallStatus, Runner, ToolCall};
use tk::mcp::{McpClients, McpConfig};
use tk::{ToolContext, ToolOutput, ToolRegistry};

/// What a tool that sleeps past its timeout of 1 s reads, on every path.
const TIMED_OUT: &str = "Error: Tool 'oversleep' failed: the tool did not finish within 1 s and was stopped\n\n[Analyze the error above and try a different approach.]";

/// The bad calls: arguments the check refuses (a value of the wrong type,
/// one out of range), a name no tool has, a tool that panics.
fn bad_calls() -> Vec<(&'static str, Value)> {
    vec![
        ("count_to", json!({"n": "many"})),
        ("count_to", json!({"n": 11})),
        ("count_too", json!({"n": 3})),
        ("boom", json!({"message": "the gears jammed"})),
    ]
}

/// Every test's body runs within this, so a peer that hangs fails the test
/// instead of holding the suite.
async fn bounded<F: std::future::Future>(body: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(120), body)
        .await
        .expect("the test did not finish within 120 s")
}

async fn through_registry(name: &str, args: Value) -> ToolOutput {
    bad_calls::registry()
        .call(name, args, &ToolContext::new())
        .await
}

async fn through_runner(name: &str, args: Value) -> ToolOutput {
    let runner = Runner::new(bad_calls::registry());
    let state = runner
        .run(vec![ToolCall::new("c1", name, args)], &ToolContext::new())
        .await;
    let record = &state.calls[0];
    assert_eq!(record.status, CallStatus::Error, "{record:?}");
    record.output.clone().expect("an output")
}

/// The Python SDK's client, making `calls` against `target` (`stdio
/// COMMAND ARGS...` or `http URL`): for each, whether it is an error and
/// its text. Killed after 60 s.
fn python_calls(target: &[&str], calls: &[(&str, Value)]) -> Vec<(bool, String)> {
    let script = peers::root().join("tests/mcp-fixtures/python_client.py");
    let calls: Vec<Value> = calls.iter().map(|(n, a)| json!([n, a])).collect();
    let mut child = Command::new(peers::python())
        .arg(script)
        .args(target)
        .env("MCP_CALLS", Value::from(calls).to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the Python client did not finish within 60 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "the Python client failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let seen: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));
    seen["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|call| {
            let texts: Vec<&str> = call["text"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t.as_str().unwrap())
                .collect();
            (call["is_error"] == true, texts.join("\n"))
        })
        .collect()
}

/// The fixture server over stdio, serving the bad-call tools alone.
fn stdio_target(extra: &'static [&'static str]) -> Vec<&'static str> {
    let mut target = vec![
        "stdio",
        peers::fixture_server(),
        "--stdio",
        "--only-bad-calls",
    ];
    target.extend_from_slice(extra);
    target
}

/// Our client with the fixture server (the bad-call tools alone) mounted
/// as `fx`.
async fn mounted() -> (Arc<ToolRegistry>, McpClients) {
    let config = McpConfig::from_json(&json!({"mcpServers": {"fx": {
        "command": peers::fixture_server(), "args": ["--stdio", "--only-bad-calls"]
    }}}))
    .unwrap();
    let registry = Arc::new(ToolRegistry::new());
    let clients = McpClients::new(config, &registry);
    for (server, outcome) in clients.connect().await {
        outcome.unwrap_or_else(|e| panic!("{server}: {e}"));
    }
    (registry, clients)
}

// The timeout, on each entry point.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timeout_through_registry_call() {
    bounded(async {
        let out = through_registry("oversleep", json!({"seconds": 30})).await;
        assert!(out.is_error);
        assert_eq!(out.content, TIMED_OUT);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timeout_through_the_runner() {
    bounded(async {
        let out = through_runner("oversleep", json!({"seconds": 30})).await;
        assert!(out.is_error);
        assert_eq!(out.content, TIMED_OUT);
    })
    .await;
}

#[test]
fn a_timeout_to_a_python_client_over_stdio() {
    let seen = python_calls(&stdio_target(&[]), &[("oversleep", json!({"seconds": 30}))]);
    assert_eq!(seen, [(true, TIMED_OUT.to_owned())]);
}

#[test]
fn a_timeout_over_streamable_http() {
    let server = peers::fixture_http(&["--only-bad-calls"]);
    let seen = python_calls(
        &["http", &server.url],
        &[("oversleep", json!({"seconds": 30}))],
    );
    assert_eq!(seen, [(true, TIMED_OUT.to_owned())]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timeout_through_a_mounted_tool() {
    bounded(async {
        let (registry, clients) = mounted().await;
        let out = registry
            .call(
                "mcp_fx_oversleep",
                json!({"seconds": 30}),
                &ToolContext::new(),
            )
            .await;
        assert!(out.is_error);
        assert_eq!(out.content, TIMED_OUT);
        clients.disconnect().await;
    })
    .await;
}

// One text for each bad call, on every path.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_call_reads_the_same_on_every_path() {
    bounded(async {
        let mut direct = Vec::new();
        for (name, args) in bad_calls() {
            let out = through_registry(name, args.clone()).await;
            assert!(out.is_error, "{name}: {out:?}");
            let runner = through_runner(name, args).await;
            assert_eq!(runner.content, out.content, "{name}");
            direct.push((true, out.content));
        }
        // What the texts say: the check's refusals, the unknown name with
        // the tool meant, the panic's message.
        let texts: Vec<&str> = direct.iter().map(|(_, t)| t.as_str()).collect();
        assert!(
            texts[0].contains("'count_to'") && texts[0].contains("n"),
            "{}",
            texts[0]
        );
        assert!(texts[1].contains("10"), "{}", texts[1]);
        assert!(
            texts[2].contains("Did you mean 'count_to'?"),
            "{}",
            texts[2]
        );
        assert!(
            texts[3].starts_with("Error: Tool 'boom' failed: the tool crashed: the gears jammed"),
            "{}",
            texts[3]
        );

        let calls = bad_calls();
        let python = tokio::task::spawn_blocking(move || python_calls(&stdio_target(&[]), &calls))
            .await
            .unwrap();
        assert_eq!(python, direct, "a Python client over stdio");

        // Mounted, the tools are `mcp_fx_{name}`: the client's own check
        // names the tool as the model called it, the server's failures come
        // back as the server wrote them, with nothing added.
        let (registry, clients) = mounted().await;
        for ((name, args), (_, expected)) in bad_calls().into_iter().zip(&direct) {
            let out = registry
                .call(&format!("mcp_fx_{name}"), args, &ToolContext::new())
                .await;
            assert!(out.is_error, "{name}: {out:?}");
            assert_eq!(&out.content.replace("mcp_fx_", ""), expected, "{name}");
        }
        // The panic is the server's text exactly: its name, not ours.
        let boom = registry
            .call(
                "mcp_fx_boom",
                json!({"message": "the gears jammed"}),
                &ToolContext::new(),
            )
            .await;
        assert_eq!(boom.content, direct[3].1);
        clients.disconnect().await;
    })
    .await;
}

// The host's approval policy, on served calls.

#[test]
fn a_served_call_the_hosts_policy_denies_is_an_error_result() {
    let seen = python_calls(
        &stdio_target(&["--deny-dangerous"]),
        &[
            ("erase", json!({"record": "accounts"})),
            ("count_to", json!({"n": 3})),
        ],
    );
    let (denied, text) = &seen[0];
    assert!(*denied, "{seen:?}");
    assert!(
        text.starts_with("Error: Tool 'erase' failed: the user did not approve this call"),
        "{text}"
    );
    assert!(!text.contains("erased"), "{text}");
    // A read-only tool runs.
    assert_eq!(seen[1], (false, "1 2 3".to_owned()));
}

//! Our MCP server (the fixture server, a registry of `#[tool]` functions)
//! driven by clients nobody here wrote: the official Python SDK's client and
//! the Inspector CLI, over stdio and streamable HTTP; and by our own client
//! for cancellation, and by raw HTTP for the DNS-rebinding checks and the
//! stateless mode.
//!
//! The peers come from `scripts/mcp_peers.sh`.

#[path = "../peers.rs"]
mod peers;
#[path = "../raw_http.rs"]
mod raw_http;

use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use raw_http::{initialize, listen, open_session, post};
use serde_json::{Value, json};
use tk::mcp::{McpClients, McpConfig};
use tk::{ToolContext, ToolRegistry};

fn python_client(args: &[&str]) -> Value {
    let script = peers::root().join("tests/mcp-fixtures/python_client.py");
    let out = Command::new(peers::python())
        .arg(script)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the Python client failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
}

fn check_python_session(seen: &Value) {
    let tools = seen["tools"].as_array().unwrap();
    assert!(tools.len() > 15 && tools.contains(&json!("echo")), "{seen}");
    assert_eq!(seen["echo_read_only"], true);
    assert_eq!(seen["echo_schema"]["required"], json!(["message"]));
    assert_eq!(seen["echo"], json!(["Echo: from python"]));
    // The registry's lenient casting ran: "0" reached the tool as 0.
    assert_eq!(seen["echo_cast"], json!(["slept 0s"]));
    assert_eq!(seen["missing_argument"]["is_error"], true);
    assert!(
        seen["missing_argument"]["text"][0]
            .as_str()
            .unwrap()
            .contains("message is required")
    );
    assert_eq!(seen["tool_error"]["is_error"], true);
    assert!(
        seen["tool_error"]["text"][0]
            .as_str()
            .unwrap()
            .contains("intentionally returns an error")
    );
    assert_eq!(
        seen["progress"],
        json!([
            [0.0, 100.0, "Completed step 0 of 100"],
            [50.0, 100.0, "Completed step 50 of 100"],
            [100.0, 100.0, "Completed step 100 of 100"]
        ])
    );
    assert_eq!(seen["image"], json!(["image"]));
    // Output schemas and structured content of `#[tool]` functions returning a struct.
    assert_eq!(
        seen["weather_output_schema"]["properties"]["celsius"]["type"], "integer",
        "{seen}"
    );
    assert_eq!(seen["weather_open_world"], true);
    assert_eq!(seen["weather"], json!({"city": "Oslo", "celsius": 21}));
    // A list is wrapped under `result`, in the schema and in the content.
    let forecast_schema = &seen["forecast_output_schema"];
    assert_eq!(forecast_schema["type"], "object", "{seen}");
    assert_eq!(forecast_schema["x-toolsmith-wrapped"], true, "{seen}");
    assert_eq!(
        forecast_schema["properties"]["result"]["items"]["$ref"], "#/$defs/Weather",
        "{seen}"
    );
    let days = json!([{"city": "Oslo", "celsius": 21}, {"city": "Oslo", "celsius": 20}]);
    assert_eq!(seen["forecast"], json!({"result": days}));
    assert_eq!(seen["forecast_text"], json!([days.to_string()]));
}

#[test]
fn the_python_client_over_stdio_with_pages() {
    let seen = python_client(&[
        "stdio",
        peers::fixture_server(),
        "--stdio",
        "--page-size",
        "5",
    ]);
    check_python_session(&seen);
    let tools = seen["tools"].as_array().unwrap().len();
    assert_eq!(seen["pages"], json!(tools.div_ceil(5)), "{seen}");
}

#[test]
fn the_python_client_over_streamable_http() {
    let server = peers::fixture_http(&[]);
    let seen = python_client(&["http", &server.url]);
    check_python_session(&seen);
    assert_eq!(seen["pages"], 1);
}

/// The Inspector CLI's JSON answer; it exits with an error status exactly
/// when the call reported an error, which the caller says it expects.
fn inspector_expecting(args: &[&str], success: bool) -> Value {
    let launcher = peers::npm_script(
        "@modelcontextprotocol/inspector",
        "clients/launcher/build/index.js",
    );
    let catalog = std::env::temp_dir().join(format!("mcp-inspector-{}.json", std::process::id()));
    let out = Command::new(peers::node())
        .arg(launcher)
        .arg("--cli")
        .args(args)
        .env("MCP_CATALOG_PATH", &catalog)
        .output()
        .unwrap();
    assert_eq!(
        out.status.success(),
        success,
        "the Inspector on {args:?}:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
}

fn inspector(args: &[&str]) -> Value {
    inspector_expecting(args, true)
}

#[test]
fn the_inspector_cli_over_stdio_and_stateless_http() {
    let stdio = [peers::fixture_server(), "--stdio"];
    let http = peers::fixture_http(&["--stateless"]);
    for target in [&stdio[..], &[http.url.as_str()][..]] {
        let list = inspector(&[target, &["--method", "tools/list"]].concat());
        let tools = list["tools"].as_array().unwrap();
        let echo = tools.iter().find(|t| t["name"] == "echo").unwrap();
        assert_eq!(echo["annotations"]["readOnlyHint"], true);
        assert_eq!(
            echo["inputSchema"]["properties"]["message"]["type"],
            "string"
        );

        let call = inspector(
            &[
                target,
                &[
                    "--method",
                    "tools/call",
                    "--tool-name",
                    "echo",
                    "--tool-arg",
                    "message=inspected",
                ],
            ]
            .concat(),
        );
        assert_eq!(
            call["content"],
            json!([{"type": "text", "text": "Echo: inspected"}]),
            "{call}"
        );

        let failed = inspector_expecting(
            &[
                target,
                &[
                    "--method",
                    "tools/call",
                    "--tool-name",
                    "slow",
                    "--tool-arg",
                    "seconds=999",
                ],
            ]
            .concat(),
            false,
        );
        assert_eq!(failed["isError"], true, "{failed}");
        assert!(
            failed["content"][0]["text"]
                .as_str()
                .unwrap()
                .contains("seconds"),
            "{failed}"
        );

        let resources = inspector(&[target, &["--method", "resources/list"]].concat());
        assert!(
            resources["resources"]
                .as_array()
                .unwrap()
                .iter()
                .any(|r| r["uri"] == "test://static-text"),
            "{resources}"
        );
        let prompt = inspector(
            &[
                target,
                &[
                    "--method",
                    "prompts/get",
                    "--prompt-name",
                    "test_prompt_with_arguments",
                    "--prompt-args",
                    "arg1=a",
                    "arg2=b",
                ],
            ]
            .concat(),
        );
        assert_eq!(
            prompt["messages"][0]["content"]["text"], "Prompt with arguments: arg1='a', arg2='b'",
            "{prompt}"
        );
    }
}

/// A list from our server reaches our client as the list itself: the
/// output schema is marked as a wrapper, so the client takes the value
/// from `result`; served on from a second registry, it is wrapped again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrapped_result_round_trips_through_our_server_and_client() {
    let config = McpConfig::from_json(&json!({"mcpServers": {"fx": {
        "command": peers::fixture_server(), "args": ["--stdio"]
    }}}))
    .unwrap();
    let registry = Arc::new(ToolRegistry::new());
    let clients = McpClients::new(config, &registry);
    assert!(clients.connect().await[0].1.is_ok());
    let spec = registry
        .get("mcp_fx_forecast")
        .expect("mounted")
        .spec()
        .clone();
    let schema = spec.output_schema.expect("an output schema");
    assert_eq!(schema["x-toolsmith-wrapped"], true, "{schema}");
    let out = registry
        .call(
            "mcp_fx_forecast",
            json!({"city": "Oslo", "days": 2}),
            &ToolContext::new(),
        )
        .await;
    assert!(!out.is_error, "{}", out.content);
    let days = json!([{"city": "Oslo", "celsius": 21}, {"city": "Oslo", "celsius": 20}]);
    assert_eq!(out.structured.as_deref(), Some(&days));
    assert_eq!(out.content, days.to_string());
    // The wrapper's schema still describes what the server sent.
    let compiled = tk::args::ArgumentSchema::compile(&schema).unwrap();
    assert!(compiled.validate(&json!({"result": days})).is_ok());
    // An empty list is a value too.
    let out = registry
        .call(
            "mcp_fx_forecast",
            json!({"city": "Oslo", "days": 0}),
            &ToolContext::new(),
        )
        .await;
    assert_eq!(out.structured.as_deref(), Some(&json!([])));
    assert_eq!(out.content, "[]");
}

/// A progress reporter that listens and forgets.
struct Ignore;

impl tk::ProgressReporter for Ignore {
    fn report(&self, _progress: tk::Progress) {}
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_call_reaches_the_tools_token() {
    let config = McpConfig::from_json(&json!({"mcpServers": {"fx": {
        "command": peers::fixture_server(), "args": ["--stdio"]
    }}}))
    .unwrap();
    let registry = Arc::new(ToolRegistry::new());
    let clients = McpClients::new(config, &registry);
    assert!(clients.connect().await[0].1.is_ok());
    // Both ways a call goes out: plain, and with progress routed back.
    for (round, ctx) in [
        ToolContext::new(),
        ToolContext::new().with_progress_reporter(Arc::new(Ignore)),
    ]
    .into_iter()
    .enumerate()
    {
        let marker =
            std::env::temp_dir().join(format!("mcp-cancel-{}-{round}", std::process::id()));
        let _ = std::fs::remove_file(&marker);
        let token = ctx.cancellation().clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(300)).await;
            token.cancel();
        });
        let out = registry
            .call("mcp_fx_wait_for_cancel", json!({"marker": marker}), &ctx)
            .await;
        assert!(out.is_error && out.content.contains("cancelled"), "{out:?}");
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while !marker.exists() {
            assert!(
                std::time::Instant::now() < deadline,
                "round {round}: the server's tool never saw the cancellation"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert_eq!(std::fs::read_to_string(&marker).unwrap(), "cancelled");
        let _ = std::fs::remove_file(&marker);
    }
    clients.disconnect().await;
}

#[test]
fn foreign_hosts_and_origins_are_refused() {
    let server = peers::fixture_http(&[]);
    let (ok, _) = post(&server.url, &[], &initialize());
    assert_eq!(ok, 200);
    let (host, _) = post(&server.url, &[("Host", "evil.example:80")], &initialize());
    assert_eq!(host, 403, "a rebound DNS name must be refused");
    let (origin, _) = post(
        &server.url,
        &[("Origin", "http://evil.example")],
        &initialize(),
    );
    assert_eq!(origin, 403, "a foreign browser origin must be refused");
    let (local_origin, _) = post(
        &server.url,
        &[("Origin", "http://localhost:5173")],
        &initialize(),
    );
    assert_eq!(local_origin, 200);
}

#[test]
fn stateless_servers_answer_any_request_without_a_session() {
    // Two processes, as behind a load balancer: initialize on one, call on the other.
    let a = peers::fixture_http(&["--stateless"]);
    let b = peers::fixture_http(&["--stateless"]);
    let (status, response) = post(&a.url, &[], &initialize());
    assert_eq!(status, 200, "{response}");
    assert!(
        !response.to_ascii_lowercase().contains("mcp-session-id"),
        "{response}"
    );
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo", "arguments": {"message": "balanced"}}});
    let (status, response) = post(&b.url, &[("MCP-Protocol-Version", "2025-11-25")], &call);
    assert_eq!(status, 200, "{response}");
    assert!(response.contains("Echo: balanced"), "{response}");
}

#[test]
fn each_http_session_keeps_its_own_log_level() {
    let server = peers::fixture_http(&[]);
    let (quiet, chatty) = (open_session(&server.url), open_session(&server.url));
    let set_level = json!({"jsonrpc": "2.0", "id": 2, "method": "logging/setLevel",
        "params": {"level": "error"}});
    let (status, response) = post(&server.url, &[("Mcp-Session-Id", &quiet)], &set_level);
    assert_eq!(status, 200, "{response}");
    let (quiet_stream, chatty_stream) = (listen(&server.url, &quiet), listen(&server.url, &chatty));
    let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "test_tool_with_logging", "arguments": {}}});
    // The tool logs at `info`: below what the quiet session asked for, not
    // below the other's. Its logs are sent before its result.
    for session in [&quiet, &chatty] {
        let (_, result) = post(&server.url, &[("Mcp-Session-Id", session)], &call);
        assert!(result.contains("executed successfully"), "{result}");
    }
    let (heard_quiet, heard_chatty) = (quiet_stream.finish(), chatty_stream.finish());
    assert!(
        heard_chatty.contains("Tool execution started"),
        "{heard_chatty}"
    );
    assert!(!heard_quiet.contains("Tool execution"), "{heard_quiet}");
}

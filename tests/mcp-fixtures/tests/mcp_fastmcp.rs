//! FastMCP, both ways, over stdio and streamable HTTP: a FastMCP server
//! (`fastmcp_server.py`) mounted by our client, and our fixture server
//! driven by FastMCP's `Client` (`fastmcp_client.py`).
//!
//! FastMCP comes from `scripts/mcp_peers.sh`. Outside CI a machine without
//! it skips these tests, saying so; in CI a missing FastMCP fails them.
//!
//! Tasks need FastMCP's `fastmcp-tasks` package, whose newest release goes
//! with FastMCP 4.1.4: the task round trips run with that pair, from a
//! second virtualenv (`fastmcp_task_server.py`, `fastmcp_task_client.py`).
//! FastMCP's task client sends no `Mcp-Name` header on `tasks/get`, which
//! streamable HTTP requires (our server refuses such a request with
//! `-32020`), so its task round trip with our server runs over stdio.

#[path = "../peers.rs"]
mod peers;

use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Map, Value, json};
use tk::mcp::{Elicitation, ElicitationKind, ElicitationRequest, Elicitor, McpClients, McpConfig};
use tk::{ToolContext, ToolRegistry};

/// Every test's body runs within this, so a peer that hangs fails the test
/// instead of holding up the suite.
async fn bounded<T>(test: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(120), test)
        .await
        .expect("the test did not finish within 120 s")
}

/// The host's user: fills every field of a form with "Ada", and remembers
/// the questions.
#[derive(Clone, Default)]
struct User(Arc<Mutex<Vec<String>>>);

#[tk::async_trait]
impl Elicitor for User {
    async fn elicit(
        &self,
        request: ElicitationRequest,
    ) -> Result<Elicitation, Box<dyn std::error::Error + Send + Sync>> {
        self.0.lock().unwrap().push(request.message.clone());
        let ElicitationKind::Form { schema } = &request.kind else {
            return Ok(Elicitation::Decline);
        };
        let mut content = Map::new();
        for field in schema["properties"].as_object().into_iter().flatten() {
            content.insert(field.0.clone(), json!("Ada"));
        }
        Ok(Elicitation::Accept(content))
    }
}

/// Collects the progress a call reports.
#[derive(Default)]
struct Reports(Mutex<Vec<(f64, Option<f64>)>>);

impl tk::ProgressReporter for Reports {
    fn report(&self, progress: tk::Progress) {
        self.0
            .lock()
            .unwrap()
            .push((progress.progress, progress.total));
    }
}

fn fastmcp_server_script() -> std::path::PathBuf {
    peers::root().join("tests/mcp-fixtures/fastmcp_server.py")
}

/// Mounts the FastMCP server described by `entry` as `fast`, calls each of
/// its tools and checks what comes back.
async fn mount_and_call(entry: Value) {
    let config = McpConfig::from_json(&json!({"mcpServers": {"fast": entry}})).unwrap();
    let registry = Arc::new(ToolRegistry::new());
    let user = User::default();
    let clients = McpClients::new(config, &registry).with_elicitor(user.clone());
    for (server, outcome) in clients.connect().await {
        outcome.unwrap_or_else(|e| panic!("{server}: {e}"));
    }
    let mut names = registry.names();
    names.sort();
    assert_eq!(
        names,
        [
            "mcp_fast_add",
            "mcp_fast_ask_name",
            "mcp_fast_count",
            "mcp_fast_refuse",
            "mcp_fast_weather"
        ]
    );
    let ctx = ToolContext::new();
    let call = |name: &'static str, args: Value| {
        let registry = Arc::clone(&registry);
        let ctx = ctx.clone();
        async move { registry.call(name, args, &ctx).await }
    };

    // A number, which FastMCP wraps as structured content under `result`
    // (marked in its output schema): the wrapper is taken off.
    let sum = call("mcp_fast_add", json!({"a": 2, "b": 3})).await;
    assert!(!sum.is_error, "{sum:?}");
    assert_eq!(sum.content, "5");
    assert_eq!(sum.structured.as_deref(), Some(&json!(5)));

    // A model: structured content matching the tool's output schema.
    let spec = registry.get("mcp_fast_weather").unwrap().spec().clone();
    let schema = spec.output_schema.expect("an output schema");
    assert_eq!(
        schema["properties"]["celsius"]["type"], "integer",
        "{schema}"
    );
    let weather = call("mcp_fast_weather", json!({"city": "Oslo"})).await;
    assert!(!weather.is_error, "{weather:?}");
    assert_eq!(
        weather.structured.as_deref(),
        Some(&json!({"city": "Oslo", "celsius": 21}))
    );

    // FastMCP's `ToolError` is a result marked as an error, with its text.
    let refused = call("mcp_fast_refuse", json!({"reason": "closed"})).await;
    assert!(refused.is_error, "{refused:?}");
    assert!(refused.content.contains("refused: closed"), "{refused:?}");

    // Arguments the tool's schema refuses are refused before they leave.
    let bad = call("mcp_fast_add", json!({"a": "two"})).await;
    assert!(bad.is_error, "{bad:?}");

    // Progress reaches the caller's context before the answer.
    let reports = Arc::new(Reports::default());
    let counting = ToolContext::new().with_progress_reporter(reports.clone());
    let counted = registry
        .call("mcp_fast_count", json!({"steps": 3}), &counting)
        .await;
    assert!(!counted.is_error, "{counted:?}");
    assert_eq!(counted.content, "counted to 3");
    assert_eq!(
        *reports.0.lock().unwrap(),
        [(1.0, Some(3.0)), (2.0, Some(3.0)), (3.0, Some(3.0))]
    );

    // The tool asks the user's name; the host's elicitor answers.
    let greeted = call("mcp_fast_ask_name", json!({})).await;
    assert!(!greeted.is_error, "{greeted:?}");
    assert_eq!(greeted.content, "Hello, Ada!");
    assert_eq!(*user.0.lock().unwrap(), ["What is your name?"]);
    clients.disconnect().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_client_mounts_a_fastmcp_server_over_stdio() {
    if !peers::fastmcp_installed() {
        return;
    }
    bounded(mount_and_call(json!({
        "command": peers::python(),
        "args": [fastmcp_server_script(), "stdio"],
        "toolTimeout": 30
    })))
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_client_mounts_a_fastmcp_server_over_streamable_http() {
    if !peers::fastmcp_installed() {
        return;
    }
    let port = peers::free_port();
    let server = peers::python_http(
        &fastmcp_server_script(),
        &["http", &port.to_string()],
        port,
        "/mcp",
    );
    bounded(mount_and_call(json!({
        "url": server.url,
        "type": "streamableHttp",
        "toolTimeout": 30
    })))
    .await;
}

/// What FastMCP's client saw of our server, run with `args`; killed after
/// 120 s.
fn fastmcp_client(args: &[&str]) -> Value {
    run_client(&peers::python(), "fastmcp_client.py", args)
}

/// What the client `script` (in `tests/mcp-fixtures`), run by `python`
/// with `args`, printed as JSON; killed after 120 s.
fn run_client(python: &std::path::Path, script: &str, args: &[&str]) -> Value {
    let script = peers::root().join("tests/mcp-fixtures").join(script);
    let mut child = Command::new(python)
        .arg(script)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (stdout, stderr) = (child.stdout.take().unwrap(), child.stderr.take().unwrap());
    let read = |mut pipe: Box<dyn std::io::Read + Send>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = pipe.read_to_string(&mut text);
            text
        })
    };
    let (stdout, stderr) = (read(Box::new(stdout)), read(Box::new(stderr)));
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("FastMCP's client did not finish within 120 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let (stdout, stderr) = (stdout.join().unwrap(), stderr.join().unwrap());
    assert!(status.success(), "FastMCP's client failed:\n{stderr}");
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}\n{stderr}"))
}

fn check_fastmcp_session(seen: &Value) {
    let tools = seen["tools"].as_array().unwrap();
    assert!(tools.contains(&json!("echo")), "{seen}");
    assert_eq!(seen["echo"], json!(["Echo: from fastmcp"]), "{seen}");
    // FastMCP validated the structured content against the output schema
    // and made its data of it.
    assert_eq!(seen["weather"], json!({"city": "Oslo", "celsius": 21}));
    assert_eq!(seen["weather_data"], json!({"city": "Oslo", "celsius": 21}));
    let error = seen["tool_error"].as_str().unwrap_or_default();
    assert!(error.contains("intentionally returns an error"), "{seen}");
    assert_eq!(seen["missing_argument"]["is_error"], true, "{seen}");
    let missing = seen["missing_argument"]["text"][0].as_str().unwrap();
    assert!(missing.contains("message is required"), "{missing}");
    assert_eq!(
        seen["progress"],
        json!([
            [0.0, 100.0, "Completed step 0 of 100"],
            [50.0, 100.0, "Completed step 50 of 100"],
            [100.0, 100.0, "Completed step 100 of 100"]
        ])
    );
    assert_eq!(
        seen["progress_result"],
        json!(["Progress reported: 3 steps"])
    );
    // Questions asked through `ClientSession`, answered by FastMCP's
    // elicitation handler: one round, then two.
    assert_eq!(seen["elicitation"], json!(["Hello, Ada!"]), "{seen}");
    assert_eq!(seen["multi_round"], json!(["Ada likes Ada"]), "{seen}");
}

#[test]
fn fastmcps_client_drives_our_server_over_stdio() {
    if !peers::fastmcp_installed() {
        return;
    }
    let seen = fastmcp_client(&["stdio", peers::fixture_server(), "--stdio"]);
    check_fastmcp_session(&seen);
}

#[test]
fn fastmcps_client_drives_our_server_over_streamable_http() {
    if !peers::fastmcp_installed() {
        return;
    }
    for mode in [&[][..], &["--stateless"][..]] {
        let server = peers::fixture_http(mode);
        let seen = fastmcp_client(&["http", &server.url]);
        check_fastmcp_session(&seen);
    }
}

/// Mounts the FastMCP task server described by `entry` as `fast`: a call
/// of its task tool waits for the task, and a task started by the host is
/// polled and cancelled.
async fn mount_and_drive_tasks(entry: Value) {
    let config = McpConfig::from_json(&json!({"mcpServers": {"fast": entry}})).unwrap();
    let registry = Arc::new(ToolRegistry::new());
    let clients = McpClients::new(config, &registry);
    for (server, outcome) in clients.connect().await {
        outcome.unwrap_or_else(|e| panic!("{server}: {e}"));
    }
    let out = registry
        .call(
            "mcp_fast_work",
            json!({"seconds": 0.2, "label": "x"}),
            &ToolContext::new(),
        )
        .await;
    assert!(!out.is_error, "{}", out.content);
    assert!(out.content.contains("worked on x"), "{}", out.content);

    let link = clients.server("fast").unwrap();
    let id = link
        .start_task("work", json!({"seconds": 60, "label": "y"}))
        .await
        .unwrap();
    assert_eq!(link.task(&id).await.unwrap()["status"], "working");
    link.cancel_task(&id).await.unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let status = link.task(&id).await.unwrap()["status"].clone();
        if status == "cancelled" {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the task stayed {status}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    clients.disconnect().await;
}

fn fastmcp_task_server_script() -> std::path::PathBuf {
    peers::root().join("tests/mcp-fixtures/fastmcp_task_server.py")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_client_drives_fastmcp_tasks_over_stdio() {
    if !peers::fastmcp_tasks_installed() {
        return;
    }
    bounded(mount_and_drive_tasks(json!({
        "command": peers::python_tasks(),
        "args": [fastmcp_task_server_script(), "stdio"],
        "toolTimeout": 30
    })))
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_client_drives_fastmcp_tasks_over_streamable_http() {
    if !peers::fastmcp_tasks_installed() {
        return;
    }
    let port = peers::free_port();
    let server = peers::python_tasks_http(
        &fastmcp_task_server_script(),
        &["http", &port.to_string()],
        port,
        "/mcp",
    );
    bounded(mount_and_drive_tasks(json!({
        "url": server.url,
        "type": "streamableHttp",
        "toolTimeout": 30
    })))
    .await;
}

#[test]
fn fastmcps_task_client_drives_our_task_tools_over_stdio() {
    if !peers::fastmcp_tasks_installed() {
        return;
    }
    let seen = run_client(
        &peers::python_tasks(),
        "fastmcp_task_client.py",
        &["stdio", peers::fixture_server(), "--stdio"],
    );
    assert_eq!(
        seen,
        json!({
            "created": "working",
            "result": ["computed x"],
            "cancelled": "cancelled",
            "asked": "input_required",
            "answered": ["deleted a.txt"],
            "waited": ["computed z"]
        })
    );
}

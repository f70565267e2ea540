//! Servers whose connection breaks while their process lives on, or whose
//! process dies mid-call, against our client: real processes that misbehave
//! (`faulty_server.py`, written with the Python SDK, and the fixture server
//! over HTTP, killed), not mocks. Each failure must be noticed when it
//! happens, not at the tool's timeout; a server that answers nothing any
//! more is started again.
//!
//! Each test gives its calls a timeout shorter than what the failure would
//! take to show otherwise, so which error comes back (a closed connection,
//! not a timeout) tells whether it was noticed; no test measures time.

#[path = "../peers.rs"]
mod peers;

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tk::mcp::{HttpOptions, McpClients, McpConfig, McpServer};
use tk::{Progress, ProgressReporter, ToolContext, ToolOutput, ToolRegistry, tool};

/// Every test's body runs within this, so a server that hangs fails the
/// test instead of holding the suite.
async fn bounded<F: std::future::Future>(body: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(90), body)
        .await
        .expect("the test did not finish within 90 s")
}

async fn mount(name: &str, server: Value) -> (Arc<ToolRegistry>, McpClients) {
    let config = McpConfig::from_json(&json!({"mcpServers": {name: server}})).unwrap();
    let registry = Arc::new(ToolRegistry::new());
    let clients = McpClients::new(config, &registry);
    for (server, outcome) in clients.connect().await {
        outcome.unwrap_or_else(|e| panic!("{server}: {e}"));
    }
    (registry, clients)
}

async fn call(registry: &ToolRegistry, name: &str, args: Value) -> ToolOutput {
    registry.call(name, args, &ToolContext::new()).await
}

/// `faulty_server.py`, run by the Python with the `mcp` package.
fn faulty(tool_timeout: u64) -> Value {
    let script = peers::root().join("tests/mcp-fixtures/faulty_server.py");
    json!({"command": peers::python(), "args": [script], "toolTimeout": tool_timeout})
}

/// Whether the process `pid` (as the `pid` tool wrote it) has ended, or
/// ends within `limit`.
async fn ended_within(pid: &str, limit: Duration) -> bool {
    let proc = std::path::PathBuf::from(format!("/proc/{}", pid.trim()));
    let deadline = tokio::time::Instant::now() + limit;
    while proc.exists() {
        if tokio::time::Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    true
}

fn timed_out(tool: &str, within: &str) -> String {
    format!(
        "Error: Tool '{tool}' failed: the tool did not finish within {within} and was stopped\n\n[Analyze the error above and try a different approach.]"
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stdio_server_that_closes_its_output_is_noticed_at_once() {
    bounded(async {
        // Its output closed, its process outlives its closed input and
        // ignores SIGTERM: the SDK's own shutdown of it takes over 6 s,
        // three times the call's timeout.
        let (registry, clients) = mount("faulty", faulty(2)).await;
        let before = call(&registry, "mcp_faulty_pid", json!({})).await;
        assert!(!before.is_error, "{before:?}");
        let closed = call(&registry, "mcp_faulty_close_stdout", json!({})).await;
        assert_ne!(
            closed.content,
            timed_out("mcp_faulty_close_stdout", "2 s"),
            "the end of the server's output was noticed only at the timeout"
        );
        assert!(
            closed.is_error && closed.content.contains("closed the connection"),
            "{closed:?}"
        );
        // The next call starts the server again.
        let after = call(&registry, "mcp_faulty_pid", json!({})).await;
        assert!(!after.is_error, "{after:?}");
        assert_ne!(after.content, before.content);
        // The server that went quiet, deaf to SIGTERM, is killed in the end.
        assert!(
            ended_within(&before.content, Duration::from_secs(30)).await,
            "the server {} that closed its output still runs",
            before.content
        );
        clients.disconnect().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stdio_server_that_stops_reading_is_restarted_after_two_silent_timeouts() {
    bounded(async {
        let (registry, clients) = mount("faulty", faulty(3)).await;
        let before = call(&registry, "mcp_faulty_pid", json!({})).await;
        assert!(!before.is_error, "{before:?}");
        // The server hangs whole: this call and the ones after it time out,
        // and not a word comes from it any more.
        let hung = call(&registry, "mcp_faulty_stop_reading", json!({})).await;
        assert_eq!(hung.content, timed_out("mcp_faulty_stop_reading", "3 s"));
        // Two calls in a row that end without a word: it is taken for dead
        // and started again on the next call. A word it sent before it hung
        // (the answer to a listing the client made as the call began) can
        // count for the first of them, so the restart may come one call
        // later; it comes within four. Each call gets 3 s: the one that
        // starts the server again starts Python and its `mcp` package
        // (0.75 s on an idle machine) within it.
        let mut after = None;
        for _ in 0..4 {
            let answer = call(&registry, "mcp_faulty_pid", json!({})).await;
            if !answer.is_error {
                after = Some(answer);
                break;
            }
            assert_eq!(answer.content, timed_out("mcp_faulty_pid", "3 s"));
        }
        let after = after.expect("the hung server was never started again");
        assert_ne!(after.content, before.content);
        // The server taken for dead is stopped, not left running.
        assert!(
            ended_within(&before.content, Duration::from_secs(20)).await,
            "the hung server {} still runs",
            before.content
        );
        clients.disconnect().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timeouts_of_a_server_that_still_answers_keep_its_session() {
    bounded(async {
        let server =
            json!({"command": peers::fixture_server(), "args": ["--stdio"], "toolTimeout": 1});
        let (registry, clients) = mount("fx", server).await;
        let hung = json!({"beats": 0, "every_ms": 0, "silent_ms": 20_000});
        for _ in 0..3 {
            // A timeout, then an answer: the count starts again each time.
            let out = call(&registry, "mcp_fx_pulse", hung.clone()).await;
            assert_eq!(out.content, timed_out("mcp_fx_pulse", "1 s"));
            let echo = call(&registry, "mcp_fx_echo", json!({"message": "x"})).await;
            assert_eq!(echo.content, "Echo: x");
        }
        assert_eq!(clients.connected().await, ["fx"]);
        clients.disconnect().await;
    })
    .await;
}

/// Tells when the first progress report arrives.
struct FirstReport(tokio::sync::Notify);

impl ProgressReporter for FirstReport {
    fn report(&self, _progress: Progress) {
        self.0.notify_one();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http_server_killed_mid_call_is_noticed_when_its_connection_drops() {
    bounded(async {
        let mut server = peers::fixture_http(&[]);
        let (registry, clients) = mount(
            "web",
            json!({"url": server.url, "toolTimeout": 5, "resetTimeoutOnProgress": false}),
        )
        .await;
        let first = Arc::new(FirstReport(tokio::sync::Notify::new()));
        let ctx = ToolContext::new().with_progress_reporter(first.clone());
        let calling = Arc::clone(&registry);
        let call = tokio::spawn(async move {
            calling
                .call("mcp_web_slow", json!({"seconds": 30}), &ctx)
                .await
        });
        // The call is under way on the server: kill the process.
        first.0.notified().await;
        server.child.kill().unwrap();
        server.child.wait().unwrap();
        let out = call.await.unwrap();
        assert_ne!(
            out.content,
            timed_out("mcp_web_slow", "5 s"),
            "the dropped connection was noticed only at the timeout"
        );
        assert!(
            out.is_error && out.content.contains("closed the connection"),
            "{out:?}"
        );
        clients.disconnect().await;
    })
    .await;
}

/// Echoes its message.
#[tool]
async fn echo(message: String) -> String {
    message
}

/// An answer streamed as events goes out in several small writes; with
/// Nagle's algorithm on, each waits for the client's delayed ACK of the one
/// before (about 40 ms a call). The served connection must have it off.
#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn served_http_connections_send_without_waiting_for_acks() {
    use std::os::fd::FromRawFd;

    bounded(async {
        let registry = ToolRegistry::new();
        registry.register(EchoTool).unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let shutdown = tk::CancellationToken::new();
        let server = McpServer::new(Arc::new(registry));
        let serving = tokio::spawn(
            server.serve_http(listener, HttpOptions::default().shutdown(shutdown.clone())),
        );
        let client = std::net::TcpStream::connect(address).unwrap();
        let ours = client.local_addr().unwrap();
        // The server's end of this connection, found among this process's
        // descriptors once it is accepted.
        let mut nodelay = None;
        for _ in 0..400 {
            for entry in std::fs::read_dir("/proc/self/fd").unwrap().flatten() {
                let Ok(fd) = entry.file_name().to_string_lossy().parse::<i32>() else {
                    continue;
                };
                let is_socket = std::fs::read_link(entry.path())
                    .is_ok_and(|target| target.to_string_lossy().starts_with("socket:"));
                if !is_socket {
                    continue;
                }
                // Borrowed, never closed: the descriptor stays the server's.
                let socket =
                    std::mem::ManuallyDrop::new(unsafe { std::net::TcpStream::from_raw_fd(fd) });
                if socket.local_addr().ok() == Some(address)
                    && socket.peer_addr().ok() == Some(ours)
                {
                    nodelay = Some(socket.nodelay().unwrap());
                }
            }
            if nodelay.is_some() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        assert_eq!(nodelay, Some(true), "TCP_NODELAY on the served connection");
        drop(client);
        shutdown.cancel();
        serving.await.unwrap().unwrap();
    })
    .await;
}

/// Python servers under gunicorn (whose uvicorn workers take gunicorn's
/// `keepalive`, 2 s by default) close a connection idle for 2 s, and a
/// message sent on one as it closes is lost. So the client keeps an idle
/// connection for less: a call after 1.8 s of quiet goes out on a new
/// connection, never on one such a server may be closing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_after_a_quiet_spell_goes_out_on_a_new_connection() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    bounded(async {
        let registry = ToolRegistry::new();
        registry.register(EchoTool).unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let server_address = listener.local_addr().unwrap();
        let shutdown = tk::CancellationToken::new();
        let serving = tokio::spawn(
            McpServer::new(Arc::new(registry))
                .serve_http(listener, HttpOptions::default().shutdown(shutdown.clone())),
        );
        // A relay in front of the server that counts the connections whose
        // first request is a POST (the client's messages; its event stream
        // is a GET).
        let relay = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let relay_address = relay.local_addr().unwrap();
        let posts = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&posts);
        let relaying = tokio::spawn(async move {
            while let Ok((mut inbound, _)) = relay.accept().await {
                let counted = Arc::clone(&counted);
                tokio::spawn(async move {
                    let mut first = [0u8; 4];
                    inbound.read_exact(&mut first).await.ok()?;
                    if &first == b"POST" {
                        counted.fetch_add(1, Ordering::SeqCst);
                    }
                    let mut outbound = tokio::net::TcpStream::connect(server_address).await.ok()?;
                    outbound.write_all(&first).await.ok()?;
                    tokio::io::copy_bidirectional(&mut inbound, &mut outbound)
                        .await
                        .ok()
                });
            }
        });
        let (registry, clients) = mount(
            "relayed",
            json!({"url": format!("http://{relay_address}/mcp")}),
        )
        .await;
        let first = call(&registry, "mcp_relayed_echo", json!({"message": "one"})).await;
        assert_eq!(first.content, "one", "{first:?}");
        let before = posts.load(Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(1800)).await;
        let second = call(&registry, "mcp_relayed_echo", json!({"message": "two"})).await;
        assert_eq!(second.content, "two", "{second:?}");
        assert!(
            posts.load(Ordering::SeqCst) > before,
            "the call after 1.8 s of quiet went out on a connection that long idle"
        );
        clients.disconnect().await;
        relaying.abort();
        shutdown.cancel();
        serving.await.unwrap().unwrap();
    })
    .await;
}

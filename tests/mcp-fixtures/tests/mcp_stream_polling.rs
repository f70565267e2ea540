//! A served call that ends its event stream early (`ClientSession::
//! close_stream`, SEP-1699 polling): on a 2025-11-25 session the POST's
//! stream ends before the result, and the client gets the result by coming
//! back with `Last-Event-ID`; where no stream can be resumed (a stateless
//! server, a request of protocol 2026-07-28) the tool is told so and the
//! result comes on the POST as usual. Raw HTTP on loopback, so what is on
//! the wire is what is checked.

#[path = "../raw_http.rs"]
mod raw_http;

use std::io::{Read, Write};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use tk::mcp::{ClientSession, HttpOptions, McpServer};
use tk::{CancellationToken, ToolContext, ToolRegistry, tool};
use tokio::sync::Notify;

/// Ends its stream if it can, then answers once the test lets it (at once
/// when there was no stream to end).
#[tool(read_only)]
async fn hold(session: &ClientSession, go: &Arc<Notify>) -> String {
    let closed = session.close_stream();
    if closed {
        let _ = tokio::time::timeout(Duration::from_secs(20), go.notified()).await;
    }
    format!("closed={closed}")
}

struct Served {
    url: String,
    go: Arc<Notify>,
    shutdown: CancellationToken,
    server: tokio::task::JoinHandle<std::io::Result<()>>,
}

async fn serve(stateless: bool) -> Served {
    let registry = Arc::new(ToolRegistry::new());
    registry.register(HoldTool).unwrap();
    let go = Arc::new(Notify::new());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!(
        "http://127.0.0.1:{}/mcp",
        listener.local_addr().unwrap().port()
    );
    let shutdown = CancellationToken::new();
    let options = HttpOptions::default()
        .stateless(stateless)
        .shutdown(shutdown.clone());
    let server = tokio::spawn(
        McpServer::new(registry)
            .with_context(ToolContext::new().with_state(Arc::clone(&go)))
            .serve_http(listener, options),
    );
    Served {
        url,
        go,
        shutdown,
        server,
    }
}

fn call() -> serde_json::Value {
    json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "hold", "arguments": {}}})
}

/// The event ids of an event stream, in order.
fn event_ids(stream: &str) -> Vec<String> {
    stream
        .lines()
        .filter_map(|line| line.strip_prefix("id:"))
        .map(|id| id.trim().to_owned())
        .collect()
}

/// `GET` the session's stream from `last_event_id` on, until `wanted`
/// shows up or ten seconds pass; returns what came.
fn resume(url: &str, session: &str, last_event_id: &str, wanted: &str) -> String {
    let rest = url.strip_prefix("http://").unwrap();
    let (authority, path) = rest.split_at(rest.find('/').unwrap());
    let mut stream = std::net::TcpStream::connect(authority).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let request = format!(
        "GET {path} HTTP/1.1\r\nHost: {authority}\r\nAccept: text/event-stream\r\n\
         Mcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-11-25\r\n\
         Last-Event-ID: {last_event_id}\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).unwrap();
    let (mut seen, mut buffer) = (Vec::new(), [0u8; 4096]);
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline && !String::from_utf8_lossy(&seen).contains(wanted) {
        match stream.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => seen.extend_from_slice(&buffer[..n]),
            Err(_) => {} // the read timeout: look at the deadline again
        }
    }
    String::from_utf8_lossy(&seen).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closed_stream_is_resumed_with_the_result() {
    tokio::time::timeout(Duration::from_secs(60), async {
        let served = serve(false).await;
        let url = served.url.clone();
        let (session, posted) = tokio::task::spawn_blocking(move || {
            let session = raw_http::open_session(&url);
            let headers = [
                ("Mcp-Session-Id", session.as_str()),
                ("MCP-Protocol-Version", "2025-11-25"),
            ];
            let posted = raw_http::post(&url, &headers, &call());
            (session, posted)
        })
        .await
        .unwrap();
        // The POST's stream ended while the tool still held its answer.
        let (status, stream) = posted;
        assert_eq!(status, 200, "{stream}");
        assert!(
            !stream.contains("closed="),
            "the result came early: {stream}"
        );
        // Ended by the server (its last chunk), not cut by the read timeout.
        assert!(
            stream.ends_with("0\r\n\r\n"),
            "the stream did not end: {stream}"
        );
        let ids = event_ids(&stream);
        let last = ids
            .last()
            .unwrap_or_else(|| panic!("no event id: {stream}"));

        // The tool answers before the client comes back: the answer waits.
        served.go.notify_one();
        tokio::time::sleep(Duration::from_millis(100)).await;
        let url = served.url.clone();
        let last = last.clone();
        let resumed =
            tokio::task::spawn_blocking(move || resume(&url, &session, &last, "closed=true"))
                .await
                .unwrap();
        assert!(resumed.contains("closed=true"), "not resumed: {resumed}");
        assert!(resumed.contains("\"id\":2"), "{resumed}");

        served.shutdown.cancel();
        served.server.await.unwrap().unwrap();
    })
    .await
    .expect("the test ran within its time");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_resumable_stream_the_result_comes_on_the_post() {
    tokio::time::timeout(Duration::from_secs(60), async {
        // A request of protocol 2026-07-28, on a server that keeps
        // sessions and on one that keeps none; and a 2025-11-25 request
        // on the stateless one.
        for stateless in [false, true] {
            let served = serve(stateless).await;
            let url = served.url.clone();
            let answers = tokio::task::spawn_blocking(move || {
                let mut new = call();
                new["params"]["_meta"] = json!({
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": {}
                });
                let headers = [
                    ("MCP-Protocol-Version", "2026-07-28"),
                    ("Mcp-Method", "tools/call"),
                    ("Mcp-Name", "hold"),
                ];
                let mut answers = vec![raw_http::post(&url, &headers, &new)];
                if stateless {
                    let old = [("MCP-Protocol-Version", "2025-11-25")];
                    answers.push(raw_http::post(&url, &old, &call()));
                }
                answers
            })
            .await
            .unwrap();
            for (status, answer) in answers {
                assert_eq!(status, 200, "{answer}");
                assert!(
                    answer.contains("closed=false"),
                    "stateless={stateless}: {answer}"
                );
            }
            served.shutdown.cancel();
            served.server.await.unwrap().unwrap();
        }
    })
    .await
    .expect("the test ran within its time");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_result_holds_up_nothing_else_of_its_session() {
    tokio::time::timeout(Duration::from_secs(60), async {
        let served = serve(false).await;
        let url = served.url.clone();
        let go = Arc::clone(&served.go);
        let (resumed, listed) = tokio::task::spawn_blocking(move || {
            let session = raw_http::open_session(&url);
            let headers = [
                ("Mcp-Session-Id", session.as_str()),
                ("MCP-Protocol-Version", "2025-11-25"),
            ];
            let (_, stream) = raw_http::post(&url, &headers, &call());
            let last = event_ids(&stream).pop().expect("an event id");
            // The tool answers; its result waits for the client, which
            // first asks for something else in the same session.
            go.notify_one();
            let list = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"});
            let listed = raw_http::post(&url, &headers, &list);
            let resumed = resume(&url, &session, &last, "closed=true");
            (resumed, listed)
        })
        .await
        .unwrap();
        let (status, listed) = listed;
        assert_eq!(status, 200, "{listed}");
        assert!(listed.contains("\"name\":\"hold\""), "{listed}");
        assert!(
            resumed.contains("closed=true"),
            "the held result was lost: {resumed}"
        );
        served.shutdown.cancel();
        served.server.await.unwrap().unwrap();
    })
    .await
    .expect("the test ran within its time");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn results_held_for_clients_that_never_come_back_do_not_hold_up_shutdown() {
    tokio::time::timeout(Duration::from_secs(60), async {
        let served = serve(false).await;
        let url = served.url.clone();
        // Eight calls in two sessions end their streams; their tools answer;
        // no client comes back for the results.
        let posts = tokio::task::spawn_blocking(move || {
            let mut posts = Vec::new();
            for _ in 0..2 {
                let session = raw_http::open_session(&url);
                for _ in 0..4 {
                    let headers = [
                        ("Mcp-Session-Id", session.as_str()),
                        ("MCP-Protocol-Version", "2025-11-25"),
                    ];
                    posts.push(raw_http::post(&url, &headers, &call()));
                }
            }
            posts
        });
        // Each POST returns once its tool has closed its stream; all eight
        // tools are then waiting for `go`, and are let go.
        for (status, stream) in posts.await.unwrap() {
            assert_eq!(status, 200, "{stream}");
            assert!(!stream.contains("closed="), "came early: {stream}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        served.go.notify_waiters();
        tokio::time::sleep(Duration::from_millis(200)).await;
        // The results are held for up to 30 s each: shutting down must not
        // wait for them.
        served.shutdown.cancel();
        tokio::time::timeout(Duration::from_secs(15), served.server)
            .await
            .expect("shutdown waited for results no one will collect")
            .unwrap()
            .unwrap();
    })
    .await
    .expect("the test ran within its time");
}

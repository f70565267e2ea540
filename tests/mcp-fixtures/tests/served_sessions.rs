//! Two clients of one server over HTTP are two sessions to the served
//! pipeline: what one was shown is never the other's answer. Sessions are
//! opened by hand at protocol 2025-11-25 (`Mcp-Session-Id`); requests of
//! no session and no token (protocol 2026-07-28 without auth) cannot be
//! told apart and share the host's scope, as documented.

#[path = "../raw_http.rs"]
mod raw_http;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde_json::json;
use tk::mcp::{HttpOptions, McpServer};
use tk::pipeline::{Cache, Pipeline};
use tk::{CancellationToken, ToolRegistry, tool};

static TICKS: AtomicU64 = AtomicU64::new(0);

/// Count the calls that reached this tool.
#[tool(read_only)]
async fn tick() -> String {
    (TICKS.fetch_add(1, Ordering::SeqCst) + 1).to_string()
}

/// Call `tick` in the session `id` (none: a request of no session at
/// 2026-07-28) and return the text it read.
fn tick_in(url: &str, id: Option<&str>) -> String {
    let mut call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "tick", "arguments": {}}});
    if id.is_none() {
        // A request of no session says its version and capabilities itself.
        call["params"]["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}
        });
    }
    let headers: Vec<(&str, &str)> = match id {
        Some(id) => vec![
            ("Mcp-Session-Id", id),
            ("MCP-Protocol-Version", "2025-11-25"),
        ],
        None => vec![
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "tick"),
        ],
    };
    let (status, response) = raw_http::post(url, &headers, &call);
    assert_eq!(status, 200, "{response}");
    let text = response
        .split("\"text\":\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap_or_else(|| panic!("no text in {response}"));
    text.to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_served_cache_never_answers_one_session_with_another_sessions_result() {
    tokio::time::timeout(Duration::from_secs(60), async {
        let served = Arc::new(ToolRegistry::new());
        served.register(TickTool).unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!(
            "http://127.0.0.1:{}/mcp",
            listener.local_addr().unwrap().port()
        );
        let shutdown = CancellationToken::new();
        let server = tokio::spawn(
            McpServer::new(Arc::clone(&served))
                .with_pipeline(Pipeline::new().layer(Cache::new(Duration::from_secs(600))))
                .serve_http(listener, HttpOptions::default().shutdown(shutdown.clone())),
        );

        let texts = tokio::task::spawn_blocking(move || {
            let (first, second) = (raw_http::open_session(&url), raw_http::open_session(&url));
            vec![
                tick_in(&url, Some(&first)),
                // The same session is answered from the cache.
                tick_in(&url, Some(&first)),
                // Another session runs the tool itself.
                tick_in(&url, Some(&second)),
                tick_in(&url, Some(&second)),
                // Requests of no session share one scope: the third run.
                tick_in(&url, None),
                tick_in(&url, None),
            ]
        })
        .await
        .unwrap();
        assert_eq!(texts, ["1", "1", "2", "2", "3", "3"]);

        shutdown.cancel();
        server.await.unwrap().unwrap();
    })
    .await
    .expect("the test ran within its time");
}

//! A request's slot in an HTTP session comes back however the request
//! ends. One let into a session and dropped before the session takes it
//! (its client closed the connection right after writing it) gives its
//! slot back with itself. Its slot used to stay counted as taken, with its
//! share of the server-wide bound, until the session closed: a client
//! posting requests and closing each connection at once filled its
//! session's 64 slots (3,000 such requests left none) and, with them, the
//! permits every other session needed. One whose host code panics (a
//! resource read) is answered with an error and gives its slot back: it
//! used to get no answer, and to keep its slot.

#[path = "../raw_http.rs"]
mod raw_http;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::time::Duration;

use tk::mcp::{HttpOptions, McpServer};
use tk::{CancellationToken, ToolRegistry};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// `mem://hold` counts its readers and holds them until `open` is
/// cancelled; any other resource is read at once.
struct Resources {
    holding: Arc<AtomicUsize>,
    open: CancellationToken,
}

#[tk::async_trait]
impl tk::mcp::ResourceSource for Resources {
    fn resources(&self) -> Vec<serde_json::Value> {
        vec![serde_json::json!({"uri": "mem://hold", "name": "hold"})]
    }

    async fn read(&self, uri: &str) -> Result<serde_json::Value, String> {
        if uri == "mem://boom" {
            panic!("the host's resource code broke");
        }
        if uri == "mem://hold" {
            self.holding.fetch_add(1, SeqCst);
            self.open.cancelled().await;
        }
        Ok(serde_json::json!({"contents": []}))
    }
}

/// A `resources/read` of `uri`, id `id`, posted to `session`.
fn read_request(authority: &str, session: &str, id: u64, uri: &str) -> String {
    let body = serde_json::json!({
        "jsonrpc": "2.0", "id": id, "method": "resources/read", "params": {"uri": uri}
    })
    .to_string();
    format!(
        "POST /mcp HTTP/1.1\r\nHost: {authority}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-11-25\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

/// Post `request` and close the connection at once.
async fn post_and_leave(authority: &str, request: &str) {
    if let Ok(Ok(mut stream)) =
        tokio::time::timeout(Duration::from_secs(5), TcpStream::connect(authority)).await
    {
        let _ = stream.write_all(request.as_bytes()).await;
    }
}

/// A server of [`Resources`] on loopback, with a session opened: its
/// address, the session, the count of reads holding, and what lets them go.
async fn serve() -> (
    String,
    String,
    Arc<AtomicUsize>,
    CancellationToken,
    CancellationToken,
) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let authority = format!("127.0.0.1:{}", listener.local_addr().unwrap().port());
    let url = format!("http://{authority}/mcp");
    let shutdown = CancellationToken::new();
    let holding = Arc::new(AtomicUsize::new(0));
    let open = CancellationToken::new();
    tokio::spawn(
        McpServer::new(Arc::new(ToolRegistry::new()))
            .with_resources(Resources {
                holding: Arc::clone(&holding),
                open: open.clone(),
            })
            .serve_http(listener, HttpOptions::default().shutdown(shutdown.clone())),
    );
    let session = tokio::task::spawn_blocking(move || raw_http::open_session(&url))
        .await
        .unwrap();
    (authority, session, holding, open, shutdown)
}

/// How many of 100 reads that hold (their connections kept open) run at
/// once: as many as the session has slots free.
async fn reads_that_run(
    authority: &str,
    session: &str,
    holding: &AtomicUsize,
    open: &CancellationToken,
) -> usize {
    let mut held = tokio::task::JoinSet::new();
    for id in 10..110 {
        let (authority, request, open) = (
            authority.to_owned(),
            read_request(authority, session, id, "mem://hold"),
            open.clone(),
        );
        held.spawn(async move {
            if let Ok(mut stream) = TcpStream::connect(&authority).await {
                let _ = stream.write_all(request.as_bytes()).await;
                open.cancelled().await;
            }
        });
    }
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while holding.load(SeqCst) < 64 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let running = holding.load(SeqCst);
    open.cancel();
    while held.join_next().await.is_some() {}
    running
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_dropped_before_their_session_takes_them_give_their_slots_back() {
    let (authority, session, holding, open, shutdown) = serve().await;
    let test = async {
        // 3,000 quick reads, 64 connections at a time, each closed as soon
        // as its request is written.
        let at_once = Arc::new(tokio::sync::Semaphore::new(64));
        let mut posts = tokio::task::JoinSet::new();
        for id in 1_000..4_000 {
            let permit = Arc::clone(&at_once).acquire_owned().await.unwrap();
            let (authority, request) = (
                authority.clone(),
                read_request(&authority, &session, id, "mem://quick"),
            );
            posts.spawn(async move {
                let _permit = permit;
                post_and_leave(&authority, &request).await;
            });
        }
        while posts.join_next().await.is_some() {}
        tokio::time::sleep(Duration::from_secs(2)).await;
        reads_that_run(&authority, &session, &holding, &open).await
    };
    let running = tokio::time::timeout(Duration::from_secs(60), test)
        .await
        .expect("bounded");
    shutdown.cancel();
    assert_eq!(running, 64, "slots left taken: {}", 64 - running.min(64));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_whose_host_code_panics_is_answered_and_gives_its_slot_back() {
    let (authority, session, holding, open, shutdown) = serve().await;
    let test = async {
        let mut answers = Vec::new();
        for id in 1_000..1_030 {
            let request = read_request(&authority, &session, id, "mem://boom");
            let mut stream = TcpStream::connect(&authority).await.unwrap();
            stream.write_all(request.as_bytes()).await.unwrap();
            let mut answer = Vec::new();
            stream.read_to_end(&mut answer).await.unwrap();
            answers.push(String::from_utf8_lossy(&answer).into_owned());
        }
        (
            answers,
            reads_that_run(&authority, &session, &holding, &open).await,
        )
    };
    let (answers, running) = tokio::time::timeout(Duration::from_secs(60), test)
        .await
        .expect("bounded");
    shutdown.cancel();
    for answer in &answers {
        assert!(
            answer.contains("the server failed while answering this request"),
            "{answer}"
        );
        assert!(
            !answer.contains("broke"),
            "the panic's words stay in the server: {answer}"
        );
    }
    assert_eq!(running, 64, "slots left taken: {}", 64 - running.min(64));
}

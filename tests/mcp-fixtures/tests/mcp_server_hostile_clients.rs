//! Clients that try to wear a served registry out over HTTP: a request head
//! or body sent a byte at a time, more connections than the server keeps,
//! and sessions opened without end. Each is bounded by the server: the slow
//! client is cut off, the extra connection waits its turn, the extra
//! session is refused, and ordinary clients are served throughout.

#[path = "../raw_http.rs"]
mod raw_http;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tk::mcp::ClientSession;
use tk::mcp::{HttpOptions, McpServer};
use tk::{CancellationToken, ToolRegistry, tool};

/// A server of an empty registry on loopback; its URL and its shutdown.
async fn serve(options: HttpOptions) -> (String, CancellationToken) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!(
        "http://127.0.0.1:{}/mcp",
        listener.local_addr().unwrap().port()
    );
    let shutdown = CancellationToken::new();
    tokio::spawn(
        McpServer::new(Arc::new(ToolRegistry::new()))
            .serve_http(listener, options.shutdown(shutdown.clone())),
    );
    (url, shutdown)
}

fn authority(url: &str) -> String {
    url.trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap()
        .to_owned()
}

/// Whether a socket's read or write gave up at its timeout (the peer is
/// still there), rather than failing.
fn timed_out(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
    )
}

/// Whether the server closed `stream` (or answered it) within `limit`.
fn closed_within(stream: &mut TcpStream, limit: Duration) -> bool {
    stream
        .set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let deadline = Instant::now() + limit;
    let mut buf = [0u8; 1024];
    while Instant::now() < deadline {
        match stream.read(&mut buf) {
            Ok(_) => return true,
            Err(e) if timed_out(&e) => {}
            Err(_) => return true,
        }
    }
    false
}

/// A request head that never ends, sent a byte at a time, is cut off; so
/// is a connection that never sends a byte.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_head_that_never_ends_is_cut_off() {
    let (url, shutdown) = serve(HttpOptions::default()).await;
    let at = authority(&url);
    let (drip, silent) = tokio::task::spawn_blocking(move || {
        let mut silent = TcpStream::connect(&at).unwrap();
        let mut stream = TcpStream::connect(&at).unwrap();
        stream
            .write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            .unwrap();
        // A header byte every 200 ms for up to 30 s, while watching.
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut cut = false;
        while Instant::now() < deadline {
            if stream.write_all(b"X").is_err() || closed_within(&mut stream, Duration::ZERO) {
                cut = true;
                break;
            }
            if closed_within(&mut stream, Duration::from_millis(200)) {
                cut = true;
                break;
            }
        }
        (cut, closed_within(&mut silent, Duration::from_secs(20)))
    })
    .await
    .unwrap();
    shutdown.cancel();
    assert!(drip, "a head sent a byte at a time was not cut off in 30 s");
    assert!(
        silent,
        "a connection that sent nothing was not closed in 20 s"
    );
}

/// A request body that never arrives whole is answered `408`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_body_that_never_arrives_is_answered_408() {
    let (url, shutdown) = serve(HttpOptions::default()).await;
    let at = authority(&url);
    let answer = tokio::task::spawn_blocking(move || {
        let mut stream = TcpStream::connect(&at).unwrap();
        stream
            .write_all(
                b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
                  Accept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{\"json",
            )
            .unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(60)))
            .unwrap();
        let mut head = [0u8; 64];
        let n = stream.read(&mut head).unwrap_or(0);
        String::from_utf8_lossy(&head[..n]).into_owned()
    })
    .await
    .unwrap();
    shutdown.cancel();
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer:?}");
}

/// Past its bound of connections, a client waits to be accepted: its
/// request is answered once one of the held connections goes, not before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_past_the_bound_waits_its_turn() {
    let (url, shutdown) = serve(HttpOptions::default().max_connections(3)).await;
    let at = authority(&url);
    let (early, late) = tokio::task::spawn_blocking(move || {
        let mut held: Vec<TcpStream> = (0..3)
            .map(|_| {
                let mut s = TcpStream::connect(&at).unwrap();
                s.write_all(b"POST /mcp HTTP/1.1\r\n").unwrap();
                s
            })
            .collect();
        // Give the server the moment it takes to accept the three.
        std::thread::sleep(Duration::from_millis(300));
        let mut extra = TcpStream::connect(&at).unwrap();
        extra
            .write_all(b"GET /elsewhere HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            .unwrap();
        let early = closed_within(&mut extra, Duration::from_secs(1));
        drop(held.pop());
        let late = closed_within(&mut extra, Duration::from_secs(20));
        (early, late)
    })
    .await
    .unwrap();
    shutdown.cancel();
    assert!(
        !early,
        "a fourth connection was served while three were held"
    );
    assert!(late, "the fourth connection was never served");
}

/// Past its bound of sessions, an `initialize` is refused (503); once a
/// session is closed, a new one opens. (All from one client, which may
/// open every session.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_past_the_bound_are_refused_until_one_closes() {
    let options = HttpOptions::default().max_sessions(3);
    let (url, shutdown) = serve(options).await;
    let url_then = url.clone();
    let (refused, reopened) = tokio::task::spawn_blocking(move || {
        let url = url_then;
        let sessions: Vec<String> = (0..3).map(|_| raw_http::open_session(&url)).collect();
        let refused = raw_http::post(&url, &[], &raw_http::initialize());
        // DELETE closes a session.
        let at = authority(&url);
        let mut stream = TcpStream::connect(&at).unwrap();
        write!(
            stream,
            "DELETE /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nMcp-Session-Id: {}\r\nConnection: close\r\n\r\n",
            sessions[0]
        )
        .unwrap();
        let mut answer = String::new();
        let _ = stream.read_to_string(&mut answer);
        assert!(answer.starts_with("HTTP/1.1 2"), "{answer}");
        (refused, raw_http::post(&url, &[], &raw_http::initialize()))
    })
    .await
    .unwrap();
    shutdown.cancel();
    assert_eq!(refused.0, 503, "a fourth session: {}", refused.1);
    // The server is full, and its lone client has more than its part.
    assert!(
        refused
            .1
            .contains("as many as one client may while the server is full"),
        "{}",
        refused.1
    );
    assert_eq!(reopened.0, 200, "{}", reopened.1);
}

/// A client on a byte stream that sends requests in a loop and never reads
/// an answer: the server reads on only while fewer than its bound of
/// requests are being answered (an answer counts until it is written), so
/// the client's writes stall, held by the pipe, instead of the server
/// taking every request in.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_floods_requests_and_never_reads_is_held_back() {
    use tokio::io::AsyncWriteExt;
    const REQUESTS: usize = 20_000;
    let (client, server) = tokio::io::duplex(64 << 10);
    let (server_read, server_write) = tokio::io::split(server);
    let serving = tokio::spawn(
        McpServer::new(Arc::new(ToolRegistry::new())).serve_io(server_read, server_write),
    );
    let (_client_read, mut client_write) = tokio::io::split(client);
    let hello = serde_json::to_string(&raw_http::initialize()).unwrap();
    client_write
        .write_all(format!("{hello}\n").as_bytes())
        .await
        .unwrap();
    client_write
        .write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n")
        .await
        .unwrap();
    let mut written = 0;
    while written < REQUESTS {
        let request =
            format!("{{\"jsonrpc\":\"2.0\",\"id\":{written},\"method\":\"tools/list\"}}\n");
        // A write the server has not made room for in 3 s is held back.
        match tokio::time::timeout(
            Duration::from_secs(3),
            client_write.write_all(request.as_bytes()),
        )
        .await
        {
            Ok(Ok(())) => written += 1,
            _ => break,
        }
    }
    serving.abort();
    eprintln!("{written} of {REQUESTS} requests written before the server stopped reading");
    assert!(
        written < REQUESTS / 4,
        "the server took in {written} requests unanswered"
    );
}

/// Ask the client for its roots and say how many it has.
#[tool(read_only)]
async fn count_roots(session: &ClientSession) -> String {
    match session.list_roots().await {
        Ok(roots) => roots["roots"].as_array().map_or(0, Vec::len).to_string(),
        Err(e) => format!("no roots: {e}"),
    }
}

/// More calls than the server answers at once, each waiting for the
/// client's answer to a question: the answers still come through behind
/// the requests the server holds back, so every call finishes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_to_the_servers_questions_are_read_past_held_back_requests() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    const CALLS: u64 = 100;
    let registry = Arc::new(ToolRegistry::new());
    registry.register(CountRootsTool).unwrap();
    let (client, server) = tokio::io::duplex(1 << 20);
    let (server_read, server_write) = tokio::io::split(server);
    let serving = tokio::spawn(McpServer::new(registry).serve_io(server_read, server_write));
    let (client_read, mut client_write) = tokio::io::split(client);
    let mut lines = BufReader::new(client_read).lines();
    let hello = serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {"roots": {}},
        "clientInfo": {"name": "raw", "version": "0"}}});
    let mut out =
        format!("{hello}\n{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}}\n");
    for id in 1..=CALLS {
        out.push_str(&format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\"params\":{{\"name\":\"count_roots\",\"arguments\":{{}}}}}}\n"
        ));
    }
    client_write.write_all(out.as_bytes()).await.unwrap();
    let answered = tokio::time::timeout(Duration::from_secs(60), async {
        let mut answered = 0;
        while answered < CALLS {
            let Ok(Some(line)) = lines.next_line().await else {
                break;
            };
            let message: serde_json::Value = serde_json::from_str(&line).unwrap();
            if message["method"] == "roots/list" {
                let answer = serde_json::json!({"jsonrpc": "2.0", "id": message["id"],
                    "result": {"roots": [{"uri": "file:///tmp", "name": "tmp"}]}});
                client_write
                    .write_all(format!("{answer}\n").as_bytes())
                    .await
                    .unwrap();
            } else if message["id"].as_u64().is_some_and(|id| id >= 1)
                && message.get("result").is_some()
            {
                let text = message["result"]["content"][0]["text"]
                    .as_str()
                    .unwrap_or("");
                assert_eq!(text, "1", "{line}");
                answered += 1;
            }
        }
        answered
    })
    .await
    .unwrap_or(0);
    serving.abort();
    assert_eq!(
        answered, CALLS,
        "calls left waiting for the answers to their questions"
    );
}

/// A call that never ends by itself.
#[tool(read_only)]
async fn hang() -> String {
    std::future::pending::<String>().await
}

/// Calls the client cancels are never answered, so their answers cannot
/// be what frees their slots: cancelled, more calls than the server
/// answers at once leave it free for the next request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelled_calls_free_their_slots() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    const CALLS: u64 = 100;
    let registry = Arc::new(ToolRegistry::new());
    registry.register(HangTool).unwrap();
    let (client, server) = tokio::io::duplex(1 << 20);
    let (server_read, server_write) = tokio::io::split(server);
    let serving = tokio::spawn(McpServer::new(registry).serve_io(server_read, server_write));
    let (client_read, mut client_write) = tokio::io::split(client);
    let mut lines = BufReader::new(client_read).lines();
    let hello = serde_json::to_string(&raw_http::initialize()).unwrap();
    let mut out =
        format!("{hello}\n{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}}\n");
    for id in 10..10 + CALLS {
        out.push_str(&format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\"params\":{{\"name\":\"hang\",\"arguments\":{{}}}}}}\n"
        ));
    }
    for id in 10..10 + CALLS {
        out.push_str(&format!(
            "{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{{\"requestId\":{id}}}}}\n"
        ));
    }
    out.push_str("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}\n");
    client_write.write_all(out.as_bytes()).await.unwrap();
    let listed = tokio::time::timeout(Duration::from_secs(30), async {
        while let Ok(Some(line)) = lines.next_line().await {
            let message: serde_json::Value = serde_json::from_str(&line).unwrap();
            if message["id"] == 2 {
                return message["result"]["tools"][0]["name"] == "hang";
            }
        }
        false
    })
    .await
    .unwrap_or(false);
    serving.abort();
    assert!(
        listed,
        "the request after the cancelled calls was never answered"
    );
}

/// A client that sends requests and never reads the answers cannot hold
/// its connection: once the server's writes to it have waited the write
/// timeout, the connection is closed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_never_reads_its_answers_is_cut_off() {
    let (url, shutdown) = serve(HttpOptions::default().write_timeout(Duration::from_secs(2))).await;
    let at = authority(&url);
    let cut = tokio::task::spawn_blocking(move || {
        let mut stream = TcpStream::connect(&at).unwrap();
        stream
            .set_write_timeout(Some(Duration::from_millis(500)))
            .unwrap();
        // Pipelined requests, each answered `404`: the answers fill the
        // socket's buffers, and then the server's writes wait.
        let requests = b"GET /nope HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".repeat(1000);
        let deadline = Instant::now() + Duration::from_secs(60);
        while Instant::now() < deadline {
            match stream.write(&requests) {
                Ok(_) => {}
                Err(e) if timed_out(&e) => {}
                Err(_) => return true,
            }
        }
        false
    })
    .await
    .unwrap();
    shutdown.cancel();
    assert!(cut, "the connection was held for 60 s");
}

/// How many reads of [`Stubborn`] run now, the most at once, and how many
/// started.
#[derive(Default)]
struct Reads {
    now: std::sync::atomic::AtomicUsize,
    most: std::sync::atomic::AtomicUsize,
    started: std::sync::atomic::AtomicUsize,
}

/// Counts a read for as long as it runs, however it ends.
struct Running(Arc<Reads>);

impl Running {
    fn start(reads: &Arc<Reads>) -> Self {
        use std::sync::atomic::Ordering::SeqCst;
        reads.started.fetch_add(1, SeqCst);
        let now = reads.now.fetch_add(1, SeqCst) + 1;
        reads.most.fetch_max(now, SeqCst);
        Self(Arc::clone(reads))
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.0.now.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

/// A resource whose read takes 300 ms and never looks at its
/// cancellation: a cancel does not end it.
struct Stubborn(Arc<Reads>);

#[tk::async_trait]
impl tk::mcp::ResourceSource for Stubborn {
    fn resources(&self) -> Vec<serde_json::Value> {
        vec![serde_json::json!({"uri": "mem://slow", "name": "slow"})]
    }

    async fn read(&self, _uri: &str) -> Result<serde_json::Value, String> {
        let _running = Running::start(&self.0);
        tokio::time::sleep(Duration::from_millis(300)).await;
        Ok(serde_json::json!({"contents": []}))
    }
}

/// A client sending a request and its cancel in a loop, to a handler that
/// does not stop when cancelled, has at most as many handlers running at
/// once as the server answers requests at once (64): a request's slot comes
/// free when its handler ends, not when the cancel arrives. And the server
/// still answers the next request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_cancelled_in_a_loop_run_no_more_handlers_than_the_bound() {
    use std::sync::atomic::Ordering::SeqCst;
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    const PAIRS: u64 = 1000;
    let reads = Arc::new(Reads::default());
    let server =
        McpServer::new(Arc::new(ToolRegistry::new())).with_resources(Stubborn(Arc::clone(&reads)));
    let (client, served) = tokio::io::duplex(1 << 20);
    let (server_read, server_write) = tokio::io::split(served);
    let serving = tokio::spawn(server.serve_io(server_read, server_write));
    let (client_read, mut client_write) = tokio::io::split(client);
    let mut lines = BufReader::new(client_read).lines();
    let hello = serde_json::to_string(&raw_http::initialize()).unwrap();
    let mut out =
        format!("{hello}\n{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}}\n");
    for id in 10..10 + PAIRS {
        out.push_str(&format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"resources/read\",\"params\":{{\"uri\":\"mem://slow\"}}}}\n\
             {{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{{\"requestId\":{id}}}}}\n"
        ));
    }
    out.push_str("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"resources/list\"}\n");
    // Written beside the reading: the server reads no faster than its
    // handlers end, and its answers must be read for it to go on.
    let writing = tokio::spawn(async move {
        client_write.write_all(out.as_bytes()).await.unwrap();
        client_write
    });
    let listed = tokio::time::timeout(Duration::from_secs(60), async {
        while let Ok(Some(line)) = lines.next_line().await {
            let message: serde_json::Value = serde_json::from_str(&line).unwrap();
            if message["id"] == 2 {
                return message["result"]["resources"][0]["uri"] == "mem://slow";
            }
        }
        false
    })
    .await
    .unwrap_or(false);
    let (most, started) = (reads.most.load(SeqCst), reads.started.load(SeqCst));
    writing.abort();
    serving.abort();
    eprintln!("{started} reads started, at most {most} at once");
    assert!(
        listed,
        "the request after the cancelled ones was never answered"
    );
    assert!(started > 0, "no read started");
    assert!(most <= 64, "{most} handlers ran at once");
}

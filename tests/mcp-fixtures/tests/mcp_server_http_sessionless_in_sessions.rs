//! Requests of protocol 2026-07-28 (their version in their `_meta`, no
//! `Mcp-Session-Id`) posted to a server that keeps sessions: the SDK
//! answers each outside every session, and each is bounded all the same.
//! One client has at most its share of the server-wide permits (half of
//! `max_connections`) running, however it floods, leaves or drops its
//! requests; another client still gets its own share; sessions opened
//! meanwhile work, and hold no permit once their requests are answered.
//!
//! Each client connects from a loopback address of its own (127.0.0.2,
//! 127.0.0.3, ...): the server tells clients apart by their address.

#[path = "../raw_http.rs"]
mod raw_http;

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tk::mcp::{HttpOptions, McpServer};
use tk::{CancellationToken, ToolContext, ToolRegistry, tool};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::task::JoinSet;

/// The calls of `block`, by the client named in their arguments.
#[derive(Default)]
struct Counts {
    /// Running now.
    running: HashMap<String, usize>,
    /// The most running at once.
    most: HashMap<String, usize>,
    /// Started in all.
    started: HashMap<String, usize>,
    /// The most running at once, all clients together.
    most_in_all: usize,
}

/// What the test controls: the calls' counts, and the gate they wait at
/// (cancelled to let them through).
#[derive(Clone, Default)]
struct Gate {
    counts: Arc<Mutex<Counts>>,
    open: Arc<Mutex<CancellationToken>>,
}

impl Gate {
    /// Let every call through, those waiting and those to come.
    fn release(&self) {
        self.open.lock().unwrap().cancel();
    }

    /// Calls to come wait again.
    fn close(&self) {
        *self.open.lock().unwrap() = CancellationToken::new();
    }

    /// Count a call of `client` as started, running until the returned
    /// guard is dropped, and wait at the gate.
    async fn pass(&self, client: String) {
        let open = self.open.lock().unwrap().clone();
        {
            let mut counts = self.counts.lock().unwrap();
            let now = {
                let running = counts.running.entry(client.clone()).or_default();
                *running += 1;
                *running
            };
            let most = counts.most.entry(client.clone()).or_default();
            *most = (*most).max(now);
            *counts.started.entry(client.clone()).or_default() += 1;
            let in_all = counts.running.values().sum();
            counts.most_in_all = counts.most_in_all.max(in_all);
        }
        let _counted = Counted(self.clone(), client);
        open.cancelled().await;
    }

    fn running(&self, client: &str) -> usize {
        let counts = self.counts.lock().unwrap();
        counts.running.get(client).copied().unwrap_or(0)
    }

    fn most(&self, client: &str) -> usize {
        let counts = self.counts.lock().unwrap();
        counts.most.get(client).copied().unwrap_or(0)
    }

    fn started(&self, client: &str) -> usize {
        let counts = self.counts.lock().unwrap();
        counts.started.get(client).copied().unwrap_or(0)
    }

    fn running_in_all(&self) -> usize {
        self.counts.lock().unwrap().running.values().sum()
    }

    /// Wait, bounded, until `client` has `count` calls running; then
    /// return how many it has.
    async fn wait_running(&self, client: &str, count: usize) -> usize {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while self.running(client) < count && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        self.running(client)
    }

    /// Wait, bounded, until no call runs.
    async fn wait_idle(&self) -> usize {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while self.running_in_all() > 0 && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        self.running_in_all()
    }
}

/// One running call of `client`, counted until dropped.
struct Counted(Gate, String);

impl Drop for Counted {
    fn drop(&mut self) {
        let mut counts = self.0.counts.lock().unwrap();
        *counts.running.entry(self.1.clone()).or_default() -= 1;
    }
}

/// Waits at the test's gate. (The pipeline drops a tool's future when
/// its call is cancelled, as when its client leaves.)
#[tool(read_only)]
async fn block(client: String, ctx: &ToolContext) -> String {
    let gate = ctx.state::<Gate>().expect("the test's gate").clone();
    gate.pass(client).await;
    "done".into()
}

/// Resources whose reads wait at the test's gate, never looking at their
/// own cancellation: neither a cancel nor the client leaving ends them.
/// A read of `mem://127.0.0.N` counts as one of client 127.0.0.N.
struct Holding(Gate);

#[tk::async_trait]
impl tk::mcp::ResourceSource for Holding {
    fn resources(&self) -> Vec<serde_json::Value> {
        vec![serde_json::json!({"uri": "mem://a", "name": "a"})]
    }

    async fn read(&self, uri: &str) -> Result<serde_json::Value, String> {
        let client = uri.trim_start_matches("mem://").to_owned();
        self.0.pass(client).await;
        Ok(serde_json::json!({"contents": []}))
    }
}

/// A call that ends at once.
#[tool(read_only)]
async fn quick() -> String {
    "quick".into()
}

/// A server of `block` and `quick` keeping sessions, on loopback.
struct Served {
    server: SocketAddr,
    url: String,
    gate: Gate,
    shutdown: CancellationToken,
}

impl Served {
    async fn new(options: HttpOptions) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let server = listener.local_addr().unwrap();
        let shutdown = CancellationToken::new();
        let gate = Gate::default();
        let registry = Arc::new(ToolRegistry::new());
        registry.register(BlockTool).unwrap();
        registry.register(QuickTool).unwrap();
        tokio::spawn(
            McpServer::new(registry)
                .with_resources(Holding(gate.clone()))
                .with_context(ToolContext::new().with_state(gate.clone()))
                .serve_http(listener, options.shutdown(shutdown.clone())),
        );
        Self {
            server,
            url: format!("http://{server}/mcp"),
            gate,
            shutdown,
        }
    }

    /// A request of protocol 2026-07-28, no session, from `client`
    /// (127.0.0.`client`), counted under that address: a call of `block`,
    /// or, if `read`, a read of a [`Holding`] resource.
    fn request(&self, client: u8, id: u64, read: bool) -> String {
        let address = format!("127.0.0.{client}");
        let meta = serde_json::json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}});
        let (method, name, params) = if read {
            let uri = format!("mem://{address}");
            let params = serde_json::json!({"uri": uri, "_meta": meta});
            ("resources/read", uri, params)
        } else {
            let params = serde_json::json!({"name": "block",
                "arguments": {"client": address}, "_meta": meta});
            ("tools/call", "block".to_owned(), params)
        };
        let body = serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method,
            "params": params})
        .to_string();
        format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: {method}\r\nMcp-Name: {name}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            self.server,
            body.len()
        )
    }

    /// Post a call from `client` and leave after `patience` (or once the
    /// server answers or closes); returns what came.
    async fn call_and_leave(&self, client: u8, id: u64, patience: Duration) -> String {
        self.leave(client, id, false, patience).await
    }

    /// Post a read from `client` and leave after `patience` (or once the
    /// server answers or closes): the read runs on.
    async fn read_and_leave(&self, client: u8, id: u64, patience: Duration) -> String {
        self.leave(client, id, true, patience).await
    }

    async fn leave(&self, client: u8, id: u64, read: bool, patience: Duration) -> String {
        let request = self.request(client, id, read);
        let server = self.server;
        let exchange = async move {
            let mut stream = connect_from(client, server).await?;
            stream.write_all(request.as_bytes()).await.ok()?;
            let mut heard = Vec::new();
            let _ = stream.read_to_end(&mut heard).await;
            Some(String::from_utf8_lossy(&heard).into_owned())
        };
        tokio::time::timeout(patience, exchange)
            .await
            .ok()
            .flatten()
            .unwrap_or_default()
    }

    /// Post a call from `client` and keep its connection until the
    /// server answers (or 60 s); the task returns what came.
    fn call_held(&self, tasks: &mut JoinSet<String>, client: u8, id: u64) {
        let request = self.request(client, id, false);
        let server = self.server;
        tasks.spawn(async move {
            let exchange = async {
                let mut stream = connect_from(client, server).await?;
                stream.write_all(request.as_bytes()).await.ok()?;
                let mut heard = Vec::new();
                let _ = stream.read_to_end(&mut heard).await;
                Some(String::from_utf8_lossy(&heard).into_owned())
            };
            tokio::time::timeout(Duration::from_secs(60), exchange)
                .await
                .ok()
                .flatten()
                .unwrap_or_default()
        });
    }

    /// Let every call end, wait for `tasks`, and stop the server.
    async fn finish(self, tasks: &mut JoinSet<String>) -> Vec<String> {
        self.gate.release();
        let mut answers = Vec::new();
        let _ = tokio::time::timeout(Duration::from_secs(30), async {
            while let Some(answer) = tasks.join_next().await {
                answers.push(answer.unwrap_or_default());
            }
        })
        .await;
        self.shutdown.cancel();
        answers
    }
}

/// A connection to `server` from 127.0.0.`client`, or `None` if it failed.
async fn connect_from(client: u8, server: SocketAddr) -> Option<TcpStream> {
    let socket = tokio::net::TcpSocket::new_v4().ok()?;
    let from = IpAddr::V4(Ipv4Addr::new(127, 0, 0, client));
    socket.bind(SocketAddr::new(from, 0)).ok()?;
    socket.connect(server).await.ok()
}

/// A server answering 4 requests at once (a client's share: 2).
fn four() -> HttpOptions {
    HttpOptions::default().max_connections(4)
}

/// On a server answering 6 requests at once (a client's share: 3), after
/// a session was opened and answered a call: one client posting 4
/// sessionless calls, keeping their connections, has 3 running; another
/// client then runs its 2. Once all end, two other clients run 3 each:
/// every permit is free, the session holds none. The first client used
/// to have all 4 running: such a request took no permit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_runs_at_most_its_share_of_sessionless_calls_on_a_server_of_sessions() {
    let served = Served::new(HttpOptions::default().max_connections(6)).await;
    let mut tasks = JoinSet::new();
    let test = async {
        // A session, and a call in it, answered.
        let url = served.url.clone();
        let (status, answer) = tokio::task::spawn_blocking(move || {
            let session = raw_http::open_session(&url);
            let call = serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "quick", "arguments": {}}});
            raw_http::post(
                &url,
                &[
                    ("Mcp-Session-Id", &session),
                    ("MCP-Protocol-Version", "2025-11-25"),
                ],
                &call,
            )
        })
        .await
        .unwrap();
        assert_eq!(status, 200, "{answer}");
        assert!(answer.contains("quick"), "{answer}");
        for id in 0..4 {
            served.call_held(&mut tasks, 2, id);
        }
        served.gate.wait_running("127.0.0.2", 3).await;
        // Time for a fourth to start, if it would.
        tokio::time::sleep(Duration::from_millis(300)).await;
        let greedy = served.gate.most("127.0.0.2");
        served.call_held(&mut tasks, 3, 100);
        served.call_held(&mut tasks, 3, 101);
        let other = served.gate.wait_running("127.0.0.3", 2).await;
        // Every call ends, the fourth of the first client too.
        served.gate.release();
        while tasks.join_next().await.is_some() {}
        let left = served.gate.wait_idle().await;
        assert_eq!(left, 0, "calls still running once let go");
        served.gate.close();
        for id in 200..203 {
            served.call_held(&mut tasks, 4, id);
            served.call_held(&mut tasks, 5, id + 10);
        }
        let after = (
            served.gate.wait_running("127.0.0.4", 3).await,
            served.gate.wait_running("127.0.0.5", 3).await,
        );
        (greedy, other, after)
    };
    let (greedy, other, after) = tokio::time::timeout(Duration::from_secs(60), test)
        .await
        .expect("bounded");
    served.finish(&mut tasks).await;
    eprintln!("the first client ran {greedy} at once; the other {other}; after: {after:?}");
    assert!(greedy >= 1, "no call of the first client ran");
    assert!(
        greedy <= 3,
        "one client had {greedy} sessionless calls running at once (its share: 3)"
    );
    assert_eq!(other, 2, "the other client's calls that ran");
    assert_eq!(after, (3, 3), "calls running once the session was done");
}

/// One client posting 12 sessionless reads that never end by themselves,
/// leaving each after 300 ms, has at most its share (2) running, and
/// another client then runs its 2. The first used to have all 12 running.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_leaving_its_sessionless_reads_runs_at_most_its_share() {
    let served = Served::new(four()).await;
    let mut tasks = JoinSet::new();
    let test = async {
        for id in 0..12 {
            served
                .read_and_leave(2, id, Duration::from_millis(300))
                .await;
        }
        let greedy = served.gate.most("127.0.0.2");
        for id in 100..102 {
            let request = served.request(3, id, true);
            let server = served.server;
            tasks.spawn(async move {
                let mut stream = connect_from(3, server).await?;
                stream.write_all(request.as_bytes()).await.ok()?;
                let mut heard = Vec::new();
                let _ =
                    tokio::time::timeout(Duration::from_secs(60), stream.read_to_end(&mut heard))
                        .await;
                Some(String::from_utf8_lossy(&heard).into_owned())
            });
        }
        let other = served.gate.wait_running("127.0.0.3", 2).await;
        (greedy, other)
    };
    let (greedy, other) = tokio::time::timeout(Duration::from_secs(60), test)
        .await
        .expect("bounded");
    served.gate.release();
    let _ = tokio::time::timeout(Duration::from_secs(30), async {
        while tasks.join_next().await.is_some() {}
    })
    .await;
    served.shutdown.cancel();
    eprintln!("the first client ran {greedy} at once; the other {other}");
    assert!(greedy >= 1, "no read of the first client ran");
    assert!(greedy <= 2, "one client had {greedy} reads running at once");
    assert_eq!(other, 2, "the other client's reads that ran");
}

/// A client posting calls and dropping each connection at once, 100 times
/// (cancelling by leaving, in a loop), while its share runs: none of those
/// waiting ever runs, not even once the share comes free, and it never has
/// more than its share running.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessionless_calls_dropped_while_they_wait_never_run() {
    let served = Served::new(four()).await;
    let mut tasks = JoinSet::new();
    let test = async {
        served.call_held(&mut tasks, 2, 0);
        served.call_held(&mut tasks, 2, 1);
        let share = served.gate.wait_running("127.0.0.2", 2).await;
        for id in 10..110 {
            served.call_and_leave(2, id, Duration::from_millis(5)).await;
        }
        // Time for the requests dropped to be seen gone.
        tokio::time::sleep(Duration::from_millis(500)).await;
        served.gate.release();
        let left = served.gate.wait_idle().await;
        // Time for any call still waiting to start.
        tokio::time::sleep(Duration::from_millis(500)).await;
        (share, left)
    };
    let (share, left) = tokio::time::timeout(Duration::from_secs(60), test)
        .await
        .expect("bounded");
    let started = served.gate.started("127.0.0.2");
    let most = served.gate.most("127.0.0.2");
    served.finish(&mut tasks).await;
    eprintln!("share {share}, left {left}, started {started}, most {most}");
    assert_eq!(share, 2, "the client's held calls that ran");
    assert!(most <= 2, "the client had {most} calls running at once");
    assert_eq!(started, 2, "calls dropped while they waited ran");
}

/// Ten clients flooding sessionless reads that never end by themselves at
/// once, each leaving every one after 200 ms: each has at most its share
/// running, and the server at most its 4 in all (they used to have all 80).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_clients_flooding_sessionless_reads_hold_the_server_wide_bound() {
    let served = Arc::new(Served::new(four()).await);
    let test = async {
        let mut clients = JoinSet::new();
        for client in 10..20u8 {
            let served = Arc::clone(&served);
            clients.spawn(async move {
                for id in 0..8 {
                    served
                        .read_and_leave(client, id, Duration::from_millis(200))
                        .await;
                }
            });
        }
        while clients.join_next().await.is_some() {}
    };
    tokio::time::timeout(Duration::from_secs(60), test)
        .await
        .expect("bounded");
    let most = (10..20u8)
        .map(|client| served.gate.most(&format!("127.0.0.{client}")))
        .max()
        .unwrap_or(0);
    let in_all = served.gate.counts.lock().unwrap().most_in_all;
    served.gate.release();
    served.shutdown.cancel();
    eprintln!("one client ran at most {most}; all at most {in_all}");
    assert!(in_all >= 1, "no read ran");
    assert!(most <= 2, "one client had {most} reads running at once");
    assert!(in_all <= 4, "{in_all} calls ran at once (the bound: 4)");
}

//! What every test of this binary serves, and how its clients talk to it.
//!
//! The server is one registry: `block` (a call waiting at the test's
//! [`Gate`]), `quick` (answered at once), `block_task` (`block` run as a
//! task), and resources whose reads wait at the gate too ([`Holding`]).
//! Its clients are raw HTTP/1.1 over loopback, each from an address of
//! its own (127.0.0.N): the server tells clients apart by their address,
//! and every one of 127/8 is the machine's own.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tk::mcp::{HttpOptions, McpServer, ResourceSource};
use tk::{CancellationToken, ToolContext, ToolRegistry, tool};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::task::JoinSet;

use crate::raw_http;

/// The calls and reads that wait at the test's gate, by the client (or
/// the name) they count under.
#[derive(Default)]
pub struct Counts {
    /// Running now.
    pub running: HashMap<String, usize>,
    /// The most running at once.
    pub most: HashMap<String, usize>,
    /// Started in all.
    pub started: HashMap<String, usize>,
    /// The most running at once, all clients together.
    pub most_in_all: usize,
}

/// What the test controls: the calls' counts, and the gate they wait at
/// (cancelled to let them through).
#[derive(Clone, Default)]
pub struct Gate {
    /// The calls' counts.
    pub counts: Arc<Mutex<Counts>>,
    /// Cancelled to let the calls through; a call waits on the one in
    /// place when it starts.
    pub open: Arc<Mutex<CancellationToken>>,
}

impl Gate {
    /// Let every call through, those waiting and those to come.
    pub fn release(&self) {
        self.open.lock().unwrap().cancel();
    }

    /// Calls to come wait again.
    pub fn close(&self) {
        *self.open.lock().unwrap() = CancellationToken::new();
    }

    /// Count a call of `client` as started, running until it ends or is
    /// dropped, and wait at the gate.
    pub async fn pass(&self, client: String) {
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

    /// Calls of `client` running now.
    pub fn running(&self, client: &str) -> usize {
        let counts = self.counts.lock().unwrap();
        counts.running.get(client).copied().unwrap_or(0)
    }

    /// The most calls of `client` that ran at once.
    pub fn most(&self, client: &str) -> usize {
        let counts = self.counts.lock().unwrap();
        counts.most.get(client).copied().unwrap_or(0)
    }

    /// Calls of `client` started so far.
    pub fn started(&self, client: &str) -> usize {
        let counts = self.counts.lock().unwrap();
        counts.started.get(client).copied().unwrap_or(0)
    }

    /// Calls running now, all clients together.
    pub fn running_in_all(&self) -> usize {
        self.counts.lock().unwrap().running.values().sum()
    }

    /// Wait, up to `patience`, until `client` has `count` calls running;
    /// then return how many it has.
    pub async fn wait_running(&self, client: &str, count: usize, patience: Duration) -> usize {
        let deadline = tokio::time::Instant::now() + patience;
        while self.running(client) < count && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        self.running(client)
    }

    /// Wait, up to `patience`, until `count` calls of `client` have
    /// started; then return how many have.
    pub async fn wait_started(&self, client: &str, count: usize, patience: Duration) -> usize {
        let deadline = tokio::time::Instant::now() + patience;
        while self.started(client) < count && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        self.started(client)
    }

    /// Wait, up to `patience`, until no call of `client` runs; then return
    /// how many do.
    pub async fn wait_stopped(&self, client: &str, patience: Duration) -> usize {
        let deadline = tokio::time::Instant::now() + patience;
        while self.running(client) > 0 && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        self.running(client)
    }

    /// Wait, bounded, until no call runs.
    pub async fn wait_idle(&self) -> usize {
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

/// Ends at once.
#[tool(read_only)]
async fn quick() -> String {
    "quick-answer".into()
}

/// Waits at the test's gate, run as a task.
#[tool(read_only, task = required)]
async fn block_task(client: String, ctx: &ToolContext) -> String {
    let gate = ctx.state::<Gate>().expect("the test's gate").clone();
    gate.pass(client).await;
    "done".into()
}

/// Resources whose reads wait at the test's gate, never looking at their
/// own cancellation: neither a cancel nor the client leaving ends them.
/// A read of `mem://X` counts under X (`mem://127.0.0.N` as client
/// 127.0.0.N); `mem://quick` is read at once, and `mem://panic` panics,
/// as the host's code may.
pub struct Holding(pub Gate);

#[tk::async_trait]
impl ResourceSource for Holding {
    fn resources(&self) -> Vec<Value> {
        vec![json!({"uri": "mem://a", "name": "a"})]
    }

    async fn read(&self, uri: &str) -> Result<Value, String> {
        match uri {
            "mem://panic" => panic!("the host's resource code broke"),
            "mem://quick" => {}
            _ => {
                let client = uri.trim_start_matches("mem://").to_owned();
                self.0.pass(client).await;
            }
        }
        Ok(json!({"contents": []}))
    }
}

/// A server of the registry on loopback, stopped (its calls let go) when
/// dropped.
pub struct Served {
    /// Where it listens.
    pub server: SocketAddr,
    /// Its MCP endpoint, `http://{server}/mcp`.
    pub url: String,
    /// The registry it serves: a test may change it while served.
    pub registry: Arc<ToolRegistry>,
    /// The gate its calls and reads wait at.
    pub gate: Gate,
    /// Stops the server.
    pub shutdown: CancellationToken,
}

impl Drop for Served {
    fn drop(&mut self) {
        self.gate.release();
        self.shutdown.cancel();
    }
}

/// The `_meta` of a request of protocol 2026-07-28.
pub fn meta() -> Value {
    json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}})
}

impl Served {
    /// The registry, its resources [`Holding`], served with `options`.
    pub async fn new(options: HttpOptions) -> Arc<Self> {
        Self::with_resources(options, |gate| Holding(gate.clone())).await
    }

    /// The registry served with `options` and the resources `resources`
    /// makes of the gate.
    pub async fn with_resources<R: ResourceSource>(
        options: HttpOptions,
        resources: impl FnOnce(&Gate) -> R,
    ) -> Arc<Self> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let server = listener.local_addr().unwrap();
        let shutdown = CancellationToken::new();
        let gate = Gate::default();
        let registry = Arc::new(ToolRegistry::new());
        registry.register(BlockTool).unwrap();
        registry.register(QuickTool).unwrap();
        registry.register(BlockTaskTool).unwrap();
        tokio::spawn(
            McpServer::new(Arc::clone(&registry))
                .with_resources(resources(&gate))
                .with_context(ToolContext::new().with_state(gate.clone()))
                .serve_http(listener, options.shutdown(shutdown.clone())),
        );
        Arc::new(Self {
            server,
            url: format!("http://{server}/mcp"),
            registry,
            gate,
            shutdown,
        })
    }

    /// A raw POST of `body` with `headers` (each "Name: value").
    pub fn post(&self, body: &Value, headers: &[String]) -> String {
        let body = body.to_string();
        let mut extra = String::new();
        for header in headers {
            extra.push_str(header);
            extra.push_str("\r\n");
        }
        format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{extra}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            self.server,
            body.len()
        )
    }

    /// A sessionless (2026-07-28) request of `method` with `params`.
    pub fn sessionless(
        &self,
        id: u64,
        method: &str,
        name: Option<&str>,
        mut params: Value,
    ) -> String {
        params["_meta"] = meta();
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let mut headers = vec![
            "MCP-Protocol-Version: 2026-07-28".to_owned(),
            format!("Mcp-Method: {method}"),
        ];
        if let Some(name) = name {
            headers.push(format!("Mcp-Name: {name}"));
        }
        self.post(&body, &headers)
    }

    /// A sessionless call of `block` counted as client 127.0.0.`client`.
    pub fn block_call(&self, client: u8, id: u64) -> String {
        let params = json!({"name": "block", "arguments": {"client": format!("127.0.0.{client}")}});
        self.sessionless(id, "tools/call", Some("block"), params)
    }

    /// A sessionless read of a [`Holding`] resource counted as client
    /// 127.0.0.`client`.
    pub fn read_call(&self, client: u8, id: u64) -> String {
        let uri = format!("mem://127.0.0.{client}");
        self.sessionless(id, "resources/read", Some(&uri), json!({"uri": uri}))
    }

    /// A sessionless call of `quick`.
    pub fn quick_call(&self, id: u64) -> String {
        let params = json!({"name": "quick", "arguments": {}});
        self.sessionless(id, "tools/call", Some("quick"), params)
    }

    /// Post a sessionless call of `block` from `client`, and leave after
    /// `patience` (or once the server answers and closes): what came, or
    /// nothing if the server did not close in time.
    pub async fn call_and_leave(&self, client: u8, id: u64, patience: Duration) -> String {
        let request = self.block_call(client, id);
        within(client, self.server, &request, patience, Until::Closed).await
    }

    /// Post a sessionless read from `client`, and leave after `patience`
    /// (or once the server answers and closes): the read runs on. What
    /// came, or nothing if the server did not close in time.
    pub async fn read_and_leave(&self, client: u8, id: u64, patience: Duration) -> String {
        let request = self.read_call(client, id);
        within(client, self.server, &request, patience, Until::Closed).await
    }

    /// An `initialize`.
    pub fn initialize(&self) -> String {
        self.post(&raw_http::initialize(), &[])
    }

    /// Send `request` from `client`, keep the connection for `patience` or
    /// until the server closes it; what came back.
    pub async fn exchange(&self, client: u8, request: String, patience: Duration) -> String {
        let server = self.server;
        let exchange = async move {
            let mut stream = connect_from(client, server).await?;
            stream.write_all(request.as_bytes()).await.ok()?;
            let mut heard = Vec::new();
            let _ = tokio::time::timeout(patience, stream.read_to_end(&mut heard)).await;
            Some(String::from_utf8_lossy(&heard).into_owned())
        };
        exchange.await.unwrap_or_default()
    }

    /// `exchange` in a task of `tasks`, keeping its connection up to 60 s.
    pub fn held(self: &Arc<Self>, tasks: &mut JoinSet<String>, client: u8, request: String) {
        let served = Arc::clone(self);
        tasks.spawn(async move {
            served
                .exchange(client, request, Duration::from_secs(60))
                .await
        });
    }

    /// An `initialize` from `client`: what came back.
    pub async fn ask(&self, client: u8) -> String {
        self.exchange(client, self.initialize(), Duration::from_secs(10))
            .await
    }

    /// Open a session from `client`, `initialized` sent: its id, or the
    /// refusal.
    pub async fn open(&self, client: u8) -> Result<String, String> {
        let answer = self.ask(client).await;
        let Some(id) = header(&answer, "mcp-session-id") else {
            return Err(answer);
        };
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let request = self.post(&initialized, &in_session(&id));
        let _ = self
            .exchange(client, request, Duration::from_secs(10))
            .await;
        Ok(id)
    }

    /// The DELETE that closes `session`.
    pub fn delete(&self, session: &str) -> String {
        format!(
            "DELETE /mcp HTTP/1.1\r\nHost: {}\r\nMcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-11-25\r\nConnection: close\r\n\r\n",
            self.server
        )
    }

    /// A call of `block` in `session`, counted as 127.0.0.`client`.
    pub fn block_in_session(&self, session: &str, client: u8, id: u64) -> String {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "block", "arguments": {"client": format!("127.0.0.{client}")}}});
        self.post(&body, &in_session(session))
    }

    /// The status of a `ping` in `session`, from `client`: 200 while the
    /// session is open, 404 once it is closed.
    pub async fn ping(&self, client: u8, session: &str) -> u16 {
        // An id no call of the tests uses: its answer is its own.
        let body = json!({"jsonrpc": "2.0", "id": 9999, "method": "ping"});
        let request = self.post(&body, &in_session(session));
        status(
            &self
                .exchange(client, request, Duration::from_secs(10))
                .await,
        )
    }

    /// Let every call end, wait (up to `patience`) for `tasks`, and stop
    /// the server.
    pub async fn finish(&self, tasks: &mut JoinSet<String>, patience: Duration) -> Vec<String> {
        self.gate.release();
        let mut answers = Vec::new();
        let _ = tokio::time::timeout(patience, async {
            while let Some(answer) = tasks.join_next().await {
                answers.push(answer.unwrap_or_default());
            }
        })
        .await;
        self.shutdown.cancel();
        answers
    }
}

/// The headers of a request in `session`.
pub fn in_session(session: &str) -> [String; 2] {
    [
        format!("Mcp-Session-Id: {session}"),
        "MCP-Protocol-Version: 2025-11-25".to_owned(),
    ]
}

/// A JSON-RPC `resources/read` of `uri`.
pub fn read(id: u64, uri: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "resources/read",
        "params": {"uri": uri}})
}

/// The status of an HTTP answer (0 if none came).
pub fn status(answer: &str) -> u16 {
    answer
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

/// The value of the header `name` of an HTTP answer.
pub fn header(answer: &str, name: &str) -> Option<String> {
    let head = answer.split("\r\n\r\n").next()?;
    head.lines().find_map(|line| {
        let (key, value) = line.split_once(':')?;
        key.eq_ignore_ascii_case(name)
            .then(|| value.trim().to_owned())
    })
}

/// A connection to `server` from 127.0.0.`client`, or `None` if it failed.
pub async fn connect_from(client: u8, server: SocketAddr) -> Option<TcpStream> {
    let socket = tokio::net::TcpSocket::new_v4().ok()?;
    let from = IpAddr::V4(Ipv4Addr::new(127, 0, 0, client));
    socket.bind(SocketAddr::new(from, 0)).ok()?;
    socket.connect(server).await.ok()
}

/// What a client waits for before it leaves.
#[derive(Clone, Copy)]
pub enum Until {
    /// The answer's head: the request then runs on without its client.
    Head,
    /// The server closing the connection: the whole answer.
    Closed,
}

/// `request` sent to `server` from 127.0.0.`client`, the whole exchange
/// bounded by `patience`: what came once `until` was met, or nothing if
/// it was not met in time (or the connection failed).
pub async fn within(
    client: u8,
    server: SocketAddr,
    request: &str,
    patience: Duration,
    until: Until,
) -> String {
    let exchange = async {
        let mut stream = connect_from(client, server).await?;
        stream.write_all(request.as_bytes()).await.ok()?;
        let mut heard = Vec::new();
        match until {
            Until::Closed => {
                let _ = stream.read_to_end(&mut heard).await;
            }
            Until::Head => {
                let mut chunk = [0u8; 4096];
                loop {
                    let n = stream.read(&mut chunk).await.ok()?;
                    heard.extend_from_slice(&chunk[..n]);
                    if n == 0 || heard.windows(4).any(|w| w == b"\r\n\r\n") {
                        break;
                    }
                }
            }
        }
        Some(String::from_utf8_lossy(&heard).into_owned())
    };
    tokio::time::timeout(patience, exchange)
        .await
        .ok()
        .flatten()
        .unwrap_or_default()
}

/// A test's body, bounded by `patience`.
pub async fn bounded<T>(patience: Duration, test: impl Future<Output = T>) -> T {
    tokio::time::timeout(patience, test).await.expect("bounded")
}

/// A server answering 4 requests at once (a client's share: 2).
pub fn four() -> HttpOptions {
    HttpOptions::default().max_connections(4)
}

//! A stateless server's requests, each outside every session (here of
//! protocol 2026-07-28, whose version is in its `_meta`), are bounded per
//! client: one client posting such requests and leaving each has at most
//! its part of the server's permits running (half of `max_connections`).

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tk::mcp::{HttpOptions, McpServer};
use tk::{CancellationToken, ToolRegistry};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Reads running now (started, not yet ended or dropped).
#[derive(Clone, Default)]
struct Running(Arc<AtomicUsize>, Arc<AtomicUsize>);

struct Counted(Running);
impl Drop for Counted {
    fn drop(&mut self) {
        self.0.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Every read holds until `open` is cancelled, ignoring its cancellation.
struct Holding {
    running: Running,
    open: CancellationToken,
}

#[tk::async_trait]
impl tk::mcp::ResourceSource for Holding {
    fn resources(&self) -> Vec<serde_json::Value> {
        vec![serde_json::json!({"uri": "mem://a", "name": "a"})]
    }

    async fn read(&self, _uri: &str) -> Result<serde_json::Value, String> {
        let now = self.running.0.fetch_add(1, Ordering::SeqCst) + 1;
        self.running.1.fetch_max(now, Ordering::SeqCst);
        let _counted = Counted(self.running.clone());
        self.open.cancelled().await;
        Ok(serde_json::json!({"contents": []}))
    }
}

async fn connect_from(client: IpAddr, server: SocketAddr) -> Option<TcpStream> {
    let socket = tokio::net::TcpSocket::new_v4().ok()?;
    socket.bind(SocketAddr::new(client, 0)).ok()?;
    socket.connect(server).await.ok()
}

/// One 2026-07-28 read of `mem://a` from `client`; the client leaves after
/// `patience` (or when the server answers or closes). Returns what came.
async fn read_and_leave(client: IpAddr, server: SocketAddr, id: u64, patience: Duration) -> String {
    let body = serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "resources/read",
        "params": {"uri": "mem://a", "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}}})
    .to_string();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {server}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: resources/read\r\nMcp-Name: mem://a\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let exchange = async {
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

/// The most reads one client (127.0.0.1) had running at once after posting
/// 12 reads of protocol 2026-07-28, one after another, leaving each after
/// 300 ms, to a server of `max_connections(4)` (a client's share: 2).
async fn most_running(stateless: bool) -> (usize, Vec<String>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let server = listener.local_addr().unwrap();
    let shutdown = CancellationToken::new();
    let open = CancellationToken::new();
    let running = Running::default();
    let options = HttpOptions::default()
        .max_connections(4)
        .stateless(stateless)
        .shutdown(shutdown.clone());
    tokio::spawn(
        McpServer::new(Arc::new(ToolRegistry::new()))
            .with_resources(Holding {
                running: running.clone(),
                open: open.clone(),
            })
            .serve_http(listener, options),
    );
    let client = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 1));
    let mut heard = Vec::new();
    let test = async {
        for id in 0..12 {
            heard.push(read_and_leave(client, server, id, Duration::from_millis(300)).await);
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    tokio::time::timeout(Duration::from_secs(60), test)
        .await
        .expect("bounded");
    let most = running.1.load(Ordering::SeqCst);
    open.cancel();
    shutdown.cancel();
    (most, heard)
}

/// Stateless, the client share holds: at most 2 at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stateless_a_client_runs_at_most_its_share_of_sessionless_requests() {
    let (most, heard) = most_running(true).await;
    eprintln!(
        "stateless: at most {most} running at once; first answer {:?}",
        heard.first()
    );
    assert!(most >= 1, "no read ran: {heard:?}");
    assert!(
        most <= 2,
        "one client had {most} reads running at once (its share: 2)"
    );
}

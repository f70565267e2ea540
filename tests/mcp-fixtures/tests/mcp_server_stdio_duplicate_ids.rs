//! A client on a byte stream that sends a request under the id of one
//! still being answered: the second is not run (the SDK would answer both
//! with one answer) but answered at once with JSON-RPC's "invalid request"
//! error (-32600), and the server reads on. It used to be dropped without
//! an answer, and the client waited for ever.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::time::Duration;

use tk::mcp::McpServer;
use tk::{CancellationToken, ToolRegistry};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// A read that counts itself and holds until `open` is cancelled.
struct Holding {
    reads: Arc<AtomicUsize>,
    open: CancellationToken,
}

#[tk::async_trait]
impl tk::mcp::ResourceSource for Holding {
    fn resources(&self) -> Vec<serde_json::Value> {
        vec![serde_json::json!({"uri": "mem://hold", "name": "hold"})]
    }

    async fn read(&self, _uri: &str) -> Result<serde_json::Value, String> {
        self.reads.fetch_add(1, SeqCst);
        self.open.cancelled().await;
        Ok(serde_json::json!({"contents": []}))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_reusing_a_pending_id_is_answered_with_an_error() {
    let reads = Arc::new(AtomicUsize::new(0));
    let open = CancellationToken::new();
    let (client, server) = tokio::io::duplex(1 << 20);
    let (server_read, server_write) = tokio::io::split(server);
    let serving = tokio::spawn(
        McpServer::new(Arc::new(ToolRegistry::new()))
            .with_resources(Holding {
                reads: Arc::clone(&reads),
                open: open.clone(),
            })
            .serve_io(server_read, server_write),
    );
    let (client_read, mut client_write) = tokio::io::split(client);
    let mut lines = BufReader::new(client_read).lines();
    let hello = serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}}});
    let read = |id: u64| {
        serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "resources/read",
            "params": {"uri": "mem://hold"}})
    };
    let mut out =
        format!("{hello}\n{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}}\n");
    out.push_str(&format!("{}\n", read(5)));
    let test = async {
        client_write.write_all(out.as_bytes()).await.unwrap();
        // The first read of id 5 runs (and holds) before the second comes.
        while reads.load(SeqCst) == 0 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let again = format!(
            "{}\n{}\n",
            read(5),
            serde_json::json!({"jsonrpc": "2.0", "id": 6, "method": "ping"})
        );
        client_write.write_all(again.as_bytes()).await.unwrap();
        // Everything that comes until the ping behind is answered.
        let mut heard = Vec::new();
        while let Ok(Some(line)) = lines.next_line().await {
            let message: serde_json::Value = serde_json::from_str(&line).unwrap();
            let pong = message["id"] == 6;
            heard.push(message);
            if pong {
                break;
            }
        }
        heard
    };
    let heard = tokio::time::timeout(Duration::from_secs(30), test)
        .await
        .expect("bounded");
    let refused: Vec<_> = heard
        .iter()
        .filter(|m| m["id"] == 5 && m["error"]["code"] == -32600)
        .collect();
    let ran = reads.load(SeqCst);
    open.cancel();
    drop((client_write, lines));
    let _ = tokio::time::timeout(Duration::from_secs(10), serving).await;
    assert_eq!(refused.len(), 1, "heard {heard:?}");
    assert!(
        refused[0]["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("in use")),
        "{refused:?}"
    );
    assert_eq!(ran, 1, "the request reusing the id ran");
}

/// A client that reuses one id for requests sent one after the other, each
/// once the answer to the one before is read (JSON-RPC frees an id once its
/// request is answered), is never told the id is in use, nor left without
/// an answer: the id is free again before its answer is handed on to be
/// written. (It was freed once the write returned, and a client quick
/// enough to read the answer and send its next request first was refused,
/// or, before that, its request dropped, after a few hundred such pings.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_id_reused_once_its_answer_is_read_is_never_refused() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let serving = tokio::spawn(async move {
        let (stream, _) = listener.accept().await.unwrap();
        let _ = stream.set_nodelay(true);
        let (read, write) = stream.into_split();
        McpServer::new(Arc::new(ToolRegistry::new()))
            .serve_io(read, write)
            .await
    });
    let stream = tokio::net::TcpStream::connect(address).await.unwrap();
    stream.set_nodelay(true).unwrap();
    let (client_read, mut client_write) = stream.into_split();
    let mut lines = BufReader::new(client_read).lines();
    let hello = serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}}});
    let test = async {
        client_write
            .write_all(format!("{hello}\n").as_bytes())
            .await
            .unwrap();
        lines.next_line().await.unwrap().unwrap();
        client_write
            .write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n")
            .await
            .unwrap();
        let ping = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n";
        let mut refused = Vec::new();
        let mut sent = 0u32;
        let started = tokio::time::Instant::now();
        // Bounded by count and by time, whichever comes first.
        while sent < 20_000 && started.elapsed() < Duration::from_secs(10) {
            client_write.write_all(ping).await.unwrap();
            sent += 1;
            let Ok(line) = tokio::time::timeout(Duration::from_secs(5), lines.next_line()).await
            else {
                refused.push((sent, serde_json::json!("no answer within 5 s")));
                // What comes once another request is sent behind it.
                client_write
                    .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":\"probe\",\"method\":\"ping\"}\n")
                    .await
                    .unwrap();
                while let Ok(Ok(Some(line))) =
                    tokio::time::timeout(Duration::from_secs(5), lines.next_line()).await
                {
                    refused.push((sent, serde_json::json!(line)));
                }
                break;
            };
            let line = line.unwrap().expect("an answer");
            let message: serde_json::Value = serde_json::from_str(&line).unwrap();
            if message.get("error").is_some() {
                refused.push((sent, message));
                // The refused request's answer may still be owed: stop here.
                break;
            }
        }
        (sent, refused)
    };
    let (sent, refused) = tokio::time::timeout(Duration::from_secs(40), test)
        .await
        .expect("bounded");
    drop((client_write, lines));
    let _ = tokio::time::timeout(Duration::from_secs(10), serving).await;
    eprintln!("sent {sent} pings of id 1, one after the other; refused: {refused:?}");
    assert!(
        refused.is_empty(),
        "a ping sent after its id's answer was refused: {refused:?}"
    );
}

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

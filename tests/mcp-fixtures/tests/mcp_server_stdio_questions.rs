//! A client on a byte stream whose calls outnumber what the server answers
//! and holds at once (64 and 64), each call asking the client a question:
//! what the client sends behind its calls (the answers to those questions,
//! a ping, a cancel) must still be read, or the server waits for answers
//! it never reads.

#[path = "../raw_http.rs"]
mod raw_http;

use std::sync::Arc;
use std::time::Duration;

use tk::mcp::{ClientSession, McpServer};
use tk::{ToolRegistry, tool};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// Ask the client for its roots and say how many it has.
#[tool(read_only)]
async fn count_roots(session: &ClientSession) -> String {
    match session.list_roots().await {
        Ok(roots) => roots["roots"].as_array().map_or(0, Vec::len).to_string(),
        Err(e) => format!("no roots: {e}"),
    }
}

/// The server of [`count_roots`] on a pipe: the client's lines, its
/// writer, and the serving task.
type Served = (
    tokio::io::Lines<BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>,
    tokio::io::WriteHalf<tokio::io::DuplexStream>,
    tokio::task::JoinHandle<std::io::Result<()>>,
);

fn serve() -> Served {
    let registry = Arc::new(ToolRegistry::new());
    registry.register(CountRootsTool).unwrap();
    let (client, server) = tokio::io::duplex(1 << 20);
    let (server_read, server_write) = tokio::io::split(server);
    let serving = tokio::spawn(McpServer::new(registry).serve_io(server_read, server_write));
    let (client_read, client_write) = tokio::io::split(client);
    (BufReader::new(client_read).lines(), client_write, serving)
}

/// `initialize` offering roots, `initialized`, and `calls` calls of
/// `count_roots` with ids 1, 2...
fn opening(calls: u64) -> String {
    let hello = serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {"roots": {}},
        "clientInfo": {"name": "raw", "version": "0"}}});
    let mut out =
        format!("{hello}\n{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}}\n");
    for id in 1..=calls {
        out.push_str(&format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\"params\":{{\"name\":\"count_roots\",\"arguments\":{{}}}}}}\n"
        ));
    }
    out
}

/// 300 calls sent at once, each asking the client its roots, which the
/// client answers as they come: every call is answered, by its result or
/// by a refusal to take more at once, instead of the answers to the
/// questions waiting behind calls the server no longer reads.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_come_through_behind_more_calls_than_the_server_holds() {
    const CALLS: u64 = 300;
    let (mut lines, mut client_write, serving) = serve();
    client_write
        .write_all(opening(CALLS).as_bytes())
        .await
        .unwrap();
    let (mut results, mut refused) = (0, 0);
    let _ = tokio::time::timeout(Duration::from_secs(30), async {
        while results + refused < CALLS {
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
            } else if message["id"].as_u64().is_some_and(|id| id >= 1) {
                if message.get("result").is_some() {
                    let text = message["result"]["content"][0]["text"].as_str();
                    assert_eq!(text, Some("1"), "{line}");
                    results += 1;
                } else {
                    assert_eq!(message["error"]["code"], -32029, "{line}");
                    refused += 1;
                }
            }
        }
    })
    .await;
    serving.abort();
    eprintln!("{results} calls answered, {refused} refused");
    assert_eq!(
        results + refused,
        CALLS,
        "calls left waiting: the answers to their questions were not read"
    );
    assert!(results >= 128, "only {results} calls were answered");
}

/// 128 calls whose questions the client leaves unanswered fill every slot
/// and the queue behind them; a ping after them is still answered (a
/// refusal, at once), the client's cancels are read, and once they have
/// ended their calls a ping is answered as usual.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ping_and_cancels_get_through_while_every_call_waits_for_the_client() {
    const CALLS: u64 = 128;
    let (mut lines, mut client_write, serving) = serve();
    let mut out = opening(CALLS);
    out.push_str("{\"jsonrpc\":\"2.0\",\"id\":9000,\"method\":\"ping\"}\n");
    client_write.write_all(out.as_bytes()).await.unwrap();
    // Read until the answer to `id`, bounded; the server's questions are
    // left unanswered.
    let mut answer_to = async |id: u64| {
        tokio::time::timeout(Duration::from_secs(20), async {
            while let Ok(Some(line)) = lines.next_line().await {
                let message: serde_json::Value = serde_json::from_str(&line).unwrap();
                if message["id"] == id && message.get("method").is_none() {
                    return Some(message);
                }
            }
            None
        })
        .await
        .ok()
        .flatten()
    };
    let first = answer_to(9000).await;
    let mut cancels = String::new();
    for id in 1..=CALLS {
        cancels.push_str(&format!(
            "{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{{\"requestId\":{id}}}}}\n"
        ));
    }
    cancels.push_str("{\"jsonrpc\":\"2.0\",\"id\":9001,\"method\":\"ping\"}\n");
    let second = match &first {
        Some(_) => {
            client_write.write_all(cancels.as_bytes()).await.unwrap();
            answer_to(9001).await
        }
        None => None,
    };
    serving.abort();
    let first = first.expect("a ping behind 128 waiting calls was never answered");
    assert!(
        first.get("result").is_some() || first["error"]["code"] == -32029,
        "{first}"
    );
    let second = second.expect("a ping after the cancels was never answered");
    assert_eq!(second["result"], serde_json::json!({}), "{second}");
}

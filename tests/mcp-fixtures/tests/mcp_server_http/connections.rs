//! The connections one client holds at once. Each holds a descriptor and a
//! task of the server, and one of its `max_connections`: a client past its
//! part (by default its part of the requests and one more) takes another
//! only while a quarter stay free, and past that is answered 503 on a
//! connection that holds none of them, so that one address opening
//! connections cannot leave the other clients in the listen queue, and a
//! lone client's burst still uses what is spare.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tk::mcp::{HttpOptions, McpClients, McpConfig};
use tk::{ToolContext, ToolRegistry};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::task::JoinSet;

use crate::support::{Served, bounded, connect_from, header, status};

const BOUND: Duration = Duration::from_secs(60);

/// `count` connections from 127.0.0.`client`, kept open and idle.
async fn hold(served: &Served, client: u8, count: usize) -> Vec<TcpStream> {
    let mut held = Vec::new();
    for _ in 0..count {
        held.push(
            connect_from(client, served.server)
                .await
                .expect("a connection"),
        );
    }
    held
}

/// Of 8 connections (a part of 5: its 4 requests and one more; a quarter
/// kept): a client is served on a fifth and, spare while 2 stay free, a
/// sixth, answered 503 with a `Retry-After` on a seventh, which would leave 1,
/// while another client is served; once one of its own connections
/// closes, it is served again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_past_its_connections_is_refused_and_another_is_served() {
    let served = Served::new(HttpOptions::default().max_connections(8)).await;
    bounded(BOUND, async {
        let mut held = hold(&served, 2, 4).await;
        for _ in 0..2 {
            let spare = served.ask(2).await;
            assert_eq!(status(&spare), 200, "a spare connection: {spare}");
            held.extend(hold(&served, 2, 1).await);
        }
        let refused = served.ask(2).await;
        assert_eq!(status(&refused), 503, "{refused}");
        assert!(header(&refused, "retry-after").is_some(), "{refused}");
        let other = served.ask(3).await;
        assert_eq!(status(&other), 200, "another client: {other}");

        held.pop();
        let mut again = String::new();
        for _ in 0..100 {
            again = served.ask(2).await;
            if status(&again) == 200 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert_eq!(status(&again), 200, "with a connection closed: {again}");
    })
    .await;
}

/// A client one connection short of all it may hold asks, one after the
/// other, on a new connection each as soon as the last answer ends (the
/// server's close): never refused, the connection it has just finished
/// with given back before it could see the answer end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_just_answered_is_given_back_before_the_client_sees_it_close() {
    // Of 4: a part of 3, past which a client takes none (1 must stay free).
    let served = Served::new(HttpOptions::default().max_connections(4)).await;
    bounded(BOUND, async {
        let _held = hold(&served, 2, 2).await;
        for round in 0..300 {
            let answer = served.ask(2).await;
            assert_eq!(status(&answer), 200, "round {round}: {answer}");
        }
    })
    .await;
}

/// 200 more connections from a client that holds all it may, none sending
/// a byte: the server keeps answering another client meanwhile (the
/// refused hold none of its connections), and closes all but the 32 it
/// answers that client at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_refused_connections_leaves_the_server_to_others() {
    let served = Served::new(HttpOptions::default().max_connections(8)).await;
    bounded(BOUND, async {
        let _held = hold(&served, 2, 6).await;
        let flood = hold(&served, 2, 200).await;
        let other = served.ask(3).await;
        assert_eq!(status(&other), 200, "another client: {other}");

        // Closed at once, or (32 of them) answered when their request
        // comes, or closed after a short wait for it.
        let mut closed = 0;
        for mut stream in flood {
            let mut byte = [0u8; 1];
            let read = tokio::time::timeout(Duration::from_secs(5), stream.read(&mut byte)).await;
            match read {
                Ok(Ok(0) | Err(_)) => closed += 1,
                Ok(Ok(_)) => panic!("a refused connection sent data unasked"),
                Err(_) => panic!("a refused connection was kept open"),
            }
        }
        assert_eq!(closed, 200);
    })
    .await;
}

/// Behind a proxy every client is one: `max_connections_per_client` raised
/// to `max_connections` lets it hold every connection.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_part_can_be_raised_to_every_connection() {
    let options = HttpOptions::default()
        .max_connections(4)
        .max_connections_per_client(4);
    let served = Served::new(options).await;
    bounded(BOUND, async {
        let _held = hold(&served, 2, 3).await;
        let answer = served.ask(2).await;
        assert_eq!(status(&answer), 200, "{answer}");
    })
    .await;
}

/// The project's own client, in a burst of 16 calls (as many as it sends at
/// once) on a server of 8 connections (its part 5, 6 at most with the
/// quarter kept): its stream and 5 calls hold 6 connections, and the other
/// calls' connections are refused with `503` and `Retry-After: 1`. It sends them again after the
/// wait, by when the calls before them have ended: every call is answered,
/// and the link (its session) is kept. (It used to fail those calls and
/// drop the link.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_projects_client_sends_again_what_a_busy_server_refused() {
    let served = Served::new(HttpOptions::default().max_connections(8)).await;
    bounded(BOUND, async {
        let config =
            McpConfig::from_json(&json!({"mcpServers": {"srv": {"url": served.url}}})).unwrap();
        let registry = Arc::new(ToolRegistry::new());
        let clients = McpClients::new(config, &registry);
        for (server, outcome) in clients.connect().await {
            outcome.unwrap_or_else(|e| panic!("{server}: {e}"));
        }
        let mut calls = JoinSet::new();
        for _ in 0..16 {
            let registry = Arc::clone(&registry);
            calls.spawn(async move {
                registry
                    .call(
                        "mcp_srv_block",
                        json!({"client": "burst"}),
                        &ToolContext::new(),
                    )
                    .await
            });
        }
        served
            .gate
            .wait_running("burst", 4, Duration::from_secs(10))
            .await;
        // Long enough for the burst's last connections to be refused.
        tokio::time::sleep(Duration::from_millis(300)).await;
        served.gate.release();
        let mut failed = Vec::new();
        while let Some(output) = calls.join_next().await {
            let output = output.unwrap();
            if output.is_error {
                failed.push(output.content);
            }
        }
        assert!(failed.is_empty(), "calls failed: {failed:?}");
        assert_eq!(served.gate.started("burst"), 16);
        assert!(clients.server("srv").unwrap().is_connected().await);
        clients.disconnect().await;
    })
    .await;
}

/// The server's connections to 127.0.0.`client` for each it holds, by
/// that last byte: its sockets on the port it listens on, not the listener,
/// and only those it holds a descriptor for (one it has closed, kept by
/// the kernel until the close is done, and one not yet accepted, have
/// none: inode 0).
fn server_held(server: SocketAddr) -> Vec<u8> {
    let local = format!("0100007F:{:04X}", server.port());
    let table = std::fs::read_to_string("/proc/net/tcp").expect("/proc/net/tcp");
    let mut held: Vec<u8> = table
        .lines()
        .skip(1)
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let &[_, address, remote, state, .., inode] = fields.get(..10)? else {
                return None;
            };
            // 0A: listening.
            (address == local && state != "0A" && inode != "0")
                .then(|| u8::from_str_radix(remote.get(..2)?, 16).ok())
                .flatten()
        })
        .collect();
    held.sort_unstable();
    held
}

/// [`server_held`] once it has not changed for 10 looks 20 ms apart: a
/// connection the server is closing is gone by then, one it keeps is not.
async fn settled_held(server: SocketAddr) -> Vec<u8> {
    let mut last = server_held(server);
    let mut same = 0;
    while same < 10 {
        tokio::time::sleep(Duration::from_millis(20)).await;
        let now = server_held(server);
        if now == last {
            same += 1;
        } else {
            (same, last) = (0, now);
        }
    }
    last
}

/// Send `request` from 127.0.0.`client` and keep the connection, its
/// answer unread.
async fn send_and_keep(served: &Served, client: u8, request: String) -> TcpStream {
    let mut stream = connect_from(client, served.server)
        .await
        .expect("a connection");
    stream
        .write_all(request.as_bytes())
        .await
        .expect("the request sent");
    stream
}

/// Wait until `count` calls run at the gate, in all.
async fn running(served: &Served, count: usize) {
    while served.gate.running_in_all() < count {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Requests whose answers end with the server closing the connection
/// (`Connection: close`, and HTTP/1.0 with no length), each a call whose
/// events go on streaming: 8 clients on a server of 4 connections. The
/// server's connections are given back as it closes them, so each is held
/// until its answer ends: the server holds 4 (the others wait in the
/// listen queue), not one more.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_that_end_with_the_close_hold_their_connection_until_then() {
    for http_1_0 in [false, true] {
        let served = Served::new(HttpOptions::default().max_connections(4)).await;
        bounded(BOUND, async {
            let mut sessions = Vec::new();
            for client in 2..10 {
                sessions.push((client, served.open(client).await.expect("a session")));
            }
            let mut streams = Vec::new();
            for (client, session) in sessions {
                let mut call = served.block_in_session(&session, client, 1);
                if http_1_0 {
                    call = call.replacen("HTTP/1.1", "HTTP/1.0", 1).replacen(
                        "Connection: close\r\n",
                        "",
                        1,
                    );
                }
                streams.push(send_and_keep(&served, client, call).await);
            }
            running(&served, 4).await;
            let held = settled_held(served.server).await;
            assert_eq!(held.len(), 4, "HTTP/1.0: {http_1_0}; held: {held:?}");
            drop(streams);
        })
        .await;
    }
}

/// One client, on 12 connections, each a call in `Connection: close`
/// whose events go on streaming, on a server of 8 (its part 5, and one
/// spare while 2 stay free): it holds 6 of them, the others refused, and
/// another client is served meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_streaming_answers_that_end_with_the_close_holds_only_its_part() {
    let served = Served::new(HttpOptions::default().max_connections(8)).await;
    bounded(BOUND, async {
        let mut sessions = Vec::new();
        for _ in 0..12 {
            sessions.push(served.open(2).await.expect("a session"));
        }
        let mut streams = Vec::new();
        for (id, session) in sessions.iter().enumerate() {
            let call = served.block_in_session(session, 2, id as u64 + 1);
            streams.push(send_and_keep(&served, 2, call).await);
        }
        // Its part of the requests: 4 run, the others' connections wait.
        running(&served, 4).await;
        let other = served.ask(3).await;
        assert_eq!(status(&other), 200, "another client: {other}");
        let held = settled_held(served.server).await;
        assert_eq!(held, [2; 6], "the server's connections, by client");
        drop(streams);
    })
    .await;
}

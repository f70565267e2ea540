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

use std::sync::Arc;
use std::time::Duration;

use tk::mcp::HttpOptions;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::task::JoinSet;

use crate::raw_http;
use crate::support::{Served, connect_from, four};

/// How long a test waits for calls to be running.
const PATIENCE: Duration = Duration::from_secs(10);

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
            served.held(&mut tasks, 2, served.block_call(2, id));
        }
        served.gate.wait_running("127.0.0.2", 3, PATIENCE).await;
        // Time for a fourth to start, if it would.
        tokio::time::sleep(Duration::from_millis(300)).await;
        let greedy = served.gate.most("127.0.0.2");
        served.held(&mut tasks, 3, served.block_call(3, 100));
        served.held(&mut tasks, 3, served.block_call(3, 101));
        let other = served.gate.wait_running("127.0.0.3", 2, PATIENCE).await;
        // Every call ends, the fourth of the first client too.
        served.gate.release();
        while tasks.join_next().await.is_some() {}
        let left = served.gate.wait_idle().await;
        assert_eq!(left, 0, "calls still running once let go");
        served.gate.close();
        for id in 200..203 {
            served.held(&mut tasks, 4, served.block_call(4, id));
            served.held(&mut tasks, 5, served.block_call(5, id + 10));
        }
        let after = (
            served.gate.wait_running("127.0.0.4", 3, PATIENCE).await,
            served.gate.wait_running("127.0.0.5", 3, PATIENCE).await,
        );
        (greedy, other, after)
    };
    let (greedy, other, after) = tokio::time::timeout(Duration::from_secs(60), test)
        .await
        .expect("bounded");
    served.finish(&mut tasks, Duration::from_secs(30)).await;
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
            let request = served.read_call(3, id);
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
        let other = served.gate.wait_running("127.0.0.3", 2, PATIENCE).await;
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
        served.held(&mut tasks, 2, served.block_call(2, 0));
        served.held(&mut tasks, 2, served.block_call(2, 1));
        let share = served.gate.wait_running("127.0.0.2", 2, PATIENCE).await;
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
    served.finish(&mut tasks, Duration::from_secs(30)).await;
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
    let served = Served::new(four()).await;
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

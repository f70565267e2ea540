//! Requests of protocol 2026-07-28 sent without a session to a server
//! that keeps sessions, as clients misuse them: batches, made-up session
//! ids, version in the header only, reads that panic, calls left running,
//! `subscriptions/listen` streams left open or left at once. Each client
//! keeps to its share of the permits, gets it back, and is still answered.
//!
//! Each client connects from a loopback address of its own (127.0.0.N):
//! the server tells clients apart by their address.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tk::CancellationToken;
use tk::mcp::HttpOptions;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::task::JoinSet;

use crate::support::{Served, bounded, connect_from, four, meta, status};

/// Every test's body is bounded in time.
const BOUND: Duration = Duration::from_secs(90);

/// Sessionless calls sent in one body, as a JSON array: the client runs
/// no more than its share (2 of 4), and the server answers something.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_of_sessionless_calls_runs_at_most_the_share() {
    let served = Served::new(four()).await;
    let mut tasks = JoinSet::new();
    bounded(BOUND, async {
        let calls: Vec<Value> = (0..6)
            .map(|id| {
                json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": "block", "arguments": {"client": "127.0.0.2"},
                    "_meta": meta()}})
            })
            .collect();
        let request = served.post(
            &Value::Array(calls),
            &["MCP-Protocol-Version: 2026-07-28".to_owned()],
        );
        served.held(&mut tasks, 2, request);
        served
            .gate
            .wait_running("127.0.0.2", 3, Duration::from_secs(2))
            .await;
        assert!(served.gate.most("127.0.0.2") <= 2);
    })
    .await;
    served.gate.release();
    // What the server said (a batch is refused whole, or answered).
    if let Some(Ok(answer)) = tasks.join_next().await {
        eprintln!("batch: {answer}");
        assert!(status(&answer) < 500, "{answer}");
    }
}

/// Sessionless calls carrying a made-up `Mcp-Session-Id`, or the id of
/// another client's session: counted as the sender's all the same.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessionless_calls_naming_a_session_run_at_most_the_share() {
    let served = Served::new(four()).await;
    let mut tasks = JoinSet::new();
    bounded(BOUND, async {
        let other = served.open(3).await.expect("another client's session");
        for id in 0..6u64 {
            let mut request = served.block_call(2, id);
            let named = if id % 2 == 0 {
                "made-up".to_owned()
            } else {
                other.clone()
            };
            request = request.replacen(
                "\r\n\r\n",
                &format!("\r\nMcp-Session-Id: {named}\r\n\r\n"),
                1,
            );
            served.held(&mut tasks, 2, request);
        }
        served
            .gate
            .wait_running("127.0.0.2", 3, Duration::from_secs(2))
            .await;
        let most = served.gate.most("127.0.0.2");
        assert!(most >= 1, "none ran");
        assert!(most <= 2, "the client ran {most}");
    })
    .await;
    served.gate.release();
}

/// Calls of one client in its session and outside any, together: no more
/// than its share (2 of 4) at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clients_calls_in_and_outside_sessions_share_one_share() {
    let served = Served::new(four()).await;
    let mut tasks = JoinSet::new();
    bounded(BOUND, async {
        let session = served.open(2).await.expect("a session");
        for id in 0..3 {
            let request = served.block_in_session(&session, 2, 10 + id);
            served.held(&mut tasks, 2, request);
            let request = served.block_call(2, 20 + id);
            served.held(&mut tasks, 2, request);
        }
        served
            .gate
            .wait_running("127.0.0.2", 3, Duration::from_secs(2))
            .await;
        let most = served.gate.most("127.0.0.2");
        assert!(most >= 1, "none ran");
        assert!(most <= 2, "the client ran {most}");
    })
    .await;
    served.gate.release();
}

/// A resource read that panics, 10 times from one client: its share comes
/// back each time; it then runs its 2 calls.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn panicking_sessionless_reads_give_their_permits_back() {
    let served = Served::new(four()).await;
    let mut tasks = JoinSet::new();
    bounded(BOUND, async {
        for id in 0..10 {
            let request = served.sessionless(
                id,
                "resources/read",
                Some("mem://panic"),
                json!({"uri": "mem://panic"}),
            );
            let answer = served.exchange(2, request, Duration::from_secs(5)).await;
            assert!(!answer.is_empty(), "no answer to a panicking read");
        }
        for id in 100..102 {
            served.held(&mut tasks, 2, served.block_call(2, id));
        }
        let running = served
            .gate
            .wait_running("127.0.0.2", 2, Duration::from_secs(10))
            .await;
        assert_eq!(running, 2, "calls of the client that ran after the panics");
    })
    .await;
    served.gate.release();
}

/// Open a sessionless `subscriptions/listen` stream from `client`;
/// returns its connection once acknowledged.
async fn listen_from(served: &Served, client: u8) -> TcpStream {
    let request = served.sessionless(
        1,
        "subscriptions/listen",
        None,
        json!({"notifications": {"toolsListChanged": true}}),
    );
    let mut stream = connect_from(client, served.server).await.expect("connect");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut heard = Vec::new();
    let mut chunk = [0u8; 4096];
    let read = async {
        loop {
            let n = stream.read(&mut chunk).await.unwrap_or(0);
            heard.extend_from_slice(&chunk[..n]);
            if n == 0 || String::from_utf8_lossy(&heard).contains("acknowledged") {
                break;
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(10), read)
        .await
        .expect("the listen stream is acknowledged");
    assert!(
        String::from_utf8_lossy(&heard).contains("acknowledged"),
        "{}",
        String::from_utf8_lossy(&heard)
    );
    stream
}

/// A client that opens a listen stream and leaves, 5 times, on a server
/// whose client share is 1 and connections 2: each stream's connection
/// comes back, nothing of its share is kept, and a call of the client is
/// then answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listen_streams_left_leave_nothing_held() {
    let served = Served::new(HttpOptions::default().max_connections(2)).await;
    bounded(BOUND, async {
        for _ in 0..5 {
            let stream = listen_from(&served, 2).await;
            drop(stream);
        }
        let answer = served
            .exchange(2, served.quick_call(7), Duration::from_secs(20))
            .await;
        assert!(
            answer.contains("quick-answer"),
            "the client's call after its listen streams left: {answer:?}"
        );
    })
    .await;
}

/// A client keeping one listen stream open (as a 2026-07-28 client does,
/// to hear of changes) calls a tool on a server whose client share is 1
/// (`max_connections` 2): the call is answered, the idle stream holding no
/// permit (it held the client's only one, and the call waited for ever).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_listening_can_still_call() {
    let served = Served::new(HttpOptions::default().max_connections(2)).await;
    bounded(BOUND, async {
        let _stream = listen_from(&served, 2).await;
        let answer = served
            .exchange(2, served.quick_call(7), Duration::from_secs(5))
            .await;
        assert!(
            answer.contains("quick-answer"),
            "a listening client's own call was not answered in 5 s: {answer:?}"
        );
    })
    .await;
}

/// Sessionless pings and notifications of a client whose share is taken
/// are answered at once (they take nothing).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pings_and_notifications_of_a_busy_client_are_answered() {
    let served = Served::new(four()).await;
    let mut tasks = JoinSet::new();
    bounded(BOUND, async {
        for id in 0..2 {
            served.held(&mut tasks, 2, served.block_call(2, id));
        }
        let running = served
            .gate
            .wait_running("127.0.0.2", 2, Duration::from_secs(10))
            .await;
        assert_eq!(running, 2);
        let ping = served.sessionless(5, "ping", None, json!({}));
        let answer = served.exchange(2, ping, Duration::from_secs(5)).await;
        // Answered at once (2026-07-28 has no ping: method not found).
        assert!(status(&answer) != 0, "{answer:?}");
        let note = json!({"jsonrpc": "2.0", "method": "notifications/progress",
            "params": {"progressToken": 1, "progress": 1}});
        let note = served.post(
            &note,
            &[
                "MCP-Protocol-Version: 2026-07-28".to_owned(),
                "Mcp-Method: notifications/progress".to_owned(),
            ],
        );
        let answer = served.exchange(2, note, Duration::from_secs(5)).await;
        assert!((200..300).contains(&status(&answer)), "{answer:?}");
    })
    .await;
    served.gate.release();
}

/// Requests of 2026-07-28 naming their version in the header alone (no
/// `_meta`): counted all the same.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessionless_calls_versioned_by_header_only_run_at_most_the_share() {
    let served = Served::new(four()).await;
    let mut tasks = JoinSet::new();
    let heard = bounded(BOUND, async {
        let mut answers = Vec::new();
        for id in 0..6u64 {
            let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": "block", "arguments": {"client": "127.0.0.2"}}});
            let request = served.post(
                &body,
                &[
                    "MCP-Protocol-Version: 2026-07-28".to_owned(),
                    "Mcp-Method: tools/call".to_owned(),
                    "Mcp-Name: block".to_owned(),
                ],
            );
            if id == 0 {
                answers.push(
                    served
                        .exchange(2, request.clone(), Duration::from_millis(500))
                        .await,
                );
            }
            served.held(&mut tasks, 2, request);
        }
        served
            .gate
            .wait_running("127.0.0.2", 3, Duration::from_secs(2))
            .await;
        answers
    })
    .await;
    let most = served.gate.most("127.0.0.2");
    served.gate.release();
    eprintln!("header-only: ran at most {most}; {heard:?}");
    assert!(most <= 2, "the client ran {most}");
}

/// Behind a proxy, as the book says to serve there (`max_per_client` =
/// `max_connections`: every client is the proxy's address): a flood of
/// sessionless reads that never end, each left by its client (so its
/// connection comes free), runs at most half of the permits (2 of 4), as
/// one session does, and a call in a session runs beside them. The flood
/// used to take all 4, and the session's call waited for ever.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn behind_a_proxy_a_sessionless_flood_leaves_sessions_room() {
    let options = HttpOptions::default().max_connections(4).max_per_client(4);
    let served = Served::new(options).await;
    let mut tasks = JoinSet::new();
    let (flood, session_ran) = bounded(BOUND, async {
        let session = served.open(2).await.expect("a session");
        for id in 0..6u64 {
            // Counted under another name, but sent from the proxy's address.
            let uri = "mem://flood";
            let request = served.sessionless(id, "resources/read", Some(uri), json!({"uri": uri}));
            let _ = served
                .exchange(2, request, Duration::from_millis(300))
                .await;
        }
        let flood = served
            .gate
            .wait_running("flood", 4, Duration::from_secs(2))
            .await;
        let request = served.block_in_session(&session, 2, 99);
        served.held(&mut tasks, 2, request);
        let ran = served
            .gate
            .wait_running("127.0.0.2", 1, Duration::from_secs(5))
            .await;
        (flood, ran)
    })
    .await;
    served.gate.release();
    assert_eq!(flood, 2, "sessionless reads running at once");
    assert_eq!(
        session_ran, 1,
        "one sessionless flood ({flood} running) kept a session's call from running"
    );
}

/// A sessionless call of `block_task` (run as a task) from 127.0.0.`client`.
fn task_call(served: &Served, client: u8, id: u64) -> String {
    let mut meta = meta();
    meta["io.modelcontextprotocol/clientCapabilities"] =
        json!({"extensions": {"io.modelcontextprotocol/tasks": {}}});
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "block_task", "arguments": {"client": format!("127.0.0.{client}")},
            "_meta": meta}});
    served.post(
        &body,
        &[
            "MCP-Protocol-Version: 2026-07-28".to_owned(),
            "Mcp-Method: tools/call".to_owned(),
            "Mcp-Name: block_task".to_owned(),
        ],
    )
}

/// Sessionless calls that run as tasks, anonymous: one client starting 16
/// (the per-caller cap) leaves another client room to start its own (every
/// anonymous sessionless caller used to be one owner, and the other was
/// refused: "this caller has 16 tasks running"), and a task is found by
/// its own client only.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessionless_task_calls_of_one_client_leave_others_room() {
    let served = Served::new(four()).await;
    let (greedy, other, answer, first) = bounded(BOUND, async {
        let mut first = None;
        for id in 0..16u64 {
            let answer = served
                .exchange(2, task_call(&served, 2, id), Duration::from_secs(5))
                .await;
            first = first.or_else(|| task_id(&answer));
        }
        let greedy = served
            .gate
            .wait_running("127.0.0.2", 16, Duration::from_secs(3))
            .await;
        let answer = served
            .exchange(3, task_call(&served, 3, 100), Duration::from_secs(5))
            .await;
        let other = served
            .gate
            .wait_running("127.0.0.3", 1, Duration::from_secs(3))
            .await;
        (greedy, other, answer, first.expect("a task id"))
    })
    .await;
    assert_eq!(greedy, 16, "the first client's tasks running");
    assert_eq!(
        other, 1,
        "another client's task was refused (the first runs {greedy}): {answer}"
    );
    let get = |id| task_get(&served, id, &first);
    let own = bounded(BOUND, served.exchange(2, get(200), Duration::from_secs(5))).await;
    assert!(
        own.contains(&first) && !own.contains("unknown task"),
        "the client's own task: {own}"
    );
    let other = bounded(BOUND, served.exchange(3, get(201), Duration::from_secs(5))).await;
    assert!(
        other.contains("unknown task"),
        "another client's task: {other}"
    );
    served.gate.release();
}

/// A sessionless `tasks/get` of `task`.
fn task_get(served: &Served, id: u64, task: &str) -> String {
    let mut meta = meta();
    meta["io.modelcontextprotocol/clientCapabilities"] =
        json!({"extensions": {"io.modelcontextprotocol/tasks": {}}});
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tasks/get",
        "params": {"taskId": task, "_meta": meta}});
    served.post(
        &body,
        &[
            "MCP-Protocol-Version: 2026-07-28".to_owned(),
            "Mcp-Method: tasks/get".to_owned(),
            format!("Mcp-Name: {task}"),
        ],
    )
}

/// The id of the task an answer to a call made, if it made one.
fn task_id(answer: &str) -> Option<String> {
    let at = answer.find("\"taskId\":\"")? + "\"taskId\":\"".len();
    let rest = &answer[at..];
    Some(rest[..rest.find('"')?].to_owned())
}

/// A client's session deleted while 2 of its calls run and 4 wait: once
/// the running ones end, the client's share is whole again (2 sessionless
/// calls run), and the waiting ones never ran.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_deleted_with_calls_waiting_gives_the_share_back() {
    // Room for every connection: only the client's share (2) binds.
    let served = Served::new(HttpOptions::default().max_connections(16).max_per_client(2)).await;
    let mut tasks = JoinSet::new();
    let (first, after) = bounded(BOUND, async {
        let session = served.open(2).await.expect("a session");
        for id in 0..6 {
            served.held(&mut tasks, 2, served.block_in_session(&session, 2, id));
        }
        let first = served
            .gate
            .wait_running("127.0.0.2", 2, Duration::from_secs(10))
            .await;
        tokio::time::sleep(Duration::from_millis(200)).await;
        let deleted = served
            .exchange(2, served.delete(&session), Duration::from_secs(10))
            .await;
        assert!((200..300).contains(&status(&deleted)), "{deleted}");
        served.gate.release();
        while tasks.join_next().await.is_some() {}
        // The released calls end (their exchanges may end first: the
        // session's streams close with it).
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while served.gate.running("127.0.0.2") > 0 && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        *served.gate.open.lock().unwrap() = CancellationToken::new();
        for id in 100..102 {
            served.held(&mut tasks, 2, served.block_call(2, id));
        }
        let after = served
            .gate
            .wait_running("127.0.0.2", 2, Duration::from_secs(10))
            .await;
        (first, after)
    })
    .await;
    let started = served
        .gate
        .counts
        .lock()
        .unwrap()
        .started
        .get("127.0.0.2")
        .copied();
    served.gate.release();
    assert_eq!(first, 2);
    assert_eq!(after, 2, "the client's calls after its session went");
    assert_eq!(started, Some(4), "calls that started (2 before, 2 after)");
}

/// A client leaving its 2 running calls (its share), 5 times over: each
/// time the calls are cancelled (the pipeline drops a cancelled tool) and
/// give the share back, so the client's next calls run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn running_calls_left_by_their_client_give_the_share_back() {
    let served = Served::new(HttpOptions::default().max_connections(16).max_per_client(2)).await;
    let rounds = bounded(BOUND, async {
        let mut rounds = Vec::new();
        for round in 0..5u64 {
            let mut tasks = JoinSet::new();
            for id in 0..2 {
                let served = Arc::clone(&served);
                let request = served.block_call(2, round * 10 + id);
                tasks.spawn(async move {
                    served
                        .exchange(2, request, Duration::from_millis(400))
                        .await
                });
            }
            let running = served
                .gate
                .wait_running("127.0.0.2", 2, Duration::from_secs(10))
                .await;
            while tasks.join_next().await.is_some() {}
            // Left: the calls should end.
            let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
            while served.gate.running("127.0.0.2") > 0 && tokio::time::Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            rounds.push((running, served.gate.running("127.0.0.2")));
        }
        rounds
    })
    .await;
    served.gate.release();
    eprintln!("(running, left running after the client left) by round: {rounds:?}");
    assert!(
        rounds.iter().all(|&(ran, left)| ran == 2 && left == 0),
        "{rounds:?}"
    );
}

/// Read `stream` until what came holds `until`, or `patience` passes.
async fn read_until(stream: &mut TcpStream, until: &str, patience: Duration) -> String {
    let mut heard = Vec::new();
    let mut chunk = [0u8; 4096];
    let _ = tokio::time::timeout(patience, async {
        loop {
            let n = stream.read(&mut chunk).await.unwrap_or(0);
            heard.extend_from_slice(&chunk[..n]);
            if n == 0 || String::from_utf8_lossy(&heard).contains(until) {
                break;
            }
        }
    })
    .await;
    String::from_utf8_lossy(&heard).into_owned()
}

/// A listen stream acknowledged (while its client's only permit is taken
/// by a call, if `busy`), then a tool removed: what the stream heard in
/// 5 s, the call still running.
async fn listen_then_change(busy: bool) -> String {
    let served = Served::new(HttpOptions::default().max_connections(16).max_per_client(1)).await;
    let mut tasks = JoinSet::new();
    let heard = bounded(BOUND, async {
        if busy {
            served.held(&mut tasks, 2, served.block_call(2, 1));
            let running = served
                .gate
                .wait_running("127.0.0.2", 1, Duration::from_secs(10))
                .await;
            assert_eq!(running, 1);
        }
        let mut stream = listen_from(&served, 2).await;
        // The stream was acknowledged: the client counts on being told,
        // while its call still runs.
        tokio::time::sleep(Duration::from_millis(200)).await;
        let _ = served.registry.unregister("quick");
        read_until(
            &mut stream,
            "notifications/tools/list_changed",
            Duration::from_secs(5),
        )
        .await
    })
    .await;
    served.gate.release();
    heard
}

/// A listen stream of a client with nothing else running is told of a
/// change.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listen_stream_is_told_of_a_tool_change() {
    let heard = listen_then_change(false).await;
    assert!(
        heard.contains("notifications/tools/list_changed"),
        "{heard}"
    );
}

/// A listen stream acknowledged while its client's only permit is taken
/// is told of a change made meanwhile: it takes no permit (it waited for
/// one before it listened, and the change was never told, although the
/// client had been told it was subscribed).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listen_stream_acknowledged_while_waiting_loses_no_change() {
    let heard = listen_then_change(true).await;
    assert!(
        heard.contains("notifications/tools/list_changed"),
        "the change made while the acknowledged stream waited was never told: {heard:?}"
    );
}

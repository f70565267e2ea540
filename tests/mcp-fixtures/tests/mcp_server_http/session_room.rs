//! Who gets a session when an HTTP server has none left: while it has
//! room, any client opens one, a lone local client (every local client is
//! one, at 127.0.0.1) all of them; once full, a client under its part
//! (`max_sessions_per_client`, half by default) is given the oldest idle
//! session of a client over its part, whose client is answered 404 next
//! time and opens another. A session with a request running, waiting or
//! a stream open is never taken; with none to take, 503. Counts stay
//! right however deletes race.
//!
//! Each client connects from a loopback address of its own (127.0.0.N):
//! the server tells clients apart by their address.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tk::mcp::HttpOptions;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::task::JoinSet;

use crate::raw_http;
use crate::support::{Served, bounded, connect_from, in_session, status};

/// Every test's body is bounded in time.
const BOUND: Duration = Duration::from_secs(90);

/// How long a test waits for calls to be running.
const PATIENCE: Duration = Duration::from_secs(10);

/// A lone client, as every local client is (127.0.0.1), opens every
/// session of a server that keeps 2: nothing else uses the server. (Past
/// half of them it used to be refused 503.) A third is refused 503: the
/// server is full, and no other client has a session to give.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lone_local_client_opens_every_session_of_a_small_server() {
    bounded(BOUND, async {
        let served = Served::new(HttpOptions::default().max_sessions(2)).await;
        served.open(1).await.expect("the first session");
        served.open(1).await.expect("the second session");
        let third = served.ask(1).await;
        assert_eq!(status(&third), 503, "{third}");
    })
    .await;
}

/// One client holding all 4 sessions, idle: another client still opens
/// its 2 (its part), each taking the first client's oldest session, which
/// then answers 404 while the newer ones answer; past its part, the other
/// client is refused 503, and so is the first, now at its part.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_under_its_part_takes_the_oldest_idle_session_of_one_over_it() {
    bounded(BOUND, async {
        let served = Served::new(HttpOptions::default().max_sessions(4)).await;
        let mut first = Vec::new();
        for _ in 0..4 {
            first.push(served.open(2).await.expect("a session of the lone client"));
        }
        served.open(3).await.expect("the other client's first");
        served.open(3).await.expect("the other client's second");
        let third = served.ask(3).await;
        assert_eq!(status(&third), 503, "{third}");
        let again = served.ask(2).await;
        assert_eq!(status(&again), 503, "{again}");
        let mut statuses = Vec::new();
        for session in &first {
            statuses.push(served.ping(2, session).await);
        }
        assert_eq!(
            statuses,
            [404, 404, 200, 200],
            "the first client's sessions"
        );
    })
    .await;
}

/// A session with a call running is never taken: the two oldest of the
/// first client's 4 run a call each, so the other client's 2 take the two
/// newest; then nothing is left to take (503), and the running calls are
/// answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_with_a_call_running_is_never_taken() {
    let served = Served::new(HttpOptions::default().max_sessions(4)).await;
    let mut tasks = JoinSet::new();
    let statuses = bounded(BOUND, async {
        let mut first = Vec::new();
        for _ in 0..4 {
            first.push(served.open(2).await.expect("a session"));
        }
        for (id, session) in first.iter().take(2).enumerate() {
            served.held(
                &mut tasks,
                2,
                served.block_in_session(session, 2, id as u64),
            );
        }
        assert_eq!(served.gate.wait_running("127.0.0.2", 2, PATIENCE).await, 2);
        served.open(3).await.expect("the other client's first");
        served.open(3).await.expect("the other client's second");
        let third = served.ask(4).await;
        assert_eq!(status(&third), 503, "{third}");
        let mut statuses = Vec::new();
        for session in &first {
            statuses.push(served.ping(2, session).await);
        }
        served.gate.release();
        while let Some(answer) = tasks.join_next().await {
            let answer = answer.unwrap();
            assert!(
                answer.contains("done"),
                "a running call was not answered: {answer}"
            );
        }
        statuses
    })
    .await;
    assert_eq!(
        statuses,
        [200, 200, 404, 404],
        "the first client's sessions"
    );
}

/// An idle session is taken before one with its event stream (GET) open:
/// the oldest of the first client's 2 has one, so the other client takes
/// the newer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_session_is_taken_before_one_with_its_stream_open() {
    bounded(BOUND, async {
        let served = Served::new(HttpOptions::default().max_sessions(2)).await;
        let listening = served.open(2).await.expect("a session");
        let idle = served.open(2).await.expect("another");
        let mut stream = connect_from(2, served.server).await.expect("connect");
        let get = format!(
            "GET /mcp HTTP/1.1\r\nHost: {}\r\nAccept: text/event-stream\r\nMcp-Session-Id: {listening}\r\nMCP-Protocol-Version: 2025-11-25\r\n\r\n",
            served.server
        );
        stream.write_all(get.as_bytes()).await.unwrap();
        let mut head = [0u8; 12];
        stream.read_exact(&mut head).await.unwrap();
        assert!(String::from_utf8_lossy(&head).contains("200"));
        served.open(3).await.expect("the other client's session");
        assert_eq!(served.ping(2, &listening).await, 200);
        assert_eq!(served.ping(2, &idle).await, 404);
        drop(stream);
    })
    .await;
}

/// Many DELETEs of each session at once, racing the session's own end,
/// 20 times over: the counts stay right. The server is empty after (another
/// client opens all 4), and the client's count is 0 (it opens its part, 2,
/// taking the other's sessions, and no third).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deletes_racing_each_other_leave_the_session_counts_right() {
    bounded(BOUND, async {
        let served = Served::new(HttpOptions::default().max_sessions(4)).await;
        for _ in 0..20 {
            let session = served.open(2).await.expect("a session");
            let mut deletes = JoinSet::new();
            for _ in 0..8 {
                let served = Arc::clone(&served);
                let request = served.delete(&session);
                deletes.spawn(
                    async move { served.exchange(2, request, Duration::from_secs(10)).await },
                );
            }
            while let Some(answer) = deletes.join_next().await {
                let answer = answer.unwrap();
                assert!(status(&answer) < 500, "{answer}");
            }
        }
        for _ in 0..4 {
            served.open(3).await.expect("another client's session");
        }
        served.open(2).await.expect("first of the client's two");
        served.open(2).await.expect("second of the client's two");
        let third = served.ask(2).await;
        assert_eq!(status(&third), 503, "{third}");
    })
    .await;
}

/// A DELETE dropped by its client at once, 30 times, each for a session
/// the client then forgets: the counts come back all the same (another
/// client fills the server, and the first still opens its part, 2, and no
/// third).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deletes_dropped_midway_leave_the_client_count_right() {
    bounded(BOUND, async {
        let served = Served::new(HttpOptions::default().max_sessions(4)).await;
        for _ in 0..30 {
            let session = served.open(2).await.expect("a session");
            let request = served.delete(&session);
            let _ = served.exchange(2, request, Duration::from_millis(0)).await;
        }
        // Time for the sessions to end.
        tokio::time::sleep(Duration::from_millis(500)).await;
        for _ in 0..4 {
            served.open(3).await.expect("another client's session");
        }
        served.open(2).await.expect("first of the client's two");
        served.open(2).await.expect("second of the client's two");
        let third = served.ask(2).await;
        assert_eq!(status(&third), 503, "{third}");
    })
    .await;
}

/// A refusal (503) is for fullness only: an `initialize` that is bad in
/// itself (wrong header) is never 503, even on a full server; and a full
/// server never answers 500.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals_are_503_only_for_fullness() {
    bounded(BOUND, async {
        let served = Served::new(HttpOptions::default().max_sessions(2)).await;
        served.open(2).await.expect("one");
        served.open(3).await.expect("two");
        let full = served
            .exchange(4, served.initialize(), Duration::from_secs(10))
            .await;
        assert_eq!(status(&full), 503, "{full}");
        // A bad initialize: a protocol header contradicting the body.
        let bad = served.post(
            &raw_http::initialize(),
            &["MCP-Protocol-Version: 2025-06-18".to_owned()],
        );
        let bad = served.exchange(4, bad, Duration::from_secs(10)).await;
        assert_ne!(status(&bad), 503, "{bad}");
        assert_ne!(status(&bad), 500, "{bad}");
    })
    .await;
}

/// The request that opens an event stream (GET) on `session`.
fn get_stream(server: SocketAddr, session: &str) -> String {
    format!(
        "GET /mcp HTTP/1.1\r\nHost: {server}\r\nAccept: text/event-stream\r\nMcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-11-25\r\nConnection: close\r\n\r\n"
    )
}

/// One client opens all 4 sessions while there is room and keeps an event
/// stream open on each: a stream costs it nothing, so it does not keep the
/// sessions from others. Clients 3 and 4 each open one (taking two of the
/// first client's, down to its part); the first client's streams of those
/// end. Kept by streams, no session was ever idle, and every other client
/// was refused for as long as they stayed open.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streams_open_do_not_keep_every_session_from_the_others() {
    let served = Served::new(HttpOptions::default().max_sessions(4)).await;
    let (answers, kept) = bounded(BOUND, async {
        let mut sessions = Vec::new();
        let mut streams = Vec::new();
        for _ in 0..4 {
            let session = served.open(2).await.expect("room");
            let mut stream = connect_from(2, served.server).await.expect("connect");
            stream
                .write_all(get_stream(served.server, &session).as_bytes())
                .await
                .unwrap();
            let mut head = [0u8; 12];
            stream.read_exact(&mut head).await.unwrap();
            assert!(String::from_utf8_lossy(&head).contains("200"));
            sessions.push(session);
            streams.push(stream);
        }
        let mut answers = Vec::new();
        for client in 3..6u8 {
            answers.push(
                served
                    .open(client)
                    .await
                    .map(|_| ())
                    .map_err(|a| status(&a)),
            );
        }
        let mut kept = 0;
        for session in &sessions {
            if served.ping(2, session).await == 200 {
                kept += 1;
            }
        }
        drop(streams);
        (answers, kept)
    })
    .await;
    assert_eq!(
        answers,
        [Ok(()), Ok(()), Err(503)],
        "the other clients' sessions"
    );
    assert_eq!(kept, 2, "the first client keeps its part");
}

/// A session whose only request waits for its client's share (the client's
/// one permit is held by a call in its other session) holds nothing of the
/// server's: it is taken for another client, its waiting call is answered
/// 404 (the session is gone; never a 500), and the running call is
/// answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_whose_request_only_waits_is_taken() {
    let options = HttpOptions::default()
        .max_sessions(2)
        .max_connections(8)
        .max_per_client(1);
    let served = Served::new(options).await;
    let mut tasks = JoinSet::new();
    let (waiting, running, third) = bounded(BOUND, async {
        let waits = served.open(2).await.expect("one");
        let runs = served.open(2).await.expect("two");
        served.held(&mut tasks, 2, served.block_in_session(&runs, 2, 1));
        assert_eq!(served.gate.wait_running("127.0.0.2", 1, PATIENCE).await, 1);
        let request = served.block_in_session(&waits, 2, 2);
        let waiting = {
            let served = Arc::clone(&served);
            tokio::spawn(async move { served.exchange(2, request, Duration::from_secs(30)).await })
        };
        tokio::time::sleep(Duration::from_millis(300)).await;
        let third = served.open(3).await.map(|_| ()).map_err(|a| status(&a));
        let waiting = waiting.await.unwrap();
        served.gate.release();
        let running = tasks.join_next().await.unwrap().unwrap();
        (waiting, running, third)
    })
    .await;
    assert_eq!(third, Ok(()), "client 3 was refused a session");
    assert_eq!(status(&waiting), 404, "{waiting}");
    assert!(running.contains("done"), "{running}");
}

/// Another client asks for a session while one is pinging both of its
/// sessions and opening event streams on them, 12 times over (a server of
/// its own each time), taking one when neither has a request running:
/// every answer the first client gets is a 200 or a 404 (its session
/// gone), never a 500.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_racing_their_sessions_being_taken_are_never_answered_500() {
    let answers = bounded(BOUND, async {
        let mut answers = Vec::new();
        for _ in 0..12 {
            let served = Served::new(HttpOptions::default().max_sessions(2)).await;
            let first = [
                served.open(2).await.expect("room"),
                served.open(2).await.expect("room"),
            ];
            let mut racers = JoinSet::new();
            for (id, session) in first.iter().cycle().take(6).enumerate() {
                // Each ping an id of its own: a session answers by id.
                let body = json!({"jsonrpc": "2.0", "id": id, "method": "ping"});
                let request = served.post(&body, &in_session(session));
                let served = Arc::clone(&served);
                racers.spawn(async move {
                    status(&served.exchange(2, request, Duration::from_secs(10)).await)
                });
            }
            for session in &first {
                let served = Arc::clone(&served);
                let request = get_stream(served.server, session);
                racers.spawn(async move {
                    status(
                        &served
                            .exchange(2, request, Duration::from_millis(300))
                            .await,
                    )
                });
            }
            // Taken if one of them has no request running at that moment.
            let _ = served.open(3).await;
            while let Some(answer) = racers.join_next().await {
                answers.push(answer.unwrap());
            }
        }
        answers
    })
    .await;
    assert!(
        !answers.contains(&500),
        "a request racing its session's end was answered 500: {answers:?}"
    );
}

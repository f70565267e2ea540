//! A request's slot in an HTTP session comes back however the request
//! ends. One let into a session and dropped before the session takes it
//! (its client closed the connection right after writing it) gives its
//! slot back with itself. Its slot used to stay counted as taken, with its
//! share of the server-wide bound, until the session closed: a client
//! posting requests and closing each connection at once filled its
//! session's 64 slots (3,000 such requests left none) and, with them, the
//! permits every other session needed. One whose host code panics (a
//! resource read) is answered with an error and gives its slot back: it
//! used to get no answer, and to keep its slot.

use std::sync::Arc;
use std::time::Duration;

use tk::mcp::HttpOptions;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::raw_http;
use crate::support::{Served, in_session, read};

/// A `resources/read` of `uri`, id `id`, posted to `session`.
fn read_request(served: &Served, session: &str, id: u64, uri: &str) -> String {
    served.post(&read(id, uri), &in_session(session))
}

/// Post `request` and close the connection at once.
async fn post_and_leave(served: &Served, request: &str) {
    if let Ok(Ok(mut stream)) =
        tokio::time::timeout(Duration::from_secs(5), TcpStream::connect(served.server)).await
    {
        let _ = stream.write_all(request.as_bytes()).await;
    }
}

/// A server on loopback, with a session opened. Its reads of `mem://hold`
/// count as started under "hold" and hold until the gate is released;
/// `mem://quick` is read at once, `mem://panic` panics.
async fn serve() -> (Arc<Served>, String) {
    let served = Served::new(HttpOptions::default()).await;
    let url = served.url.clone();
    let session = tokio::task::spawn_blocking(move || raw_http::open_session(&url))
        .await
        .unwrap();
    (served, session)
}

/// How many of 100 reads that hold (their connections kept open) run at
/// once: as many as the session has slots free.
async fn reads_that_run(served: &Served, session: &str) -> usize {
    let mut held = tokio::task::JoinSet::new();
    for id in 10..110 {
        let (server, request, gate) = (
            served.server,
            read_request(served, session, id, "mem://hold"),
            served.gate.clone(),
        );
        held.spawn(async move {
            if let Ok(mut stream) = TcpStream::connect(server).await {
                let _ = stream.write_all(request.as_bytes()).await;
                let open = gate.open.lock().unwrap().clone();
                open.cancelled().await;
            }
        });
    }
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while served.gate.started("hold") < 64 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let running = served.gate.started("hold");
    served.gate.release();
    while held.join_next().await.is_some() {}
    running
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_dropped_before_their_session_takes_them_give_their_slots_back() {
    let (served, session) = serve().await;
    let test = async {
        // 3,000 quick reads, 64 connections at a time, each closed as soon
        // as its request is written.
        let at_once = Arc::new(tokio::sync::Semaphore::new(64));
        let mut posts = tokio::task::JoinSet::new();
        for id in 1_000..4_000 {
            let permit = Arc::clone(&at_once).acquire_owned().await.unwrap();
            let (served, request) = (
                Arc::clone(&served),
                read_request(&served, &session, id, "mem://quick"),
            );
            posts.spawn(async move {
                let _permit = permit;
                post_and_leave(&served, &request).await;
            });
        }
        while posts.join_next().await.is_some() {}
        tokio::time::sleep(Duration::from_secs(2)).await;
        reads_that_run(&served, &session).await
    };
    let running = tokio::time::timeout(Duration::from_secs(60), test)
        .await
        .expect("bounded");
    served.shutdown.cancel();
    assert_eq!(running, 64, "slots left taken: {}", 64 - running.min(64));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_whose_host_code_panics_is_answered_and_gives_its_slot_back() {
    let (served, session) = serve().await;
    let test = async {
        let mut answers = Vec::new();
        for id in 1_000..1_030 {
            let request = read_request(&served, &session, id, "mem://panic");
            let mut stream = TcpStream::connect(served.server).await.unwrap();
            stream.write_all(request.as_bytes()).await.unwrap();
            let mut answer = Vec::new();
            stream.read_to_end(&mut answer).await.unwrap();
            answers.push(String::from_utf8_lossy(&answer).into_owned());
        }
        (answers, reads_that_run(&served, &session).await)
    };
    let (answers, running) = tokio::time::timeout(Duration::from_secs(60), test)
        .await
        .expect("bounded");
    served.shutdown.cancel();
    for answer in &answers {
        assert!(
            answer.contains("the server failed while answering this request"),
            "{answer}"
        );
        assert!(
            !answer.contains("broke"),
            "the panic's words stay in the server: {answer}"
        );
    }
    assert_eq!(running, 64, "slots left taken: {}", 64 - running.min(64));
}

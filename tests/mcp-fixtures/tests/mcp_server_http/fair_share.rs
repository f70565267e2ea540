//! The server-wide bound of an HTTP server (`max_connections` requests
//! answered at once, in all sessions) against one client that would take
//! it all: one client holds at most half of the permits, in all its
//! sessions; a request waiting for its own session's slot holds no permit;
//! opening a session holds none after. A request
//! waiting to be let in stops waiting when its session closes, or when its
//! client cancels it (and never runs).
//!
//! The server tells clients apart by the address they connect from, so
//! each client here connects from a loopback address of its own
//! (127.0.0.1, 127.0.0.2, ...: every one of 127/8 is the machine's own).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tk::mcp::HttpOptions;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::task::JoinSet;

use crate::raw_http;
use crate::support::{Served, Until, in_session, read, within};

/// A server on loopback whose reads hold until let go, never looking at
/// their own cancellation (neither a cancel nor the client leaving ends
/// them), and the client each of its sessions connects from.
struct Sessions {
    served: Arc<Served>,
    /// Where each session's client connects from: 127.0.0.N.
    clients: Mutex<HashMap<String, u8>>,
}

impl Sessions {
    async fn new(options: HttpOptions) -> Self {
        Self {
            served: Served::new(options).await,
            clients: Mutex::default(),
        }
    }

    /// A session of a client of its own.
    async fn session(&self) -> String {
        let client = self.clients.lock().unwrap().len() as u8 + 1;
        self.session_of(client).await
    }

    /// A session whose requests come from 127.0.0.`client`.
    async fn session_of(&self, client: u8) -> String {
        let url = self.served.url.clone();
        let session = tokio::task::spawn_blocking(move || raw_http::open_session(&url))
            .await
            .unwrap();
        self.clients.lock().unwrap().insert(session.clone(), client);
        session
    }

    /// Reads of `uri` started so far.
    fn started(&self, uri: &str) -> usize {
        self.served.gate.started(uri.trim_start_matches("mem://"))
    }

    /// Wait, bounded, until `count` reads of `uri` have started; then
    /// return how many have.
    async fn wait_started(&self, uri: &str, count: usize) -> usize {
        let key = uri.trim_start_matches("mem://");
        let patience = Duration::from_secs(10);
        self.served.gate.wait_started(key, count, patience).await
    }

    /// `body` posted to `session`, as raw HTTP.
    fn request(&self, session: &str, body: &serde_json::Value) -> String {
        self.served.post(body, &in_session(session))
    }

    /// Post a read of `uri`, id `id`, to `session` from its client, and
    /// wait for `until`, up to `patience`; the task returns what came.
    fn spawn_read(
        &self,
        tasks: &mut JoinSet<String>,
        (session, id, uri): (&str, u64, &str),
        patience: Duration,
        until: Until,
    ) {
        let request = self.request(session, &read(id, uri));
        let client = self.clients.lock().unwrap().get(session).copied();
        let server = self.served.server;
        tasks.spawn(
            async move { within(client.unwrap_or(1), server, &request, patience, until).await },
        );
    }

    /// Post a read of `uri`, id `id`, to `session`, keeping the
    /// connection open until the server closes it (or 60 s); the task
    /// returns what came.
    fn read_held(&self, tasks: &mut JoinSet<String>, session: &str, id: u64, uri: &str) {
        let patience = Duration::from_secs(60);
        self.spawn_read(tasks, (session, id, uri), patience, Until::Closed);
    }

    /// Post a read of `uri`, id `id`, to `session`, and leave once the
    /// answer's head has come (the read then runs on), or after `patience`.
    fn read_and_leave(
        &self,
        tasks: &mut JoinSet<String>,
        session: &str,
        id: u64,
        uri: &str,
        patience: Duration,
    ) {
        self.spawn_read(tasks, (session, id, uri), patience, Until::Head);
    }

    /// Let every read go, wait for the tasks, and stop the server.
    async fn finish(self, tasks: &mut JoinSet<String>) -> Vec<String> {
        self.served.finish(tasks, Duration::from_secs(60)).await
    }
}

/// A session with all its 64 slots taken and 64 requests waiting for one
/// of them, on a server answering 100 requests at once: the waiting
/// requests hold none of the server's permits, so another session's 10
/// reads all run. They used to: each took a permit, then waited for its
/// session's slot, and the other session ran none.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_waiting_for_its_sessions_slot_holds_no_server_wide_permit() {
    let served = Sessions::new(HttpOptions::default().max_connections(100)).await;
    let (greedy, other) = (served.session().await, served.session().await);
    let mut tasks = JoinSet::new();
    let test = async {
        // As many running as the server lets the session run (left
        // running by their clients), then 64 more waiting for a slot,
        // their connections kept.
        for id in 0..64 {
            served.read_and_leave(&mut tasks, &greedy, id, "mem://a", Duration::from_secs(2));
        }
        let running = served.wait_started("mem://a", 50).await;
        for id in 100..164 {
            served.read_held(&mut tasks, &greedy, id, "mem://a-waiting");
        }
        // Give the waiting requests time to take what they would.
        tokio::time::sleep(Duration::from_millis(500)).await;
        for id in 200..210 {
            served.read_held(&mut tasks, &other, id, "mem://b");
        }
        let others = served.wait_started("mem://b", 10).await;
        (running, others)
    };
    let (running, others) = tokio::time::timeout(Duration::from_secs(60), test)
        .await
        .expect("bounded");
    served.finish(&mut tasks).await;
    eprintln!("the first session ran {running}; the other session ran {others} of 10");
    assert_eq!(others, 10, "the other session's reads that ran");
}

/// One session whose reads never end (its client leaves each once the
/// server has taken it), on a server answering 16 requests at once: it
/// runs at most 8 of them, and another session runs its 8 reads. The first
/// used to take all 16, and the other session ran none.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_session_holds_at_most_half_of_the_server_wide_permits() {
    let served = Sessions::new(HttpOptions::default().max_connections(16)).await;
    let (greedy, other) = (served.session().await, served.session().await);
    let mut tasks = JoinSet::new();
    let test = async {
        let mut leaving = JoinSet::new();
        for id in 0..16 {
            served.read_and_leave(&mut leaving, &greedy, id, "mem://a", Duration::from_secs(2));
        }
        // Those not let in give up within 2 s, their connections with them.
        while leaving.join_next().await.is_some() {}
        let running = served.started("mem://a");
        for id in 100..108 {
            served.read_held(&mut tasks, &other, id, "mem://b");
        }
        let others = served.wait_started("mem://b", 8).await;
        (running, others)
    };
    let (running, others) = tokio::time::timeout(Duration::from_secs(60), test)
        .await
        .expect("bounded");
    served.finish(&mut tasks).await;
    eprintln!("the first session ran {running} of 16; the other session ran {others} of 8");
    assert!(running <= 8, "the first session ran {running} at once");
    assert_eq!(others, 8, "the other session's reads that ran");
}

/// A request waiting for a server-wide permit when its session is closed
/// (its client deletes it) is answered at once, while the permits are
/// still all taken by other sessions. It used to wait for a permit of a
/// session that was gone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_waiting_for_a_server_wide_permit_stops_when_its_session_closes() {
    let served = Sessions::new(HttpOptions::default().max_connections(6)).await;
    let holders = [served.session().await, served.session().await];
    let closing = served.session().await;
    let mut tasks = JoinSet::new();
    let test = async {
        // Two sessions take the 6 permits (3 each), and leave.
        let mut leaving = JoinSet::new();
        for (n, session) in holders.iter().enumerate() {
            for id in 0..3 {
                let id = (n * 10 + id) as u64;
                served.read_and_leave(&mut leaving, session, id, "mem://a", Duration::from_secs(5));
            }
        }
        while leaving.join_next().await.is_some() {}
        let taken = served.wait_started("mem://a", 6).await;
        assert_eq!(taken, 6, "the permits were not all taken");
        let mut waiting = JoinSet::new();
        served.read_held(&mut waiting, &closing, 100, "mem://closing");
        tokio::time::sleep(Duration::from_millis(300)).await;
        let delete = format!(
            "DELETE /mcp HTTP/1.1\r\nHost: {}\r\nMcp-Session-Id: {closing}\r\nConnection: close\r\n\r\n",
            served.served.server
        );
        let mut stream = TcpStream::connect(served.served.server).await.unwrap();
        stream.write_all(delete.as_bytes()).await.unwrap();
        let mut deleted = String::new();
        let _ = stream.read_to_string(&mut deleted).await;
        assert!(deleted.starts_with("HTTP/1.1 2"), "{deleted}");
        // Bounded: the reads holding the permits are let go only after.
        tokio::time::timeout(Duration::from_secs(10), waiting.join_next())
            .await
            .ok()
            .flatten()
            .map(Result::unwrap_or_default)
    };
    let answer = tokio::time::timeout(Duration::from_secs(60), test)
        .await
        .expect("bounded");
    let ran = served.started("mem://closing");
    served.finish(&mut tasks).await;
    let answer = answer.expect("the waiting request was not answered once its session closed");
    assert!(answer.starts_with("HTTP/1.1 "), "{answer}");
    assert!(!answer.contains("\"contents\""), "{answer}");
    assert_eq!(ran, 0, "the closed session's read ran");
}

/// A request waiting for a server-wide permit that its client cancels
/// stops waiting at once (its event stream ends, with no answer), and
/// never runs, not even once the permits come free. It used to run once
/// they did, and be answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_cancelled_while_it_waits_to_be_let_in_never_runs() {
    let served = Sessions::new(HttpOptions::default().max_connections(6)).await;
    let holders = [served.session().await, served.session().await];
    let cancelling = served.session().await;
    let mut tasks = JoinSet::new();
    let test = async {
        let mut leaving = JoinSet::new();
        for (n, session) in holders.iter().enumerate() {
            for id in 0..3 {
                let id = (n * 10 + id) as u64;
                served.read_and_leave(&mut leaving, session, id, "mem://a", Duration::from_secs(5));
            }
        }
        while leaving.join_next().await.is_some() {}
        let taken = served.wait_started("mem://a", 6).await;
        assert_eq!(taken, 6, "the permits were not all taken");
        served.read_held(&mut tasks, &cancelling, 100, "mem://cancelled");
        tokio::time::sleep(Duration::from_millis(300)).await;
        let cancel = serde_json::json!({"jsonrpc": "2.0",
            "method": "notifications/cancelled", "params": {"requestId": 100}});
        let mut stream = TcpStream::connect(served.served.server).await.unwrap();
        stream
            .write_all(served.request(&cancelling, &cancel).as_bytes())
            .await
            .unwrap();
        let mut sent = String::new();
        let _ = stream.read_to_string(&mut sent).await;
        assert!(sent.starts_with("HTTP/1.1 2"), "{sent}");
        // Bounded: the reads holding the permits are let go only after.
        tokio::time::timeout(Duration::from_secs(10), tasks.join_next())
            .await
            .ok()
            .flatten()
            .map(Result::unwrap_or_default)
    };
    let answer = tokio::time::timeout(Duration::from_secs(60), test)
        .await
        .expect("bounded");
    // The permits come free: a cancelled request let in would run now,
    // and be answered before its task ends.
    let gate = served.served.gate.clone();
    let answers = served.finish(&mut tasks).await;
    let ran = gate.started("cancelled");
    let answer = answer.unwrap_or_else(|| {
        panic!("the cancelled request still waited (ran {ran}); then answered {answers:?}")
    });
    assert!(!answer.contains("\"contents\""), "{answer}");
    assert_eq!(ran, 0, "the cancelled request ran");
}

/// One client whose reads never end, in two sessions, on a server
/// answering 16 requests at once: it runs at most 8 of them in all, and
/// another client runs its 8 reads. A client with two sessions used to
/// have a share in each, 16 in all, and the other client none.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_client_holds_at_most_half_of_the_permits_in_all_its_sessions() {
    let served = Sessions::new(HttpOptions::default().max_connections(16)).await;
    let greedy = [served.session_of(1).await, served.session_of(1).await];
    let other = served.session_of(2).await;
    let mut tasks = JoinSet::new();
    let test = async {
        let mut leaving = JoinSet::new();
        for id in 0..16u64 {
            let session = &greedy[(id % 2) as usize];
            served.read_and_leave(&mut leaving, session, id, "mem://a", Duration::from_secs(2));
        }
        while leaving.join_next().await.is_some() {}
        let running = served.started("mem://a");
        for id in 100..108 {
            served.read_held(&mut tasks, &other, id, "mem://b");
        }
        let others = served.wait_started("mem://b", 8).await;
        (running, others)
    };
    let (running, others) = tokio::time::timeout(Duration::from_secs(60), test)
        .await
        .expect("bounded");
    served.finish(&mut tasks).await;
    eprintln!("the first client ran {running} of 16 in two sessions; the other ran {others} of 8");
    assert!(running <= 8, "the first client ran {running} at once");
    assert_eq!(others, 8, "the other client's reads that ran");
}

/// Behind a proxy every connection comes from it: with `max_per_client`
/// raised to all the permits, one address has them all (its sessions still
/// half each), where it would have half.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn behind_a_proxy_one_address_may_be_given_every_permit() {
    let options = HttpOptions::default().max_connections(4).max_per_client(4);
    let served = Sessions::new(options).await;
    let sessions = [served.session_of(1).await, served.session_of(1).await];
    let mut tasks = JoinSet::new();
    let test = async {
        for id in 0..4u64 {
            served.read_held(&mut tasks, &sessions[(id % 2) as usize], id, "mem://a");
        }
        served.wait_started("mem://a", 4).await
    };
    let running = tokio::time::timeout(Duration::from_secs(60), test)
        .await
        .expect("bounded");
    served.finish(&mut tasks).await;
    assert_eq!(running, 4, "the proxy's reads that ran");
}

/// Opening sessions holds no permit once they are open: one client opens
/// four on a server answering 2 requests at once (its part: 1), and a read
/// in the last of them runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opening_sessions_holds_no_permit_after() {
    let served = Sessions::new(HttpOptions::default().max_connections(2)).await;
    let mut tasks = JoinSet::new();
    let test = async {
        let mut last = String::new();
        for _ in 0..4 {
            last = served.session_of(1).await;
        }
        served.read_held(&mut tasks, &last, 1, "mem://a");
        served.wait_started("mem://a", 1).await
    };
    let running = tokio::time::timeout(Duration::from_secs(60), test)
        .await
        .expect("bounded");
    served.finish(&mut tasks).await;
    assert_eq!(running, 1, "the read in the fourth session");
}

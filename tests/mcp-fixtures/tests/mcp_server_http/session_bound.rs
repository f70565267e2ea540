//! The bound on an HTTP server's sessions: past `max_sessions` open, an
//! `initialize` is answered 503 with `Retry-After`, not 500. While there
//! is room any client opens one; once full, one client keeps at most half
//! of them (`max_sessions_per_client`) from another, which is given the
//! first's idle ones, however the first floods, drops its connections or
//! deletes and opens again; a client's sessions deleted count no more.
//!
//! Each client connects from a loopback address of its own (127.0.0.2,
//! 127.0.0.3, ...): the server tells clients apart by their address.

use std::sync::Arc;
use std::time::Duration;

use tk::mcp::HttpOptions;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::task::JoinSet;

use crate::raw_http;
use crate::support::{Served, bounded, connect_from, header, status};

/// Every test's body is bounded in time.
const BOUND: Duration = Duration::from_secs(60);

/// An HTTP answer, whole.
struct Answer(String);

impl Answer {
    fn status(&self) -> u16 {
        status(&self.0)
    }

    fn header(&self, name: &str) -> Option<String> {
        header(&self.0, name)
    }

    fn session(&self) -> Option<String> {
        self.header("mcp-session-id")
    }

    /// A refusal of a session, as the server gives it: 503, a
    /// `Retry-After`, and a text saying why.
    fn assert_refused(&self, why: &str) {
        assert_eq!(self.status(), 503, "{}", self.0);
        let retry = self.header("retry-after").expect("a Retry-After header");
        assert!(retry.parse::<u64>().is_ok_and(|s| s > 0), "{retry}");
        assert!(self.0.contains(why), "{}", self.0);
        assert!(self.session().is_none(), "{}", self.0);
    }
}

/// An `initialize` from 127.0.0.`client`: what came back (all of it,
/// before the server closed, or 10 s).
async fn initialize(served: &Served, client: u8) -> Answer {
    Answer(served.ask(client).await)
}

/// Open a session from `client` (its `initialize` alone); panics unless it
/// opens.
async fn open(served: &Served, client: u8) -> String {
    let answer = initialize(served, client).await;
    assert_eq!(answer.status(), 200, "{}", answer.0);
    answer.session().expect("a session id")
}

/// Delete `session`, from `client`; panics unless it is deleted.
async fn delete(served: &Served, client: u8, session: &str) {
    let request = served.delete(session);
    let answer = Answer(
        served
            .exchange(client, request, Duration::from_secs(10))
            .await,
    );
    assert!((200..300).contains(&answer.status()), "{}", answer.0);
}

const FULL: &str = "sessions are open, as many as this server keeps";
const CLIENT_FULL: &str = "as many as one client may while the server is full";

/// With as many sessions open as the server keeps (each client its one),
/// an `initialize` is answered 503 with `Retry-After` and a text saying
/// why. It used to be answered 500, as an internal error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_server_answers_503_with_retry_after() {
    bounded(BOUND, async {
        let served = Served::new(HttpOptions::default().max_sessions(2)).await;
        open(&served, 2).await;
        open(&served, 3).await;
        initialize(&served, 4).await.assert_refused(FULL);
    })
    .await;
}

/// One client alone opens all 4 sessions, and is then answered 503;
/// another client still opens its 2 (half), given the first's idle ones,
/// and no more; a third client then finds none over its part (503). The
/// other client used to open none.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn once_full_one_client_keeps_at_most_half_of_the_sessions_from_another() {
    bounded(BOUND, async {
        let served = Served::new(HttpOptions::default().max_sessions(4)).await;
        for _ in 0..4 {
            open(&served, 2).await;
        }
        initialize(&served, 2).await.assert_refused(CLIENT_FULL);
        open(&served, 3).await;
        open(&served, 3).await;
        initialize(&served, 3).await.assert_refused(CLIENT_FULL);
        initialize(&served, 4).await.assert_refused(FULL);
    })
    .await;
}

/// A client that deletes its sessions opens as many again, and no more.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_deletes_its_sessions_opens_again() {
    bounded(BOUND, async {
        let served = Served::new(HttpOptions::default().max_sessions(4)).await;
        let mut sessions = Vec::new();
        for _ in 0..4 {
            sessions.push(open(&served, 2).await);
        }
        initialize(&served, 2).await.assert_refused(CLIENT_FULL);
        for session in &sessions {
            delete(&served, 2, session).await;
        }
        for _ in 0..4 {
            open(&served, 2).await;
        }
        initialize(&served, 2).await.assert_refused(CLIENT_FULL);
    })
    .await;
}

/// `max_sessions_per_client` sets a client's part of a full server: all of
/// them (behind a proxy), and no session of the one client is taken; 1, and
/// another client takes one of the first's 3, and no more.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clients_part_of_the_sessions_can_be_set() {
    bounded(BOUND, async {
        let options = HttpOptions::default()
            .max_sessions(3)
            .max_sessions_per_client(3);
        let served = Served::new(options).await;
        for _ in 0..3 {
            open(&served, 2).await;
        }
        initialize(&served, 2).await.assert_refused(CLIENT_FULL);
        initialize(&served, 3).await.assert_refused(FULL);
        let options = HttpOptions::default()
            .max_sessions(3)
            .max_sessions_per_client(1);
        let served = Served::new(options).await;
        for _ in 0..3 {
            open(&served, 2).await;
        }
        open(&served, 3).await;
        initialize(&served, 3).await.assert_refused(CLIENT_FULL);
    })
    .await;
}

/// One client sending 100 `initialize`s at once, 10 at a time: 8 open (all
/// of them: no one else asks), every other is refused 503, and another
/// client then opens its 4 (half of 8), and no more.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_flooding_initializes_leaves_the_others_their_part() {
    bounded(BOUND, async {
        let served = Served::new(HttpOptions::default().max_sessions(8)).await;
        let mut opened = 0;
        for _ in 0..10 {
            let mut flood = JoinSet::new();
            for _ in 0..10 {
                let served = Arc::clone(&served);
                flood.spawn(async move { initialize(&served, 2).await });
            }
            while let Some(answer) = flood.join_next().await {
                let answer = answer.unwrap();
                if answer.status() == 200 {
                    opened += 1;
                } else {
                    answer.assert_refused(CLIENT_FULL);
                }
            }
        }
        assert_eq!(opened, 8, "sessions the flooding client opened");
        for _ in 0..4 {
            open(&served, 3).await;
        }
        initialize(&served, 3).await.assert_refused(CLIENT_FULL);
    })
    .await;
}

/// A client that opens sessions and drops each connection once the
/// session's head has come (never saying `initialized`, never deleting)
/// holds the sessions only until another client asks: that one still
/// opens its 4.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_left_by_dropped_connections_count_against_their_client_only() {
    bounded(BOUND, async {
        let served = Served::new(HttpOptions::default().max_sessions(8)).await;
        let body = raw_http::initialize().to_string();
        let request = format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n{body}",
            served.server,
            body.len()
        );
        for _ in 0..50 {
            let mut stream = connect_from(2, served.server).await.expect("connect");
            stream.write_all(request.as_bytes()).await.unwrap();
            let mut head = [0u8; 12];
            let _ = tokio::time::timeout(Duration::from_secs(5), stream.read_exact(&mut head))
                .await;
            drop(stream);
        }
        initialize(&served, 2).await.assert_refused(CLIENT_FULL);
        for _ in 0..4 {
            open(&served, 3).await;
        }
    })
    .await;
}

/// A client opening and deleting sessions in a loop is never refused, and
/// then still opens every session: deleted sessions count no more.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opening_and_deleting_in_a_loop_leaves_the_count_right() {
    bounded(BOUND, async {
        let served = Served::new(HttpOptions::default().max_sessions(4)).await;
        for _ in 0..50 {
            let session = open(&served, 2).await;
            delete(&served, 2, &session).await;
        }
        for _ in 0..4 {
            open(&served, 2).await;
        }
        initialize(&served, 2).await.assert_refused(CLIENT_FULL);
    })
    .await;
}

/// Eight clients flooding `initialize`s at once on a server of 8 sessions:
/// every one is opened or refused 503 with `Retry-After` (none a 500), and
/// the sessions all open.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_clients_flooding_initializes_are_refused_503_past_the_bound() {
    bounded(BOUND, async {
        let served = Served::new(HttpOptions::default().max_sessions(8)).await;
        let mut clients = JoinSet::new();
        for client in 10..18u8 {
            let served = Arc::clone(&served);
            clients.spawn(async move {
                let mut opened = 0;
                for _ in 0..10 {
                    let answer = initialize(&served, client).await;
                    if answer.status() == 200 {
                        opened += 1;
                    } else {
                        assert_eq!(answer.status(), 503, "{}", answer.0);
                        assert!(answer.header("retry-after").is_some(), "{}", answer.0);
                    }
                }
                opened
            });
        }
        let mut in_all = 0;
        while let Some(opened) = clients.join_next().await {
            let opened = opened.unwrap();
            in_all += opened;
        }
        // Sessions taken from a client over its part were opened, then
        // closed: more may have opened than are open.
        assert!(in_all >= 8, "sessions opened in all: {in_all}");
    })
    .await;
}

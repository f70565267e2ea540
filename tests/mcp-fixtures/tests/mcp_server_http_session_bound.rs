//! The bound on an HTTP server's sessions: past `max_sessions` open, an
//! `initialize` is answered 503 with `Retry-After`, not 500. While there
//! is room any client opens one; once full, one client keeps at most half
//! of them (`max_sessions_per_client`) from another, which is given the
//! first's idle ones, however the first floods, drops its connections or
//! deletes and opens again; a client's sessions deleted count no more.
//!
//! Each client connects from a loopback address of its own (127.0.0.2,
//! 127.0.0.3, ...): the server tells clients apart by their address.

#[path = "../raw_http.rs"]
mod raw_http;

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use tk::mcp::{HttpOptions, McpServer};
use tk::{CancellationToken, ToolRegistry};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::task::JoinSet;

/// A server of an empty registry keeping sessions, on loopback.
struct Served {
    server: SocketAddr,
    shutdown: CancellationToken,
}

impl Served {
    async fn new(options: HttpOptions) -> Arc<Self> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let server = listener.local_addr().unwrap();
        let shutdown = CancellationToken::new();
        tokio::spawn(
            McpServer::new(Arc::new(ToolRegistry::new()))
                .serve_http(listener, options.shutdown(shutdown.clone())),
        );
        Arc::new(Self { server, shutdown })
    }

    /// An `initialize` from 127.0.0.`client`: what came back.
    async fn initialize(&self, client: u8) -> Answer {
        let body = raw_http::initialize().to_string();
        let request = format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            self.server,
            body.len()
        );
        Answer(exchange(client, self.server, request).await)
    }

    /// Open a session from `client`; panics unless it opens.
    async fn open(&self, client: u8) -> String {
        let answer = self.initialize(client).await;
        assert_eq!(answer.status(), 200, "{}", answer.0);
        answer.session().expect("a session id")
    }

    /// Delete `session`, from `client`; panics unless it is deleted.
    async fn delete(&self, client: u8, session: &str) {
        let request = format!(
            "DELETE /mcp HTTP/1.1\r\nHost: {}\r\nMcp-Session-Id: {session}\r\nConnection: close\r\n\r\n",
            self.server
        );
        let answer = Answer(exchange(client, self.server, request).await);
        assert!((200..300).contains(&answer.status()), "{}", answer.0);
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

/// An HTTP answer, whole.
struct Answer(String);

impl Answer {
    fn status(&self) -> u16 {
        self.0
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0)
    }

    fn header(&self, name: &str) -> Option<String> {
        let head = self.0.split("\r\n\r\n").next()?;
        head.lines().find_map(|line| {
            let (key, value) = line.split_once(':')?;
            key.eq_ignore_ascii_case(name)
                .then(|| value.trim().to_owned())
        })
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

/// A connection to `server` from 127.0.0.`client`.
async fn connect_from(client: u8, server: SocketAddr) -> TcpStream {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    let from = IpAddr::V4(Ipv4Addr::new(127, 0, 0, client));
    socket.bind(SocketAddr::new(from, 0)).unwrap();
    socket.connect(server).await.unwrap()
}

/// `request` sent from `client`; all that came back before the server
/// closed (or 10 s).
async fn exchange(client: u8, server: SocketAddr, request: String) -> String {
    let mut stream = connect_from(client, server).await;
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut heard = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut heard)).await;
    String::from_utf8_lossy(&heard).into_owned()
}

/// Every test's body is bounded in time.
async fn bounded<T>(test: impl Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(60), test)
        .await
        .expect("bounded")
}

const FULL: &str = "sessions are open, as many as this server keeps";
const CLIENT_FULL: &str = "as many as one client may while the server is full";

/// With as many sessions open as the server keeps (each client its one),
/// an `initialize` is answered 503 with `Retry-After` and a text saying
/// why. It used to be answered 500, as an internal error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_server_answers_503_with_retry_after() {
    bounded(async {
        let served = Served::new(HttpOptions::default().max_sessions(2)).await;
        served.open(2).await;
        served.open(3).await;
        served.initialize(4).await.assert_refused(FULL);
    })
    .await;
}

/// One client alone opens all 4 sessions, and is then answered 503;
/// another client still opens its 2 (half), given the first's idle ones,
/// and no more; a third client then finds none over its part (503). The
/// other client used to open none.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn once_full_one_client_keeps_at_most_half_of_the_sessions_from_another() {
    bounded(async {
        let served = Served::new(HttpOptions::default().max_sessions(4)).await;
        for _ in 0..4 {
            served.open(2).await;
        }
        served.initialize(2).await.assert_refused(CLIENT_FULL);
        served.open(3).await;
        served.open(3).await;
        served.initialize(3).await.assert_refused(CLIENT_FULL);
        served.initialize(4).await.assert_refused(FULL);
    })
    .await;
}

/// A client that deletes its sessions opens as many again, and no more.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_deletes_its_sessions_opens_again() {
    bounded(async {
        let served = Served::new(HttpOptions::default().max_sessions(4)).await;
        let mut sessions = Vec::new();
        for _ in 0..4 {
            sessions.push(served.open(2).await);
        }
        served.initialize(2).await.assert_refused(CLIENT_FULL);
        for session in &sessions {
            served.delete(2, session).await;
        }
        for _ in 0..4 {
            served.open(2).await;
        }
        served.initialize(2).await.assert_refused(CLIENT_FULL);
    })
    .await;
}

/// `max_sessions_per_client` sets a client's part of a full server: all of
/// them (behind a proxy), and no session of the one client is taken; 1, and
/// another client takes one of the first's 3, and no more.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clients_part_of_the_sessions_can_be_set() {
    bounded(async {
        let options = HttpOptions::default()
            .max_sessions(3)
            .max_sessions_per_client(3);
        let served = Served::new(options).await;
        for _ in 0..3 {
            served.open(2).await;
        }
        served.initialize(2).await.assert_refused(CLIENT_FULL);
        served.initialize(3).await.assert_refused(FULL);
        let options = HttpOptions::default()
            .max_sessions(3)
            .max_sessions_per_client(1);
        let served = Served::new(options).await;
        for _ in 0..3 {
            served.open(2).await;
        }
        served.open(3).await;
        served.initialize(3).await.assert_refused(CLIENT_FULL);
    })
    .await;
}

/// One client sending 100 `initialize`s at once, 10 at a time: 8 open (all
/// of them: no one else asks), every other is refused 503, and another
/// client then opens its 4 (half of 8), and no more.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_flooding_initializes_leaves_the_others_their_part() {
    bounded(async {
        let served = Served::new(HttpOptions::default().max_sessions(8)).await;
        let mut opened = 0;
        for _ in 0..10 {
            let mut flood = JoinSet::new();
            for _ in 0..10 {
                let served = Arc::clone(&served);
                flood.spawn(async move { served.initialize(2).await });
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
            served.open(3).await;
        }
        served.initialize(3).await.assert_refused(CLIENT_FULL);
    })
    .await;
}

/// A client that opens sessions and drops each connection once the
/// session's head has come (never saying `initialized`, never deleting)
/// holds the sessions only until another client asks: that one still
/// opens its 4.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_left_by_dropped_connections_count_against_their_client_only() {
    bounded(async {
        let served = Served::new(HttpOptions::default().max_sessions(8)).await;
        let body = raw_http::initialize().to_string();
        let request = format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n{body}",
            served.server,
            body.len()
        );
        for _ in 0..50 {
            let mut stream = connect_from(2, served.server).await;
            stream.write_all(request.as_bytes()).await.unwrap();
            let mut head = [0u8; 12];
            let _ = tokio::time::timeout(Duration::from_secs(5), stream.read_exact(&mut head))
                .await;
            drop(stream);
        }
        served.initialize(2).await.assert_refused(CLIENT_FULL);
        for _ in 0..4 {
            served.open(3).await;
        }
    })
    .await;
}

/// A client opening and deleting sessions in a loop is never refused, and
/// then still opens every session: deleted sessions count no more.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opening_and_deleting_in_a_loop_leaves_the_count_right() {
    bounded(async {
        let served = Served::new(HttpOptions::default().max_sessions(4)).await;
        for _ in 0..50 {
            let session = served.open(2).await;
            served.delete(2, &session).await;
        }
        for _ in 0..4 {
            served.open(2).await;
        }
        served.initialize(2).await.assert_refused(CLIENT_FULL);
    })
    .await;
}

/// Eight clients flooding `initialize`s at once on a server of 8 sessions:
/// every one is opened or refused 503 with `Retry-After` (none a 500), and
/// the sessions all open.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_clients_flooding_initializes_are_refused_503_past_the_bound() {
    bounded(async {
        let served = Served::new(HttpOptions::default().max_sessions(8)).await;
        let mut clients = JoinSet::new();
        for client in 10..18u8 {
            let served = Arc::clone(&served);
            clients.spawn(async move {
                let mut opened = 0;
                for _ in 0..10 {
                    let answer = served.initialize(client).await;
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

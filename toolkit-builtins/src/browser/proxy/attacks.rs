//! Hostile clients against the page's proxy, by class, on loopback: each
//! tries to get a request (marked `ESCAPED`) or a `Host` (`vhost.example`)
//! past the check to the allowed server, or to reach a server the policy
//! leaves out, or to hold the proxy with a head that never ends.
//!
//! The allowed server is the kind that makes these attacks work: it keeps
//! every connection alive whatever `Connection` says, and answers every
//! request head it sees.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use super::*;
use crate::browser::request_head::{HEAD_TIMEOUT, MAX_HEAD};

/// A loopback server that records every byte it receives and how many
/// connections are open.
struct Recorder {
    addr: SocketAddr,
    received: Arc<Mutex<Vec<u8>>>,
    accepted: Arc<AtomicUsize>,
    open: Arc<AtomicUsize>,
}

impl Recorder {
    /// `answer`: whether it answers each request head (and keeps the
    /// connection open), or only listens.
    async fn start(answer: bool) -> Self {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (received, accepted, open) = (
            Arc::new(Mutex::new(Vec::new())),
            Arc::new(AtomicUsize::new(0)),
            Arc::new(AtomicUsize::new(0)),
        );
        let (r, a, o) = (received.clone(), accepted.clone(), open.clone());
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                a.fetch_add(1, Ordering::SeqCst);
                o.fetch_add(1, Ordering::SeqCst);
                let (r, o) = (r.clone(), o.clone());
                tokio::spawn(async move {
                    let mut pending = Vec::new();
                    let mut chunk = [0u8; 8192];
                    while let Ok(Ok(n)) =
                        tokio::time::timeout(Duration::from_secs(5), stream.read(&mut chunk)).await
                    {
                        if n == 0 {
                            break;
                        }
                        r.lock()
                            .unwrap_or_else(PoisonError::into_inner)
                            .extend_from_slice(&chunk[..n]);
                        pending.extend_from_slice(&chunk[..n]);
                        while let Some(end) = pending.windows(4).position(|w| w == b"\r\n\r\n") {
                            pending.drain(..end + 4);
                            if answer {
                                let _ = stream
                                    .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                                    .await;
                            }
                        }
                    }
                    o.fetch_sub(1, Ordering::SeqCst);
                });
            }
        });
        Self {
            addr,
            received,
            accepted,
            open,
        }
    }

    fn received(&self) -> String {
        String::from_utf8_lossy(&self.received.lock().unwrap_or_else(PoisonError::into_inner))
            .into_owned()
    }
}

/// What a client does.
enum Step {
    Send(String),
    /// Reads one answer (a head and its `Content-Length` body) or the end.
    Read,
    /// Sends `prefix`, then one byte every 100 ms until cut off.
    TrickleHead(String),
    /// Sends `prefix`, then 64 KiB blocks of header until cut off, up to 1 GiB.
    FloodHead(String),
}

/// How an attack ended.
#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    /// Nothing reached the allowed server.
    Refused,
    /// The first request reached it, checked; nothing else did.
    Contained,
    /// Something unchecked got through, or a head was never cut off.
    Escaped(String),
}

async fn read_answer(client: &mut TcpStream) -> String {
    let mut got = Vec::new();
    let mut chunk = [0u8; 4096];
    let read = async {
        loop {
            if let Some(end) = got.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&got[..end]).to_ascii_lowercase();
                let length = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .and_then(|n| n.trim().parse::<usize>().ok())
                    .unwrap_or(0);
                if got.len() >= end + 4 + length {
                    return;
                }
            }
            match client.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => got.extend_from_slice(&chunk[..n]),
            }
        }
    };
    let _ = tokio::time::timeout(Duration::from_secs(3), read).await;
    String::from_utf8_lossy(&got).into_owned()
}

/// Whether the proxy cut the client off (closed, or refused more bytes)
/// while it kept sending `next` for at most `limit`.
async fn cut_off_while_sending(
    client: &mut TcpStream,
    limit: Duration,
    pause: Duration,
    mut next: impl FnMut() -> Option<Vec<u8>>,
) -> bool {
    let mut sink = [0u8; 1024];
    let (mut reader, mut writer) = client.split();
    let sending = async {
        loop {
            let Some(bytes) = next() else {
                return false;
            };
            tokio::time::sleep(pause).await;
            tokio::select! {
                read = reader.read(&mut sink) => if matches!(read, Ok(0) | Err(_)) { return true },
                written = writer.write_all(&bytes) => if written.is_err() { return true },
            }
        }
    };
    tokio::time::timeout(limit, sending).await.unwrap_or(false)
}

async fn run(steps: Vec<Step>, allowed: &Recorder, forbidden: &Recorder) -> Outcome {
    let policy = NetPolicy::new()
        .allow(&allowed.addr.to_string())
        .unwrap()
        .with_resolver(Loopback);
    let proxy = GuardProxy::start(Door::Guarded {
        policy: Arc::new(policy),
        blocked: BlockedLog::default(),
    })
    .await
    .unwrap();
    let mut client = TcpStream::connect(proxy.addr()).await.unwrap();
    let mut held = None;
    for step in steps {
        match step {
            Step::Send(text) => {
                let _ = client.write_all(text.as_bytes()).await;
            }
            Step::Read => {
                read_answer(&mut client).await;
            }
            Step::TrickleHead(prefix) => {
                let _ = client.write_all(prefix.as_bytes()).await;
                let cut = cut_off_while_sending(
                    &mut client,
                    HEAD_TIMEOUT * 2,
                    Duration::from_millis(100),
                    || Some(b"a".to_vec()),
                )
                .await;
                held = (!cut).then(|| "a head sent a byte at a time was never cut off".into());
            }
            Step::FloodHead(prefix) => {
                let _ = client.write_all(prefix.as_bytes()).await;
                let mut blocks = 0;
                let cut = cut_off_while_sending(
                    &mut client,
                    Duration::from_secs(60),
                    Duration::ZERO,
                    || {
                        blocks += 1;
                        (blocks <= 16 * 1024).then(|| vec![b'a'; 64 * 1024])
                    },
                )
                .await;
                held = (!cut).then(|| format!("a {blocks}-block head was never cut off"));
            }
        }
    }
    drop(client);
    drop(proxy);
    for _ in 0..100 {
        if allowed.open.load(Ordering::SeqCst) == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let seen = allowed.received();
    if let Some(held) = held {
        Outcome::Escaped(held)
    } else if seen.contains("ESCAPED") || seen.contains("vhost.example") {
        Outcome::Escaped(seen)
    } else if forbidden.accepted.load(Ordering::SeqCst) > 0 {
        Outcome::Escaped(format!(
            "the forbidden server got: {}",
            forbidden.received()
        ))
    } else if seen.is_empty() {
        Outcome::Refused
    } else {
        Outcome::Contained
    }
}

/// Every name is loopback; the allow list decides.
struct Loopback;

#[toolsmith::async_trait]
impl crate::net::Resolve for Loopback {
    async fn resolve(&self, _host: &str, port: u16) -> io::Result<Vec<SocketAddr>> {
        Ok(vec![SocketAddr::from(([127, 0, 0, 1], port))])
    }
}

fn attacks(up: SocketAddr, fb: SocketAddr) -> Vec<(&'static str, Vec<Step>)> {
    use Step::{FloodHead, Read, Send, TrickleHead};
    let first = format!("GET http://{up}/first HTTP/1.1\r\nHost: {up}\r\n\r\n");
    let second = format!("GET http://{up}/ESCAPED HTTP/1.1\r\nHost: {up}\r\n\r\n");
    let smuggled = format!("GET /ESCAPED HTTP/1.1\r\nHost: {up}\r\n\r\n");
    let cl_te_body = format!("0\r\n\r\n{smuggled}");
    let te_cl_body = format!("{:x}\r\n{smuggled}\r\n0\r\n\r\n", smuggled.len());
    vec![
        (
            "keep-alive second request",
            vec![Send(first.clone()), Read, Send(second.clone()), Read],
        ),
        (
            "pipelined requests in one write",
            vec![Send(format!("{first}{second}")), Read, Read],
        ),
        (
            "second request with another Host",
            vec![
                Send(first.clone()),
                Read,
                Send(format!(
                    "GET http://{up}/second HTTP/1.1\r\nHost: vhost.example\r\n\r\n"
                )),
                Read,
            ],
        ),
        (
            "first request with another Host",
            vec![
                Send(format!(
                    "GET http://{up}/first HTTP/1.1\r\nHost: vhost.example\r\n\r\n"
                )),
                Read,
            ],
        ),
        (
            "absolute-form URI to another host in request 2",
            vec![
                Send(first.clone()),
                Read,
                Send(format!(
                    "GET http://{fb}/ESCAPED HTTP/1.1\r\nHost: {fb}\r\n\r\n"
                )),
                Read,
            ],
        ),
        (
            "CONNECT after a GET",
            vec![
                Send(first.clone()),
                Read,
                Send(format!(
                    "CONNECT {fb} HTTP/1.1\r\nHost: {fb}\r\nX-Mark: ESCAPED\r\n\r\n"
                )),
                Read,
            ],
        ),
        (
            "body longer than its Content-Length",
            vec![
                Send(format!(
                    "POST http://{up}/first HTTP/1.1\r\nHost: {up}\r\nContent-Length: 5\r\n\r\n"
                )),
                Send(format!("hello{smuggled}")),
                Read,
                Read,
            ],
        ),
        (
            "header with obs-fold",
            vec![
                Send(format!(
                    "GET http://{up}/first HTTP/1.1\r\nHost: {up}\r\nX-A: 1\r\n X-Folded: ESCAPED\r\n\r\n"
                )),
                Read,
            ],
        ),
        (
            "smuggling: Content-Length and Transfer-Encoding (CL.TE)",
            vec![
                Send(format!(
                    "POST http://{up}/first HTTP/1.1\r\nHost: {up}\r\nContent-Length: {}\r\nTransfer-Encoding: chunked\r\n\r\n{cl_te_body}",
                    cl_te_body.len()
                )),
                Read,
                Read,
            ],
        ),
        (
            "smuggling: Transfer-Encoding and a short Content-Length (TE.CL)",
            vec![
                Send(format!(
                    "POST http://{up}/first HTTP/1.1\r\nHost: {up}\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n{te_cl_body}"
                )),
                Read,
                Read,
            ],
        ),
        (
            "two different Content-Lengths",
            vec![
                Send(format!(
                    "POST http://{up}/first HTTP/1.1\r\nHost: {up}\r\nContent-Length: 0\r\nContent-Length: {}\r\n\r\n{smuggled}",
                    smuggled.len()
                )),
                Read,
                Read,
            ],
        ),
        (
            "slowloris head",
            vec![TrickleHead(format!(
                "GET http://{up}/first HTTP/1.1\r\nX-Slow: "
            ))],
        ),
        (
            "oversized head (1 GiB)",
            vec![FloodHead(format!(
                "GET http://{up}/first HTTP/1.1\r\nX-Big: "
            ))],
        ),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_past_the_first_on_a_connection_never_reach_a_server_unchecked() {
    let (allowed, forbidden) = (Recorder::start(true).await, Recorder::start(true).await);

    // The proxy still serves a plain request, with its body, and the
    // server's answer comes back.
    let control = vec![
        Step::Send(format!(
            "POST http://{up}/fine HTTP/1.1\r\nHost: {up}\r\nContent-Length: 4\r\n\r\nbody",
            up = allowed.addr
        )),
        Step::Read,
    ];
    assert_eq!(run(control, &allowed, &forbidden).await, Outcome::Contained);
    assert!(allowed.received().contains("POST /fine HTTP/1.1\r\nHost: "));
    assert!(
        allowed
            .received()
            .ends_with("Connection: close\r\n\r\nbody")
    );

    let (mut tried, mut refused, mut contained, mut escaped) = (0, 0, 0, Vec::new());
    let unused = SocketAddr::from(([127, 0, 0, 1], 9));
    for i in 0..attacks(unused, unused).len() {
        // Each attack against servers of its own.
        let (allowed, forbidden) = (Recorder::start(true).await, Recorder::start(true).await);
        let (name, steps) = attacks(allowed.addr, forbidden.addr).swap_remove(i);
        tried += 1;
        let outcome = run(steps, &allowed, &forbidden).await;
        eprintln!("{name}: {outcome:?}");
        match outcome {
            Outcome::Refused => refused += 1,
            Outcome::Contained => contained += 1,
            Outcome::Escaped(what) => escaped.push(format!("{name}: {what}")),
        }
    }
    eprintln!(
        "proxy attacks: {tried} tried, {refused} refused, {contained} contained, {} escaped (head bound {MAX_HEAD} bytes, {} s)",
        escaped.len(),
        HEAD_TIMEOUT.as_secs()
    );
    assert!(escaped.is_empty(), "escaped:\n{}", escaped.join("\n"));
}

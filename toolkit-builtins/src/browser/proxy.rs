//! The browser's only ways out: forwarding proxies on loopback.
//!
//! The page's proxy checks every destination with the network guard and
//! connects to the addresses it checked. The request interception sees
//! what the page asks for, but Chromium would still resolve names and open
//! connections itself. Through this proxy it does neither: WebSocket
//! handshakes (which the interception never sees), names whose DNS answer
//! changes after the check, and anything else that opens a connection all
//! meet the guard here, at the connection.
//!
//! Chromium's own traffic (the sign-in check a profile makes when its
//! network comes up, which no switch turns off) goes through a second
//! proxy whose door is closed: refused without a lookup, and not listed
//! among the requests the page made.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;

use tokio::io::{AsyncReadExt, AsyncWriteExt, copy_bidirectional};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::{JoinHandle, JoinSet};
use url::Url;

use super::guard::{Refusal, check_addresses};
use super::intercept::{Blocked, BlockedLog};
use super::request_head::{RequestHead, read_head};
use crate::net::NetPolicy;

/// Who may pass a proxy.
#[derive(Debug, Clone)]
pub(crate) enum Door {
    /// The page's traffic: each destination checked with `policy`, and
    /// each refusal logged in `blocked` for the page's next action.
    Guarded {
        policy: Arc<NetPolicy>,
        blocked: BlockedLog,
    },
    /// Chromium's own traffic: every request refused, nothing looked up,
    /// nothing logged.
    Closed,
}

/// A running proxy; it stops, with every connection through it, on drop.
#[derive(Debug)]
pub(crate) struct GuardProxy {
    addr: SocketAddr,
    task: JoinHandle<()>,
}

impl GuardProxy {
    pub(crate) async fn start(door: Door) -> io::Result<Self> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let addr = listener.local_addr()?;
        let task = tokio::spawn(async move {
            // Dropping the set (when this task is aborted) aborts every
            // connection still open.
            let mut connections = JoinSet::new();
            loop {
                tokio::select! {
                    accepted = listener.accept() => match accepted {
                        Ok((client, _)) => {
                            let door = door.clone();
                            connections.spawn(async move {
                                let _ = forward(client, &door).await;
                            });
                        }
                        Err(_) => break,
                    },
                    Some(_) = connections.join_next(), if !connections.is_empty() => {}
                }
            }
        });
        Ok(Self { addr, task })
    }

    /// Where Chromium is told to send what this proxy takes.
    pub(crate) fn addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Drop for GuardProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// One client connection: a `CONNECT host:port` tunnel (https, wss), bytes
/// both ways, or one plain-http request in absolute form (http, ws).
async fn forward(mut client: TcpStream, door: &Door) -> io::Result<()> {
    let (raw, rest) = read_head(&mut client).await?;
    let (policy, blocked) = match door {
        Door::Guarded { policy, blocked } => (policy, blocked),
        Door::Closed => {
            let body = "the browser's own traffic is not allowed out";
            return respond(&mut client, "403 Forbidden", body).await;
        }
    };
    let head = match RequestHead::parse(&raw) {
        Ok(head) => head,
        Err(malformed) => return respond(&mut client, malformed.status, malformed.reason).await,
    };
    let tunnel = head.method.eq_ignore_ascii_case("CONNECT");
    let url = if tunnel {
        format!("https://{}/", head.target)
    } else {
        head.target.clone()
    };
    let addrs = match check_addresses(policy, &url).await {
        Ok(addrs) => addrs,
        Err(refusal) => return refuse(client, blocked, refusal).await,
    };
    if tunnel {
        let mut upstream = connect(&mut client, &addrs, &url).await?;
        client
            .write_all(b"HTTP/1.1 200 Connection Established\r\n\r\n")
            .await?;
        upstream.write_all(&rest).await?;
        copy_bidirectional(&mut client, &mut upstream).await?;
        return Ok(());
    }
    let body_length = match head.body_length() {
        Ok(n) => n,
        Err(malformed) => return respond(&mut client, malformed.status, malformed.reason).await,
    };
    if u64::try_from(rest.len()).unwrap_or(u64::MAX) > body_length {
        // Bytes past the body: a second request, pipelined.
        let body = "one request per connection";
        return respond(&mut client, "400 Bad Request", body).await;
    }
    let Some(out) = origin_form(&head, &url) else {
        return respond(&mut client, "400 Bad Request", "not an http URL").await;
    };
    let mut upstream = connect(&mut client, &addrs, &url).await?;
    upstream.write_all(out.as_bytes()).await?;
    upstream.write_all(&rest).await?;
    let left = body_length - rest.len() as u64;
    let (mut client_in, mut client_out) = client.split();
    let (mut upstream_in, mut upstream_out) = upstream.split();
    let sent = tokio::io::copy(&mut (&mut client_in).take(left), &mut upstream_out).await?;
    if sent < left {
        return Ok(());
    }
    // The request is out. The server's answer goes back; a byte more from
    // the client (a second request on a kept-alive connection, a CONNECT)
    // ends the connection instead of reaching the server unchecked, and
    // Chromium sends that request again on a new connection. So does the
    // client's end of the connection: a server that keeps it open anyway
    // does not keep this task.
    let mut probe = [0u8; 1];
    tokio::select! {
        answered = tokio::io::copy(&mut upstream_in, &mut client_out) => answered.map(drop),
        _ = client_in.read(&mut probe) => Ok(()),
    }
}

/// The request as the server gets it: in origin form, with the `Host` of
/// the URL that was checked (not one the client names), and asking the
/// server to close after its answer.
fn origin_form(head: &RequestHead, url: &str) -> Option<String> {
    let parsed = Url::parse(url).ok()?;
    if parsed.scheme() != "http" {
        return None;
    }
    let host = &parsed[url::Position::BeforeHost..url::Position::AfterPort];
    let path = &parsed[url::Position::BeforePath..url::Position::AfterQuery];
    let mut out = format!(
        "{} {path} {}\r\nHost: {host}\r\n",
        head.method, head.version
    );
    const NOT_RELAYED: [&str; 5] = [
        "host",
        "connection",
        "proxy-connection",
        "keep-alive",
        "proxy-authorization",
    ];
    for (name, value) in &head.headers {
        if !NOT_RELAYED.iter().any(|h| name.eq_ignore_ascii_case(h)) {
            out.push_str(&format!("{name}: {value}\r\n"));
        }
    }
    out.push_str("Connection: close\r\n\r\n");
    Some(out)
}

/// A connection to the checked `addrs`, or the client told why not.
async fn connect(client: &mut TcpStream, addrs: &[SocketAddr], url: &str) -> io::Result<TcpStream> {
    match TcpStream::connect(addrs).await {
        Ok(upstream) => Ok(upstream),
        Err(e) => {
            let body = format!("cannot connect to {url}: {e}");
            respond(client, "502 Bad Gateway", &body).await?;
            Err(e)
        }
    }
}

async fn refuse(mut client: TcpStream, blocked: &BlockedLog, refusal: Refusal) -> io::Result<()> {
    let body = refusal.to_string();
    blocked.push(Blocked {
        refusal,
        document: false,
    });
    respond(&mut client, "403 Forbidden", &body).await
}

async fn respond(client: &mut TcpStream, status: &str, body: &str) -> io::Result<()> {
    let response = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    client.write_all(response.as_bytes()).await?;
    client.shutdown().await
}

#[cfg(test)]
mod attacks;

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;
    use crate::net::Resolve;

    /// Counts lookups, and answers each with a loopback address the policy
    /// does not allow.
    struct Counting(Arc<AtomicUsize>);

    #[toolsmith::async_trait]
    impl Resolve for Counting {
        async fn resolve(&self, _host: &str, port: u16) -> io::Result<Vec<SocketAddr>> {
            self.0.fetch_add(1, Ordering::SeqCst);
            Ok(vec![SocketAddr::from(([127, 0, 0, 1], port))])
        }
    }

    /// The proxy's answer to a `CONNECT` of `host`.
    async fn connect_through(proxy: &GuardProxy, host: &str) -> String {
        let mut client = TcpStream::connect(proxy.addr()).await.unwrap();
        let head = format!("CONNECT {host}:443 HTTP/1.1\r\nHost: {host}:443\r\n\r\n");
        client.write_all(head.as_bytes()).await.unwrap();
        let mut answer = String::new();
        client.read_to_string(&mut answer).await.unwrap();
        answer
    }

    #[tokio::test]
    async fn the_closed_door_refuses_everything_and_the_guarded_one_checks_and_logs() {
        let lookups = Arc::new(AtomicUsize::new(0));
        let policy = NetPolicy::new().with_resolver(Counting(Arc::clone(&lookups)));
        let blocked = BlockedLog::default();
        let guarded = GuardProxy::start(Door::Guarded {
            policy: Arc::new(policy),
            blocked: blocked.clone(),
        })
        .await
        .unwrap();
        let closed = GuardProxy::start(Door::Closed).await.unwrap();

        let answer = connect_through(&closed, "accounts.example").await;
        assert!(answer.starts_with("HTTP/1.1 403"), "{answer}");
        assert!(answer.contains("own traffic"), "{answer}");
        assert_eq!(
            lookups.load(Ordering::SeqCst),
            0,
            "the closed door looks nothing up"
        );
        assert!(blocked.take().is_empty(), "and lists nothing for the page");

        // The same request at the page's door is looked up, refused for
        // the loopback address it leads to, and listed.
        let answer = connect_through(&guarded, "accounts.example").await;
        assert!(answer.starts_with("HTTP/1.1 403"), "{answer}");
        assert_eq!(lookups.load(Ordering::SeqCst), 1);
        let listed = blocked.take();
        assert_eq!(listed.len(), 1);
        assert!(
            listed[0].refusal.url.contains("accounts.example"),
            "{listed:?}"
        );
    }
}

//! The browser's only way out: a forwarding proxy on loopback that checks
//! every destination with the network guard and connects to the addresses
//! it checked.
//!
//! The request interception sees what the page asks for, but Chromium would
//! still resolve names and open connections itself. Through this proxy it
//! does neither: WebSocket handshakes (which the interception never sees),
//! names whose DNS answer changes after the check, and anything else that
//! opens a connection all meet the guard here, at the connection.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;

use tokio::io::{AsyncReadExt, AsyncWriteExt, copy_bidirectional};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::{JoinHandle, JoinSet};
use url::Url;

use super::guard::{Refusal, check_addresses};
use super::intercept::{Blocked, BlockedLog};
use crate::net::NetPolicy;

/// The most a request head may take.
const MAX_HEAD: usize = 64 * 1024;

/// A running proxy; it stops, with every connection through it, on drop.
#[derive(Debug)]
pub(crate) struct GuardProxy {
    addr: SocketAddr,
    task: JoinHandle<()>,
}

impl GuardProxy {
    pub(crate) async fn start(policy: Arc<NetPolicy>, blocked: BlockedLog) -> io::Result<Self> {
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
                            let (policy, blocked) = (Arc::clone(&policy), blocked.clone());
                            connections.spawn(async move {
                                let _ = forward(client, &policy, &blocked).await;
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

    /// Where Chromium is told to send everything.
    pub(crate) fn addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Drop for GuardProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// One client connection: a `CONNECT host:port` tunnel (https, wss) or one
/// plain-http request in absolute form (http, ws), then bytes both ways.
async fn forward(
    mut client: TcpStream,
    policy: &NetPolicy,
    blocked: &BlockedLog,
) -> io::Result<()> {
    let (head, rest) = read_head(&mut client).await?;
    let mut lines = head.split("\r\n");
    let request_line = lines.next().unwrap_or_default();
    let mut parts = request_line.split(' ');
    let (method, target, version) = (
        parts.next().unwrap_or_default(),
        parts.next().unwrap_or_default(),
        parts.next().unwrap_or("HTTP/1.1"),
    );
    let tunnel = method.eq_ignore_ascii_case("CONNECT");
    let url = if tunnel {
        format!("https://{target}/")
    } else {
        target.to_owned()
    };
    let addrs = match check_addresses(policy, &url).await {
        Ok(addrs) => addrs,
        Err(refusal) => return refuse(client, blocked, refusal).await,
    };
    let mut upstream = match TcpStream::connect(&addrs[..]).await {
        Ok(upstream) => upstream,
        Err(e) => {
            let body = format!("cannot connect to {url}: {e}");
            return respond(&mut client, "502 Bad Gateway", &body).await;
        }
    };
    if tunnel {
        client
            .write_all(b"HTTP/1.1 200 Connection Established\r\n\r\n")
            .await?;
    } else {
        // Origin form for the server, and one request per connection: a
        // reused connection could carry the next request to another host.
        let parsed = Url::parse(&url).map_err(|e| io::Error::other(e.to_string()))?;
        let path = &parsed[url::Position::BeforePath..url::Position::AfterQuery];
        let mut out = format!("{method} {path} {version}\r\n");
        for line in lines.filter(|l| !l.is_empty()) {
            let name = line.split(':').next().unwrap_or_default().trim();
            if ![
                "connection",
                "proxy-connection",
                "keep-alive",
                "proxy-authorization",
            ]
            .iter()
            .any(|h| name.eq_ignore_ascii_case(h))
            {
                out.push_str(line);
                out.push_str("\r\n");
            }
        }
        out.push_str("Connection: close\r\n\r\n");
        upstream.write_all(out.as_bytes()).await?;
    }
    upstream.write_all(&rest).await?;
    copy_bidirectional(&mut client, &mut upstream).await?;
    Ok(())
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

/// The request head as text, and whatever bytes came after it.
async fn read_head(client: &mut TcpStream) -> io::Result<(String, Vec<u8>)> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let rest = buf.split_off(end + 4);
            buf.truncate(end);
            return Ok((String::from_utf8_lossy(&buf).into_owned(), rest));
        }
        if buf.len() > MAX_HEAD {
            return Err(io::Error::other("request head too large"));
        }
        let n = client.read(&mut chunk).await?;
        if n == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

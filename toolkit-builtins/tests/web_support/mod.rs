//! A small real HTTP/1.1 server on 127.0.0.1 for the web tool tests: one
//! request per connection, answers chosen by a closure, every request kept.
#![allow(dead_code)]

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// A request as the server saw it.
#[derive(Debug, Clone)]
pub struct Request {
    pub method: String,
    /// Path and query.
    pub target: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Request {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// What the server answers.
pub enum Reply {
    /// A complete response.
    Fixed {
        status: u16,
        headers: Vec<(String, String)>,
        body: Vec<u8>,
    },
    /// Bytes of `fill` until the client stops reading (or 1 GiB).
    Endless { content_type: String, fill: u8 },
    /// Accept and never answer.
    Silent,
}

impl Reply {
    pub fn ok(content_type: &str, body: impl Into<Vec<u8>>) -> Self {
        Reply::Fixed {
            status: 200,
            headers: vec![("Content-Type".into(), content_type.into())],
            body: body.into(),
        }
    }

    pub fn redirect(status: u16, location: &str) -> Self {
        Reply::Fixed {
            status,
            headers: vec![("Location".into(), location.into())],
            body: Vec::new(),
        }
    }
}

type Handler = dyn Fn(&Request) -> Reply + Send + Sync;

pub struct Server {
    pub addr: SocketAddr,
    requests: Arc<Mutex<Vec<Request>>>,
    task: JoinHandle<()>,
}

impl Server {
    pub async fn start(handler: impl Fn(&Request) -> Reply + Send + Sync + 'static) -> Self {
        Self::start_at("127.0.0.1:0", handler).await
    }

    /// A server listening at `addr` (a loopback address, port 0 for any).
    pub async fn start_at(
        addr: &str,
        handler: impl Fn(&Request) -> Reply + Send + Sync + 'static,
    ) -> Self {
        let listener = TcpListener::bind(addr).await.unwrap();
        let addr = listener.local_addr().unwrap();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let handler: Arc<Handler> = Arc::new(handler);
        let seen = Arc::clone(&requests);
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let handler = Arc::clone(&handler);
                let seen = Arc::clone(&seen);
                tokio::spawn(async move {
                    let _ = serve(stream, &*handler, &seen).await;
                });
            }
        });
        Server {
            addr,
            requests,
            task,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.addr, path)
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    pub fn requests(&self) -> Vec<Request> {
        self.requests.lock().unwrap().clone()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn serve(
    mut stream: TcpStream,
    handler: &Handler,
    seen: &Mutex<Vec<Request>>,
) -> std::io::Result<()> {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Ok(());
        }
        buffer.extend_from_slice(&chunk[..n]);
        if let Some(i) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
    };
    let head = String::from_utf8_lossy(&buffer[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut start = lines.next().unwrap_or_default().split(' ');
    let method = start.next().unwrap_or_default().to_string();
    let target = start.next().unwrap_or_default().to_string();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_string(), v.trim().to_string()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = buffer[head_end..].to_vec();
    while body.len() < length {
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    let request = Request {
        method,
        target,
        headers,
        body,
    };
    seen.lock().unwrap().push(request.clone());
    match handler(&request) {
        Reply::Fixed {
            status,
            headers,
            body,
        } => {
            let mut out = format!(
                "HTTP/1.1 {status} X\r\nContent-Length: {}\r\nConnection: close\r\n",
                body.len()
            );
            for (name, value) in headers {
                out.push_str(&format!("{name}: {value}\r\n"));
            }
            out.push_str("\r\n");
            stream.write_all(out.as_bytes()).await?;
            stream.write_all(&body).await?;
        }
        Reply::Endless { content_type, fill } => {
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nConnection: close\r\n\r\n"
            );
            stream.write_all(head.as_bytes()).await?;
            let block = vec![fill; 64 * 1024];
            for _ in 0..(1 << 14) {
                stream.write_all(&block).await?;
            }
        }
        Reply::Silent => {
            tokio::time::sleep(std::time::Duration::from_secs(3600)).await;
        }
    }
    stream.shutdown().await
}

/// Runs the test named `test` in a child process of this test binary, so
/// that an abort (a stack overflow) fails the test instead of killing the
/// whole binary, and a hang is killed at a deadline. Returns `true` in the
/// parent once the child passed (the caller then returns), `false` in the
/// child (the caller then runs the test's body).
pub fn isolated(test: &str) -> bool {
    const CHILD: &str = "TOOLSMITH_HOSTILE_CHILD";
    const DEADLINE: std::time::Duration = std::time::Duration::from_secs(240);
    if std::env::var_os(CHILD).is_some() {
        return false;
    }
    let log = tempfile::NamedTempFile::new().unwrap();
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([test, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        // The default thread stack, as a host's threads have it.
        .env_remove("RUST_MIN_STACK")
        .stdout(log.reopen().unwrap())
        .stderr(log.reopen().unwrap())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if started.elapsed() > DEADLINE {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let output = std::fs::read_to_string(log.path()).unwrap_or_default();
    println!("{output}");
    match status {
        None => panic!("`{test}` did not finish within {DEADLINE:?}:\n{output}"),
        Some(status) => assert!(
            status.success() && output.contains("1 passed"),
            "`{test}` failed in its child process ({status}):\n{output}"
        ),
    }
    true
}

//! MCP over raw HTTP/1.1, for the tests that look at the wire: a POST, a
//! session opened by hand, and a session's own event stream.

#![allow(dead_code)] // Each test file uses its own part of this.

use std::io::{Read, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::{Value, json};

/// One raw HTTP/1.1 POST; returns the status and the body.
pub fn post(url: &str, headers: &[(&str, &str)], body: &Value) -> (u16, String) {
    let rest = url.strip_prefix("http://").unwrap();
    let (authority, path) = rest.split_at(rest.find('/').unwrap());
    let mut stream = std::net::TcpStream::connect(authority).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let body = body.to_string();
    let mut request = format!(
        "POST {path} HTTP/1.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        request.push_str(&format!("Host: {authority}\r\n"));
    }
    for (k, v) in headers {
        request.push_str(&format!("{k}: {v}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(&body);
    stream.write_all(request.as_bytes()).unwrap();
    let mut response = String::new();
    let _ = stream.read_to_string(&mut response);
    let status = response
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, response)
}

pub fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}}})
}

/// A session over raw HTTP: its id, after `initialize` and `initialized`.
pub fn open_session(url: &str) -> String {
    let (status, response) = post(url, &[], &initialize());
    assert_eq!(status, 200, "{response}");
    let id = response
        .lines()
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("mcp-session-id")
                .then(|| value.trim().to_owned())
        })
        .unwrap_or_else(|| panic!("no session id: {response}"));
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let (status, response) = post(url, &[("Mcp-Session-Id", &id)], &initialized);
    assert!((200..300).contains(&status), "{response}");
    id
}

/// A session's own event stream (its GET), read on a thread of its own.
pub struct Listener {
    stop: Arc<AtomicBool>,
    reader: JoinHandle<Vec<u8>>,
}

impl Listener {
    /// Stop once the stream has been quiet for a moment, and return all
    /// that came. What the server sent before this is called is in.
    pub fn finish(self) -> String {
        self.stop.store(true, Ordering::SeqCst);
        String::from_utf8_lossy(&self.reader.join().unwrap()).into_owned()
    }
}

/// Open a session's event stream; returns once the server has answered,
/// so that what it sends the session from then on is heard.
pub fn listen(url: &str, session: &str) -> Listener {
    let rest = url.strip_prefix("http://").unwrap();
    let (authority, path) = rest.split_at(rest.find('/').unwrap());
    let request = format!(
        "GET {path} HTTP/1.1\r\nHost: {authority}\r\nAccept: text/event-stream\r\nMcp-Session-Id: {session}\r\nConnection: close\r\n\r\n"
    );
    stream_of(authority, request.as_bytes(), "")
}

/// Open a `subscriptions/listen` stream of protocol 2026-07-28 (no
/// session) asking for `notifications`; returns once the server has
/// acknowledged it, so that what it sends the stream from then on is heard.
pub fn listen_2026(url: &str, notifications: Value) -> Listener {
    let rest = url.strip_prefix("http://").unwrap();
    let (authority, path) = rest.split_at(rest.find('/').unwrap());
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen", "params": {
        "notifications": notifications,
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}
        }
    }})
    .to_string();
    let request = format!(
        "POST {path} HTTP/1.1\r\nHost: {authority}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: subscriptions/listen\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream_of(
        authority,
        request.as_bytes(),
        "notifications/subscriptions/acknowledged",
    )
}

/// Send `request` and read its answer on a thread of its own, once what
/// came holds `until` (and at least one read).
fn stream_of(authority: &str, request: &[u8], until: &str) -> Listener {
    let mut stream = std::net::TcpStream::connect(authority).unwrap();
    stream.write_all(request).unwrap();
    let mut heard = Vec::new();
    let mut chunk = [0u8; 4096];
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    loop {
        let n = stream.read(&mut chunk).expect("the event stream opens");
        heard.extend_from_slice(&chunk[..n]);
        if n == 0 || String::from_utf8_lossy(&heard).contains(until) {
            break;
        }
    }
    let stop = Arc::new(AtomicBool::new(false));
    let stopping = Arc::clone(&stop);
    let reader = std::thread::spawn(move || {
        stream
            .set_read_timeout(Some(Duration::from_millis(200)))
            .unwrap();
        let give_up = std::time::Instant::now() + Duration::from_secs(60);
        while std::time::Instant::now() < give_up {
            match stream.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => heard.extend_from_slice(&chunk[..n]),
                // Quiet for a moment: done, if the test is.
                Err(_) if stopping.load(Ordering::SeqCst) => break,
                Err(_) => {}
            }
        }
        heard
    });
    Listener { stop, reader }
}

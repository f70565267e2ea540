//! What the browser tests share: a real HTTP server on loopback serving the
//! test pages, a second one the allow list leaves out, and the check that
//! Chromium is installed.

#![allow(dead_code)] // each test file uses part of it

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Fails with a message that says how to fix it when there is no Chromium.
pub fn require_chromium() {
    let found = std::env::var_os("PATH").is_some_and(|paths| {
        std::env::split_paths(&paths).any(|dir| dir.join("chromium").is_file())
    });
    assert!(
        found,
        "chromium not installed: run scripts/install_chromium.sh (scripts/test.sh does)"
    );
}

/// The test pages, served on 127.0.0.1 at a port the allow list names.
pub struct Site {
    /// `127.0.0.1:PORT` of the allowed server.
    pub allowed: String,
    /// `127.0.0.1:PORT` of the server no page may reach.
    pub forbidden: String,
    /// How many connections the forbidden server has accepted.
    pub forbidden_hits: Arc<AtomicUsize>,
    /// `127.0.0.1:PORT` of a UDP socket no page may send to (STUN/TURN).
    pub forbidden_udp: String,
    /// How many datagrams that socket has received.
    pub forbidden_datagrams: Arc<AtomicUsize>,
    /// The file name the download page offers, unique to this run.
    pub download_name: String,
}

impl Site {
    /// Starts both servers on the current runtime.
    pub async fn start() -> Self {
        let forbidden_listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let forbidden = forbidden_listener.local_addr().unwrap().to_string();
        let forbidden_hits = Arc::new(AtomicUsize::new(0));
        let hits = Arc::clone(&forbidden_hits);
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = forbidden_listener.accept().await {
                hits.fetch_add(1, Ordering::SeqCst);
                let _ = read_request(&mut stream).await;
                let _ = respond(&mut stream, "200 OK", &[], "<p>internal secret</p>").await;
            }
        });

        let udp = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let forbidden_udp = udp.local_addr().unwrap().to_string();
        let forbidden_datagrams = Arc::new(AtomicUsize::new(0));
        let datagrams = Arc::clone(&forbidden_datagrams);
        tokio::spawn(async move {
            let mut buf = [0u8; 2048];
            while udp.recv_from(&mut buf).await.is_ok() {
                datagrams.fetch_add(1, Ordering::SeqCst);
            }
        });
        let download_name = format!("browser-download-{}.bin", std::process::id());

        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let allowed = listener.local_addr().unwrap().to_string();
        let targets = Targets {
            forbidden: forbidden.clone(),
            udp: forbidden_udp.clone(),
            download: download_name.clone(),
        };
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(serve(stream, targets.clone()));
            }
        });
        Self {
            allowed,
            forbidden,
            forbidden_hits,
            forbidden_udp,
            forbidden_datagrams,
            download_name,
        }
    }

    /// A URL on the allowed server.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.allowed)
    }

    /// Connections the forbidden server has seen: must stay 0.
    pub fn forbidden_hits(&self) -> usize {
        self.forbidden_hits.load(Ordering::SeqCst)
    }

    /// Datagrams the forbidden UDP socket has seen: must stay 0.
    pub fn forbidden_datagrams(&self) -> usize {
        self.forbidden_datagrams.load(Ordering::SeqCst)
    }
}

/// Where the hostile pages try to go.
#[derive(Clone)]
struct Targets {
    forbidden: String,
    udp: String,
    download: String,
}

async fn serve(mut stream: TcpStream, targets: Targets) {
    let forbidden = targets.forbidden;
    let Some(target) = read_request(&mut stream).await else {
        return;
    };
    let (path, query) = target.split_once('?').unwrap_or((&target, ""));
    let page = |title: &str, body: &str| {
        format!(
            "<!doctype html><html><head><title>{title}</title></head><body>{body}</body></html>"
        )
    };
    let html = match path {
        "/" => page(
            "Home",
            "<h1>Welcome</h1><p>This is the <a href=\"/button\">button page</a> link.</p>\
             <script>document.write('<p>' + 'written by script' + '</p>')</script>",
        ),
        "/button" => page(
            "Button",
            "<p id=\"msg\">before the click</p>\
             <button id=\"go\" onclick=\"document.getElementById('msg').textContent='after the click'\">Go</button>",
        ),
        "/form" => page(
            "Form",
            "<form action=\"/echo\" method=\"get\"><input id=\"q\" name=\"q\">\
             <button id=\"send\" type=\"submit\">Send</button></form>",
        ),
        "/echo" => {
            let typed = query
                .strip_prefix("q=")
                .unwrap_or("")
                .replace('+', " ")
                .replace('<', "&lt;");
            page("Echo", &format!("<p id=\"echo\">You typed: {typed}</p>"))
        }
        "/delayed" => page(
            "Delayed",
            "<script>setTimeout(() => { const p = document.createElement('p'); \
             p.id = 'late'; p.textContent = 'arrived late'; document.body.appendChild(p); }, 300)</script>",
        ),
        "/long" => page("Long", &format!("<p>{}</p>", "lorem ipsum ".repeat(5_000))),
        "/redirect-out" => {
            let location = format!("http://{forbidden}/secret");
            let _ = respond(&mut stream, "302 Found", &[("Location", &location)], "").await;
            return;
        }
        "/link-out" => page(
            "Link out",
            &format!("<a id=\"out\" href=\"http://{forbidden}/secret\">internal</a>"),
        ),
        "/iframe-out" => page(
            "Frame out",
            &format!("<p>outer page</p><iframe src=\"http://{forbidden}/secret\"></iframe>"),
        ),
        // Grows by 256 MB a turn, touching every byte, until it is stopped.
        "/hog-memory" => page(
            "Memory hog",
            "<script>const held = []; function grow() { for (let i = 0; i < 8; i++) { \
             const b = new Uint8Array(32 << 20); b.fill(7); held.push(b); } \
             document.title = 'held ' + held.length; setTimeout(grow, 0); } grow();</script>",
        ),
        // Starts workers (each a thread of the renderer) until it is stopped.
        "/hog-threads" => page(
            "Thread hog",
            "<script>const url = URL.createObjectURL(new Blob(['setInterval(() => {}, 1000)'])); \
             const workers = []; function more() { for (let i = 0; i < 64; i++) workers.push(new Worker(url)); \
             document.title = 'workers ' + workers.length; if (workers.length < 20000) setTimeout(more, 0); } more();</script>",
        ),
        // Each opens another window: by a link, by a click's script, and
        // by a script as it loads.
        "/popup-link" => page(
            "Popup link",
            "<a id=\"pop\" href=\"/button\" target=\"_blank\">elsewhere</a>",
        ),
        "/popup-click" => page(
            "Popup click",
            "<button id=\"pop\" onclick=\"window.open('/button', '_blank')\">Open</button>",
        ),
        "/popup-on-load" => page(
            "Popup on load",
            "<p>opens a window</p><script>window.open('/button', '_blank')</script>",
        ),
        "/busy" => page(
            "Busy",
            "<p>a page whose script never yields</p>\
             <button id=\"spin\" onclick=\"for (;;) {}\">Spin</button>",
        ),
        "/websocket-out" => page(
            "WebSocket out",
            &format!(
                "<script>const ws = new WebSocket('ws://{forbidden}/'); \
                 ws.onclose = () => {{ const p = document.createElement('p'); \
                 p.id = 'closed'; p.textContent = 'socket closed'; document.body.appendChild(p); }};</script>"
            ),
        ),
        "/webrtc-out" => page(
            "WebRTC out",
            &format!(
                "<p id=\"state\">starting</p><script>\
                 const say = (t) => {{ const p = document.createElement('p'); p.className = 'log'; p.textContent = t; document.body.appendChild(p); }};\
                 const done = () => {{ const p = document.createElement('p'); p.id = 'done'; p.textContent = 'gathering over'; document.body.appendChild(p); }};\
                 try {{\
                   const pc = new RTCPeerConnection({{iceServers: [\
                     {{urls: 'stun:{udp}'}},\
                     {{urls: 'turn:{udp}?transport=udp', username: 'u', credential: 'c'}}]}});\
                   pc.createDataChannel('x');\
                   pc.onicecandidate = (e) => say('candidate ' + (e.candidate ? e.candidate.candidate : 'end'));\
                   pc.createOffer().then((o) => pc.setLocalDescription(o)).catch((e) => say('offer failed ' + e));\
                   setTimeout(done, 3000);\
                 }} catch (e) {{ say('no WebRTC: ' + e); done(); }}\
                 </script>",
                udp = targets.udp
            ),
        ),
        "/download" => {
            let disposition = format!("attachment; filename=\"{}\"", targets.download);
            let _ = respond(
                &mut stream,
                "200 OK",
                &[
                    ("Content-Type", "application/octet-stream"),
                    ("Content-Disposition", &disposition),
                ],
                "downloaded bytes",
            )
            .await;
            return;
        }
        "/download-link" => page(
            "Download",
            &format!(
                "<a id=\"dl\" href=\"/download\" download=\"{}\">get it</a>",
                targets.download
            ),
        ),
        "/local-schemes" => {
            // One frame per scheme, chosen by the query: `?file`, `?chrome`,
            // `?view-source`; a script also tries to fetch a local file.
            let frame = match query {
                "chrome" => "chrome://version",
                "view-source" => "view-source:file:///etc/hostname",
                _ => "file:///etc/hostname",
            };
            page(
                "Local schemes",
                &format!(
                    "<p>outer page</p><iframe src=\"{frame}\"></iframe>\
                     <script>\
                     const say = (t) => {{ const p = document.createElement('p'); p.textContent = t; document.body.appendChild(p); }};\
                     fetch('file:///etc/hostname').then((r) => r.text()).then((t) => say('READ ' + t), (e) => say('fetch refused'));\
                     setTimeout(() => {{ const p = document.createElement('p'); p.id = 'done'; p.textContent = 'tried'; document.body.appendChild(p); }}, 1000);\
                     </script>"
                ),
            )
        }
        "/hang" => {
            // Accept and never answer: the browser waits forever for it.
            std::future::pending::<()>().await;
            return;
        }
        _ => {
            let _ = respond(&mut stream, "404 Not Found", &[], "not found").await;
            return;
        }
    };
    let _ = respond(&mut stream, "200 OK", &[], &html).await;
}

/// Reads one request head and returns its target (`/path?query`).
async fn read_request(stream: &mut TcpStream) -> Option<String> {
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = stream.read(&mut buf).await.ok()?;
        if n == 0 || head.len() > 64 * 1024 {
            return None;
        }
        head.extend_from_slice(&buf[..n]);
    }
    let head = String::from_utf8_lossy(&head);
    head.split_whitespace().nth(1).map(str::to_owned)
}

async fn respond(
    stream: &mut TcpStream,
    status: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> std::io::Result<()> {
    let mut response = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (name, value) in headers {
        response.push_str(&format!("{name}: {value}\r\n"));
    }
    response.push_str("\r\n");
    response.push_str(body);
    stream.write_all(response.as_bytes()).await?;
    stream.shutdown().await
}

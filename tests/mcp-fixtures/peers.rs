//! Finding the MCP peers `scripts/mcp_peers.sh` installs, and starting the
//! fixture server, for the MCP integration tests.

#![allow(dead_code)] // Each test file uses its own part of this.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// The workspace's root (this crate is `tests/mcp-fixtures`).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .unwrap()
        .to_path_buf()
}

/// The folder the peers are installed in; fails the test with what to run when they are not.
pub fn peers() -> PathBuf {
    let dir = root().join(".cache/mcp-peers");
    assert!(
        dir.join(".installed").exists(),
        "the MCP peers (Node 22, the conformance suite, the reference servers, the Inspector, \
         Python `mcp`) are not installed in {}: run scripts/mcp_peers.sh",
        dir.display()
    );
    dir
}

/// Node 22 or newer.
pub fn node() -> PathBuf {
    peers().join("bin/node")
}

/// The entry script of an installed npm package.
pub fn npm_script(package: &str, script: &str) -> PathBuf {
    let path = peers().join("npm/node_modules").join(package).join(script);
    assert!(
        path.exists(),
        "{} is missing: run scripts/mcp_peers.sh",
        path.display()
    );
    path
}

/// The virtualenv's Python, with the `mcp` package.
pub fn python() -> PathBuf {
    peers().join("venv/bin/python")
}

/// Whether FastMCP is in the virtualenv. In CI (`CI` set), where
/// `scripts/mcp_peers.sh` installs it, a missing FastMCP fails the test;
/// elsewhere the test is skipped, saying what to run.
pub fn fastmcp_installed() -> bool {
    let python = root().join(".cache/mcp-peers/venv/bin/python");
    module_installed(&python, "fastmcp", "FastMCP")
}

/// The second virtualenv's Python: FastMCP with its tasks extension.
pub fn python_tasks() -> PathBuf {
    peers().join("venv-tasks/bin/python")
}

/// Whether FastMCP's tasks extension is in the second virtualenv; missing,
/// as [`fastmcp_installed`].
pub fn fastmcp_tasks_installed() -> bool {
    let python = root().join(".cache/mcp-peers/venv-tasks/bin/python");
    module_installed(&python, "fastmcp_tasks", "fastmcp-tasks")
}

/// Whether `python` imports `module` (`what` to people): fails in CI when
/// not, and says what to run elsewhere.
fn module_installed(python: &Path, module: &str, what: &str) -> bool {
    let found = Command::new(python)
        .args(["-c", &format!("import {module}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    if !found {
        assert!(
            std::env::var_os("CI").is_none(),
            "{what} is not installed for {}: scripts/mcp_peers.sh installs it",
            python.display()
        );
        eprintln!("skipped: {what} is not installed; run scripts/mcp_peers.sh");
    }
    found
}

/// The fixture server binary.
pub fn fixture_server() -> &'static str {
    env!("CARGO_BIN_EXE_mcp-fixture-server")
}

/// A free port on loopback (bound and released: the caller binds it at once).
///
/// Taken below the kernel's range of ephemeral ports, so no other process
/// (another test binary running at the same time, a client's outgoing
/// connection) is handed it by the kernel between the release here and the
/// child's bind. Never the same one twice in this process, so tests running
/// at once never get the same port.
pub fn free_port() -> u16 {
    static GIVEN: std::sync::Mutex<Vec<u16>> = std::sync::Mutex::new(Vec::new());
    let mut given = GIVEN.lock().unwrap_or_else(|e| e.into_inner());
    let free = |port: u16| std::net::TcpListener::bind(("127.0.0.1", port)).is_ok();
    if let Some(ephemeral) = ephemeral_low() {
        // Start somewhere different in each process: two test binaries
        // picking at the same moment rarely try the same ports.
        let below = (ephemeral.saturating_sub(PORTS_FROM)).max(1);
        let start = (std::process::id() as u64 * 7919) % below as u64;
        for step in 0..below as u64 {
            let port = PORTS_FROM + ((start + step) % below as u64) as u16;
            if !given.contains(&port) && free(port) {
                given.push(port);
                return port;
            }
        }
    }
    loop {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        if !given.contains(&port) {
            given.push(port);
            return port;
        }
    }
}

/// The lowest port `free_port` hands out: above the well-known and the
/// commonly registered ones.
const PORTS_FROM: u16 = 20_000;

/// The first port of the kernel's ephemeral range, if it leaves room below
/// it for [`free_port`].
fn ephemeral_low() -> Option<u16> {
    let range = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range").ok()?;
    let low: u16 = range.split_whitespace().next()?.parse().ok()?;
    (low > PORTS_FROM + 1000).then_some(low)
}

/// A child process killed when dropped.
pub struct Running {
    pub child: Child,
    /// The URL it serves, for HTTP servers.
    pub url: String,
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The fixture server over HTTP on a free port; returns once it listens.
pub fn fixture_http(extra: &[&str]) -> Running {
    let mut child = Command::new(fixture_server())
        .args(["--http", "0"])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the fixture server starts");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("unexpected first line from the fixture server: {line:?}"))
        .to_owned();
    Running { child, url }
}

/// Start `node script args` with `PORT` set, and wait until `port` accepts connections.
pub fn node_http(script: &Path, args: &[&str], port: u16, path: &str) -> Running {
    let mut command = Command::new(node());
    command.arg(script).args(args).env("PORT", port.to_string());
    listening(command, port, path)
}

/// Start `python script args` (the virtualenv's), and wait until `port`
/// accepts connections.
pub fn python_http(script: &Path, args: &[&str], port: u16, path: &str) -> Running {
    let mut command = Command::new(python());
    command.arg(script).args(args);
    listening(command, port, path)
}

/// As [`python_http`], with the second virtualenv's Python.
pub fn python_tasks_http(script: &Path, args: &[&str], port: u16, path: &str) -> Running {
    let mut command = Command::new(python_tasks());
    command.arg(script).args(args);
    listening(command, port, path)
}

/// Start `command`, its output discarded, and wait until it listens on
/// `port` (at most 30 s).
fn listening(mut command: Command, port: u16, path: &str) -> Running {
    let child = command
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("{command:?} does not start: {e}"));
    let running = Running {
        child,
        url: format!("http://127.0.0.1:{port}{path}"),
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            std::time::Instant::now() < deadline,
            "{command:?} did not listen on {port}"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    running
}

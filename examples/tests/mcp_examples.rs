//! The MCP examples as programs: the client example mounts the server
//! example (serving the built-ins for a workspace) and calls a tool.

mod common;

use std::process::Command;

use common::example_binary;

#[test]
fn the_client_example_mounts_the_server_example_and_calls_it() {
    let dir = std::env::temp_dir().join(format!("mcp-example-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(dir.join("notes.md"), "# notes\n").unwrap();
    let config = dir.join("claude_desktop_config.json");
    let server = example_binary("mcp_server");
    std::fs::write(
        &config,
        serde_json::json!({"mcpServers": {"files": {"command": server, "args": [dir]}}})
            .to_string(),
    )
    .unwrap();
    let output = Command::new(example_binary("mcp_client"))
        .args([config.to_str().unwrap(), "mcp_files_workspace_info", "{}"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("files: "), "{stdout}");
    assert!(
        stdout.contains("- mcp_files_workspace_info: Where this server works"),
        "{stdout}"
    );
    assert!(
        stdout.contains("notes.md") && stdout.contains("src/"),
        "{stdout}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_server_example_serves_statelessly_over_http() {
    let dir = std::env::temp_dir().join(format!("mcp-example-http-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("readme.txt"), "hi\n").unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut server = Command::new(example_binary("mcp_server"))
        .arg(&dir)
        .args([
            "--http",
            &port.to_string(),
            "--stateless",
            "--allow-host",
            "mcp.example",
        ])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            std::time::Instant::now() < deadline,
            "the server never listened"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let config = dir.join("mcp.json");
    let url = format!("http://127.0.0.1:{port}/mcp");
    std::fs::write(
        &config,
        serde_json::json!({"mcpServers": {"remote": {"url": url}}}).to_string(),
    )
    .unwrap();
    let output = Command::new(example_binary("mcp_client"))
        .args([
            config.to_str().unwrap(),
            "mcp_remote_read_file",
            r#"{"path": "readme.txt"}"#,
        ])
        .output()
        .unwrap();
    // The host name the balancer forwards is accepted; others are not.
    let allowed = status_for_host(port, "mcp.example");
    let refused = status_for_host(port, "rebound.example");
    let _ = server.kill();
    let _ = server.wait();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}");
    // A built-in reads the file through the server, inside the workspace.
    assert!(stdout.contains("\n1|hi"), "{stdout}");
    assert_eq!((allowed, refused), (200, 403));
    let _ = std::fs::remove_dir_all(&dir);
}

/// The status of an `initialize` POST to the example server under `host`.
fn status_for_host(port: u16, host: &str) -> u16 {
    use std::io::{Read, Write};
    let body = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}})
    .to_string();
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut response = String::new();
    let _ = stream.read_to_string(&mut response);
    response
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

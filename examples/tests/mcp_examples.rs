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

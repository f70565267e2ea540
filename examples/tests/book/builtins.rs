//! Chapter: the built-in tools and their guards.

use serde_json::json;

#[tokio::test]
async fn built_ins_with_their_guards() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.md"), "tea\ncoffee\n").unwrap();
    // ANCHOR: setup
    use toolsmith::{ToolContext, ToolFilter, ToolRegistry};
    use toolsmith_builtins::Workspace;
    use toolsmith_builtins::shell::ShellPolicy;

    // Link the built-ins: their tools register themselves like yours do.
    toolsmith::link_tools!(toolsmith_builtins);

    // The file tools, and `exec`, which is high-risk: the filter must name it.
    let registry = ToolRegistry::from_inventory(
        &ToolFilter::default()
            .module_prefix("toolsmith_builtins")
            .names(["read_file", "write_file", "edit_file", "grep", "exec"]),
    )
    .unwrap();

    // Configuration is typed state in the context, never a global.
    let ctx = ToolContext::new()
        .with_state(Workspace::new(dir.path()).unwrap())
        .with_state(ShellPolicy::new());
    // ANCHOR_END: setup

    // ANCHOR: calls
    let out = registry
        .call("read_file", json!({"path": "notes.md"}), &ctx)
        .await;
    assert_eq!(out.content.lines().next(), Some("1|tea"));

    // Paths that lead out of the workspace are refused, whatever the spelling.
    for path in ["../outside.txt", "/etc/passwd", "~/.ssh/id_rsa"] {
        let out = registry
            .call("read_file", json!({"path": path}), &ctx)
            .await;
        assert!(out.is_error, "{path}: {}", out.content);
    }

    // The shell runs in the workspace, behind its filter.
    let out = registry.call("exec", json!({"command": "ls"}), &ctx).await;
    assert!(out.content.contains("notes.md"), "{}", out.content);
    let out = registry
        .call("exec", json!({"command": "rm -rf /"}), &ctx)
        .await;
    assert!(out.is_error, "{}", out.content);
    // ANCHOR_END: calls

    // Without its policy, exec refuses to run at all.
    let bare = ToolContext::new().with_state(Workspace::new(dir.path()).unwrap());
    let out = registry.call("exec", json!({"command": "ls"}), &bare).await;
    assert!(out.is_error, "{}", out.content);
}

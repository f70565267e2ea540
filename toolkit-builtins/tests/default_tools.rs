//! `default_tools`: one call gives a registry of the default tools and a
//! context with everything they need, for one workspace.

#![cfg(all(feature = "fs", feature = "shell", feature = "web", unix))]

use serde_json::json;
use toolsmith_builtins::shell::ShellPolicy;
use toolsmith_builtins::{DefaultTools, default_tools};

#[tokio::test]
async fn the_default_tools_work_in_their_workspace_and_exec_only_when_enabled() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("plan.md"), "one\ntwo\n").unwrap();

    let (registry, ctx) = default_tools(dir.path(), DefaultTools::default()).unwrap();
    let mut names = registry.names();
    names.sort();
    assert_eq!(
        names,
        [
            "edit_file",
            "glob",
            "grep",
            "list_dir",
            "notebook_edit",
            "read_file",
            "web_fetch",
            "write_file"
        ]
    );
    // The session's file state: an edit before a read is refused...
    let edit = json!({"path": "plan.md", "old_text": "two", "new_text": "three"});
    let out = registry.call("edit_file", edit.clone(), &ctx).await;
    assert!(out.is_error, "{}", out.content);
    assert!(
        out.content.to_lowercase().contains("read"),
        "{}",
        out.content
    );
    // ...and goes through once the file was read.
    let out = registry
        .call("read_file", json!({"path": "plan.md"}), &ctx)
        .await;
    assert!(!out.is_error, "{}", out.content);
    let out = registry.call("edit_file", edit, &ctx).await;
    assert!(!out.is_error, "{}", out.content);
    // Paths stay in the workspace.
    let out = registry
        .call("read_file", json!({"path": "../outside"}), &ctx)
        .await;
    assert!(out.is_error);
    // The web guard is on: a loopback address is refused before connecting.
    let out = registry
        .call("web_fetch", json!({"url": "http://127.0.0.1:9/"}), &ctx)
        .await;
    assert!(out.is_error, "{}", out.content);

    // exec, when the host enables it, runs in the workspace.
    let config = DefaultTools::default().with_shell(ShellPolicy::new());
    let (registry, ctx) = default_tools(dir.path(), config).unwrap();
    let out = registry.call("exec", json!({"command": "ls"}), &ctx).await;
    assert!(out.content.contains("plan.md"), "{}", out.content);

    // A workspace that does not exist is an error, not a panic.
    let missing = dir.path().join("missing");
    assert!(default_tools(missing, DefaultTools::default()).is_err());
}

//! `save_memory` writes real files in a temporary workspace.

#![cfg(feature = "agent")]

use serde_json::json;
use toolsmith::{ToolContext, ToolFilter, ToolRegistry};
use toolsmith_builtins::agent::MemoryFile;

fn registry() -> ToolRegistry {
    ToolRegistry::from_inventory(&ToolFilter::default().names(["save_memory"])).unwrap()
}

#[tokio::test]
async fn facts_go_under_the_heading_once() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("CONTEXT.md"), "# Project\n\nRules.\n").unwrap();
    let ctx = ToolContext::new().with_workspace(dir.path());
    let registry = registry();

    let out = registry
        .call(
            "save_memory",
            json!({"fact": "The user prefers tabs."}),
            &ctx,
        )
        .await;
    assert_eq!(
        out.content,
        "Saved to CONTEXT.md under 'Agent Memories': The user prefers tabs."
    );
    let out = registry
        .call(
            "save_memory",
            json!({"fact": "Deploys go\nthrough CI"}),
            &ctx,
        )
        .await;
    assert!(!out.is_error, "{}", out.content);
    let before = std::fs::read_to_string(dir.path().join("CONTEXT.md")).unwrap();
    assert_eq!(
        before,
        "# Project\n\nRules.\n\n## Agent Memories\n\n- The user prefers tabs.\n- Deploys go through CI\n"
    );

    let out = registry
        .call(
            "save_memory",
            json!({"fact": "the user  prefers TABS"}),
            &ctx,
        )
        .await;
    assert!(!out.is_error);
    assert!(
        out.content.starts_with("Already remembered"),
        "{}",
        out.content
    );
    let after = std::fs::read_to_string(dir.path().join("CONTEXT.md")).unwrap();
    assert_eq!(before, after);
}

#[tokio::test]
async fn the_host_chooses_the_file_and_heading() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new()
        .with_workspace(dir.path())
        .with_state(MemoryFile::new("memory/MEMORY.md", "Facts"));
    let out = registry()
        .call("save_memory", json!({"fact": "Berlin office"}), &ctx)
        .await;
    assert!(!out.is_error, "{}", out.content);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("memory/MEMORY.md")).unwrap(),
        "## Facts\n\n- Berlin office\n"
    );
    // No temporary file is left behind.
    let names: Vec<_> = std::fs::read_dir(dir.path().join("memory"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["MEMORY.md"]);
}

#[tokio::test]
async fn the_memory_file_stays_inside_the_workspace() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().join("ws");
    std::fs::create_dir(&workspace).unwrap();
    let ctx = ToolContext::new()
        .with_workspace(&workspace)
        .with_state(MemoryFile::new("../outside.md", "Facts"));
    let out = registry()
        .call("save_memory", json!({"fact": "x"}), &ctx)
        .await;
    assert!(out.is_error);
    assert!(
        out.content.contains("outside the workspace"),
        "{}",
        out.content
    );
    assert!(!dir.path().join("outside.md").exists());
}

#[tokio::test]
async fn blank_facts_and_missing_workspaces_are_errors() {
    let registry = registry();
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new().with_workspace(dir.path());
    let out = registry
        .call("save_memory", json!({"fact": " \n "}), &ctx)
        .await;
    assert!(out.is_error);
    assert!(out.content.contains("blank"), "{}", out.content);
    let out = registry
        .call("save_memory", json!({"fact": ""}), &ctx)
        .await;
    assert!(out.is_error);
    let out = registry
        .call("save_memory", json!({"fact": "x"}), &ToolContext::new())
        .await;
    assert!(out.is_error);
    assert!(out.content.contains("no workspace"), "{}", out.content);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn facts_saved_at_the_same_time_are_all_kept() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new().with_workspace(dir.path());
    let registry = std::sync::Arc::new(registry());
    let calls: Vec<_> = (0..16)
        .map(|i| {
            let registry = std::sync::Arc::clone(&registry);
            let ctx = ctx.clone();
            tokio::spawn(async move {
                registry
                    .call(
                        "save_memory",
                        json!({"fact": format!("fact number {i}")}),
                        &ctx,
                    )
                    .await
            })
        })
        .collect();
    for call in calls {
        assert!(!call.await.unwrap().is_error);
    }
    let text = std::fs::read_to_string(dir.path().join("CONTEXT.md")).unwrap();
    for i in 0..16 {
        assert!(
            text.contains(&format!("- fact number {i}\n")),
            "fact {i} was lost:\n{text}"
        );
    }
    assert_eq!(text.matches("## Agent Memories").count(), 1);
}

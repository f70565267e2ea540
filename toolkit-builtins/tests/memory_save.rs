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

/// How long one hostile call may take before it counts as a hang.
const DEADLINE: std::time::Duration = std::time::Duration::from_secs(30);

/// What the memory file (or its folder) is made into before a fact is saved.
enum Plant {
    Link(&'static str),
    LinkToOutside,
    Fifo,
    Socket,
    Device,
    HardLinkToOutside,
    Directory,
    Bytes(Vec<u8>),
}

/// The memory file replaced by what a command in the workspace can put
/// there: links out (absolute, relative, dangling, to /proc), a FIFO held
/// open by a writer, a socket, a device, a hard link to a file outside, a
/// directory, bytes that are not text, hostile Markdown; and its folder a
/// link out. Each call answers in time; nothing outside changes or appears;
/// what is saved is a regular file inside.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hostile_memory_file_is_refused_or_replaced_inside() {
    use std::os::unix::fs::symlink;
    let many_headings = "## Agent Memories\n".repeat(200_000);
    let cases: Vec<(&str, &str, Plant)> = vec![
        ("abs link", "CONTEXT.md", Plant::LinkToOutside),
        (
            "rel link",
            "CONTEXT.md",
            Plant::Link("../outside/secret.txt"),
        ),
        (
            "dangling link",
            "CONTEXT.md",
            Plant::Link("../outside/new.md"),
        ),
        ("environ", "CONTEXT.md", Plant::Link("/proc/self/environ")),
        ("loop", "CONTEXT.md", Plant::Link("CONTEXT.md")),
        ("fifo", "CONTEXT.md", Plant::Fifo),
        ("socket", "CONTEXT.md", Plant::Socket),
        ("device", "CONTEXT.md", Plant::Device),
        ("hard link", "CONTEXT.md", Plant::HardLinkToOutside),
        ("directory", "CONTEXT.md", Plant::Directory),
        ("folder link", "mem/MEMORY.md", Plant::Link("../outside")),
        (
            "not text",
            "CONTEXT.md",
            Plant::Bytes(vec![0xff, 0xfe, b'#', 0xc0]),
        ),
        (
            "one long line",
            "CONTEXT.md",
            Plant::Bytes(vec![b'#'; 4 << 20]),
        ),
        (
            "many headings",
            "CONTEXT.md",
            Plant::Bytes(many_headings.into_bytes()),
        ),
        (
            "odd line ends",
            "CONTEXT.md",
            Plant::Bytes(b"## Agent Memories\r\n- a\r- b\r\n\r\n## X\r".to_vec()),
        ),
    ];
    let facts = [
        "\u{202e}gnirts desrever".to_owned(),
        "İ".repeat(2000),
        "nul\u{0}byte and \u{feff}bom".to_owned(),
        "e\u{301}\u{301}\u{301}".to_owned(),
        "## Agent Memories".to_owned(),
    ];
    let (mut tried, mut refused, mut contained) = (0, 0, 0);
    for (name, file, plant) in cases {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        let outside = dir.path().join("outside");
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        let secret = outside.join("secret.txt");
        std::fs::write(&secret, "SECRET").unwrap();
        let at = ws.join(file);
        let mut _held = None;
        match &plant {
            Plant::Link(target) => {
                let link = if file.contains('/') {
                    ws.join("mem")
                } else {
                    at.clone()
                };
                symlink(target, link).unwrap();
            }
            Plant::LinkToOutside => symlink(&secret, &at).unwrap(),
            Plant::Fifo => {
                rustix::fs::mknodat(
                    rustix::fs::CWD,
                    &at,
                    rustix::fs::FileType::Fifo,
                    rustix::fs::Mode::from_raw_mode(0o600),
                    0,
                )
                .unwrap();
                let writer = std::fs::OpenOptions::new().read(true).write(true).open(&at);
                _held = Some(writer.unwrap());
            }
            Plant::Socket => {
                let listener = std::os::unix::net::UnixListener::bind(&at).unwrap();
                std::mem::forget(listener);
            }
            Plant::Device => {
                let made = rustix::fs::mknodat(
                    rustix::fs::CWD,
                    &at,
                    rustix::fs::FileType::CharacterDevice,
                    rustix::fs::Mode::from_raw_mode(0o600),
                    rustix::fs::makedev(1, 5),
                );
                if made.is_err() {
                    eprintln!("no device can be made here: case left out");
                    continue;
                }
            }
            Plant::HardLinkToOutside => {
                if std::fs::hard_link(&secret, &at).is_err() {
                    eprintln!("no hard link across these folders here: case left out");
                    continue;
                }
            }
            Plant::Directory => std::fs::create_dir(&at).unwrap(),
            Plant::Bytes(bytes) => std::fs::write(&at, bytes).unwrap(),
        }
        let ctx = ToolContext::new()
            .with_workspace(&ws)
            .with_state(MemoryFile::new(file, "Agent Memories"));
        let registry = registry();
        for fact in &facts {
            tried += 1;
            let call = registry.call("save_memory", json!({ "fact": fact }), &ctx);
            let out = tokio::time::timeout(DEADLINE, call)
                .await
                .unwrap_or_else(|_| panic!("{name}: no answer within {DEADLINE:?}"));
            assert!(
                !out.content.contains("internal error"),
                "{name}: {}",
                out.content
            );
            assert_eq!(
                std::fs::read_to_string(&secret).unwrap(),
                "SECRET",
                "{name}"
            );
            let mut names: Vec<_> = std::fs::read_dir(&outside)
                .unwrap()
                .map(|e| e.unwrap().file_name())
                .collect();
            names.sort();
            assert_eq!(names, ["secret.txt"], "{name}: a file appeared outside");
            if out.is_error {
                refused += 1;
            } else {
                let saved = std::fs::symlink_metadata(&at).unwrap();
                assert!(saved.is_file(), "{name}: {saved:?}");
                let text = std::fs::read_to_string(&at).unwrap();
                let wanted: String = fact.split_whitespace().collect::<Vec<_>>().join(" ");
                assert!(text.contains(&wanted), "{name}: {fact:?} missing");
                contained += 1;
            }
        }
    }
    eprintln!("memory file: tried {tried}, refused {refused}, contained {contained}, escaped 0");
    assert_eq!(tried, refused + contained);
}

//! Every file tool against paths a hostile or confused model might send:
//! each is refused with a message saying why, and nothing outside the
//! workspace is read or written.

mod fs_support;

use std::os::unix::fs::symlink;

use fs_support::{Env, SECRET};
use serde_json::{Value, json};
use toolsmith_builtins::sandbox::{Access, SandboxError, Workspace};

/// A workspace with symlinks leading out of it, and a harmless one inside.
fn hostile_env() -> Env {
    let env = Env::new();
    env.write("inside/ok.txt", "fine\n");
    symlink("../outside", env.ws.join("up_link")).unwrap();
    symlink(&env.outside, env.ws.join("abs_dir_link")).unwrap();
    symlink(env.secret_path(), env.ws.join("abs_file_link")).unwrap();
    symlink(
        "../../outside/secret.txt",
        env.ws.join("inside/rel_file_link"),
    )
    .unwrap();
    symlink("../outside/new.txt", env.ws.join("dangling_out")).unwrap();
    symlink("inside/ok.txt", env.ws.join("good_link")).unwrap();
    env
}

/// (path, words the refusal must contain).
fn hostile_paths(env: &Env) -> Vec<(String, &'static str)> {
    let secret = env.secret_path().display().to_string();
    vec![
        ("../outside/secret.txt".into(), "outside the workspace"),
        (
            "inside/../../outside/secret.txt".into(),
            "outside the workspace",
        ),
        (secret, "outside the workspace"),
        ("/etc/passwd".into(), "outside the workspace"),
        ("~/secret.txt".into(), "`~` is not expanded"),
        ("~".into(), "`~` is not expanded"),
        ("up_link/secret.txt".into(), "through a symlink"),
        ("abs_dir_link/secret.txt".into(), "through a symlink"),
        ("abs_file_link".into(), "through a symlink"),
        ("inside/rel_file_link".into(), "through a symlink"),
        ("ok\0.txt".into(), "NUL byte"),
        ("a/".repeat(2100), "longer than 4096 bytes"),
        (format!("{}.txt", "n".repeat(300)), "longer than 255 bytes"),
    ]
}

fn calls(path: &str) -> Vec<(&'static str, Value)> {
    vec![
        ("read_file", json!({"path": path})),
        ("write_file", json!({"path": path, "content": "pwned"})),
        (
            "edit_file",
            json!({"path": path, "old_text": SECRET, "new_text": "pwned"}),
        ),
        ("list_dir", json!({"path": path})),
        ("glob", json!({"pattern": "*", "path": path})),
        ("grep", json!({"pattern": "SECRET", "path": path})),
        (
            "notebook_edit",
            json!({"path": path, "cell_index": 0, "new_source": "pwned"}),
        ),
    ]
}

#[tokio::test]
async fn every_tool_refuses_every_hostile_path() {
    refuses_every_hostile_path(hostile_env()).await;
}

/// With a session's file state the sandbox still refuses first, for the
/// same reason: a path is never "not read yet" when it is outside.
#[tokio::test]
async fn every_tool_refuses_every_hostile_path_with_a_file_state() {
    let env = hostile_env().with_file_state(toolsmith_builtins::fs::FileState::new());
    refuses_every_hostile_path(env).await;
}

async fn refuses_every_hostile_path(env: Env) {
    for (path, reason) in hostile_paths(&env) {
        for (tool, args) in calls(&path) {
            let out = env.call(tool, args).await;
            assert!(
                out.is_error,
                "{tool}({path:?}) was allowed: {}",
                out.content
            );
            assert!(
                out.content.contains(reason),
                "{tool}({:.60}) refused without saying {reason:?}: {}",
                path,
                out.content
            );
            assert!(!out.content.contains(SECRET), "{tool} leaked the secret");
        }
    }
    env.assert_outside_untouched();
}

#[tokio::test]
async fn a_dangling_symlink_cannot_create_a_file_outside() {
    let env = hostile_env();
    let out = env
        .call(
            "write_file",
            json!({"path": "dangling_out", "content": "pwned"}),
        )
        .await;
    // Either refused or the link itself replaced; never written through.
    if !out.is_error {
        assert!(
            !std::fs::symlink_metadata(env.ws.join("dangling_out"))
                .unwrap()
                .is_symlink()
        );
    }
    let out = env
        .call(
            "write_file",
            json!({"path": "up_link/new.txt", "content": "pwned"}),
        )
        .await;
    assert!(
        out.is_error && out.content.contains("through a symlink"),
        "{}",
        out.content
    );
    env.assert_outside_untouched();
}

#[tokio::test]
async fn searches_do_not_follow_symlinks_out() {
    let env = hostile_env();
    let out = env.ok("grep", json!({"pattern": "SECRET"})).await;
    assert_eq!(out.content, "No matches for `SECRET` in `.`.");
    let out = env.ok("glob", json!({"pattern": "secret*"})).await;
    assert_eq!(out.content, "No files match `secret*` in `.`.");
    let out = env.ok("list_dir", json!({"recursive": true})).await;
    // Links are shown as links, never entered.
    assert!(
        out.content.contains("up_link -> ../outside\n"),
        "{}",
        out.content
    );
    assert!(!out.content.contains("up_link/") && !out.content.contains("abs_dir_link/"));
}

#[tokio::test]
async fn links_and_absolute_paths_that_stay_inside_work() {
    let env = hostile_env();
    let out = env.ok("read_file", json!({"path": "good_link"})).await;
    assert_eq!(out.content, "1|fine\n");
    let absolute = env.ws.join("inside/ok.txt").display().to_string();
    let out = env.ok("read_file", json!({"path": absolute})).await;
    assert_eq!(out.content, "1|fine\n");
    let out = env
        .ok("read_file", json!({"path": "./inside/../inside/ok.txt"}))
        .await;
    assert_eq!(out.content, "1|fine\n");
}

#[tokio::test]
async fn extra_read_only_directories_are_readable_only() {
    let env = hostile_env().with_read_only_outside();
    let secret = env.secret_path().display().to_string();
    let out = env.ok("read_file", json!({"path": secret})).await;
    assert_eq!(out.content, format!("1|{SECRET}\n"));
    for (tool, args) in calls(&secret) {
        if matches!(tool, "write_file" | "edit_file" | "notebook_edit") {
            let err = env.err(tool, args).await;
            assert!(err.contains("read-only directory"), "{tool}: {err}");
        }
    }
    // Reached through a symlink in the workspace, it is still refused.
    let err = env
        .err("read_file", json!({"path": "up_link/secret.txt"}))
        .await;
    assert!(err.contains("through a symlink"), "{err}");
    env.assert_outside_untouched();
}

#[test]
fn resolve_keeps_its_contract() {
    let env = hostile_env();
    let workspace = Workspace::new(&env.ws).unwrap();
    assert_eq!(
        workspace
            .resolve("inside/new/file.txt", Access::Write)
            .unwrap(),
        env.ws.join("inside/new/file.txt")
    );
    // A symlink leading out is `Outside`, as callers of `resolve` expect.
    assert!(matches!(
        workspace.resolve("up_link/secret.txt", Access::Read),
        Err(SandboxError::Outside { .. })
    ));
    assert!(matches!(
        workspace.resolve("up_link/missing/deeper.txt", Access::Write),
        Err(SandboxError::Outside { .. })
    ));
    assert_eq!(
        workspace.resolve("good_link", Access::Read).unwrap(),
        env.ws.join("inside/ok.txt")
    );
    assert!(matches!(
        workspace.resolve("../x", Access::Read),
        Err(SandboxError::Outside { .. })
    ));
    let error: toolsmith::ToolError = workspace.resolve("~", Access::Read).unwrap_err().into();
    assert!(error.to_string().contains("`~` is not expanded"));
}

#[test]
fn the_workspace_falls_back_to_the_context_path() {
    let env = Env::new();
    let ctx = toolsmith::ToolContext::new().with_workspace(&env.ws);
    assert_eq!(Workspace::of(&ctx).unwrap().root(), env.ws);
    let err = Workspace::of(&toolsmith::ToolContext::new()).unwrap_err();
    assert!(err.to_string().contains("no workspace is configured"));
}

#[test]
fn every_file_tool_is_listed_and_attacked_here() {
    // The file and search tools the crate defines, as inventory finds them.
    let mut defined: Vec<String> = ["toolsmith_builtins::fs", "toolsmith_builtins::search"]
        .into_iter()
        .flat_map(|module| {
            toolsmith::ToolRegistry::from_inventory(
                &toolsmith::ToolFilter::all().module_prefix(module),
            )
            .unwrap()
            .names()
        })
        .collect();
    defined.sort();
    let mut listed = toolsmith_builtins::FILE_TOOLS.map(String::from).to_vec();
    listed.sort();
    assert_eq!(listed, defined, "FILE_TOOLS is every file and search tool");
    let mut attacked: Vec<String> = calls("x").into_iter().map(|(t, _)| t.to_owned()).collect();
    attacked.sort();
    assert_eq!(attacked, defined, "every file tool meets the hostile paths");
}

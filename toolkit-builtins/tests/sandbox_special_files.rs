//! What a path opens, judged once in the sandbox for every file tool: FIFOs,
//! devices and the kernel's made-up files (`/proc`, `/sys`) are refused by
//! what they are, however the path is spelled; `..` through links and
//! spellings that only look like a way out never reach outside; a file
//! swapped for a FIFO or a link between check and use blocks nothing and
//! leads nowhere. Every call runs under a deadline, so a hang fails the
//! test instead of stalling it.

mod fs_support;

use std::os::unix::fs::symlink;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use fs_support::{Env, SECRET, mkfifo};
use serde_json::{Value, json};
use toolsmith::{ToolContext, ToolOutput};
use toolsmith_builtins::agent::{MemoryFile, save_memory};
use toolsmith_builtins::sandbox::{Access, SandboxError, Workspace};

const DEADLINE: Duration = Duration::from_secs(30);

/// A call that must return before the deadline.
async fn call(env: &Env, tool: &str, args: Value) -> ToolOutput {
    tokio::time::timeout(DEADLINE, env.call(tool, args.clone()))
        .await
        .unwrap_or_else(|_| panic!("{tool}({args}) did not return within {DEADLINE:?}"))
}

/// Every file tool, aimed at `path`.
fn calls(path: &str) -> Vec<(&'static str, Value)> {
    vec![
        ("read_file", json!({"path": path})),
        ("write_file", json!({"path": path, "content": "pwned"})),
        (
            "edit_file",
            json!({"path": path, "old_text": "x", "new_text": "pwned"}),
        ),
        ("list_dir", json!({"path": path})),
        ("glob", json!({"pattern": "*", "path": path})),
        ("grep", json!({"pattern": "x", "path": path})),
        (
            "notebook_edit",
            json!({"path": path, "cell_index": 0, "new_source": "pwned"}),
        ),
    ]
}

/// The tools that read a file's content where it is.
const READERS: [&str; 4] = ["read_file", "write_file", "edit_file", "notebook_edit"];

#[tokio::test]
async fn a_fifo_is_refused_by_every_tool_without_waiting() {
    let env = Env::new();
    mkfifo(&env.ws.join("pipe.txt"));
    mkfifo(&env.ws.join("pipe.ipynb"));
    symlink("pipe.txt", env.ws.join("link_to_pipe")).unwrap();
    for path in ["pipe.txt", "pipe.ipynb", "link_to_pipe", "./x/../pipe.txt"] {
        for (tool, args) in calls(path) {
            let out = call(&env, tool, args).await;
            assert!(out.is_error, "{tool}({path}) was allowed: {}", out.content);
            if READERS.contains(&tool) || tool == "grep" {
                assert!(
                    out.content.contains("is a named pipe"),
                    "{tool}({path}): {}",
                    out.content
                );
            }
        }
    }
    // Nothing replaced the pipes.
    let kind = std::fs::symlink_metadata(env.ws.join("pipe.txt")).unwrap();
    assert!(std::os::unix::fs::FileTypeExt::is_fifo(&kind.file_type()));
}

/// Device files and the kernel's made-up files, reachable through an extra
/// read-only directory: every spelling is judged by what it opens.
#[tokio::test]
async fn devices_and_made_up_files_are_refused_however_spelled() {
    let env = Env::new();
    let workspace = Workspace::new(&env.ws)
        .unwrap()
        .with_read_only_dir("/dev")
        .unwrap()
        .with_read_only_dir("/proc")
        .unwrap();
    let ctx = env.ctx.clone().with_state(workspace);
    let cases: &[(&str, &[&str])] = &[
        ("/dev/null", &["a device file"]),
        ("/dev/zero", &["a device file"]),
        ("/dev/urandom", &["a device file"]),
        ("/dev/./zero", &["a device file"]),
        ("//dev//zero", &["a device file"]),
        ("/dev/../dev/zero", &["a device file"]),
        ("/proc/../dev/zero", &["a device file"]),
        // Absolute links (to /proc/self/fd/N) are never followed.
        ("/dev/stdin", &["through a symlink"]),
        ("/dev/fd/0", &["through a symlink"]),
        ("/proc/self/status", &["made up by the kernel"]),
        ("/proc/./self/status", &["made up by the kernel"]),
        ("/proc/version", &["made up by the kernel"]),
        // A container may mask it with a bind mount of /dev/null.
        ("/proc/kmsg", &["made up by the kernel", "a device file"]),
        // Magic links the kernel jumps through are a way out.
        ("/proc/self/fd/0", &["through a symlink"]),
        ("/proc/self/root/etc/passwd", &["through a symlink"]),
        ("/proc/self/cwd", &["through a symlink"]),
    ];
    for (path, reasons) in cases {
        let out = tokio::time::timeout(
            DEADLINE,
            env.registry.call("read_file", json!({"path": path}), &ctx),
        )
        .await
        .expect("read_file returns");
        assert!(out.is_error, "{path} was read: {:.80}", out.content);
        assert!(
            reasons.iter().any(|r| out.content.contains(r)),
            "{path}: {}",
            out.content
        );
        for tool in ["write_file", "edit_file", "notebook_edit"] {
            let args = calls(path).into_iter().find(|(t, _)| *t == tool).unwrap().1;
            let out = env.registry.call(tool, args, &ctx).await;
            assert!(
                out.is_error && out.content.contains("read-only directory"),
                "{tool}({path}): {}",
                out.content
            );
        }
    }
    // A grep of a device is refused the same way, not searched.
    let out = env
        .registry
        .call("grep", json!({"pattern": "x", "path": "/dev/zero"}), &ctx)
        .await;
    assert!(out.content.contains("a device file"), "{}", out.content);
}

/// A workspace rooted at `/`: nothing outside to escape to, and still no
/// device, pipe or made-up file is read.
#[tokio::test]
async fn a_workspace_at_the_root_still_refuses_special_files() {
    let env = Env::new();
    let ctx = ToolContext::new().with_state(Workspace::new("/").unwrap());
    for path in [
        "dev/zero",
        "/dev/zero",
        "proc/self/status",
        "sys/kernel/uevent_seqnum",
    ] {
        if !Path::new("/").join(path).exists() {
            continue;
        }
        let out = env
            .registry
            .call("read_file", json!({"path": path}), &ctx)
            .await;
        assert!(out.is_error, "{path} was read: {:.80}", out.content);
        assert!(
            out.content.contains("a device file") || out.content.contains("made up by the kernel"),
            "{path}: {}",
            out.content
        );
    }
}

/// `..` after a link is taken by the string, never through the link, and
/// links that leave the workspace even briefly are refused.
#[tokio::test]
async fn dot_dot_through_links_never_leads_out() {
    let env = Env::new();
    env.write("inside/deep/ok.txt", "fine\n");
    symlink("inside/deep", env.ws.join("deep_link")).unwrap();
    symlink("../ws/inside", env.ws.join("out_and_back")).unwrap();
    symlink("../../..", env.ws.join("inside/deep/up3")).unwrap();
    let refused: &[(&str, &str)] = &[
        (
            "deep_link/../../outside/secret.txt",
            "outside the workspace",
        ),
        ("deep_link/../../../etc/passwd", "outside the workspace"),
        ("out_and_back/deep/ok.txt", "through a symlink"),
        ("inside/deep/up3/outside/secret.txt", "through a symlink"),
        ("inside/deep/up3", "through a symlink"),
    ];
    for (path, reason) in refused {
        for (tool, args) in calls(path) {
            let out = call(&env, tool, args).await;
            assert!(out.is_error, "{tool}({path}) was allowed: {}", out.content);
            assert!(
                out.content.contains(reason),
                "{tool}({path}) refused without saying {reason:?}: {}",
                out.content
            );
            assert!(!out.content.contains(SECRET), "{tool} leaked the secret");
        }
    }
    // `deep_link/..` is the workspace root by the string, not `inside/`.
    let out = call(
        &env,
        "read_file",
        json!({"path": "deep_link/../deep_link/ok.txt"}),
    )
    .await;
    assert_eq!(out.content, "1|fine\n");
    env.assert_outside_untouched();
}

/// Spellings that look like a way out to a person or to another system but
/// are plain names here: whatever a tool does with them happens inside the
/// workspace.
#[tokio::test]
async fn spellings_that_only_look_like_a_way_out_stay_inside() {
    let env = Env::new();
    let outside_name = env
        .outside
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .to_owned();
    let upper_ws = env.ws.display().to_string().to_uppercase();
    let spellings = [
        format!("\u{ff0e}\u{ff0e}/{outside_name}/secret.txt"), // fullwidth dots
        format!("\u{2025}/{outside_name}/secret.txt"),         // two-dot leader
        format!("..\u{200b}/{outside_name}/secret.txt"),       // zero-width space
        format!(".. /{outside_name}/secret.txt"),
        format!("...//{outside_name}/secret.txt"),
        format!("..\\{outside_name}\\secret.txt"),
        format!("%2e%2e/{outside_name}/secret.txt"),
        format!("%2E%2E%2F{outside_name}%2Fsecret.txt"),
        format!("{upper_ws}/../{outside_name}/secret.txt"),
        "/ETC/PASSWD".to_owned(),
        format!("{}/SECRET.TXT", env.outside.display()),
        // The outside directory's name decomposed (NFD of an accented
        // name is another byte string; here a plain one with a combining mark).
        format!("../{outside_name}\u{0301}/secret.txt"),
    ];
    for path in &spellings {
        for (tool, args) in calls(path) {
            let out = call(&env, tool, args).await;
            assert!(
                !out.content.contains(SECRET),
                "{tool}({path}) leaked the secret"
            );
            if tool == "write_file" && !out.is_error {
                // Written under its literal name, inside.
                let written = env.ws.join(path);
                assert!(written.starts_with(&env.ws), "{path}");
                assert_eq!(
                    std::fs::read_to_string(&written).unwrap(),
                    "pwned",
                    "{path}"
                );
            }
        }
    }
    env.assert_outside_untouched();
}

/// A file swapped for a FIFO, over and over, while the tools that read it
/// run: every call returns, and the FIFO is never opened for reading.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_swapped_for_a_fifo_blocks_no_tool() {
    let env = Env::new();
    env.write("data.txt", "x\n");
    mkfifo(&env.ws.join("fifo.tmp"));
    let stop = Arc::new(AtomicBool::new(false));
    let swapper = {
        let (ws, stop) = (env.ws.clone(), Arc::clone(&stop));
        std::thread::spawn(move || {
            let mut swaps = 0u64;
            while !stop.load(Ordering::Relaxed) {
                // The FIFO in place of the file, then the file back.
                let _ = std::fs::rename(ws.join("data.txt"), ws.join("file.tmp"));
                let _ = std::fs::rename(ws.join("fifo.tmp"), ws.join("data.txt"));
                let _ = std::fs::rename(ws.join("data.txt"), ws.join("fifo.tmp"));
                let _ = std::fs::rename(ws.join("file.tmp"), ws.join("data.txt"));
                swaps += 1;
            }
            swaps
        })
    };
    for _ in 0..150 {
        for (tool, args) in [
            ("read_file", json!({"path": "data.txt"})),
            (
                "edit_file",
                json!({"path": "data.txt", "old_text": "x", "new_text": "x"}),
            ),
            ("write_file", json!({"path": "data.txt", "content": "x\n"})),
        ] {
            let out = call(&env, tool, args).await;
            assert!(!out.content.contains(SECRET));
        }
        let ctx = env
            .ctx
            .clone()
            .with_state(MemoryFile::new("data.txt", "Facts"));
        let saved = tokio::time::timeout(
            DEADLINE,
            tokio::task::spawn_blocking(move || save_memory(&ctx, "a fact".into())),
        )
        .await
        .expect("save_memory returns");
        drop(saved);
    }
    stop.store(true, Ordering::Relaxed);
    assert!(swapper.join().unwrap() > 10, "the swap hardly ran");
}

/// `save_memory` goes through the sandbox: a FIFO or a link out where the
/// memory file belongs is refused, and nothing outside is written.
#[tokio::test]
async fn the_memory_file_is_read_and_written_through_the_sandbox() {
    let env = Env::new();
    let with = |path: &str| env.ctx.clone().with_state(MemoryFile::new(path, "Facts"));
    mkfifo(&env.ws.join("PIPE.md"));
    symlink("../outside/secret.txt", env.ws.join("LINK.md")).unwrap();
    let ctx = with("PIPE.md");
    let err = tokio::time::timeout(
        DEADLINE,
        tokio::task::spawn_blocking(move || save_memory(&ctx, "a fact".into())),
    )
    .await
    .expect("save_memory returns")
    .unwrap()
    .unwrap_err();
    assert!(err.to_string().contains("is a named pipe"), "{err}");
    let err = save_memory(&with("LINK.md"), "a fact".into()).unwrap_err();
    assert!(err.to_string().contains("through a symlink"), "{err}");
    let err = save_memory(&with("../outside/secret.txt"), "a fact".into()).unwrap_err();
    assert!(err.to_string().contains("outside the workspace"), "{err}");
    env.assert_outside_untouched();
    save_memory(&with("notes/MEMORY.md"), "a fact".into()).unwrap();
    assert_eq!(env.read("notes/MEMORY.md"), "## Facts\n\n- a fact\n");
}

/// The located path is the only way in: it keeps what it was located for,
/// and a path located for reading is never written.
#[test]
fn a_located_path_keeps_its_access() {
    let env = Env::new();
    let workspace = Workspace::new(&env.ws)
        .unwrap()
        .with_read_only_dir(&env.outside)
        .unwrap();
    let secret = env.secret_path().display().to_string();
    let read = workspace.locate(&secret, Access::Read).unwrap();
    assert_eq!(read.access(), Access::Read);
    assert_eq!(read.to_string(), secret);
    assert!(matches!(
        read.write_atomic(b"pwned"),
        Err(SandboxError::Invalid { .. })
    ));
    assert!(matches!(
        workspace.locate(&secret, Access::Write),
        Err(SandboxError::ReadOnly { .. })
    ));
    let inside = workspace.locate("./a/../b.txt", Access::Read).unwrap();
    assert_eq!(inside.relative(), Path::new("b.txt"));
    assert!(matches!(
        inside.write_atomic(b"x"),
        Err(SandboxError::Invalid { .. })
    ));
    assert!(!env.exists("b.txt"));
    env.assert_outside_untouched();
}

//! `exec` and `run_command` against real child processes.
#![cfg(all(feature = "shell", unix))]

use std::path::Path;
use std::time::Duration;

use serde_json::json;
use toolsmith::{CancellationToken, ToolContext, ToolFilter, ToolRegistry};
use toolsmith_builtins::Workspace;
use toolsmith_builtins::shell::{
    CommandOutput, CommandRequest, Ended, ShellError, ShellPolicy, run_command,
};

fn workspace() -> (tempfile::TempDir, Workspace) {
    let dir = tempfile::tempdir().unwrap();
    let workspace = Workspace::new(dir.path()).unwrap();
    (dir, workspace)
}

fn request(command: &str, timeout_secs: u64) -> CommandRequest {
    CommandRequest {
        command: command.into(),
        working_dir: None,
        timeout: Some(Duration::from_secs(timeout_secs)),
    }
}

/// `command` under the default policy, with nothing to cancel it.
async fn run(
    ws: &Workspace,
    command: &str,
    timeout_secs: u64,
) -> Result<CommandOutput, ShellError> {
    run_command(
        &ShellPolicy::new(),
        ws,
        &request(command, timeout_secs),
        &CancellationToken::new(),
    )
    .await
}

/// The pid a command wrote to `path`.
fn read_pid(path: &Path) -> u32 {
    std::fs::read_to_string(path)
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// The state letter of a process (`R`, `S`, `Z`…), or `None` if it is gone.
fn process_state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_name = &stat[stat.rfind(')')? + 2..];
    after_name.chars().next()
}

/// Children of this process that are zombies.
fn our_zombies() -> Vec<u32> {
    let me = std::process::id().to_string();
    let mut zombies = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let Some(close) = stat.rfind(')') else {
            continue;
        };
        let fields: Vec<&str> = stat[close + 2..].split(' ').collect();
        if fields.first() == Some(&"Z") && fields.get(1) == Some(&me.as_str()) {
            zombies.push(pid);
        }
    }
    zombies
}

/// Wait (without asserting on time) until `pid` is gone or a zombie of
/// another parent; the kernel reaps a killed process asynchronously.
async fn assert_dies(pid: u32) {
    for _ in 0..200 {
        match process_state(pid) {
            None => return,
            Some('Z') => {
                let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
                let parent = stat
                    .rfind(')')
                    .and_then(|c| stat[c + 2..].split(' ').nth(1).map(str::to_owned));
                // A dead process its new parent has not collected yet is not
                // running and holds nothing; it must not be ours to reap.
                assert_ne!(
                    parent.as_deref(),
                    Some(std::process::id().to_string().as_str())
                );
                return;
            }
            Some(_) => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    }
    panic!("process {pid} is still running");
}

fn first_pid(text: &str) -> u32 {
    text.lines()
        .find_map(|l| l.trim().parse().ok())
        .unwrap_or_else(|| panic!("no pid in {text:?}"))
}

#[tokio::test]
async fn output_streams_and_exit_code_are_reported() {
    let (_dir, ws) = workspace();
    let out = run(&ws, "echo out; echo err >&2; exit 3", 10)
        .await
        .unwrap();
    assert_eq!(out.ended, Ended::Exited);
    assert_eq!(out.exit_code, Some(3));
    assert_eq!(out.stdout.text(), "out\n");
    assert_eq!(out.stderr.text(), "err\n");
    assert_eq!(out.to_model_text(), "out\nSTDERR:\nerr\nExit code: 3");
}

#[tokio::test]
async fn a_grandchild_is_killed_at_the_timeout_and_nothing_is_left() {
    let (_dir, ws) = workspace();
    let out = run(&ws, "sleep 300 & echo $!; sleep 300", 1).await.unwrap();
    assert_eq!(out.ended, Ended::TimedOut);
    assert_eq!(out.exit_code, None);
    assert_eq!(out.signal, Some(9));
    let text = out.to_model_text();
    assert!(
        text.starts_with("Error: the command timed out after 1 s"),
        "{text}"
    );
    assert!(
        text.ends_with("Exit code: none (killed by signal 9)"),
        "{text}"
    );
    assert_dies(first_pid(&out.stdout.text())).await;
    assert_eq!(our_zombies(), Vec::<u32>::new());
}

#[tokio::test]
async fn background_processes_die_when_the_command_exits() {
    let (_dir, ws) = workspace();
    // The background sleep keeps stdout open: without the group kill, the
    // call would wait for it.
    let out = run(&ws, "sleep 300 & echo $!", 60).await.unwrap();
    assert_eq!(out.ended, Ended::Exited);
    assert_eq!(out.exit_code, Some(0));
    assert_dies(first_pid(&out.stdout.text())).await;
}

#[tokio::test]
async fn cancellation_kills_the_whole_group() {
    let (dir, ws) = workspace();
    let cancel = CancellationToken::new();
    let pid_file = dir.path().join("pid");
    let canceller = {
        let cancel = cancel.clone();
        let pid_file = pid_file.clone();
        tokio::spawn(async move {
            while std::fs::read_to_string(&pid_file).map_or(true, |s| !s.ends_with('\n')) {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            cancel.cancel();
        })
    };
    let out = run_command(
        &ShellPolicy::new(),
        &ws,
        &request("sleep 300 & echo $! > pid; sleep 300", 600),
        &cancel,
    )
    .await
    .unwrap();
    canceller.await.unwrap();
    assert_eq!(out.ended, Ended::Cancelled);
    assert!(
        out.to_model_text()
            .starts_with("Error: the call was cancelled")
    );
    let pid = read_pid(&pid_file);
    assert_dies(pid).await;
    assert_eq!(our_zombies(), Vec::<u32>::new());
}

#[tokio::test]
async fn dropping_the_call_kills_the_group() {
    let (dir, ws) = workspace();
    let pid_file = dir.path().join("pid");
    let policy = ShellPolicy::new();
    let req = request("sleep 300 & echo $! > pid; sleep 300", 600);
    let cancel = CancellationToken::new();
    let mut call = Box::pin(run_command(&policy, &ws, &req, &cancel));
    // Poll the call until the grandchild exists, then drop the future, as
    // a timeout above the tool does.
    loop {
        tokio::select! {
            _ = &mut call => panic!("the command should still be running"),
            _ = tokio::time::sleep(Duration::from_millis(20)) => {}
        }
        if std::fs::read_to_string(&pid_file).is_ok_and(|s| s.ends_with('\n')) {
            break;
        }
    }
    drop(call);
    let pid = read_pid(&pid_file);
    assert_dies(pid).await;
}

#[tokio::test]
async fn a_gigabyte_of_output_stays_within_the_cap() {
    fn peak_rss_kib() -> u64 {
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap()
    }
    let (_dir, ws) = workspace();
    let policy = ShellPolicy::new().with_max_output_bytes(4096);
    let before = peak_rss_kib();
    let out = run_command(
        &policy,
        &ws,
        &request(
            "head -c 1000000000 /dev/zero; head -c 100000000 /dev/zero >&2; echo done",
            600,
        ),
        &CancellationToken::new(),
    )
    .await
    .unwrap();
    let grown_kib = peak_rss_kib().saturating_sub(before);
    assert_eq!(out.exit_code, Some(0));
    assert_eq!(out.stdout.total_bytes(), 1_000_000_005);
    assert_eq!(out.stderr.total_bytes(), 100_000_000);
    assert_eq!(out.stdout.kept_bytes(), 4096);
    assert_eq!(out.stderr.kept_bytes(), 4096);
    let text = out.stdout.text();
    assert!(
        text.contains("… [999995909 bytes omitted] …"),
        "{}",
        &text[2040..2100]
    );
    assert!(text.ends_with("done\n"));
    println!("peak RSS grew by {grown_kib} KiB while capturing 1.1 GB");
    assert!(grown_kib < 64 * 1024, "peak RSS grew by {grown_kib} KiB");
}

#[tokio::test]
async fn a_long_timeout_is_clamped_and_says_so() {
    let (_dir, ws) = workspace();
    let out = run(&ws, "echo hi", 900).await.unwrap();
    assert_eq!(out.timeout, Duration::from_secs(600));
    assert_eq!(
        out.to_model_text(),
        "hi\nExit code: 0\nNote: the requested timeout of 900 s is above the limit; it was clamped to 600 s"
    );
}

#[tokio::test]
async fn the_working_directory_stays_inside_the_workspace() {
    let (dir, ws) = workspace();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    let run = |working_dir: &str| {
        let req = CommandRequest {
            working_dir: Some(working_dir.into()),
            ..request("pwd", 10)
        };
        let ws = ws.clone();
        async move { run_command(&ShellPolicy::new(), &ws, &req, &CancellationToken::new()).await }
    };
    let out = run("sub").await.unwrap();
    assert_eq!(Path::new(out.stdout.text().trim()), ws.root().join("sub"));
    assert!(matches!(run("..").await, Err(ShellError::WorkingDir(_))));
    assert!(matches!(run("/etc").await, Err(ShellError::WorkingDir(_))));
    assert!(matches!(
        run("missing").await,
        Err(ShellError::NotADirectory(_))
    ));
}

#[tokio::test]
async fn refused_commands_never_start() {
    let (dir, ws) = workspace();
    let marker = dir.path().join("ran");
    let err = run(&ws, "touch ran; rm -rf ../x", 10).await.unwrap_err();
    assert!(matches!(err, ShellError::Refused(_)), "{err}");
    assert!(!marker.exists());
}

#[tokio::test]
async fn the_tool_is_off_until_the_host_enables_it() {
    let (dir, _ws) = workspace();
    // High risk: the default filter leaves it out unless it is named.
    let default = ToolRegistry::from_inventory(&ToolFilter::default()).unwrap();
    assert!(default.get("exec").is_none());
    let registry = ToolRegistry::from_inventory(&ToolFilter::default().names(["exec"])).unwrap();
    let tool = registry.get("exec").unwrap();
    let spec = tool.spec();
    assert!(spec.annotations.exclusive);
    assert_eq!(spec.category, Some(toolsmith::ToolCategory::Shell));

    let bare = ToolContext::new().with_workspace(dir.path());
    let out = registry
        .call("exec", json!({"command": "echo hi"}), &bare)
        .await;
    assert!(out.is_error);
    assert!(
        out.content
            .contains("it needs a `toolsmith_builtins::shell::ShellPolicy` in its context"),
        "{}",
        out.content
    );

    let ctx = bare.with_state(ShellPolicy::new());
    let out = registry
        .call(
            "exec",
            json!({"command": "echo hi; exit 2", "timeout": 5}),
            &ctx,
        )
        .await;
    assert!(!out.is_error, "{}", out.content);
    assert_eq!(out.content, "hi\nExit code: 2");

    let out = registry
        .call("exec", json!({"command": "rm -rf /"}), &ctx)
        .await;
    assert!(out.is_error);
    assert!(out.content.contains("recursive delete"), "{}", out.content);

    let out = registry
        .call("exec", json!({"command": "sleep 30", "timeout": 1}), &ctx)
        .await;
    assert!(out.is_error);
    assert!(
        out.content.contains("timed out after 1 s"),
        "{}",
        out.content
    );
}

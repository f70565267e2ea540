//! `exec` and `run_command` against real child processes.
#![cfg(all(feature = "shell", unix))]

use std::path::Path;
use std::time::Duration;

mod shell_support;
use shell_support::{assert_gone, our_zombies, tag};

use serde_json::json;
use toolsmith::{CancellationToken, Tool, ToolContext, ToolFilter, ToolRegistry};
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
    let t = tag();
    let out = run(&ws, &format!("sleep {t} & sleep {t}"), 1)
        .await
        .unwrap();
    assert_eq!(out.ended, Ended::TimedOut);
    assert_eq!(out.exit_code, None);
    assert_eq!(out.signal, Some(9));
    let text = out.to_model_text();
    assert!(
        text.starts_with("Error: the command timed out after 1 s"),
        "{text}"
    );
    assert!(
        text.contains("Exit code: none (killed by signal 9)"),
        "{text}"
    );
    assert_gone(&t).await;
    assert_eq!(our_zombies(), Vec::<u32>::new());
}

#[tokio::test]
async fn background_processes_die_when_the_command_exits() {
    let (_dir, ws) = workspace();
    let t = tag();
    // The background sleep keeps stdout open: unless it is killed, the call
    // would wait for it.
    let out = run(&ws, &format!("sleep {t} & echo started"), 60)
        .await
        .unwrap();
    assert_eq!(out.ended, Ended::Exited);
    assert_eq!(out.exit_code, Some(0));
    assert_gone(&t).await;
}

/// Wait (bounded) until the command has written `started` into `file`.
async fn until_started(file: &Path) {
    for _ in 0..400 {
        if std::fs::read_to_string(file).is_ok_and(|s| s.ends_with('\n')) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("the command never started");
}

#[tokio::test]
async fn cancellation_kills_everything_the_command_started() {
    let (dir, ws) = workspace();
    let cancel = CancellationToken::new();
    let started = dir.path().join("started");
    let t = tag();
    let canceller = {
        let cancel = cancel.clone();
        let started = started.clone();
        tokio::spawn(async move {
            until_started(&started).await;
            cancel.cancel();
        })
    };
    let out = run_command(
        &ShellPolicy::new(),
        &ws,
        &request(&format!("sleep {t} & echo yes > started; sleep {t}"), 600),
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
    assert_gone(&t).await;
    assert_eq!(our_zombies(), Vec::<u32>::new());
}

#[tokio::test]
async fn dropping_the_call_kills_everything_the_command_started() {
    let (dir, ws) = workspace();
    let started = dir.path().join("started");
    let t = tag();
    let policy = ShellPolicy::new();
    let req = request(&format!("sleep {t} & echo yes > started; sleep {t}"), 600);
    let cancel = CancellationToken::new();
    let mut call = Box::pin(run_command(&policy, &ws, &req, &cancel));
    // Poll the call until the grandchild exists, then drop the future, as
    // a timeout above the tool does.
    loop {
        tokio::select! {
            _ = &mut call => panic!("the command should still be running"),
            _ = tokio::time::sleep(Duration::from_millis(20)) => {}
        }
        if std::fs::read_to_string(&started).is_ok_and(|s| s.ends_with('\n')) {
            break;
        }
    }
    drop(call);
    assert_gone(&t).await;
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
async fn a_timeout_above_the_limit_is_refused_with_the_limit_named() {
    let (dir, ws) = workspace();
    let err = run(&ws, "touch ran", 900).await.unwrap_err();
    assert!(matches!(
        err,
        ShellError::TimeoutTooLong {
            requested: 900,
            max: 600
        }
    ));
    assert_eq!(
        err.to_string(),
        "the timeout of 900 s is above the limit of 600 s; ask for 600 s or less, or split the work into shorter commands"
    );
    assert!(!dir.path().join("ran").exists());
    // The schema says so too: a model sees the maximum before it asks.
    let spec = toolsmith_builtins::shell::ExecTool.spec();
    assert_eq!(spec.input_schema["properties"]["timeout"]["maximum"], 600);
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

/// What a model sees when it asks `exec` for too long a timeout: above the
/// schema's maximum the call is refused before the tool runs, and above a
/// lower maximum of the host the tool refuses it naming that limit; either
/// way nothing runs and the message says what to ask for.
#[tokio::test]
async fn a_timeout_above_the_maximum_is_an_error_the_model_can_act_on() {
    let (dir, _ws) = workspace();
    let registry = ToolRegistry::from_inventory(&ToolFilter::default().names(["exec"])).unwrap();
    let ctx = ToolContext::new()
        .with_workspace(dir.path())
        .with_state(ShellPolicy::new().with_max_timeout(Duration::from_secs(120)));
    let out = registry
        .call(
            "exec",
            json!({"command": "touch ran", "timeout": 900}),
            &ctx,
        )
        .await;
    assert!(out.is_error);
    assert!(out.content.contains("timeout"), "{}", out.content);
    assert!(out.content.contains("600"), "{}", out.content);
    let out = registry
        .call(
            "exec",
            json!({"command": "touch ran", "timeout": 300}),
            &ctx,
        )
        .await;
    assert!(out.is_error);
    assert!(
        out.content
            .contains("the timeout of 300 s is above the limit of 120 s; ask for 120 s or less"),
        "{}",
        out.content
    );
    assert!(!dir.path().join("ran").exists());
}

/// A directory outside the workspace holding `hello-tool`, a script that
/// prints where it runs from and whether it could write next to itself,
/// and `ls`, a script that would stand in for the system's.
fn tool_dir() -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let scripts = [
        (
            "hello-tool",
            "#!/bin/sh\necho \"hello from $0\"\n\
             if touch \"$(dirname \"$0\")/written\" 2>/dev/null; then echo wrote; else echo cannot write; fi\n",
        ),
        ("ls", "#!/bin/sh\necho FAKE-LS\n"),
    ];
    for (name, body) in scripts {
        let path = dir.path().join(name);
        std::fs::write(&path, body).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    dir
}

async fn run_with(
    policy: &ShellPolicy,
    ws: &Workspace,
    command: &str,
) -> Result<CommandOutput, ShellError> {
    run_command(policy, ws, &request(command, 30), &CancellationToken::new()).await
}

#[tokio::test]
async fn path_append_runs_a_script_from_an_appended_directory_under_the_kernel_wall() {
    let (_dir, ws) = workspace();
    let tools = tool_dir();
    let policy = ShellPolicy::new().with_path_append([tools.path()]).unwrap();
    let out = run_with(&policy, &ws, "hello-tool").await.unwrap();
    assert!(out.success(), "{}", out.to_model_text());
    let script = tools.path().join("hello-tool");
    let stdout = out.stdout.text();
    assert!(
        stdout.starts_with(&format!("hello from {}\n", script.display())),
        "{stdout}"
    );
    // Under Landlock the directory is readable and runnable, never writable.
    let walls = toolsmith_builtins::shell::KernelWalls::current();
    if walls.landlock_abi.is_some() {
        assert!(stdout.ends_with("cannot write\n"), "{stdout}");
        assert!(!tools.path().join("written").exists());
        // The grant is the setting's: with the filter's workspace check off,
        // the kernel alone refuses the directory until it is appended.
        let read = format!(
            "cat {}",
            toolsmith_builtins::shell::quote(script.to_str().unwrap())
        );
        let open = ShellPolicy::new().restrict_to_workspace(false);
        let out = run_with(&open, &ws, &read).await.unwrap();
        assert_ne!(out.exit_code, Some(0), "{}", out.to_model_text());
        assert!(
            out.stderr.text().contains("Permission denied"),
            "{}",
            out.to_model_text()
        );
        let granted = open.with_path_append([tools.path()]).unwrap();
        let out = run_with(&granted, &ws, &read).await.unwrap();
        assert!(
            out.stdout.text().starts_with("#!/bin/sh"),
            "{}",
            out.to_model_text()
        );
    } else {
        println!("no Landlock here: the write check is skipped");
    }
    // Without the policy setting the script is not found by name.
    let out = run_with(&ShellPolicy::new(), &ws, "hello-tool")
        .await
        .unwrap();
    assert_eq!(out.exit_code, Some(127), "{}", out.to_model_text());
}

#[tokio::test]
async fn appended_directories_come_after_the_system_ones() {
    let (_dir, ws) = workspace();
    let tools = tool_dir();
    let appended = tools.path().to_str().unwrap().to_owned();
    // Without the host's PATH: the standard system directories, then ours.
    let policy = ShellPolicy::new()
        .with_path_append([tools.path(), std::path::Path::new("/opt/none/bin")])
        .unwrap();
    let out = run_with(&policy, &ws, "echo \"$PATH\"; ls -d .")
        .await
        .unwrap();
    assert_eq!(
        out.stdout.text(),
        format!(
            "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:{appended}:/opt/none/bin\n.\n"
        ),
        "the system's ls must win over the appended one"
    );
    // With the host's PATH passed on: the host's entries, then ours.
    let policy = ShellPolicy::new()
        .allow_env(["PATH"])
        .with_path_append([tools.path()])
        .unwrap();
    let out = run_with(&policy, &ws, "echo \"$PATH\"").await.unwrap();
    let host: Vec<String> = std::env::var("PATH")
        .unwrap_or_default()
        .split(':')
        .filter(|e| !e.is_empty())
        .map(str::to_owned)
        .collect();
    let expected = if host.is_empty() {
        format!("{appended}\n")
    } else {
        format!("{}:{appended}\n", host.join(":"))
    };
    assert_eq!(out.stdout.text(), expected);
    // Without path_append, no directory of ours is searched.
    let out = run_with(&ShellPolicy::new(), &ws, "echo \"$PATH\"")
        .await
        .unwrap();
    assert!(
        !out.stdout.text().contains(&appended),
        "{}",
        out.stdout.text()
    );
}

#[test]
fn path_append_refuses_what_cannot_be_a_path_entry() {
    for (dir, reason) in [
        ("bin", "it is not an absolute path"),
        ("./tools", "it is not an absolute path"),
        (
            "/opt/a:/opt/b",
            "it holds `:` or a NUL byte, which would split PATH",
        ),
    ] {
        let err = ShellPolicy::new().with_path_append([dir]).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("cannot append `{dir}` to PATH: {reason}")
        );
    }
}

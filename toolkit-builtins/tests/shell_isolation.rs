//! What reaches the child and what it leaves behind: the environment, file
//! descriptors, and (where the kernel has it) Landlock confinement.
//!
//! These tests change or count process-wide things (the environment, the
//! descriptor table), so they run one at a time.
#![cfg(all(feature = "shell", unix))]

use std::time::Duration;

use toolsmith::CancellationToken;
use toolsmith_builtins::Workspace;
use toolsmith_builtins::shell::{CommandRequest, ShellPolicy, run_command};

static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn request(command: &str) -> CommandRequest {
    CommandRequest {
        command: command.into(),
        working_dir: None,
        timeout: Some(Duration::from_secs(20)),
    }
}

#[tokio::test]
async fn secrets_in_the_environment_do_not_reach_the_child() {
    let _one = ONE_AT_A_TIME.lock().await;
    // SAFETY: the only test in this binary that touches the environment,
    // and no other test runs beside it (the lock above).
    unsafe {
        std::env::set_var("TOOLSMITH_TEST_SECRET", "hunter2");
        std::env::set_var("TOOLSMITH_TEST_SHARED", "visible");
    }
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::new(dir.path()).unwrap();
    let policy = ShellPolicy::new().allow_env(["TOOLSMITH_TEST_SHARED"]);
    let out = run_command(&policy, &ws, &request("env"), &CancellationToken::new())
        .await
        .unwrap();
    let env = out.stdout.text();
    assert!(!env.contains("hunter2"), "{env}");
    assert!(env.contains("TOOLSMITH_TEST_SHARED=visible"), "{env}");
    let mut names: Vec<&str> = env
        .lines()
        .filter_map(|l| l.split_once('=').map(|(n, _)| n))
        // The shell itself sets these.
        .filter(|n| !matches!(*n, "PWD" | "SHLVL" | "_" | "OLDPWD"))
        .collect();
    names.sort();
    assert_eq!(names, ["HOME", "LANG", "TERM", "TOOLSMITH_TEST_SHARED"]);
}

#[tokio::test]
async fn no_file_descriptor_is_left_open() {
    let _one = ONE_AT_A_TIME.lock().await;
    // Pipes and process handles: what a run opens. (Other tests' runtimes
    // open their own event descriptors meanwhile, so those are not counted.)
    let count = || {
        std::fs::read_dir("/proc/self/fd")
            .unwrap()
            .flatten()
            .filter_map(|e| std::fs::read_link(e.path()).ok())
            .filter(|target| {
                let target = target.to_string_lossy();
                target.starts_with("pipe:") || target.contains("pidfd")
            })
            .count()
    };
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::new(dir.path()).unwrap();
    let policy = ShellPolicy::new();
    // Warm up the runtime's own descriptors (signal pipe, reaper) first.
    run_command(&policy, &ws, &request("true"), &CancellationToken::new())
        .await
        .unwrap();
    let before = count();
    for command in ["echo hi", "sleep 300 & echo started", "exit 4"] {
        run_command(&policy, &ws, &request(command), &CancellationToken::new())
            .await
            .unwrap();
    }
    let timed = CommandRequest {
        timeout: Some(Duration::from_secs(1)),
        ..request("sleep 300 & sleep 300")
    };
    run_command(&policy, &ws, &timed, &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(count(), before);
}

#[cfg(all(feature = "landlock", target_os = "linux"))]
#[tokio::test]
async fn landlock_confines_writes_to_the_workspace() {
    use toolsmith_builtins::shell::{Confinement, landlock_available};
    let _one = ONE_AT_A_TIME.lock().await;
    if !landlock_available() {
        println!("skipped: this kernel does not enforce Landlock");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let ws = Workspace::new(dir.path()).unwrap();
    // The filter is switched off so that only the kernel stands in the way.
    let policy = ShellPolicy::new()
        .restrict_to_workspace(false)
        .with_confinement(Confinement::Required);
    let target = outside.path().join("escaped");
    let command = format!(
        "echo in > inside; echo out > {} ; cat {} ; echo done",
        target.display(),
        outside.path().display()
    );
    let out = run_command(&policy, &ws, &request(&command), &CancellationToken::new())
        .await
        .unwrap();
    assert!(
        dir.path().join("inside").exists(),
        "{}",
        out.to_model_text()
    );
    assert!(!target.exists(), "{}", out.to_model_text());
    assert!(
        out.stderr.text().contains("Permission denied"),
        "{}",
        out.to_model_text()
    );
    assert!(out.stdout.text().ends_with("done\n"));
}

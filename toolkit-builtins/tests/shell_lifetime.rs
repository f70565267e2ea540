//! No process a command starts outlives the call, however it tries to get
//! away: `setsid`, double forks, `nohup`, `disown`, daemonizing, an exit
//! trap, a delayed fork, killing its keeper. Each escape is tried with the
//! command in its own PID namespace (the default where the system allows
//! it) and with the subreaper keeper alone, then the host looks for
//! survivors right after the call and again a few seconds later.
#![cfg(all(feature = "shell", target_os = "linux"))]

use std::time::Duration;

use toolsmith::CancellationToken;
use toolsmith_builtins::Workspace;
use toolsmith_builtins::shell::{CommandRequest, Ended, ShellPolicy, run_command};

mod shell_support;

/// These tests count process-wide things (zombies, descriptors), so they
/// run one at a time.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
use shell_support::{assert_gone_and_stays_gone, our_zombies, survivors, tag};

/// An escape: a shell, a command with `{T}` where the tagged `sleep`
/// argument goes, and an optional helper script (`x.py` in the workspace).
struct Escape {
    name: &'static str,
    shell: &'static str,
    command: &'static str,
    script: Option<&'static str>,
}

const DAEMON_PY: &str = r#"
import os, sys, time
tag = sys.argv[1]
if os.fork() > 0:
    sys.exit(0)
os.setsid()
if os.fork() > 0:
    os._exit(0)
for fd in range(0, 3):
    os.close(fd)
os.execvp("sleep", ["sleep", tag])
"#;

const ESCAPES: &[Escape] = &[
    Escape {
        name: "background",
        shell: "/bin/sh",
        command: "sleep {T} &",
        script: None,
    },
    Escape {
        name: "setsid",
        shell: "/bin/sh",
        command: "setsid sleep {T} >/dev/null 2>&1 &",
        script: None,
    },
    Escape {
        name: "setsid --fork",
        shell: "/bin/sh",
        command: "setsid -f sleep {T} >/dev/null 2>&1",
        script: None,
    },
    Escape {
        name: "double fork",
        shell: "/bin/sh",
        command: "( (sleep {T} >/dev/null 2>&1 &) & )",
        script: None,
    },
    Escape {
        name: "nohup",
        shell: "/bin/sh",
        command: "nohup sleep {T} >/dev/null 2>&1 &",
        script: None,
    },
    Escape {
        name: "disown",
        shell: "/bin/bash",
        command: "sleep {T} >/dev/null 2>&1 & disown",
        script: None,
    },
    Escape {
        name: "exit trap",
        shell: "/bin/bash",
        command: "trap 'setsid sleep {T} >/dev/null 2>&1 &' EXIT; true",
        script: None,
    },
    Escape {
        name: "delayed fork",
        shell: "/bin/sh",
        command: "(sleep 1; setsid sleep {T} >/dev/null 2>&1 &) >/dev/null 2>&1 &",
        script: None,
    },
    Escape {
        name: "daemon (double fork, setsid, closed fds)",
        shell: "/bin/sh",
        command: "python3 x.py {T}",
        script: Some(DAEMON_PY),
    },
    Escape {
        name: "kill the parent first",
        shell: "/bin/sh",
        command: "kill -9 $PPID 2>/dev/null; setsid sleep {T} >/dev/null 2>&1 &",
        script: None,
    },
    Escape {
        name: "kill every process it can see",
        shell: "/bin/sh",
        command: "setsid sleep {T} >/dev/null 2>&1 & kill -9 -1 2>/dev/null; true",
        script: None,
    },
    Escape {
        name: "still running at the timeout",
        shell: "/bin/sh",
        command: "setsid sleep {T} >/dev/null 2>&1 & sleep {T}",
        script: None,
    },
];

async fn try_escape(escape: &Escape, pid_namespace: bool) -> String {
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::new(dir.path()).unwrap();
    if let Some(script) = escape.script {
        std::fs::write(dir.path().join("x.py"), script).unwrap();
    }
    let t = tag();
    // The escape runs from a script in the workspace, which the command
    // filter cannot read: only the keeper and the kernel stand in its way.
    std::fs::write(
        dir.path().join("escape.sh"),
        escape.command.replace("{T}", &t),
    )
    .unwrap();
    let policy = ShellPolicy::new()
        .allow_env(["PATH"])
        .with_pid_namespace(pid_namespace);
    let request = CommandRequest {
        command: format!("{} escape.sh", escape.shell),
        working_dir: None,
        timeout: Some(Duration::from_secs(2)),
    };
    let out = run_command(&policy, &ws, &request, &CancellationToken::new())
        .await
        .unwrap_or_else(|e| panic!("{}: {e}", escape.name));
    if escape.name != "still running at the timeout" {
        assert_eq!(
            out.ended,
            Ended::Exited,
            "{}: {}",
            escape.name,
            out.to_model_text()
        );
    }
    assert_gone_and_stays_gone(&t, Duration::from_secs(3)).await;
    t
}

async fn every_escape(pid_namespace: bool) {
    let tried: Vec<_> = ESCAPES
        .iter()
        .map(|escape| {
            tokio::spawn(async move { (escape.name, try_escape(escape, pid_namespace).await) })
        })
        .collect();
    for task in tried {
        let (name, t) = task
            .await
            .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()));
        assert!(survivors(&t).is_empty(), "{name}");
    }
    assert_eq!(our_zombies(), Vec::<u32>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_escape_survives_the_call_in_a_pid_namespace() {
    let _one = ONE_AT_A_TIME.lock().await;
    tokio::time::timeout(Duration::from_secs(120), every_escape(true))
        .await
        .expect("bounded");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_escape_survives_the_call_with_the_subreaper_alone() {
    let _one = ONE_AT_A_TIME.lock().await;
    tokio::time::timeout(Duration::from_secs(120), every_escape(false))
        .await
        .expect("bounded");
}

/// Calls ended by a host's own timeout (the future dropped) and by the
/// runner's: nothing is left, no descriptor, no zombie, no process.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_ended_calls_leave_nothing_behind() {
    let _one = ONE_AT_A_TIME.lock().await;
    let count_fds = || {
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
    let t = tag();
    let command = format!("setsid sleep {t} >/dev/null 2>&1 & sleep {t}");
    // Warm the runtime's own descriptors (signal pipe, reaper) first.
    run_command(
        &policy,
        &ws,
        &CommandRequest::new("true"),
        &CancellationToken::new(),
    )
    .await
    .unwrap();
    let before = count_fds();
    let work = async {
        let semaphore = std::sync::Arc::new(tokio::sync::Semaphore::new(25));
        let mut calls = Vec::new();
        for i in 0..1000 {
            let (ws, policy, command) = (ws.clone(), policy.clone(), command.clone());
            let permit = semaphore.clone().acquire_owned().await.unwrap();
            calls.push(tokio::spawn(async move {
                let _permit = permit;
                let request = CommandRequest {
                    command,
                    working_dir: None,
                    timeout: Some(Duration::from_secs(1)),
                };
                let cancel = CancellationToken::new();
                if i % 50 == 0 {
                    // The runner's own timeout.
                    let out = run_command(&policy, &ws, &request, &cancel).await.unwrap();
                    assert_eq!(out.ended, Ended::TimedOut);
                } else {
                    // A host's timeout around the call: the future is dropped.
                    let call = run_command(&policy, &ws, &request, &cancel);
                    let _ = tokio::time::timeout(Duration::from_millis(30), call).await;
                }
            }));
        }
        for call in calls {
            call.await.unwrap();
        }
        // Dropped calls' keepers end on their own; give them a bounded while.
        for _ in 0..200 {
            if survivors(&t).is_empty() && our_zombies().is_empty() && count_fds() == before {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(240), work)
        .await
        .expect("bounded");
    assert_eq!(survivors(&t), Vec::<u32>::new());
    assert_eq!(our_zombies(), Vec::<u32>::new());
    assert_eq!(count_fds(), before);
}

/// How long after the deadline everything is gone: printed (run with
/// `--nocapture`), never asserted, since a loaded machine may be slow.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_time_from_the_deadline_to_nothing_left_is_printed() {
    let _one = ONE_AT_A_TIME.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::new(dir.path()).unwrap();
    let mut after_deadline = Vec::new();
    for _ in 0..10 {
        let t = tag();
        let request = CommandRequest {
            command: format!("setsid sleep {t} >/dev/null 2>&1 & sleep {t} & sleep {t}"),
            working_dir: None,
            timeout: Some(Duration::from_secs(1)),
        };
        let started = std::time::Instant::now();
        let out = run_command(
            &ShellPolicy::new(),
            &ws,
            &request,
            &CancellationToken::new(),
        )
        .await
        .unwrap();
        let returned = started.elapsed();
        assert_eq!(out.ended, Ended::TimedOut);
        // Everything is dead when the call returns: the keeper exits last.
        assert_eq!(survivors(&t), Vec::<u32>::new());
        after_deadline.push(returned.saturating_sub(Duration::from_secs(1)));
    }
    after_deadline.sort();
    println!(
        "from the deadline to the call's return with nothing left: median {:?}, max {:?}",
        after_deadline[after_deadline.len() / 2],
        after_deadline[after_deadline.len() - 1]
    );
}

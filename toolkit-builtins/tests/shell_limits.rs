//! A command's processes and memory are bounded by a control group of its
//! own, whatever it runs: loops of background jobs, a script that starts
//! itself, a thread bomb, a shell variable or many processes that grow
//! without end, and attempts to raise the bounds or leave the group from
//! inside. The host watches the group from outside while each attack runs
//! and counts the most it ever held.
#![cfg(all(feature = "shell", target_os = "linux"))]

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use toolsmith::CancellationToken;
use toolsmith_builtins::Workspace;
mod cgroup_support;
mod shell_support;

use cgroup_support::{host_can_make_groups, our_groups};

use toolsmith_builtins::shell::{
    CommandOutput, CommandRequest, KernelWalls, ShellPolicy, run_command,
};

/// Processes a command may have in these tests.
const PROCESSES: u64 = 24;
/// Memory a command may use in these tests.
const MEMORY: u64 = 64 << 20;

/// One attack at a time: each is watched through the groups this process
/// made, which must be its only ones.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The most processes, and the most memory, the command's group held while
/// `run` ran, sampled every few milliseconds from outside.
async fn watched(run: impl Future<Output = CommandOutput>) -> (CommandOutput, u64, u64) {
    let (most_processes, most_memory) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let done = Arc::new(AtomicBool::new(false));
    let watcher = {
        let (processes, memory, done) = (most_processes.clone(), most_memory.clone(), done.clone());
        std::thread::spawn(move || {
            let read = |path: PathBuf| {
                std::fs::read_to_string(path)
                    .ok()
                    .and_then(|s| s.trim().parse::<u64>().ok())
            };
            while !done.load(Ordering::SeqCst) {
                for group in our_groups() {
                    if let Some(n) = read(group.join("pids.current")) {
                        processes.fetch_max(n, Ordering::SeqCst);
                    }
                    // v1 and v2 names of the peak.
                    for peak in ["memory.max_usage_in_bytes", "memory.peak"] {
                        if let Some(n) = read(group.join(peak)) {
                            memory.fetch_max(n, Ordering::SeqCst);
                        }
                    }
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        })
    };
    let out = run.await;
    done.store(true, Ordering::SeqCst);
    watcher.join().unwrap();
    (
        out,
        most_processes.load(Ordering::SeqCst),
        most_memory.load(Ordering::SeqCst),
    )
}

/// Whether this machine gives commands a group; where it cannot, the gap
/// is named to the model (checked) and there is nothing to attack.
fn bounded() -> bool {
    let walls = KernelWalls::current();
    if !walls.resource_limits {
        let gaps = walls.gaps(&ShellPolicy::new());
        assert!(gaps.iter().any(|g| g.contains("control group")), "{gaps:?}");
        assert!(
            !host_can_make_groups(),
            "this host can make control groups, yet gave commands none"
        );
        eprintln!("skipped: this system gives commands no control group ({walls})");
        return false;
    }
    true
}

/// Run `script` as `sh attack.sh`: the command filter sees only that, so
/// the kernel's walls are all that stands.
async fn attack(script: &str, timeout_secs: u64) -> (CommandOutput, u64, u64) {
    attack_with(script, timeout_secs, true).await
}

/// [`attack`], in a PID namespace of its own or not.
async fn attack_with(
    script: &str,
    timeout_secs: u64,
    pid_namespace: bool,
) -> (CommandOutput, u64, u64) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("attack.sh"), script).unwrap();
    std::fs::write(
        dir.path().join("twice.sh"),
        "sh twice.sh & sh twice.sh & wait\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("threads.py"),
        "import threading, time\n\
         n = 0\n\
         try:\n\
         \x20   for _ in range(2000):\n\
         \x20       threading.Thread(target=time.sleep, args=(3,), daemon=True).start()\n\
         \x20       n += 1\n\
         except RuntimeError:\n\
         \x20   pass\n\
         print('threads', n)\n",
    )
    .unwrap();
    let ws = Workspace::new(dir.path()).unwrap();
    let policy = ShellPolicy::new()
        .allow_env(["PATH"])
        .with_max_processes(PROCESSES)
        .with_max_memory(MEMORY)
        .with_pid_namespace(pid_namespace);
    let request = CommandRequest {
        command: "sh attack.sh".to_owned(),
        working_dir: None,
        timeout: Some(Duration::from_secs(timeout_secs)),
    };
    watched(async {
        run_command(&policy, &ws, &request, &CancellationToken::new())
            .await
            .unwrap_or_else(|e| panic!("{script}: {e}"))
    })
    .await
}

/// Attacks on the number of processes: each tries for more than the bound.
const PROCESS_ATTACKS: &[(&str, &str)] = &[
    (
        "a loop of background jobs",
        "i=0; while [ $i -lt 200 ]; do sleep 3 & i=$((i+1)); done; echo started $i",
    ),
    ("a script that starts itself twice", "sh twice.sh"),
    ("a thread bomb", "python3 threads.py"),
    (
        "raising its own bound first",
        "for f in /sys/fs/cgroup/pids/toolsmith-*/pids.max $(sed -n 's/^[0-9]*:pids:/\\/sys\\/fs\\/cgroup\\/pids/p' /proc/self/cgroup)/pids.max; do echo max > $f; done; \
         i=0; while [ $i -lt 200 ]; do sleep 3 & i=$((i+1)); done; echo started $i",
    ),
    (
        "leaving its group first",
        "echo $$ > /sys/fs/cgroup/pids/cgroup.procs; echo 0 > /sys/fs/cgroup/pids/cgroup.procs; \
         i=0; while [ $i -lt 200 ]; do sleep 3 & i=$((i+1)); done; echo started $i",
    ),
];

#[tokio::test]
async fn no_command_holds_more_processes_than_its_bound() {
    let _one = ONE_AT_A_TIME.lock().await;
    if !bounded() {
        return;
    }
    let mut contained = 0;
    for (name, command) in PROCESS_ATTACKS {
        let (out, most, _) = attack(command, 4).await;
        let text = out.to_model_text();
        eprintln!("{name}: at most {most} processes\n{text}");
        assert!(most <= PROCESSES, "{name}: {most} processes\n{text}");
        // And the attack did reach the bound: the kernel refused a fork,
        // and the model is told so.
        assert!(
            text.contains("Cannot fork") || text.contains("threads "),
            "{name}: the attack never reached the bound ({most})\n{text}"
        );
        assert!(!text.contains("threads 2000"), "{name}\n{text}");
        assert!(
            text.contains(&format!("more than {PROCESSES} processes")),
            "{name}: the model is not told\n{text}"
        );
        assert!(
            !text.contains("started 200"),
            "{name}: every job started\n{text}"
        );
        contained += 1;
    }
    eprintln!(
        "processes: tried {}, contained {contained}, escaped {}",
        PROCESS_ATTACKS.len(),
        PROCESS_ATTACKS.len() - contained
    );
}

/// Attacks on memory: each holds more than the bound, in one process or
/// spread over several.
const MEMORY_ATTACKS: &[(&str, &str)] = &[
    (
        "a shell variable of 300 MB",
        "x=$(head -c 300000000 /dev/zero | tr '\\0' a); echo held ${#x}",
    ),
    (
        "four processes of 30 MB each",
        "for i in 1 2 3 4; do (x=$(head -c 30000000 /dev/zero | tr '\\0' a); sleep 2; echo held ${#x}) & done; wait",
    ),
    (
        "raising its own bound first",
        "for f in $(sed -n 's/^[0-9]*:memory:/\\/sys\\/fs\\/cgroup\\/memory/p' /proc/self/cgroup)/memory.limit_in_bytes; do echo -1 > $f; done; \
         x=$(head -c 300000000 /dev/zero | tr '\\0' a); echo held ${#x}",
    ),
];

#[tokio::test]
async fn no_command_holds_more_memory_than_its_bound() {
    let _one = ONE_AT_A_TIME.lock().await;
    if !bounded() {
        return;
    }
    for (name, command) in MEMORY_ATTACKS {
        let (out, _, most) = attack(command, 20).await;
        let text = out.to_model_text();
        eprintln!("{name}: at most {} MiB\n{text}", most >> 20);
        assert!(most <= MEMORY, "{name}: {most} bytes\n{text}");
        let held = text.matches("held").count();
        let all = if name.starts_with("four") { 4 } else { 1 };
        assert!(held < all, "{name}: every allocation was held\n{text}");
        assert!(
            text.contains(&format!("memory bound of {} MiB", MEMORY >> 20)),
            "{name}: the model is not told\n{text}"
        );
    }
}

#[tokio::test]
async fn ordinary_commands_run_and_leave_no_process_behind() {
    let _one = ONE_AT_A_TIME.lock().await;
    if !bounded() {
        return;
    }
    let (out, _, _) = attack(
        "for i in 1 2 3 4 5 6 7 8; do sleep 0.1 & done; wait; x=$(head -c 1000000 /dev/zero | tr '\\0' a); echo ok ${#x}",
        20,
    )
    .await;
    let text = out.to_model_text();
    assert_eq!(out.exit_code, Some(0), "{text}");
    assert!(text.contains("ok 1000000"), "{text}");
    assert!(
        !text.contains("bound"),
        "no bound reached, none named: {text}"
    );
    // Emptied once the command is reaped (maybe a moment after the call),
    // and kept for the next command.
    let empty = |group: &PathBuf| {
        std::fs::read_to_string(group.join("cgroup.procs")).is_ok_and(|p| p.trim().is_empty())
    };
    for _ in 0..100 {
        if our_groups().iter().all(empty) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("processes left behind in {:?}", our_groups());
}

/// A memory group removed while the page cache of the files its command
/// wrote is still charged to it stays in the kernel until those pages go,
/// holding one of the 65,535 memory-group IDs the whole machine shares. So
/// a command's group is kept for the next one instead: a run of commands
/// that each leave a file behind uses the same few groups, not one each.
#[tokio::test]
async fn commands_that_leave_files_behind_reuse_their_groups() {
    let _one = ONE_AT_A_TIME.lock().await;
    if !bounded() {
        return;
    }
    const COMMANDS: usize = 20;
    // Every group that exists while the commands run, seen from outside.
    let done = Arc::new(AtomicBool::new(false));
    let watcher = {
        let done = done.clone();
        std::thread::spawn(move || {
            let mut names = std::collections::BTreeSet::new();
            while !done.load(Ordering::SeqCst) {
                names.extend(
                    our_groups()
                        .iter()
                        .filter_map(|g| Some(g.file_name()?.to_owned())),
                );
                std::thread::sleep(Duration::from_millis(5));
            }
            names
        })
    };
    for i in 0..COMMANDS {
        let (out, _, _) = attack(
            &format!("head -c 200000 /dev/urandom > kept-{i}; sleep 0.05; echo ok"),
            20,
        )
        .await;
        assert_eq!(out.exit_code, Some(0), "{}", out.to_model_text());
    }
    done.store(true, Ordering::SeqCst);
    let names = watcher.join().unwrap();
    eprintln!("{COMMANDS} commands used {} groups: {names:?}", names.len());
    assert!(
        (1..=3).contains(&names.len()),
        "{COMMANDS} commands used {} groups: {names:?}",
        names.len()
    );
}

/// Files a command leaves in a `tmpfs` stay charged to its group, and the
/// kernel cannot reclaim them as it does the page cache of files on disk:
/// a group kept for the next command would bound it by that much less. A
/// kept group that holds much of the bound is not given out again.
#[tokio::test]
async fn files_left_in_memory_do_not_shrink_the_next_commands_bound() {
    let _one = ONE_AT_A_TIME.lock().await;
    if !bounded() {
        return;
    }
    let in_memory = std::fs::read_to_string("/proc/mounts")
        .is_ok_and(|mounts| mounts.lines().any(|m| m.starts_with("tmpfs /dev/shm ")));
    let Ok(dir) = tempfile::tempdir_in("/dev/shm").map_err(|e| eprintln!("{e}")) else {
        eprintln!("skipped: no /dev/shm to put a workspace in");
        return;
    };
    if !in_memory {
        eprintln!("skipped: /dev/shm is not a tmpfs here");
        return;
    }
    let ws = Workspace::new(dir.path()).unwrap();
    let policy = ShellPolicy::new()
        .allow_env(["PATH"])
        .with_max_processes(PROCESSES)
        .with_max_memory(MEMORY);
    let run = |command: &str| {
        let request = CommandRequest {
            command: command.to_owned(),
            working_dir: None,
            timeout: Some(Duration::from_secs(20)),
        };
        let (policy, ws) = (&policy, &ws);
        async move {
            run_command(policy, ws, &request, &CancellationToken::new())
                .await
                .unwrap()
        }
    };
    // 40 MB left in memory, then 40 MB allocated: within a fresh 64 MiB
    // bound, not within one that still holds the file.
    let left = run("head -c 40000000 /dev/zero > held; echo left").await;
    assert_eq!(left.exit_code, Some(0), "{}", left.to_model_text());
    for _ in 0..3 {
        let out = run("python3 -c 'b = bytearray(40_000_000); print(len(b))'").await;
        let text = out.to_model_text();
        assert_eq!(out.exit_code, Some(0), "{text}");
        assert!(text.contains("40000000"), "{text}");
    }
}

/// `clone3` with `CLONE_INTO_CGROUP` starts a child in the group a
/// descriptor names, and opening a group's directory is only a read: the
/// child would be out of the command's bounds. Tried into every hierarchy
/// root the command can open.
#[tokio::test]
async fn no_child_is_started_into_another_control_group() {
    let _one = ONE_AT_A_TIME.lock().await;
    if !bounded() {
        return;
    }
    let script = r#"python3 - <<'EOF'
import ctypes, os, struct
libc = ctypes.CDLL(None, use_errno=True)
for target in ["/sys/fs/cgroup", "/sys/fs/cgroup/unified", "/sys/fs/cgroup/pids", "/sys/fs/cgroup/memory"]:
    try:
        fd = os.open(target, os.O_RDONLY | os.O_DIRECTORY)
    except OSError as e:
        print(target, "not opened", e.errno)
        continue
    # struct clone_args: flags (CLONE_INTO_CGROUP), pidfd, child_tid,
    # parent_tid, exit_signal (SIGCHLD), stack, stack_size, tls, set_tid,
    # set_tid_size, cgroup
    args = ctypes.create_string_buffer(struct.pack("11Q", 0x200000000, 0, 0, 0, 17, 0, 0, 0, 0, 0, fd))
    pid = libc.syscall(435, args, 88)
    if pid == 0:
        os._exit(0)
    if pid > 0:
        os.waitpid(pid, 0)
        print(target, "started a child")
    else:
        print(target, "refused", ctypes.get_errno())
EOF"#;
    let (out, _, _) = attack(script, 20).await;
    let text = out.to_model_text();
    eprintln!("{text}");
    assert!(text.contains("refused"), "the attack did not run\n{text}");
    assert!(!text.contains("started a child"), "{text}");
}

/// Memory the command holds outside its processes' own pages (a `memfd`)
/// would leave the keeper, whose pages are the host's, the largest process
/// in the group. The kernel must kill the command, not the keeper: without
/// a PID namespace, a killed keeper leaves the command's processes running.
#[tokio::test]
async fn the_memory_bound_never_kills_the_keeper() {
    let _one = ONE_AT_A_TIME.lock().await;
    if !bounded() {
        return;
    }
    let tag = shell_support::tag();
    let script = format!(
        "setsid sleep {tag} >/dev/null 2>&1 &\n\
         python3 -c 'import os\nfd = os.memfd_create(\"hog\")\nfor _ in range(300): os.write(fd, b\"x\" * (1 << 20))\nprint(\"held\")'\n"
    );
    // A host of some size, as an agent is: the keeper, forked from it,
    // would show the largest resident size in the group.
    let ballast = vec![1u8; 256 << 20];
    let (out, _, most) = attack_with(&script, 20, false).await;
    std::hint::black_box(&ballast);
    let text = out.to_model_text();
    eprintln!("at most {} MiB\n{text}", most >> 20);
    assert!(!text.contains("held"), "{text}");
    assert!(text.contains("memory bound"), "{text}");
    shell_support::assert_gone(&tag).await;
}

/// System V shared memory belongs to an IPC namespace, not to a process:
/// made in the host's, it would stay after the command, outside any
/// bound, for as long as the host runs.
#[tokio::test]
async fn shared_memory_a_command_makes_goes_with_it() {
    let _one = ONE_AT_A_TIME.lock().await;
    if !bounded() {
        return;
    }
    // A size nothing else uses, to find the segment by.
    const SIZE: u64 = 12_345_679;
    let segments = || {
        std::fs::read_to_string("/proc/sysvipc/shm")
            .unwrap_or_default()
            .lines()
            .filter(|line| line.split_whitespace().nth(3) == Some(&SIZE.to_string()))
            .count()
    };
    let before = segments();
    let script = format!(
        "python3 -c 'import ctypes\nlibc = ctypes.CDLL(None)\nprint(\"segment\", libc.shmget(0, {SIZE}, 0o1600))'\n"
    );
    let (out, _, _) = attack(&script, 20).await;
    let text = out.to_model_text();
    assert!(text.contains("segment "), "{text}");
    assert!(
        !text.contains("segment -1"),
        "the attack did not run\n{text}"
    );
    assert_eq!(segments(), before, "a segment outlived the command\n{text}");
}

/// A command whose workspace holds the control groups (a workspace of `/`)
/// may write to its own group's settings even under Landlock, so its group
/// is removed after it, never kept for the next command; a command in an
/// ordinary workspace leaves its group kept, empty, for the next.
#[tokio::test]
async fn a_group_a_command_could_write_to_is_not_kept() {
    let _one = ONE_AT_A_TIME.lock().await;
    if !bounded() {
        return;
    }
    let ordinary = tempfile::tempdir().unwrap();
    for (root, kept) in [(std::path::Path::new("/"), false), (ordinary.path(), true)] {
        // The groups with a process in them while the command runs, seen
        // from outside (inside, a command sees its group as `/`).
        let done = Arc::new(AtomicBool::new(false));
        let watcher = {
            let done = done.clone();
            std::thread::spawn(move || {
                let mut busy = std::collections::BTreeSet::new();
                while !done.load(Ordering::SeqCst) {
                    for group in our_groups() {
                        let current = std::fs::read_to_string(group.join("pids.current"));
                        if current.is_ok_and(|n| n.trim() != "0") {
                            busy.insert(group);
                        }
                    }
                    std::thread::sleep(Duration::from_millis(5));
                }
                busy
            })
        };
        let ws = Workspace::new(root).unwrap();
        let policy = ShellPolicy::new().allow_env(["PATH"]);
        let request = CommandRequest {
            command: "sleep 0.3; echo ran".to_owned(),
            working_dir: None,
            timeout: Some(Duration::from_secs(20)),
        };
        let out = run_command(&policy, &ws, &request, &CancellationToken::new())
            .await
            .unwrap();
        done.store(true, Ordering::SeqCst);
        let busy = watcher.join().unwrap();
        assert_eq!(out.exit_code, Some(0), "{}", out.to_model_text());
        assert_eq!(busy.len(), 1, "{root:?}: groups in use: {busy:?}");
        let group = busy.first().unwrap();
        assert_eq!(group.exists(), kept, "{root:?}: its group {group:?} kept");
    }
}

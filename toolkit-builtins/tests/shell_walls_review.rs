//! A hostile review of the kernel's walls around `exec`: attacks by class,
//! run with real processes, sockets and files from a compiled program
//! (`tests/review/probe.c`) and scripts in the workspace, so the command
//! filter never sees them and only the kernel stands in the way.
//!
//! Each test states what the wall must do; each was an escape before the
//! wall it names was built (capabilities dropped, the seccomp filter, the
//! command's own session, descriptors closed at `exec`, `/dev` granted
//! device by device, its own `/proc` readable).
#![cfg(all(feature = "shell", target_os = "linux"))]

use std::io::Read;
use std::net::TcpListener;
use std::os::unix::net::UnixListener;
use std::path::Path;
use std::time::{Duration, Instant};

use toolsmith::CancellationToken;
use toolsmith_builtins::Workspace;
use toolsmith_builtins::shell::{
    CommandOutput, CommandRequest, KernelWalls, ProcessIsolation, ShellPolicy, run_command,
};

/// These tests listen on ports and count processes: one at a time.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// What every probe writes to a socket it managed to open.
const MARK: &str = "review-wall-mark";

/// A workspace holding the compiled probe, or `None` (with a line saying
/// why) when this system cannot run these tests.
fn workspace_with_probe() -> Option<tempfile::TempDir> {
    let walls = KernelWalls::current();
    if !walls.scoping() || walls.process_isolation != ProcessIsolation::PidNamespace {
        println!("skipped: this system offers less than these tests check ({walls})");
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/review/probe.c");
    let built = std::process::Command::new("cc")
        .arg("-O")
        .arg("-o")
        .arg(dir.path().join("probe"))
        .arg(source)
        .status()
        .is_ok_and(|s| s.success());
    if !built {
        println!("skipped: no C compiler to build the probe");
        return None;
    }
    Some(dir)
}

/// Run `script` (sh) from the workspace `dir` under `policy`.
async fn run_in(policy: &ShellPolicy, dir: &Path, script: &str) -> CommandOutput {
    let ws = Workspace::new(dir).unwrap();
    std::fs::write(dir.join("attack.sh"), script).unwrap();
    let request = CommandRequest {
        command: "sh attack.sh".into(),
        working_dir: None,
        timeout: Some(Duration::from_secs(20)),
    };
    tokio::time::timeout(
        Duration::from_secs(40),
        run_command(policy, &ws, &request, &CancellationToken::new()),
    )
    .await
    .expect("the call returns")
    .unwrap()
}

/// The default policy, with and without a PID namespace.
fn policies() -> [(&'static str, ShellPolicy); 2] {
    let base = ShellPolicy::new().allow_env(["PATH"]);
    [
        ("pid namespace", base.clone()),
        ("subreaper only", base.with_pid_namespace(false)),
    ]
}

/// Only the subreaper mode: where the host and the keeper are visible.
fn without_namespace() -> ShellPolicy {
    ShellPolicy::new()
        .allow_env(["PATH"])
        .with_pid_namespace(false)
}

/// Lines of the probe's output saying that something was allowed.
fn allowed(text: &str) -> Vec<&str> {
    text.lines().filter(|l| l.ends_with(": ALLOWED")).collect()
}

/// Everything a loopback TCP listener received until `deadline`.
fn drain_tcp(listener: &TcpListener, deadline: Duration) -> String {
    listener.set_nonblocking(true).unwrap();
    let until = Instant::now() + deadline;
    let mut got = String::new();
    while Instant::now() < until {
        match listener.accept() {
            Ok((mut stream, _)) => {
                stream.set_nonblocking(false).unwrap();
                stream
                    .set_read_timeout(Some(Duration::from_millis(500)))
                    .unwrap();
                let mut buffer = [0u8; 64];
                let n = stream.read(&mut buffer).unwrap_or(0);
                got.push_str(&String::from_utf8_lossy(&buffer[..n]));
                got.push('|');
            }
            Err(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
    got
}

// ---------------------------------------------------------------- network

/// MPTCP is TCP on the wire (it falls back to plain TCP with a plain
/// listener), but Landlock's TCP rules match only `IPPROTO_TCP` sockets:
/// `socket(AF_INET, SOCK_STREAM, IPPROTO_MPTCP)` connects to any port.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mptcp_cannot_reach_a_port_the_policy_leaves_out() {
    let _one = ONE_AT_A_TIME.lock().await;
    let Some(dir) = workspace_with_probe() else {
        return;
    };
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    for (name, policy) in policies() {
        let out = run_in(&policy, dir.path(), &format!("./probe mptcp {port}")).await;
        let got = drain_tcp(&listener, Duration::from_millis(300));
        let text = out.to_model_text();
        assert!(
            !got.contains(MARK),
            "{name}: the listener got {got:?}\n{text}"
        );
        assert!(allowed(&text).is_empty(), "{name}:\n{text}");
    }
}

/// `sendto(…, MSG_FASTOPEN, addr)` on an unconnected TCP socket opens the
/// connection inside `sendmsg`, never calling `connect`, so the connect
/// rule is never asked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tcp_fast_open_cannot_reach_a_port_the_policy_leaves_out() {
    let _one = ONE_AT_A_TIME.lock().await;
    let Some(dir) = workspace_with_probe() else {
        return;
    };
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    for (name, policy) in policies() {
        let out = run_in(&policy, dir.path(), &format!("./probe tfo {port}")).await;
        let got = drain_tcp(&listener, Duration::from_millis(300));
        let text = out.to_model_text();
        assert!(
            !got.contains(MARK),
            "{name}: the listener got {got:?}\n{text}"
        );
        assert!(allowed(&text).is_empty(), "{name}:\n{text}");
    }
}

/// The ordinary ways in stay shut: `connect`, `TCP_FASTOPEN_CONNECT`
/// (which goes through `connect`), bash's `/dev/tcp`, and every spelling
/// of the loopback address.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connect_is_refused_by_every_address_spelling() {
    let _one = ONE_AT_A_TIME.lock().await;
    let Some(dir) = workspace_with_probe() else {
        return;
    };
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let script = format!(
        r#"
./probe tfo-connect {port}
for host in 127.0.0.1 127.1 2130706433 0x7f000001 0.0.0.0 localhost ::ffff:127.0.0.1; do
  bash -c "echo {MARK} > /dev/tcp/$host/{port}" 2>/dev/null && echo "bash $host: ALLOWED"
done
echo done
"#
    );
    for (name, policy) in policies() {
        let out = run_in(&policy, dir.path(), &script).await;
        let got = drain_tcp(&listener, Duration::from_millis(300));
        let text = out.to_model_text();
        assert!(text.contains("done"), "{name}:\n{text}");
        assert!(
            !got.contains(MARK),
            "{name}: the listener got {got:?}\n{text}"
        );
        assert!(allowed(&text).is_empty(), "{name}:\n{text}");
    }
}

/// `listen()` on a socket that was never bound binds an ephemeral port by
/// itself; Landlock checks only `bind()`, so a command with no bind port
/// still opens a listener any local process can connect to.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_without_bind_ports_cannot_listen() {
    let _one = ONE_AT_A_TIME.lock().await;
    let Some(dir) = workspace_with_probe() else {
        return;
    };
    for (name, policy) in policies() {
        let port_file = dir.path().join("listen.port");
        let _ = std::fs::remove_file(&port_file);
        let connector = std::thread::spawn(move || {
            let until = Instant::now() + Duration::from_secs(15);
            while Instant::now() < until {
                if let Ok(port) = std::fs::read_to_string(&port_file)
                    && let Ok(port) = port.trim().parse::<u16>()
                {
                    return std::net::TcpStream::connect(("127.0.0.1", port)).is_ok();
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            false
        });
        let out = run_in(&policy, dir.path(), "./probe listen").await;
        let connected = connector.join().unwrap();
        let text = out.to_model_text();
        assert!(
            !connected,
            "{name}: the host reached the command's listener\n{text}"
        );
        assert!(allowed(&text).is_empty(), "{name}:\n{text}");
    }
}

/// UDP is outside Landlock's network rules (GUARDS.md says so): a datagram
/// reaches any loopback port.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn udp_cannot_reach_a_loopback_port() {
    let _one = ONE_AT_A_TIME.lock().await;
    let Some(dir) = workspace_with_probe() else {
        return;
    };
    let udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = udp.local_addr().unwrap().port();
    udp.set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    for (name, policy) in policies() {
        let out = run_in(&policy, dir.path(), &format!("./probe udp {port}")).await;
        let mut buffer = [0u8; 64];
        let got = udp.recv_from(&mut buffer).map(|(n, _)| n).unwrap_or(0);
        assert_eq!(
            got,
            0,
            "{name}: a datagram arrived\n{}",
            out.to_model_text()
        );
    }
}

/// A Unix socket with a path outside the workspace (a host's D-Bus, Docker
/// or systemd socket in real life) is connected to: Landlock ABI 7 has no
/// rule for connecting to a named socket.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_unix_socket_outside_the_workspace_cannot_be_reached() {
    let _one = ONE_AT_A_TIME.lock().await;
    let Some(dir) = workspace_with_probe() else {
        return;
    };
    let outside = tempfile::tempdir().unwrap();
    let path = outside.path().join("host.sock");
    let listener = UnixListener::bind(&path).unwrap();
    listener.set_nonblocking(true).unwrap();
    for (name, policy) in policies() {
        let out = run_in(
            &policy,
            dir.path(),
            &format!("./probe unix {}", path.display()),
        )
        .await;
        let reached = listener.accept().is_ok();
        assert!(
            !reached,
            "{name}: the host's socket was reached\n{}",
            out.to_model_text()
        );
    }
}

// ----------------------------------------------------------- capabilities

/// Whether this test process runs as root.
fn running_as_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("0"))
}

/// A root host's command keeps every capability: raw and packet sockets
/// (craft or sniff any loopback traffic, the host's requests included),
/// `CAP_NET_ADMIN` over the host's network namespace (firewall and NAT
/// rules: redirect an allowed port to a forbidden one), `CAP_SYS_BOOT`
/// (`reboot()`, which outside a PID namespace stops the machine). Landlock
/// does not cover these; only dropping the capabilities does. The probe
/// shows each with a harmless call (a wrong reboot magic only tells
/// `EINVAL`, capability held, from `EPERM`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_root_hosts_command_holds_no_capabilities() {
    let _one = ONE_AT_A_TIME.lock().await;
    let Some(dir) = workspace_with_probe() else {
        return;
    };
    if !running_as_root() {
        println!("skipped: the host does not run as root");
        return;
    }
    let script =
        "./probe raw; ./probe netadmin; ./probe reboot; grep CapEff /proc/self/status; echo done";
    for (name, policy) in policies() {
        let out = run_in(&policy, dir.path(), script).await;
        let text = out.to_model_text();
        assert!(text.contains("done"), "{name}:\n{text}");
        assert!(allowed(&text).is_empty(), "{name}:\n{text}");
        assert!(!text.contains("CAP_SYS_BOOT HELD"), "{name}:\n{text}");
    }
}

/// With `CAP_NET_RAW` kept, a packet socket on `lo` reads the loopback
/// traffic of every process on the machine: here the host talking to a
/// local service with a secret in the request, as an agent talks to a
/// local model server or proxy with its API key.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hosts_loopback_traffic_cannot_be_sniffed() {
    use std::io::Write;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    let _one = ONE_AT_A_TIME.lock().await;
    let Some(dir) = workspace_with_probe() else {
        return;
    };
    if !running_as_root() {
        println!("skipped: the host does not run as root");
        return;
    }
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let talking = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let until = Instant::now() + Duration::from_secs(30);
            let mut client = std::net::TcpStream::connect(address).unwrap();
            let (mut server, _) = listener.accept().unwrap();
            let mut buffer = [0u8; 64];
            while !stop.load(Ordering::Relaxed) && Instant::now() < until {
                client
                    .write_all(b"authorization: review-sniffed-secret")
                    .unwrap();
                let _ = server.read(&mut buffer);
                std::thread::sleep(Duration::from_millis(50));
            }
        })
    };
    for (name, policy) in policies() {
        let out = run_in(&policy, dir.path(), "./probe sniff").await;
        let text = out.to_model_text();
        if text.contains("SNIFFED") {
            stop.store(true, Ordering::Relaxed);
            talking.join().unwrap();
            panic!("{name}: the host's traffic was read:\n{text}");
        }
    }
    stop.store(true, Ordering::Relaxed);
    talking.join().unwrap();
}

// ---------------------------------------------------------------- secrets

/// The first variable of the host's environment as the kernel keeps it
/// (`/proc/<pid>/environ` shows the block the process started with, not
/// what `set_var` changed later).
fn hosts_first_variable() -> String {
    let environ = std::fs::read("/proc/self/environ").unwrap();
    let first = environ.split(|b| *b == 0).find(|v| v.len() > 8).unwrap();
    String::from_utf8_lossy(first).into_owned()
}

/// Script lines finding the keeper from inside (subreaper mode): the
/// ancestor whose parent is the host.
fn find_keeper(host: u32) -> String {
    format!(
        r#"p=$$
while :; do
  pp=$(awk '/^PPid/{{print $2}}' /proc/$p/status)
  if [ "$pp" = "{host}" ] || [ -z "$pp" ] || [ "$pp" = 0 ]; then break; fi
  p=$pp
done
keeper=$p
echo "keeper $keeper"
"#
    )
}

/// Without a namespace the host is visible, and `/proc/<host>/environ`
/// opens and reads: the environment the host started with (API keys,
/// tokens) leaks, and the keeper's too, as it is a fork of the host. Seen
/// with a root host on Linux 6.18: Landlock refuses `mem` and attaching but
/// lets root's read of `environ` through (a host and a landlocked child
/// both running as an ordinary user are refused). The
/// existing test in `shell_walls.rs` sets its secret with `set_var`, which
/// `/proc/<pid>/environ` never shows, so it cannot see this.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hosts_starting_environment_is_unreadable_without_a_namespace() {
    let _one = ONE_AT_A_TIME.lock().await;
    let Some(dir) = workspace_with_probe() else {
        return;
    };
    let host = std::process::id();
    let secret = hosts_first_variable();
    let script = format!(
        "{}cat /proc/{host}/environ; echo; cat /proc/$keeper/environ; echo; ./probe ptrace {host}; ./probe ptrace $keeper; echo done\n",
        find_keeper(host)
    );
    let out = run_in(&without_namespace(), dir.path(), &script).await;
    let text = out.to_model_text();
    assert!(text.contains("done"), "{text}");
    assert!(
        !text.contains(&secret),
        "the host's {secret:?} leaked:\n{text}"
    );
}

/// The keeper is a fork of the host outside the Landlock domain, so its
/// memory holds the host's: it must be out of reach like the host's.
/// Attaching, `process_vm_readv`, `/proc/<pid>/mem`, `/root`, `/fd/*`,
/// `pidfd_getfd`, and signals (`kill`, `pidfd_send_signal`) are all refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_keepers_and_the_hosts_memory_and_descriptors_are_out_of_reach() {
    let _one = ONE_AT_A_TIME.lock().await;
    let Some(dir) = workspace_with_probe() else {
        return;
    };
    let host = std::process::id();
    let script = format!(
        "{}./probe ptrace {host}; ./probe ptrace $keeper; echo done\n",
        find_keeper(host)
    );
    let out = run_in(&without_namespace(), dir.path(), &script).await;
    let text = out.to_model_text();
    assert!(text.contains("done"), "{text}");
    let keeper: u32 = text
        .lines()
        .find_map(|l| l.strip_prefix("keeper "))
        .and_then(|p| p.trim().parse().ok())
        .unwrap();
    assert_ne!(keeper, host, "{text}");
    let leaks: Vec<&str> = allowed(&text)
        .into_iter()
        .filter(|l| !l.starts_with("open environ"))
        .collect();
    assert!(leaks.is_empty(), "{leaks:?}\n{text}");
    assert!(
        text.matches("ptrace attach: refused").count() == 2,
        "{text}"
    );
}

/// A descriptor the host holds without close-on-exec (inherited from its
/// own parent: a socket-activation socket, a log file, a pipe) is passed
/// to the command, open, whatever Landlock says about its path.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hosts_inheritable_descriptors_do_not_reach_the_command() {
    use std::os::fd::AsRawFd;
    let _one = ONE_AT_A_TIME.lock().await;
    let Some(dir) = workspace_with_probe() else {
        return;
    };
    let outside = tempfile::tempdir().unwrap();
    let secret_path = outside.path().join("secret");
    std::fs::write(&secret_path, "review-fd-secret-771").unwrap();
    let file = std::fs::File::open(&secret_path).unwrap();
    let fd = file.as_raw_fd();
    // SAFETY: clearing close-on-exec on a descriptor this test owns.
    unsafe { libc::fcntl(fd, libc::F_SETFD, 0) };
    for (name, policy) in policies() {
        let out = run_in(
            &policy,
            dir.path(),
            &format!("./probe fd {fd}; (cat <&{fd}); echo done"),
        )
        .await;
        let text = out.to_model_text();
        assert!(text.contains("done"), "{name}:\n{text}");
        assert!(!text.contains("review-fd-secret-771"), "{name}:\n{text}");
    }
    drop(file);
}

/// `/dev` is granted whole for reading, and `/dev/shm` is under it: the
/// POSIX shared memory of every process (a browser's, a database's, the
/// host's own) is readable, root's `0600` files included when the host
/// runs as root.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shared_memory_outside_the_command_is_unreadable() {
    use std::os::unix::fs::OpenOptionsExt;
    let _one = ONE_AT_A_TIME.lock().await;
    let Some(dir) = workspace_with_probe() else {
        return;
    };
    let shm = Path::new("/dev/shm").join(format!("review-walls-{}", std::process::id()));
    {
        use std::io::Write;
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&shm)
            .unwrap();
        file.write_all(b"review-shm-secret-5521").unwrap();
    }
    let mut leaks = Vec::new();
    for (name, policy) in policies() {
        let out = run_in(
            &policy,
            dir.path(),
            &format!("cat {}; echo; echo done", shm.display()),
        )
        .await;
        let text = out.to_model_text();
        if text.contains("review-shm-secret-5521") {
            leaks.push(format!("{name}:\n{text}"));
        }
    }
    std::fs::remove_file(&shm).unwrap();
    assert!(leaks.is_empty(), "{leaks:?}");
}

/// In its namespace the command gets a `/proc` of its own, but that new
/// `proc` mount is not beneath the `/proc` rule Landlock was given (the
/// rule holds the host's `/proc` inode), so every read under `/proc` is
/// refused: `ps`, `/proc/self/fd`, `/proc/self/status` all fail. The
/// namespace test in `shell_walls.rs` counts the entries of `ls /proc` and
/// passes because `ls` fails.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_its_namespace_the_command_reads_its_own_proc() {
    let _one = ONE_AT_A_TIME.lock().await;
    let Some(dir) = workspace_with_probe() else {
        return;
    };
    let out = run_in(
        &ShellPolicy::new().allow_env(["PATH"]),
        dir.path(),
        "grep -c . /proc/self/status && ls /proc | grep -c '^[0-9]' && echo readable",
    )
    .await;
    assert!(
        out.stdout.text().contains("readable"),
        "{}",
        out.to_model_text()
    );
}

// ------------------------------------------------------------------ files

/// Mounting (which would hide or replace anything), unmounting `/proc`,
/// `open_by_handle_at` (the classic container escape), a hard link out of
/// `/etc`, `/proc/self/root`, and writes out through rename, link and a
/// symlink made by the command: all refused, with and without a namespace,
/// though the command is root and `unshare` itself is allowed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mounts_handles_links_and_renames_do_not_leave_the_workspace() {
    let _one = ONE_AT_A_TIME.lock().await;
    let Some(dir) = workspace_with_probe() else {
        return;
    };
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("target");
    std::fs::write(&target, "untouched").unwrap();
    let script = format!(
        r#"
./probe unshare | grep -v 'unshare\|chroot'
./probe handle /etc/shadow
./probe handle {target}
cat /proc/self/root/etc/shadow && echo "shadow via root: ALLOWED"
ln /etc/passwd ./pw 2>/dev/null && echo "hard link from /etc: ALLOWED"
echo changed > here; mv here {target} 2>/dev/null && echo "rename out: ALLOWED"
ln -f here {target} 2>/dev/null && echo "link out: ALLOWED"
ln -s {target} out && echo changed > out 2>/dev/null && echo "write through own symlink: ALLOWED"
echo done
"#,
        target = target.display()
    );
    for (name, policy) in policies() {
        let out = run_in(&policy, dir.path(), &script).await;
        let text = out.to_model_text();
        assert!(text.contains("done"), "{name}:\n{text}");
        // Getting a handle only looks the path up; opening it is the attack.
        let opened: Vec<&str> = allowed(&text)
            .into_iter()
            .filter(|l| !l.starts_with("name_to_handle_at"))
            .collect();
        assert!(opened.is_empty(), "{name}: {opened:?}\n{text}");
        assert!(
            text.contains("open_by_handle_at: refused"),
            "{name}:\n{text}"
        );
        assert!(!text.contains("READ:"), "{name}:\n{text}");
        assert_eq!(
            std::fs::read_to_string(&target).unwrap(),
            "untouched",
            "{name}"
        );
        let _ = std::fs::remove_file(dir.path().join("out"));
    }
}

// --------------------------------------------------------------- lifetime

/// Processes whose command line holds `tag`, this one excepted.
fn survivors(tag: &str) -> Vec<String> {
    let me = std::process::id().to_string();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.bytes().all(|b| b.is_ascii_digit()) || name == me {
            continue;
        }
        if let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) {
            let text = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            if text.contains(tag) {
                found.push(format!("{name}: {text}"));
            }
        }
    }
    found
}

/// Ways to outlive the call beyond `shell_lifetime.rs`'s: a sibling made
/// with `CLONE_PARENT`, the command making itself a subreaper, a zombie
/// flood, a nested PID namespace, `nsenter` into the host's namespaces, a
/// ptrace-stopped and a `SIGSTOP`ped process, a loop of `setsid` forks
/// racing the teardown, `systemd-run`. Nothing is left right after the call
/// nor 2 s later, with and without a namespace.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_started_outlives_the_call_whatever_it_tries() {
    let _one = ONE_AT_A_TIME.lock().await;
    let Some(dir) = workspace_with_probe() else {
        return;
    };
    let host = std::process::id();
    let attacks: &[(&str, &str)] = &[
        ("clone-parent", "./probe clone-parent TAG; sleep 0.3"),
        ("own-subreaper", "./probe subreaper TAG"),
        ("zombies", "./probe zombies TAG & sleep 0.5"),
        (
            "nested-pidns",
            "unshare -p -f sh -c 'sleep 30' TAG & sleep 0.5",
        ),
        (
            "nsenter",
            "nsenter -t 1 -p -m -- sh -c 'sleep 30' TAG & nsenter -t HOST -p -- sh -c 'sleep 30' TAG & sleep 0.5",
        ),
        (
            "traced",
            "strace -f -o /dev/null sh -c 'sleep 30' TAG & sleep 0.5",
        ),
        ("stopped", "sh -c 'kill -STOP $$; sleep 30' TAG & sleep 0.5"),
        (
            "fork-race",
            "sh -c 'i=0; while [ $i -lt 200 ]; do setsid sh -c \"sleep 30\" TAG & i=$((i+1)); done; wait' TAG & sleep 0.2",
        ),
        (
            "systemd-run",
            "systemd-run --no-block sh -c 'sleep 30' TAG; setsid -f nohup sh -c 'sleep 30' TAG",
        ),
    ];
    for (name, policy) in policies() {
        for (attack, script) in attacks {
            let tag = format!("review-tag-{attack}-{}-{host}", name.replace(' ', "-"));
            let script = script
                .replace("TAG", &tag)
                .replace("HOST", &host.to_string());
            let out = run_in(&policy, dir.path(), &script).await;
            let now = survivors(&tag);
            tokio::time::sleep(Duration::from_secs(2)).await;
            let later = survivors(&tag);
            assert!(
                now.is_empty() && later.is_empty(),
                "{name}, {attack}: {now:?} {later:?}\n{}",
                out.to_model_text()
            );
        }
    }
}

// --------------------------------------------------------------- resource

/// A command that fills its temporary directory with many files (and a
/// deep tree) still returns, and the directory is removed after the call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crowded_temporary_directory_is_removed_after_the_call() {
    let _one = ONE_AT_A_TIME.lock().await;
    let Some(dir) = workspace_with_probe() else {
        return;
    };
    let script = r#"
echo "$TMPDIR" > tmpdir.txt
cd "$TMPDIR" && seq 1 20000 | xargs touch
d="$TMPDIR"; for i in $(seq 1 200); do d="$d/d"; done; mkdir -p "$d"
ls "$TMPDIR" | wc -l
"#;
    let started = Instant::now();
    let out = run_in(&ShellPolicy::new().allow_env(["PATH"]), dir.path(), script).await;
    let returned = started.elapsed();
    let temp = std::fs::read_to_string(dir.path().join("tmpdir.txt")).unwrap();
    let temp = Path::new(temp.trim());
    let until = Instant::now() + Duration::from_secs(30);
    while temp.exists() && Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    println!(
        "20 000 files: the call returned after {returned:?}, the directory was gone {:?} later",
        started.elapsed() - returned
    );
    assert!(
        out.stdout.text().contains("20001"),
        "{}",
        out.to_model_text()
    );
    assert!(!temp.exists(), "{} is left", temp.display());
}

// --------------------------------------------------------------- terminal

/// Set in the child run by the terminal test.
const TTY_CHILD: &str = "REVIEW_WALLS_TTY_WORKSPACE";

/// Not a test of its own: the half of
/// [`the_hosts_terminal_is_out_of_reach`] that runs as a host with a
/// controlling terminal (under `script`); does nothing in a normal run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn terminal_host_half() {
    let Some(dir) = std::env::var_os(TTY_CHILD) else {
        return;
    };
    let out = run_in(
        &ShellPolicy::new().allow_env(["PATH"]),
        Path::new(&dir),
        "./probe tty",
    )
    .await;
    println!("command said: {}", out.to_model_text());
}

/// A host in a terminal (an agent's command line) shares its session with
/// the command, which is put in its own process group but not its own
/// session: `/dev/tty` (writable under Landlock) opens the host's
/// terminal, where the command can write what the user will read as the
/// host's words, and `TIOCSTI` pushes keystrokes into its input, run by the
/// user's shell once the host exits, outside every wall.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hosts_terminal_is_out_of_reach() {
    let _one = ONE_AT_A_TIME.lock().await;
    let Some(dir) = workspace_with_probe() else {
        return;
    };
    let exe = std::env::current_exe().unwrap();
    let inner = format!(
        "{} --exact terminal_host_half --nocapture --test-threads 1",
        exe.display()
    );
    let script = tokio::process::Command::new("script")
        .args(["-qec", &inner, "/dev/null"])
        .env(TTY_CHILD, dir.path())
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .output();
    let Ok(Ok(out)) = tokio::time::timeout(Duration::from_secs(60), script).await else {
        println!("skipped: no `script` to give the host a terminal");
        return;
    };
    let terminal = String::from_utf8_lossy(&out.stdout);
    assert!(terminal.contains("command said"), "{terminal}");
    assert!(
        !terminal.contains("TTY-REACHED"),
        "written to the host's terminal:\n{terminal}"
    );
    assert!(
        !terminal.contains("echo INJECTED"),
        "typed into the host's terminal:\n{terminal}"
    );
}

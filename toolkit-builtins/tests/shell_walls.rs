//! The kernel's walls around a command, tried from inside with real
//! processes, files, sockets and a loopback listener. Every attack runs
//! from a script file in the workspace, which the command filter cannot
//! read, so only the kernel stands in its way; each one is tried with the
//! command in its own PID namespace (the default) and without one.
#![cfg(all(feature = "shell", target_os = "linux"))]

use std::io::Read;
use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use toolsmith::CancellationToken;
use toolsmith_builtins::Workspace;
use toolsmith_builtins::shell::{
    CommandOutput, CommandRequest, KernelWalls, ProcessIsolation, ShellPolicy, run_command,
};

/// These tests set the environment and listen on ports: one at a time.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

const SECRET: &str = "k3rnel-wall-s3cret-9f2c";

fn walls() -> Option<KernelWalls> {
    let walls = KernelWalls::current();
    if !walls.scoping() || walls.process_isolation != ProcessIsolation::PidNamespace {
        println!("skipped: this system offers less than these tests check ({walls})");
        return None;
    }
    Some(walls)
}

/// Run `script` (sh) from the workspace under `policy`; returns its output
/// and the workspace.
async fn run_script(policy: &ShellPolicy, script: &str) -> (CommandOutput, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::new(dir.path()).unwrap();
    std::fs::write(dir.path().join("attack.sh"), script).unwrap();
    let request = CommandRequest {
        command: "sh attack.sh".into(),
        working_dir: None,
        timeout: Some(Duration::from_secs(20)),
    };
    let out = run_command(policy, &ws, &request, &CancellationToken::new())
        .await
        .unwrap();
    (out, dir)
}

fn policies() -> [(&'static str, ShellPolicy); 2] {
    // Every byte kept: a secret must not hide in a cut middle.
    let base = ShellPolicy::new()
        .allow_env(["PATH"])
        .with_max_output_bytes(64 << 20);
    [
        ("pid namespace", base.clone()),
        ("subreaper only", base.with_pid_namespace(false)),
    ]
}

#[tokio::test]
async fn the_hosts_environment_and_memory_are_unreadable() {
    let _one = ONE_AT_A_TIME.lock().await;
    if walls().is_none() {
        return;
    }
    // SAFETY: no other test of this binary runs meanwhile (the lock above).
    unsafe { std::env::set_var("TOOLSMITH_WALL_SECRET", SECRET) };
    let host = std::process::id();
    let script = format!(
        r#"
cat /proc/{host}/environ
cat /proc/*/environ
tr '\0' '\n' < /proc/{host}/environ
head -c 4096 /proc/{host}/mem
cat /proc/{host}/task/*/environ
ps e -A -ww 2>/dev/null
ps eww {host} 2>/dev/null
for p in /proc/[0-9]*; do cat $p/environ; done
env
grep -q TMPDIR /proc/self/environ && echo OWN-ENVIRONMENT-READABLE
python3 -c 'import os
for p in os.listdir("/proc"):
    try: print(open("/proc/"+p+"/environ","rb").read())
    except Exception as e: print(p, e)'
echo done
"#
    );
    for (name, policy) in policies() {
        let (out, _dir) = run_script(&policy, &script).await;
        let text = out.to_model_text();
        assert!(!text.contains(SECRET), "{name}: the secret leaked:\n{text}");
        // The command's own `/proc` works: the refusals above are the wall.
        assert!(text.contains("OWN-ENVIRONMENT-READABLE"), "{name}: {text}");
        assert!(text.contains("done"), "{name}: {text}");
    }
    // SAFETY: as above.
    unsafe { std::env::remove_var("TOOLSMITH_WALL_SECRET") };
}

#[tokio::test]
async fn in_its_namespace_a_command_sees_none_of_the_hosts_processes() {
    let _one = ONE_AT_A_TIME.lock().await;
    if walls().is_none() {
        return;
    }
    let host = std::process::id();
    let (out, _dir) = run_script(
        &ShellPolicy::new().allow_env(["PATH"]),
        &format!("ls /proc | grep -c '^[0-9]'; test -e /proc/{host} && echo HOST-VISIBLE; kill -0 {host} && echo SIGNALLED; echo done"),
    )
    .await;
    let text = out.stdout.text();
    // The shell, `ls` and `grep`: only the command's own processes.
    let visible: u32 = text.lines().next().unwrap().trim().parse().unwrap();
    assert!((1..=4).contains(&visible), "{text}");
    assert!(
        !text.contains("HOST-VISIBLE") && !text.contains("SIGNALLED"),
        "{text}"
    );
}

#[tokio::test]
async fn the_host_cannot_be_signalled_without_a_namespace_either() {
    let _one = ONE_AT_A_TIME.lock().await;
    if walls().is_none() {
        return;
    }
    let host = std::process::id();
    let policy = ShellPolicy::new()
        .allow_env(["PATH"])
        .with_pid_namespace(false);
    // SIGCONT: harmless if it got through, and `kill` says whether it did.
    // The keeper is the host's child: found through `/proc`, then signalled.
    let script = format!(
        r#"kill -CONT {host} && echo SIGNALLED
for p in /proc/[0-9]*; do
  if [ "$(cut -d' ' -f4 $p/stat 2>/dev/null)" = "{host}" ]; then
    echo "found the keeper ${{p#/proc/}}"
    kill -CONT ${{p#/proc/}} && echo KEEPER
  fi
done
echo done"#
    );
    let (out, _dir) = run_script(&policy, &script).await;
    let text = out.to_model_text();
    assert!(
        !text.contains("SIGNALLED") && !text.contains("KEEPER"),
        "{text}"
    );
    assert!(text.contains("found the keeper"), "{text}");
    assert!(text.contains("done"), "{text}");
}

/// A loopback listener that counts the connections it accepts.
fn counting_listener() -> (u16, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let accepted = Arc::new(AtomicUsize::new(0));
    let counter = accepted.clone();
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            counter.fetch_add(1, Ordering::SeqCst);
            let _ = stream.read(&mut [0u8; 16]);
        }
    });
    (port, accepted)
}

const CONNECT_PY: &str = r#"
import socket, sys
port = int(sys.argv[1])
for host in ["127.0.0.1", "localhost", "127.0.0.2", "::1"]:
    try:
        s = socket.create_connection((host, port), timeout=2)
        print("CONNECTED", host)
        s.close()
    except Exception as e:
        print("refused", host, e)
try:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen()
    print("LISTENING", s.getsockname())
except Exception as e:
    print("bind refused", e)
"#;

#[tokio::test]
async fn no_tcp_connection_or_listener_unless_the_policy_allows_the_port() {
    let _one = ONE_AT_A_TIME.lock().await;
    if walls().is_none() {
        return;
    }
    let (port, accepted) = counting_listener();
    for (name, policy) in policies() {
        let dir = tempfile::tempdir().unwrap();
        let (out, _dir) = run_script(
            &policy,
            &format!("cat > c.py <<'EOF'\n{CONNECT_PY}\nEOF\npython3 c.py {port}\n"),
        )
        .await;
        drop(dir);
        let text = out.to_model_text();
        assert!(!text.contains("CONNECTED"), "{name}: {text}");
        assert!(!text.contains("LISTENING"), "{name}: {text}");
        assert!(text.contains("Permission denied"), "{name}: {text}");
    }
    assert_eq!(accepted.load(Ordering::SeqCst), 0);

    // The same script reaches the port once the policy allows it: the
    // refusal above was the wall, not a broken script.
    let allowed = ShellPolicy::new()
        .allow_env(["PATH"])
        .allow_tcp_connect([port]);
    let (out, _dir) = run_script(
        &allowed,
        &format!("cat > c.py <<'EOF'\n{CONNECT_PY}\nEOF\npython3 c.py {port}\n"),
    )
    .await;
    let text = out.to_model_text();
    assert!(text.contains("CONNECTED 127.0.0.1"), "{text}");
    assert!(!text.contains("LISTENING"), "{text}");
    for _ in 0..100 {
        if accepted.load(Ordering::SeqCst) > 0 {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(accepted.load(Ordering::SeqCst) > 0);
}

#[tokio::test]
async fn abstract_unix_sockets_outside_the_command_are_closed() {
    use std::os::linux::net::SocketAddrExt;
    use std::os::unix::net::{SocketAddr, UnixListener};
    let _one = ONE_AT_A_TIME.lock().await;
    if walls().is_none() {
        return;
    }
    let name = format!("toolsmith-wall-test-{}", std::process::id());
    let addr = SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
    let listener = UnixListener::bind_addr(&addr).unwrap();
    listener.set_nonblocking(true).unwrap();
    let script = format!(
        r#"python3 -c '
import socket
try:
    s = socket.socket(socket.AF_UNIX)
    s.connect("\0{name}")
    print("CONNECTED")
except Exception as e:
    print("refused", e)
'"#
    );
    for (label, policy) in policies() {
        let (out, _dir) = run_script(&policy, &script).await;
        let text = out.to_model_text();
        assert!(text.contains("refused"), "{label}: {text}");
        assert!(!text.contains("CONNECTED"), "{label}: {text}");
    }
    assert!(listener.accept().is_err(), "a connection reached the host");
}

#[tokio::test]
async fn writes_land_only_in_the_workspace_and_the_commands_temp_dir() {
    let _one = ONE_AT_A_TIME.lock().await;
    if walls().is_none() {
        return;
    }
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("escaped");
    let script = format!(
        r#"
echo in > inside && echo WROTE-WORKSPACE
echo tmp > "$TMPDIR/t" && echo WROTE-TMPDIR
echo out > {target}
echo out > /tmp/toolsmith-wall-escape-{pid}
echo out > "$HOME/../escaped"
mkdir {outside}/d
ln -s {target} link && echo out > link
mv inside {outside}/moved
cat /etc/shadow /etc/gshadow
cat /etc/passwd > /dev/null && echo READ-PASSWD
echo done
"#,
        target = target.display(),
        outside = outside.path().display(),
        pid = std::process::id(),
    );
    for (name, policy) in policies() {
        let (out, dir) = run_script(&policy, &script).await;
        let text = out.to_model_text();
        assert!(
            text.contains("WROTE-WORKSPACE") && text.contains("WROTE-TMPDIR"),
            "{name}: {text}"
        );
        assert!(text.contains("READ-PASSWD"), "{name}: {text}");
        assert!(text.contains("Permission denied"), "{name}: {text}");
        assert!(!target.exists(), "{name}: {text}");
        assert!(
            std::fs::read_dir(outside.path()).unwrap().next().is_none(),
            "{name}: {text}"
        );
        assert!(
            !std::path::Path::new(&format!(
                "/tmp/toolsmith-wall-escape-{}",
                std::process::id()
            ))
            .exists(),
            "{name}: {text}"
        );
        assert!(
            !text.contains("root:"),
            "{name}: a secret of /etc was read: {text}"
        );
        assert!(dir.path().join("inside").exists(), "{name}");
    }
}

#[tokio::test]
async fn opting_out_removes_the_file_wall_and_says_so_nowhere_else() {
    use toolsmith_builtins::shell::Confinement;
    let _one = ONE_AT_A_TIME.lock().await;
    if walls().is_none() {
        return;
    }
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("written");
    let policy = ShellPolicy::new()
        .allow_env(["PATH"])
        .with_confinement(Confinement::Off);
    let (out, _dir) = run_script(&policy, &format!("echo x > {}", target.display())).await;
    assert!(target.exists(), "{}", out.to_model_text());
}

#[test]
fn the_walls_in_force_are_reported() {
    let walls = KernelWalls::current();
    let text = walls.to_string();
    match walls.landlock_abi {
        Some(abi) => assert!(
            text.starts_with(&format!("Landlock ABI {abi} (files")),
            "{text}"
        ),
        None => assert!(text.starts_with("no Landlock"), "{text}"),
    }
    assert!(walls.gaps(&ShellPolicy::new()).len() <= 4);
}

#[tokio::test]
async fn a_command_has_no_capabilities_even_when_the_host_is_root() {
    let _one = ONE_AT_A_TIME.lock().await;
    if walls().is_none() {
        return;
    }
    let script = r#"
grep -E '^Cap(Inh|Prm|Eff|Bnd|Amb)' /proc/self/status
python3 -c '
import socket
try:
    socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_TCP)
    print("RAW-SOCKET")
except Exception as e:
    print("raw refused", e)
'
mkdir m && mount -t tmpfs none m && echo MOUNTED
chown 1:1 attack.sh && echo CHOWNED
echo done
"#;
    for (name, policy) in policies() {
        let (out, _dir) = run_script(&policy, script).await;
        let text = out.to_model_text();
        for set in ["CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"] {
            let line = text
                .lines()
                .find(|l| l.starts_with(set))
                .unwrap_or_else(|| panic!("{name}: no {set} in {text}"));
            assert!(line.ends_with("0000000000000000"), "{name}: {line}");
        }
        for escaped in ["RAW-SOCKET", "MOUNTED", "CHOWNED"] {
            assert!(!text.contains(escaped), "{name}: {text}");
        }
        assert!(text.contains("done"), "{name}: {text}");
    }
}

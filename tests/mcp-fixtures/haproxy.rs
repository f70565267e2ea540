//! HAProxy, as `scripts/install_haproxy.sh` installs it from Debian's
//! packages, started by a test in front of servers it started: a
//! configuration written to a scratch folder, `haproxy -f cfg -db` as a
//! child process, stopped when dropped.

#![allow(dead_code)] // Each test file uses its own part of this.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::peers::Running;

/// The `haproxy` binary: on `PATH`, or in the `sbin` folders a package puts
/// it in (not always on a user's `PATH`). Fails the test with what to run
/// when it is not installed.
pub fn haproxy() -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/usr/local/sbin", "/sbin"].map(PathBuf::from))
        .map(|dir| dir.join("haproxy"))
        .find(|candidate| candidate.is_file())
        .expect("haproxy is not installed: run scripts/install_haproxy.sh")
}

/// A folder of its own for one test's files, removed when dropped.
pub struct Scratch(pub PathBuf);

impl Scratch {
    pub fn new(name: &str) -> Self {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "toolsmith-{name}-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::SeqCst)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }

    pub fn path(&self, file: &str) -> PathBuf {
        self.0.join(file)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The settings every test's configuration starts with: HTTP mode, bounded
/// waits, room for a thousand connections at once.
pub const GLOBAL: &str = "\
global
    maxconn 4096
    # A port another process holds is an error, not shared: with
    # SO_REUSEPORT two balancers of tests running at once on one port would
    # each get half of the other's connections.
    noreuseport

defaults
    mode http
    timeout connect 5s
    timeout client 60s
    timeout server 60s
";

/// `haproxy -f config -db` with `config` written to `dir`; returns once
/// `port` (its frontend's) accepts connections, or fails the test with
/// what HAProxy said.
pub fn start(dir: &Scratch, config: &str, port: u16) -> Running {
    let cfg = dir.path("haproxy.cfg");
    std::fs::write(&cfg, config).unwrap();
    let log = dir.path("haproxy.log");
    let mut child = Command::new(haproxy())
        .arg("-f")
        .arg(&cfg)
        .arg("-db")
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&log).unwrap())
        .stderr(std::fs::File::create(dir.path("haproxy.err")).unwrap())
        .spawn()
        .expect("haproxy starts");
    let said = |dir: &Scratch| {
        std::fs::read_to_string(dir.path("haproxy.err")).unwrap_or_default() + &read(&log)
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        if let Ok(Some(status)) = child.try_wait() {
            panic!(
                "haproxy exited ({status}) with:\n{}\nconfig:\n{config}",
                said(dir)
            );
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("haproxy did not listen on {port}:\n{}", said(dir));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Running {
        child,
        url: format!("http://127.0.0.1:{port}/mcp"),
    }
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// The `host:port` of a server's URL (`http://127.0.0.1:PORT/mcp`).
pub fn authority(url: &str) -> &str {
    let rest = url.split_once("://").unwrap().1;
    rest.split('/').next().unwrap()
}

/// Lift this process's limit on open files to its hard limit, so a
/// thousand connections at once fit where the soft limit is the usual
/// 1,024. The servers the test starts afterwards inherit it.
pub fn raise_open_files_limit() {
    // SAFETY: getrlimit/setrlimit only read and write the struct given.
    unsafe {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 && limit.rlim_cur < limit.rlim_max
        {
            limit.rlim_cur = limit.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
        }
    }
}

//! A server out of descriptors pauses between failed accepts instead of
//! spinning: `accept` fails at once, every time, while connections wait.
//! A binary of its own, as it lowers its process's descriptor limit.

use std::sync::Arc;
use std::time::Duration;

use tk::mcp::{HttpOptions, McpServer};
use tk::{CancellationToken, ToolRegistry};

/// The CPU time this process has used.
fn cpu_time() -> Duration {
    // SAFETY: `getrusage` fills the struct it is given.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        usage
    };
    let of = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
    };
    of(usage.ru_utime) + of(usage.ru_stime)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_out_of_descriptors_does_not_spin() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let at = listener.local_addr().unwrap();
    let shutdown = CancellationToken::new();
    tokio::spawn(
        McpServer::new(Arc::new(ToolRegistry::new()))
            .serve_http(listener, HttpOptions::default().shutdown(shutdown.clone())),
    );
    // Clients that connect when told, and wait, in a process of their own.
    let mut clients = std::process::Command::new("python3")
        .args([
            "-c",
            "import socket, sys, time\n\
             sys.stdin.readline()\n\
             s = [socket.create_connection(('127.0.0.1', int(sys.argv[1]))) for _ in range(4)]\n\
             print('connected', flush=True)\n\
             time.sleep(60)",
            &at.port().to_string(),
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Lower the limit, then take every descriptor left.
    // SAFETY: `setrlimit` reads the struct it is given.
    unsafe {
        let limit = libc::rlimit {
            rlim_cur: 256,
            rlim_max: libc::RLIM_INFINITY,
        };
        let mut old: libc::rlimit = std::mem::zeroed();
        libc::getrlimit(libc::RLIMIT_NOFILE, &mut old);
        let limit = libc::rlimit {
            rlim_max: old.rlim_max,
            ..limit
        };
        assert_eq!(libc::setrlimit(libc::RLIMIT_NOFILE, &limit), 0);
    }
    let mut held = Vec::new();
    while let Ok(file) = std::fs::File::open("/dev/null") {
        held.push(file);
    }
    {
        use std::io::{BufRead, Write};
        writeln!(clients.stdin.as_mut().unwrap(), "go").unwrap();
        let mut line = String::new();
        let out = clients.stdout.take().unwrap();
        std::io::BufReader::new(out).read_line(&mut line).unwrap();
        assert_eq!(line.trim(), "connected");
    }
    // The connections wait in the listen queue; every accept fails.
    let before = cpu_time();
    tokio::time::sleep(Duration::from_secs(3)).await;
    let spent = cpu_time() - before;
    drop(held);
    let _ = clients.kill();
    let _ = clients.wait();
    shutdown.cancel();
    assert!(
        spent < Duration::from_millis(300),
        "{spent:?} of CPU in 3 s with no descriptor left"
    );
}

//! Finding what a command left running, from the host's side.
//!
//! A command may run in a PID namespace of its own, where the process ids
//! it sees (`$!`, `$$`) mean nothing to the host. So the processes a test
//! starts carry a tag the host can find: `sleep` with a duration no other
//! process uses, which shows in `/proc/<pid>/cmdline`.
#![allow(dead_code)]

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

/// A `sleep` argument unique to this test process and call: `300.<pid><n>`.
pub fn tag() -> String {
    static NEXT: AtomicU32 = AtomicU32::new(1);
    format!(
        "300.{}{:04}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// Live (not zombie) processes whose command line has `tag` as an argument.
pub fn survivors(tag: &str) -> Vec<u32> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return found;
    };
    for entry in entries.flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
            continue;
        };
        let tagged = cmdline.split(|b| *b == 0).any(|arg| arg == tag.as_bytes());
        if tagged && process_state(pid).is_some_and(|s| s != 'Z') {
            found.push(pid);
        }
    }
    found
}

/// The state letter of a process (`R`, `S`, `Z`…), or `None` if it is gone.
pub fn process_state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_name = &stat[stat.rfind(')')? + 2..];
    after_name.chars().next()
}

/// Wait (a bounded number of rounds, never asserting on time) until no
/// process carries `tag`; the kernel reaps killed processes asynchronously.
pub async fn assert_gone(tag: &str) {
    for _ in 0..100 {
        if survivors(tag).is_empty() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!(
        "processes tagged {tag} are still running: {:?}",
        survivors(tag)
    );
}

/// [`assert_gone`], then again after `later`: nothing comes back either
/// (a process sleeping first, then forking, would show up only then).
pub async fn assert_gone_and_stays_gone(tag: &str, later: Duration) {
    assert_gone(tag).await;
    tokio::time::sleep(later).await;
    assert!(
        survivors(tag).is_empty(),
        "processes tagged {tag} came back: {:?}",
        survivors(tag)
    );
}

/// Children of this process that are zombies.
pub fn our_zombies() -> Vec<u32> {
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

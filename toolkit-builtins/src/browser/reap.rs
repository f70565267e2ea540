//! Ending every process of a stopped browser, so that its profile can go.
//!
//! Chromium's main process ending does not end the others at once: its
//! helpers (the zygote, renderers, the network service) notice a moment
//! later, and its crash handlers, which detach from it, run on. Until they
//! end they may write to the profile, and a removal that meets a file made
//! meanwhile fails ("directory not empty"): on a loaded machine the
//! profile was left behind. So they are killed, and the profile removed
//! only once none runs.

use std::collections::BTreeSet;
use std::time::Duration;

/// How long the processes of a stopped browser get to end once killed.
pub(crate) const WITHIN: Duration = Duration::from_secs(5);

/// How often they are looked for, and killed, until none runs.
pub(crate) const POLL: Duration = Duration::from_millis(20);

/// A process, told apart from a later one given the same pid by when it
/// started: a pid seen once may be another process's by the time it is
/// killed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Process {
    pid: u32,
    /// Clock ticks since boot (field 22 of `/proc/<pid>/stat`).
    started: u64,
}

impl Process {
    /// The process `pid` now, if it runs: a zombie has ended (it writes
    /// nothing more) and only waits for its parent.
    fn running(pid: u32) -> Option<Self> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // `pid (comm) state ppid ...`: comm may hold spaces and parentheses.
        let mut fields = stat.get(stat.rfind(')')? + 2..)?.split_whitespace();
        let state = fields.next()?;
        if matches!(state, "Z" | "X" | "x") {
            return None;
        }
        // Field 22; `fields` is now at field 4.
        let started = fields.nth(18)?.parse().ok()?;
        Some(Self { pid, started })
    }
}

/// The processes of a browser being stopped, as far as they are known.
#[derive(Debug, Default)]
pub(crate) struct Family {
    known: BTreeSet<Process>,
}

impl Family {
    /// Every process below the browser's main process `main` (not `main`
    /// itself, which is reaped, not killed, by its owner), read while it
    /// still runs: they leave its tree once it ends. Where the browser has
    /// a control group they are found there too; this is for where it has
    /// none.
    pub(crate) fn below(main: Option<u32>) -> Self {
        let known = main
            .map(crate::cgroup::tree)
            .unwrap_or_default()
            .into_iter()
            .filter(|pid| Some(*pid) != main)
            .filter_map(Process::running)
            .collect();
        Self { known }
    }

    /// Kills every process of the family still running, with `more` (the
    /// browser's group's members and the processes naming its profile, read
    /// now); whether none was left to kill. Called until it says so.
    pub(crate) fn kill_round(&mut self, more: impl IntoIterator<Item = u32>) -> bool {
        let host = std::process::id();
        self.known
            .extend(more.into_iter().filter_map(Process::running));
        // A process seen gone is dropped for good: its pid may be reused.
        self.known
            .retain(|p| p.pid != host && Process::running(p.pid) == Some(*p));
        for process in &self.known {
            let Ok(pid) = libc::pid_t::try_from(process.pid) else {
                continue;
            };
            // SAFETY: a plain system call; a process that ended since it was
            // read makes it fail with ESRCH, which is ignored.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
            }
        }
        self.known.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_left_running_is_killed_and_then_none_is_left() {
        let mut child = std::process::Command::new("sleep")
            .arg("600")
            .spawn()
            .unwrap();
        let mut family = Family::default();
        assert!(!family.kill_round([child.id()]), "it ran");
        // Killed, so it no longer runs (a zombie until reaped here).
        let status = child.wait().unwrap();
        assert!(!status.success());
        assert!(family.kill_round([]), "nothing left");
    }

    #[test]
    fn the_host_is_never_killed() {
        let mut family = Family::default();
        assert!(family.kill_round([std::process::id()]));
    }
}

//! What the running kernel enforces on commands, for the host to check and
//! for the tool's output to state where something is missing.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};

use super::{Confinement, ShellPolicy};

/// How a command's processes are kept apart from the host's and ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProcessIsolation {
    /// Its own PID and mount namespaces: it sees only its own processes,
    /// and all of them die with it.
    PidNamespace,
    /// A subreaper keeper: every descendant is still found and killed at
    /// the end, but the host's processes are visible (Landlock, where the
    /// kernel has it, still keeps their environment and memory unreadable).
    Subreaper,
    /// A process group only (systems other than Linux): a process that
    /// leaves the group can outlive the call.
    ProcessGroup,
}

/// The kernel's walls around a command in this process: which Landlock ABI
/// is in force and how the command's processes are isolated.
///
/// ```
/// use toolsmith_builtins::shell::KernelWalls;
///
/// let walls = KernelWalls::current();
/// println!("{walls}"); // e.g. "Landlock ABI 7 (files, TCP ports, scoping); own PID namespace; control group (processes, memory)"
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelWalls {
    /// The Landlock ABI version of the running kernel; `None` without Landlock.
    pub landlock_abi: Option<u32>,
    /// How the command's processes are kept apart from the host's and ended.
    pub process_isolation: ProcessIsolation,
    /// Whether each command gets a control group of its own that bounds
    /// its processes and memory ([`ShellPolicy::with_max_processes`],
    /// [`ShellPolicy::with_max_memory`]).
    pub resource_limits: bool,
}

impl KernelWalls {
    /// The walls this process can put up (found once, then cached).
    pub fn current() -> Self {
        Self {
            landlock_abi: landlock_abi(),
            process_isolation: process_isolation(),
            resource_limits: resource_limits(),
        }
    }

    /// Whether files outside the allowed paths are closed (Landlock ABI 1+).
    pub fn files(&self) -> bool {
        self.landlock_abi.is_some_and(|abi| abi >= 1)
    }

    /// Whether TCP connect and bind are limited to allowed ports (ABI 4+).
    pub fn tcp(&self) -> bool {
        self.landlock_abi.is_some_and(|abi| abi >= 4)
    }

    /// Whether abstract Unix sockets and signals outside the command are
    /// closed (ABI 6+).
    pub fn scoping(&self) -> bool {
        self.landlock_abi.is_some_and(|abi| abi >= 6)
    }

    /// What is missing under `policy`, in words; empty when every wall the
    /// policy asks for stands.
    pub fn gaps(&self, policy: &ShellPolicy) -> Vec<&'static str> {
        let mut gaps = Vec::new();
        if policy.confinement != Confinement::Off {
            if !self.files() {
                gaps.push("no Landlock: files outside the workspace are guarded only by the command filter");
            }
            if self.files() && !self.tcp() {
                gaps.push("Landlock below ABI 4: TCP connections are not limited");
            }
            if self.files() && !self.scoping() {
                gaps.push("Landlock below ABI 6: signals and abstract sockets outside the command are not blocked");
            }
        }
        match self.process_isolation {
            ProcessIsolation::PidNamespace if !policy.pid_namespace => {
                gaps.push("no PID namespace (the policy turned it off): the host's processes are visible to the command")
            }
            ProcessIsolation::PidNamespace => {}
            ProcessIsolation::Subreaper => {
                gaps.push("no PID namespace: the host's processes are visible to the command")
            }
            ProcessIsolation::ProcessGroup => gaps.push(
                "no subreaper: a process that leaves the command's group can outlive the call",
            ),
        }
        if !self.resource_limits {
            gaps.push("no control group: a command's processes and memory are bounded only by the machine's");
        }
        gaps
    }
}

impl fmt::Display for KernelWalls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.landlock_abi {
            None => f.write_str("no Landlock")?,
            Some(abi) => {
                let mut covers = vec!["files"];
                if self.tcp() {
                    covers.push("TCP ports");
                }
                if self.scoping() {
                    covers.push("scoping");
                }
                write!(f, "Landlock ABI {abi} ({})", covers.join(", "))?;
            }
        }
        f.write_str(match self.process_isolation {
            ProcessIsolation::PidNamespace => "; own PID namespace",
            ProcessIsolation::Subreaper => "; subreaper only, no PID namespace",
            ProcessIsolation::ProcessGroup => "; process group only",
        })?;
        f.write_str(if self.resource_limits {
            "; control group (processes, memory)"
        } else {
            "; no control group"
        })
    }
}

/// The filter a command is checked with: the policy's own, or, where the
/// kernel cannot keep files inside the workspace (no Landlock) and the host
/// did not opt out of confinement, the strictest the filter allows:
/// workspace restriction on, whatever the policy says.
pub(crate) fn filter_for<'a>(
    policy: &'a ShellPolicy,
    walls: &KernelWalls,
) -> std::borrow::Cow<'a, ShellPolicy> {
    let kernel_falls_short = policy.confinement != Confinement::Off && !walls.files();
    if kernel_falls_short && !policy.restrict_to_workspace {
        std::borrow::Cow::Owned(policy.clone().restrict_to_workspace(true))
    } else {
        std::borrow::Cow::Borrowed(policy)
    }
}

/// The note for a command's output when walls are missing: given once per
/// process, so the model is told without every result repeating it.
pub(crate) fn note_once(policy: &ShellPolicy) -> Option<String> {
    static TOLD: AtomicBool = AtomicBool::new(false);
    let gaps = KernelWalls::current().gaps(policy);
    if gaps.is_empty() || TOLD.swap(true, Ordering::Relaxed) {
        return None;
    }
    Some(format!(
        "this system confines commands less: {}",
        gaps.join("; ")
    ))
}

#[cfg(target_os = "linux")]
fn landlock_abi() -> Option<u32> {
    super::confine::landlock_abi()
}

#[cfg(not(target_os = "linux"))]
fn landlock_abi() -> Option<u32> {
    None
}

#[cfg(target_os = "linux")]
fn resource_limits() -> bool {
    crate::cgroup::available()
}

#[cfg(not(target_os = "linux"))]
fn resource_limits() -> bool {
    false
}

#[cfg(target_os = "linux")]
fn process_isolation() -> ProcessIsolation {
    super::keeper::isolation()
}

#[cfg(not(target_os = "linux"))]
fn process_isolation() -> ProcessIsolation {
    ProcessIsolation::ProcessGroup
}

#[cfg(test)]
mod tests {
    use super::*;

    fn walls(landlock_abi: Option<u32>) -> KernelWalls {
        KernelWalls {
            landlock_abi,
            process_isolation: ProcessIsolation::Subreaper,
            resource_limits: true,
        }
    }

    #[test]
    fn without_landlock_the_filter_keeps_paths_in_the_workspace() {
        let loose = ShellPolicy::new().restrict_to_workspace(false);
        assert!(filter_for(&loose, &walls(None)).restrict_to_workspace);
        assert!(!filter_for(&loose, &walls(Some(1))).restrict_to_workspace);
        let opted_out = loose.clone().with_confinement(Confinement::Off);
        assert!(!filter_for(&opted_out, &walls(None)).restrict_to_workspace);
    }

    #[test]
    fn each_missing_wall_is_named() {
        let policy = ShellPolicy::new();
        assert_eq!(walls(None).gaps(&policy).len(), 2);
        assert_eq!(walls(Some(3)).gaps(&policy).len(), 3);
        assert_eq!(walls(Some(6)).gaps(&policy).len(), 1);
        let all = KernelWalls {
            landlock_abi: Some(6),
            process_isolation: ProcessIsolation::PidNamespace,
            resource_limits: true,
        };
        assert!(all.gaps(&policy).is_empty());
        assert_eq!(
            all.to_string(),
            "Landlock ABI 6 (files, TCP ports, scoping); own PID namespace; control group (processes, memory)"
        );
        let unbounded = KernelWalls {
            resource_limits: false,
            ..all
        };
        assert_eq!(unbounded.gaps(&policy).len(), 1);
        assert!(unbounded.to_string().ends_with("; no control group"));
    }
}

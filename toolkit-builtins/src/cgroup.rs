//! A control group of its own for each command `exec` runs, and for the
//! browser: the kernel's bound on how many processes (threads included)
//! they may have at once, and on how much memory they may use together.
//!
//! The command filter refuses the fork bombs it recognizes, but a loop that
//! starts processes, or a program that allocates without end, is an
//! ordinary command to it; and a page's scripts may allocate, or start
//! workers, as they please. Without a bound, either reaches the limits of
//! the whole machine, the host's included. `RLIMIT_NPROC` is no wall for a
//! host that runs as root (the kernel exempts uid 0), and `RLIMIT_AS`
//! bounds each process alone; a control group bounds them all, whoever
//! runs them.
//!
//! The group is made under the host's own group in the `pids` and `memory`
//! hierarchies (cgroup v1), or in the unified hierarchy (v2) where the
//! host's group hands those controllers down. A command's keeper joins it
//! between `fork` and `exec`, before it forks the command, so everything
//! the command starts is inside; Chromium, which is started by a library,
//! is moved in with every process it has right after it starts, before it
//! opens a page. Where no group can be made (no permission, no such
//! controller), they run without one and `KernelWalls` says so.
//!
//! A command running as root without capabilities is still the owner of the
//! group's files. Landlock, which keeps its writes in the workspace, is what
//! stops it from raising its limits or moving itself out: without
//! confinement (`Confinement::Off`) the limits hold only against a command
//! that does not try.

use std::ffi::CString;
use std::fs;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

/// The bounds on a group: a command and everything it starts, or the
/// browser.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Limits {
    /// Processes and threads at once.
    pub(crate) processes: u64,
    /// Bytes of memory (and swap) in use at once.
    pub(crate) memory: u64,
}

impl Limits {
    /// `processes` at once (at least 1, at most the kernel's most pids),
    /// and `memory` bytes (at least 1 MiB), or half the machine's.
    pub(crate) fn new(processes: u64, memory: Option<u64>) -> Self {
        /// The memory bound where the machine's total is unknown.
        const FALLBACK_MEMORY: u64 = 4 << 30;
        Self {
            processes: processes.clamp(1, PID_MAX_LIMIT),
            memory: memory
                .or_else(half_of_memory)
                .unwrap_or(FALLBACK_MEMORY)
                .max(1 << 20),
        }
    }
}

/// How often the kernel stopped a group at its bounds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Stops {
    /// Forks and thread starts refused at the process bound.
    forks_refused: u64,
    /// Processes killed at the memory bound.
    killed: u64,
}

/// The most pids the kernel has (`PID_MAX_LIMIT` on 64-bit systems), and
/// the highest `pids.max` it takes.
const PID_MAX_LIMIT: u64 = 1 << 22;

/// Where the host's group of one hierarchy is, and which version it is.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Hierarchy {
    /// The host's own group in this hierarchy, as a directory.
    dir: PathBuf,
    /// Whether it is the unified hierarchy (v2), whose files are named
    /// differently.
    unified: bool,
}

/// The control group a command or the browser runs in; on drop, which
/// must come after its processes are gone (a command's keeper reaped,
/// Chromium stopped), kept as a spare if [`Reuse::Spare`], or removed.
#[derive(Debug)]
pub(crate) struct ControlGroup {
    /// One directory per hierarchy the group spans (v1: one for `pids`,
    /// then one for `memory`; v2: one).
    dirs: Vec<PathBuf>,
    /// Each directory's `cgroup.procs`, for the child to write to without
    /// allocating.
    procs: Vec<CString>,
    /// The stops already told: a spare group's count goes on from its
    /// earlier use.
    told: Stops,
    reuse: Reuse,
}

/// What becomes of a group once its processes are gone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reuse {
    /// Kept as a spare for the next group: only for processes that could
    /// not write to the group's files (a command under Landlock), so a
    /// spare holds no setting of theirs beyond the limits, which are set
    /// anew.
    Spare,
    /// Removed: its processes could have changed its settings.
    Remove,
}

/// Groups whose processes are all gone, kept to bound the next command
/// instead of being removed, at most [`SPARES`].
///
/// A memory group whose pages are still charged when it is removed (the
/// page cache of the files a command wrote, which outlive it) stays in the
/// kernel, offline, until those pages are reclaimed, holding one of the
/// kernel's 65,535 memory-group IDs, which the whole machine shares. A new
/// group for every command would let a long-running agent use them all up,
/// and then nobody on the machine could make a memory group. Reused, the
/// groups ever made are about as many as ran at once.
static SPARE: Mutex<Vec<Vec<PathBuf>>> = Mutex::new(Vec::new());

/// The most spare groups kept.
const SPARES: usize = 64;

impl ControlGroup {
    /// A group bounded by `limits` (a spare one if there is one, else a new
    /// one), or `None` where this process cannot make one with both
    /// controllers.
    pub(crate) fn create(limits: Limits, reuse: Reuse) -> Option<Self> {
        let (pids, memory) = hierarchies()?;
        while let Some(dirs) = take_spare() {
            // A spare that holds too much of the new bound, or no longer
            // takes the limits, is removed on drop.
            let mut group = Self::of(dirs, Reuse::Remove)?;
            if group.held() <= limits.memory / 4 && group.bound(limits, memory.unified).is_some() {
                group.reuse = reuse;
                group.told = group.stops();
                return Some(group);
            }
        }
        let mut group = Self::of(Vec::new(), Reuse::Remove)?;
        // On any failure, dropping `group` removes what was made.
        let (_, name) = group.add_new(pids)?;
        if memory.dir != pids.dir {
            group.add(memory, &name)?;
        }
        group.bound(limits, memory.unified)?;
        group.reuse = reuse;
        Some(group)
    }

    /// The group of the directories `dirs`.
    fn of(dirs: Vec<PathBuf>, reuse: Reuse) -> Option<Self> {
        let mut group = Self {
            dirs: Vec::new(),
            procs: Vec::new(),
            told: Stops::default(),
            reuse,
        };
        for dir in dirs {
            group.keep(dir)?;
        }
        Some(group)
    }

    /// The bytes charged to the group that the kernel cannot reclaim with
    /// its processes gone: the files an earlier command left in a `tmpfs`
    /// (a workspace in memory, say). They would count against the next
    /// command's bound; the page cache of files on disk is reclaimed when
    /// the bound is reached, so it does not.
    fn held(&self) -> u64 {
        let Some(memory_dir) = self.dirs.last() else {
            return 0;
        };
        fs::read_to_string(memory_dir.join("memory.stat"))
            .ok()
            .and_then(|stat| {
                stat.lines().find_map(|line| {
                    let count = line.strip_prefix("shmem ")?;
                    count.trim().parse().ok()
                })
            })
            .unwrap_or(0)
    }

    /// Set the group's limits: processes on the first directory (`pids`),
    /// memory on the last (`memory`; the same one in v2).
    fn bound(&self, limits: Limits, unified: bool) -> Option<()> {
        let (pids_dir, memory_dir) = (self.dirs.first()?, self.dirs.last()?);
        write(pids_dir, "pids.max", limits.processes)?;
        let bytes = limits.memory;
        if unified {
            write(memory_dir, "memory.max", bytes)?;
            // Swap counts on its own in v2: none, so the bound is real memory.
            let _ = write(memory_dir, "memory.swap.max", 0);
        } else {
            // Memory and swap together, where the kernel accounts swap. The
            // kernel keeps that limit at or above the memory one, so it is
            // set before it when it grows and after it when it shrinks.
            let _ = write(memory_dir, "memory.memsw.limit_in_bytes", bytes);
            write(memory_dir, "memory.limit_in_bytes", bytes)?;
            let _ = write(memory_dir, "memory.memsw.limit_in_bytes", bytes);
        }
        Some(())
    }

    /// Make a group of a name not yet taken in `hierarchy`: one left by an
    /// earlier process of the same pid (a restarted container's first
    /// process, say) is passed over, not joined.
    fn add_new(&mut self, hierarchy: &Hierarchy) -> Option<(PathBuf, String)> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        for _ in 0..64 {
            let name = format!(
                "toolsmith-{}-{}",
                std::process::id(),
                NEXT.fetch_add(1, Ordering::Relaxed)
            );
            match fs::create_dir(hierarchy.dir.join(&name)) {
                Ok(()) => {
                    let dir = self.keep(hierarchy.dir.join(&name))?;
                    return Some((dir, name));
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(_) => return None,
            }
        }
        None
    }

    /// Make this group's directory in `hierarchy` and keep it for removal.
    fn add(&mut self, hierarchy: &Hierarchy, name: &str) -> Option<PathBuf> {
        let dir = hierarchy.dir.join(name);
        fs::create_dir(&dir).ok()?;
        self.keep(dir)
    }

    /// Keep `dir`, just made, for removal, and its `cgroup.procs` for
    /// joining.
    fn keep(&mut self, dir: PathBuf) -> Option<PathBuf> {
        self.dirs.push(dir.clone());
        let procs = CString::new(dir.join("cgroup.procs").as_os_str().as_bytes()).ok()?;
        self.procs.push(procs);
        Some(dir)
    }

    /// How often the kernel has stopped the group at its bounds so far.
    fn stops(&self) -> Stops {
        let counter = |file: &str, name: &str| {
            self.dirs.iter().find_map(|dir| {
                let text = fs::read_to_string(dir.join(file)).ok()?;
                text.lines().find_map(|line| {
                    let (key, count) = line.split_once(' ')?;
                    (key == name).then(|| count.trim().parse::<u64>().ok())?
                })
            })
        };
        Stops {
            forks_refused: counter("pids.events", "max").unwrap_or(0),
            // v1 keeps the count in `memory.oom_control`, v2 in `memory.events`.
            killed: counter("memory.oom_control", "oom_kill")
                .or_else(|| counter("memory.events", "oom_kill"))
                .unwrap_or(0),
        }
    }

    /// What `who` ran into since this was last asked (or since the group
    /// was given out), in words for the model: the process bound (the
    /// kernel refused a fork) and the memory bound (the kernel killed a
    /// process). What is told moves on to what was read, in the same
    /// reading: a stop between two readings would never be told.
    pub(crate) fn bounds_reached(&mut self, limits: Limits, who: &str) -> Vec<String> {
        let now = self.stops();
        let before = std::mem::replace(&mut self.told, now);
        let mut reached = Vec::new();
        if now.forks_refused > before.forks_refused {
            reached.push(format!(
                "{who} tried to have more than {} processes and threads at once; the kernel refused the rest (the bound is the host's)",
                limits.processes
            ));
        }
        if now.killed > before.killed {
            reached.push(format!(
                "{who} reached its memory bound of {} MiB and the kernel killed a process of it (the bound is the host's); use less memory at once",
                limits.memory >> 20
            ));
        }
        reached
    }

    /// Move the process `root` and every process below it into the group.
    /// A process that ends meanwhile is skipped; one started meanwhile by a
    /// process not yet moved is found by the second pass, and anything
    /// started by a moved one is inside already.
    #[cfg(feature = "browser")]
    pub(crate) fn adopt(&self, root: u32) -> io::Result<()> {
        for _ in 0..2 {
            for pid in tree(root) {
                for procs in &self.procs {
                    let path = Path::new(std::ffi::OsStr::from_bytes(procs.as_bytes()));
                    match fs::write(path, pid.to_string()) {
                        Ok(()) => {}
                        Err(e) if e.raw_os_error() == Some(NO_SUCH_PROCESS) => {}
                        Err(e) => return Err(e),
                    }
                }
            }
        }
        Ok(())
    }

    /// Every process in the group now (any hierarchy of it).
    #[cfg(feature = "browser")]
    pub(crate) fn members(&self) -> Vec<u32> {
        self.dirs
            .iter()
            .filter_map(|dir| fs::read_to_string(dir.join("cgroup.procs")).ok())
            .flat_map(|procs| {
                procs
                    .lines()
                    .filter_map(|line| line.trim().parse().ok())
                    .collect::<Vec<u32>>()
            })
            .collect()
    }

    /// What the child needs to join the group, for its `pre_exec` hook.
    #[cfg(feature = "shell")]
    pub(crate) fn joiner(&self) -> Joiner {
        Joiner(self.procs.clone())
    }
}

/// The paths a child writes itself into; see [`Joiner::join`].
#[cfg(feature = "shell")]
#[derive(Debug)]
pub(crate) struct Joiner(Vec<CString>);

#[cfg(feature = "shell")]
impl Joiner {
    /// Move the calling process into the group (every hierarchy of it).
    ///
    /// # Safety
    ///
    /// Async-signal-safe: raw system calls on buffers prepared beforehand.
    /// Call in a child between `fork` and `exec`.
    pub(crate) unsafe fn join(&self) -> io::Result<()> {
        for procs in &self.0 {
            // SAFETY: a NUL-terminated path and a literal buffer.
            unsafe {
                let fd = libc::open(procs.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
                if fd < 0 {
                    return Err(io::Error::last_os_error());
                }
                // "0" is the writing process itself.
                let written = libc::write(fd, b"0".as_ptr().cast(), 1);
                let error = io::Error::last_os_error();
                libc::close(fd);
                if written != 1 {
                    return Err(error);
                }
            }
        }
        Ok(())
    }
}

impl Drop for ControlGroup {
    fn drop(&mut self) {
        // A group can be kept or go only once it is empty. The keeper is
        // reaped by now (unless the call was dropped while it ran), but the
        // kernel may still be tearing down the last of the command's
        // processes: what is still busy is dealt with off this thread, for
        // a while.
        let dirs = std::mem::take(&mut self.dirs);
        let reuse = self.reuse;
        let Err(dirs) = retire(dirs, reuse) else {
            return;
        };
        // A group this fails to remove (no thread to be had, or the host
        // exits first) is swept by a later host.
        let _ = std::thread::Builder::new()
            .name("cgroup-removal".into())
            .spawn(move || {
                let mut dirs = dirs;
                for _ in 0..500 {
                    std::thread::sleep(Duration::from_millis(10));
                    match retire(dirs, reuse) {
                        Ok(()) => return,
                        Err(busy) => dirs = busy,
                    }
                }
            });
    }
}

/// Keep the group of `dirs` as a spare (if `reuse` allows, it is empty and
/// there is room) or remove it; the directories back if they are still
/// busy.
fn retire(dirs: Vec<PathBuf>, reuse: Reuse) -> Result<(), Vec<PathBuf>> {
    if dirs.is_empty() {
        return Ok(());
    }
    if reuse == Reuse::Spare && is_empty(&dirs) {
        let mut spare = SPARE.lock().unwrap_or_else(|e| e.into_inner());
        if spare.len() < SPARES {
            spare.push(dirs);
            return Ok(());
        }
    }
    if remove_all(&dirs) { Ok(()) } else { Err(dirs) }
}

/// A spare group, if one is kept.
fn take_spare() -> Option<Vec<PathBuf>> {
    SPARE.lock().unwrap_or_else(|e| e.into_inner()).pop()
}

/// Whether no process is left in the group, nor any group below it.
fn is_empty(dirs: &[PathBuf]) -> bool {
    dirs.iter().all(|dir| {
        let no_process =
            fs::read_to_string(dir.join("cgroup.procs")).is_ok_and(|procs| procs.trim().is_empty());
        let no_child = fs::read_dir(dir).is_ok_and(|mut entries| {
            !entries.any(|e| e.and_then(|e| e.file_type()).is_ok_and(|t| t.is_dir()))
        });
        no_process && no_child
    })
}

/// Remove the directories of a group, children before parents; whether
/// none is left.
fn remove_all(dirs: &[PathBuf]) -> bool {
    dirs.iter().rev().fold(true, |gone, dir| {
        let removed = match fs::remove_dir(dir) {
            Ok(()) => true,
            Err(e) => e.kind() == io::ErrorKind::NotFound,
        };
        gone && removed
    })
}

/// `root` and every process below it, parents first, from each thread's
/// `children` list in `/proc`.
#[cfg(feature = "browser")]
pub(crate) fn tree(root: u32) -> Vec<u32> {
    let mut found = vec![root];
    let mut next = 0;
    while let Some(&pid) = found.get(next) {
        next += 1;
        let Ok(tasks) = fs::read_dir(format!("/proc/{pid}/task")) else {
            continue;
        };
        for task in tasks.flatten() {
            let Ok(children) = fs::read_to_string(task.path().join("children")) else {
                continue;
            };
            for child in children.split_whitespace().filter_map(|c| c.parse().ok()) {
                if !found.contains(&child) {
                    found.push(child);
                }
            }
        }
    }
    found
}

/// Linux's error for a process that does not exist (`ESRCH`): a write
/// naming one that has ended.
#[cfg(feature = "browser")]
const NO_SUCH_PROCESS: i32 = 3;

/// Whether this process can bound commands with a group of their own
/// (found once, by making and removing one).
#[cfg(feature = "shell")]
pub(crate) fn available() -> bool {
    static AVAILABLE: OnceLock<bool> = OnceLock::new();
    *AVAILABLE.get_or_init(|| {
        ControlGroup::create(
            Limits {
                processes: 1,
                memory: 1 << 20,
            },
            Reuse::Spare,
        )
        .is_some()
    })
}

/// The host's groups in the hierarchies of the `pids` and the `memory`
/// controllers (the same one in v2), found once.
fn hierarchies() -> Option<(&'static Hierarchy, &'static Hierarchy)> {
    static FOUND: OnceLock<Option<(Hierarchy, Hierarchy)>> = OnceLock::new();
    let found = FOUND.get_or_init(|| {
        let mountinfo = fs::read_to_string("/proc/self/mountinfo").ok()?;
        let membership = fs::read_to_string("/proc/self/cgroup").ok()?;
        let mounts = parse_mounts(&mountinfo);
        let own = parse_membership(&membership);
        let pids = find(&mounts, &own, "pids")?;
        let memory = find(&mounts, &own, "memory")?;
        for hierarchy in [&pids, &memory] {
            sweep_orphans(&hierarchy.dir);
        }
        Some((pids, memory))
    });
    found.as_ref().map(|(pids, memory)| (pids, memory))
}

/// Remove the empty groups left in `dir` by hosts that were killed before
/// they could remove them: named for a process that no longer runs, and
/// made more than a minute ago (a younger one may be another host's, in
/// another PID namespace, about to be joined). A group still in use is not
/// empty, and the kernel refuses to remove it.
fn sweep_orphans(dir: &Path) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("toolsmith-"))
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|made| made.elapsed().ok())
            .is_some_and(|age| age > Duration::from_secs(60));
        if old && !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = fs::remove_dir(entry.path());
        }
    }
}

/// A mounted cgroup hierarchy: where, which part of it, and which
/// controllers (v1; empty for v2).
#[derive(Debug, PartialEq, Eq)]
struct Mount {
    point: PathBuf,
    root: String,
    controllers: Vec<String>,
    unified: bool,
}

/// The cgroup mounts in `/proc/self/mountinfo`.
fn parse_mounts(mountinfo: &str) -> Vec<Mount> {
    mountinfo
        .lines()
        .filter_map(|line| {
            // `id parent dev root point options [optional...] - type source super`
            let (before, after) = line.split_once(" - ")?;
            let fields: Vec<&str> = before.split(' ').collect();
            let (root, point) = (fields.get(3)?, fields.get(4)?);
            let mut after = after.split(' ');
            let kind = after.next()?;
            let _source = after.next();
            let options = after.next().unwrap_or_default();
            let unified = match kind {
                "cgroup2" => true,
                "cgroup" => false,
                _ => return None,
            };
            Some(Mount {
                point: PathBuf::from(unescape(point)),
                root: unescape(root),
                controllers: if unified {
                    Vec::new()
                } else {
                    options.split(',').map(str::to_owned).collect()
                },
                unified,
            })
        })
        .collect()
}

/// Octal escapes of mountinfo (`\040` for a space) undone.
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\'
            && let Some(code) = bytes
                .get(i + 1..i + 4)
                .and_then(|d| std::str::from_utf8(d).ok())
                .and_then(|d| u8::from_str_radix(d, 8).ok())
        {
            out.push(code);
            i += 4;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// This process's group per hierarchy, from `/proc/self/cgroup`: the
/// controllers (empty for v2) and the path.
fn parse_membership(cgroup: &str) -> Vec<(Vec<String>, String)> {
    cgroup
        .lines()
        .filter_map(|line| {
            let mut parts = line.splitn(3, ':');
            let _id = parts.next()?;
            let controllers = parts.next()?;
            let path = parts.next()?;
            let controllers = controllers
                .split(',')
                .filter(|c| !c.is_empty())
                .map(str::to_owned)
                .collect();
            Some((controllers, path.to_owned()))
        })
        .collect()
}

/// The host's group in the hierarchy that has `controller`: a v1
/// hierarchy of its own, else the unified one if the host's group there
/// hands the controller down to its children.
fn find(mounts: &[Mount], own: &[(Vec<String>, String)], controller: &str) -> Option<Hierarchy> {
    let v1 = mounts
        .iter()
        .filter(|m| !m.unified && m.controllers.iter().any(|c| c == controller))
        .find_map(|mount| {
            let (_, path) = own
                .iter()
                .find(|(controllers, _)| controllers.iter().any(|c| c == controller))?;
            Some(Hierarchy {
                dir: group_dir(mount, path)?,
                unified: false,
            })
        });
    if v1.is_some() {
        return v1;
    }
    let (_, path) = own.iter().find(|(controllers, _)| controllers.is_empty())?;
    mounts.iter().filter(|m| m.unified).find_map(|mount| {
        let dir = group_dir(mount, path)?;
        let handed_down = fs::read_to_string(dir.join("cgroup.subtree_control")).ok()?;
        handed_down
            .split_whitespace()
            .any(|c| c == controller)
            .then_some(Hierarchy { dir, unified: true })
    })
}

/// The directory of group `path` under `mount`, if the mount shows it.
fn group_dir(mount: &Mount, path: &str) -> Option<PathBuf> {
    let relative = if mount.root == "/" {
        path
    } else {
        let rest = path.strip_prefix(mount.root.as_str())?;
        if !(rest.is_empty() || rest.starts_with('/')) {
            return None;
        }
        rest
    };
    let relative = relative.trim_start_matches('/');
    // A path with `..` in it is not one the kernel writes; refuse it rather
    // than leave the mount.
    if Path::new(relative)
        .components()
        .any(|c| !matches!(c, std::path::Component::Normal(_)))
    {
        return None;
    }
    Some(mount.point.join(relative))
}

/// Write `value` to the group's file `name`.
fn write(dir: &Path, name: &str, value: u64) -> Option<()> {
    fs::write(dir.join(name), value.to_string()).ok()
}

/// The default bound on memory: half of the machine's, so a command cannot
/// take what the host needs. `None` where the total is unknown.
pub(crate) fn half_of_memory() -> Option<u64> {
    let meminfo = fs::read_to_string("/proc/meminfo").ok()?;
    let line = meminfo.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib.saturating_mul(1024) / 2)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOUNTINFO: &str = "\
30 25 0:26 / /sys/fs/cgroup rw - tmpfs tmpfs rw,mode=755
40 30 0:35 / /sys/fs/cgroup/memory rw,relatime shared:9 - cgroup cgroup rw,memory
41 30 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
42 30 0:37 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
43 25 0:38 /sub /mnt/odd\\040place rw - cgroup cgroup rw,cpu,cpuacct
";

    #[test]
    fn the_hierarchies_are_read_from_mountinfo() {
        let mounts = parse_mounts(MOUNTINFO);
        assert_eq!(mounts.len(), 4);
        assert_eq!(mounts[0].point, PathBuf::from("/sys/fs/cgroup/memory"));
        assert_eq!(mounts[0].controllers, ["rw", "memory"]);
        assert!(mounts[2].unified);
        assert_eq!(mounts[3].point, PathBuf::from("/mnt/odd place"));
        assert_eq!(mounts[3].root, "/sub");
    }

    #[test]
    fn the_hosts_group_is_found_under_the_mount_that_shows_it() {
        let mounts = parse_mounts(MOUNTINFO);
        let own = parse_membership("8:pids:/\n4:memory:/api/abc\n1:cpu,cpuacct:/sub/x\n0::/\n");
        assert_eq!(
            find(&mounts, &own, "memory").map(|h| h.dir),
            Some(PathBuf::from("/sys/fs/cgroup/memory/api/abc"))
        );
        assert_eq!(
            find(&mounts, &own, "pids").map(|h| h.dir),
            Some(PathBuf::from("/sys/fs/cgroup/pids"))
        );
        assert_eq!(
            group_dir(&mounts[3], "/sub/x"),
            Some(PathBuf::from("/mnt/odd place/x"))
        );
        assert_eq!(group_dir(&mounts[3], "/subway"), None);
        assert_eq!(group_dir(&mounts[0], "/a/../../etc"), None);
    }

    #[test]
    fn only_old_groups_of_processes_gone_are_swept() {
        let dir = tempfile::tempdir().unwrap();
        let long_ago = std::time::SystemTime::now() - Duration::from_secs(600);
        let make = |name: &str, old: bool| {
            let path = dir.path().join(name);
            fs::create_dir(&path).unwrap();
            if old {
                fs::File::open(&path)
                    .unwrap()
                    .set_modified(long_ago)
                    .unwrap();
            }
            path
        };
        // No process has a pid above the kernel's maximum (2^22).
        let orphan = make("toolsmith-999999999-0", true);
        let young = make("toolsmith-999999999-1", false);
        let ours = make(&format!("toolsmith-{}-0", std::process::id()), true);
        let other = make("other-999999999-0", true);
        sweep_orphans(dir.path());
        assert!(!orphan.exists());
        assert!(young.exists() && ours.exists() && other.exists());
    }
}

//! The keeper: a process between the host and a command that owns the
//! command's lifetime, so that nothing the command starts outlives the call.
//!
//! A process group is not enough: `setsid`, a double fork or a daemonizing
//! program leaves it, and a killed group leader's orphans are adopted by
//! init, out of reach. So the child the host spawns does not run the command
//! itself. Between `fork` and `exec` it:
//!
//! 1. makes a new PID namespace and mount namespace where the kernel lets it
//!    (as root, or through a user namespace otherwise);
//! 2. becomes a child subreaper, so every orphan below it is reparented to
//!    it rather than to init;
//! 3. forks the command. The command is PID 1 of the new namespace: when it
//!    ends, the kernel kills every process left in the namespace, whatever
//!    session or group they moved to. It gets `SIGKILL` if the keeper dies
//!    first, and a fresh `/proc` that shows only its own processes, so the
//!    host's environment, memory and command line are not even visible.
//!
//! The keeper then waits. When the command exits, or the host asks it to
//! stop (`SIGTERM`), it kills every descendant it has (all of them are its
//! children, thanks to the subreaper flag, even without a namespace), reaps
//! them, and exits with the command's status. The host sees an ordinary
//! child whose exit means that nothing is left.
//!
//! Everything here after `fork` runs in a child of a multi-threaded process,
//! where only async-signal-safe calls are allowed: raw system calls on
//! buffers prepared beforehand, no allocation, no locks.

use std::ffi::CString;
use std::io;
use std::sync::OnceLock;

use super::walls::ProcessIsolation;

/// The signal the host sends the keeper to end the call.
pub(crate) const STOP_SIGNAL: libc::c_int = libc::SIGTERM;

/// What the keeper needs, prepared in the parent where allocating is safe.
pub(crate) struct Keeper {
    namespaces: Option<Namespaces>,
    drop_capabilities: bool,
    /// The control group the command joins, if it has one.
    group: Option<crate::cgroup::Joiner>,
}

/// The namespaces to enter, and the identity maps a user namespace needs.
struct Namespaces {
    flags: libc::c_int,
    /// `(path, contents)` written in order after `unshare` (user namespace only).
    maps: Vec<(CString, Vec<u8>)>,
}

impl Keeper {
    /// A keeper that uses namespaces when asked to and this process can
    /// make them, and that takes every capability from the command when
    /// asked to (a command run by root is then root without privileges:
    /// no mounts, raw sockets, module loading, tracing or killing of other
    /// users' processes, whatever Landlock covers or not).
    pub(crate) fn new(namespaces: bool, drop_capabilities: bool) -> Self {
        let namespaces = match isolation() {
            ProcessIsolation::PidNamespace if namespaces => Some(Namespaces::for_this_process()),
            ProcessIsolation::PidNamespace => None,
            ProcessIsolation::Subreaper | ProcessIsolation::ProcessGroup => None,
        };
        Self {
            namespaces,
            drop_capabilities,
            group: None,
        }
    }

    /// The command (not the keeper) joins `group` before it runs anything.
    /// The keeper stays out: a fork of the host, it holds the host's pages,
    /// and in the group it would be the out-of-memory killer's first pick,
    /// leaving the command unwatched.
    pub(crate) fn with_group(mut self, group: Option<crate::cgroup::Joiner>) -> Self {
        self.group = group;
        self
    }

    /// A keeper that never makes namespaces (used by the probe itself).
    fn without_namespaces() -> Self {
        Self {
            namespaces: None,
            drop_capabilities: false,
            group: None,
        }
    }

    /// Split the freshly forked child into keeper and command.
    ///
    /// Returns in the command's process, which then goes on to `exec`, and
    /// says whether it is PID 1 of a namespace with a `/proc` of its own;
    /// never returns in the keeper's.
    ///
    /// # Safety
    ///
    /// Call only in a child between `fork` and `exec` (a `pre_exec` hook),
    /// before anything else in that hook changes the process.
    pub(crate) unsafe fn split(&self) -> io::Result<bool> {
        let in_namespace = match &self.namespaces {
            Some(namespaces) => namespaces.enter(),
            None => false,
        };
        // SAFETY (all calls below): plain system calls on valid arguments.
        unsafe {
            // A session of its own, without a controlling terminal: the
            // command cannot open the host's terminal (`/dev/tty`) to write
            // to it or push input into it, and no terminal signal reaches it.
            if libc::setsid() < 0 {
                return Err(io::Error::last_os_error());
            }
            if libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0 {
                return Err(io::Error::last_os_error());
            }
            let command = libc::fork();
            if command < 0 {
                return Err(io::Error::last_os_error());
            }
            if command > 0 {
                keep(command, in_namespace);
            }
            // The command: its own group (the keeper kills it whole), killed
            // if the keeper dies, no subreaper duty of its own, and none of
            // the host's descriptors but the ones meant for it (0, 1, 2):
            // whatever the host opened without close-on-exec is closed at
            // `exec`.
            libc::setpgid(0, 0);
            libc::syscall(
                libc::SYS_close_range,
                3u32,
                u32::MAX,
                libc::CLOSE_RANGE_CLOEXEC,
            );
            libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
            if let Some(group) = &self.group {
                group.join()?;
                // A cgroup namespace rooted at the group just joined: no
                // process of the command can be moved, or started (`clone3`
                // with `CLONE_INTO_CGROUP`), into a group outside it. Where
                // the command may not make one (no namespaces for a host
                // without privilege), the seccomp filter still refuses
                // `clone3`, and Landlock the writes that move a process.
                libc::unshare(libc::CLONE_NEWCGROUP);
            }
            if in_namespace {
                mount_own_proc()?;
            }
            if self.drop_capabilities {
                drop_capabilities();
            }
        }
        Ok(in_namespace)
    }
}

/// Take every capability from the calling process and whatever it runs:
/// the bounding set (so `exec` of anything, setuid-root programs included,
/// gains none), the ambient set, and the effective, permitted and
/// inheritable sets. A process without privileges cannot drop its bounding
/// set, and has nothing to drop anyway.
///
/// # Safety
///
/// Async-signal-safe system calls only.
unsafe fn drop_capabilities() {
    const LINUX_CAPABILITY_VERSION_3: u32 = 0x2008_0522;
    #[repr(C)]
    struct Header {
        version: u32,
        pid: libc::c_int,
    }
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    // SAFETY: plain system calls on stack values of the kernel's layout.
    unsafe {
        for capability in 0..64 {
            libc::prctl(libc::PR_CAPBSET_DROP, capability, 0, 0, 0);
        }
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL,
            0,
            0,
            0,
        );
        let header = Header {
            version: LINUX_CAPABILITY_VERSION_3,
            pid: 0,
        };
        let none = [Data {
            effective: 0,
            permitted: 0,
            inheritable: 0,
        }; 2];
        libc::syscall(libc::SYS_capset, &header, none.as_ptr());
    }
}

impl Namespaces {
    fn for_this_process() -> Self {
        // SAFETY: getters without preconditions.
        let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
        // An IPC namespace too: System V shared memory the command makes
        // goes with it, rather than staying in the host's.
        let base = libc::CLONE_NEWPID | libc::CLONE_NEWNS | libc::CLONE_NEWIPC;
        if uid == 0 {
            return Self {
                flags: base,
                maps: Vec::new(),
            };
        }
        // Without privilege: a user namespace that maps the caller to
        // itself, so files keep their owner and the command gains nothing.
        let path = |p: &str| CString::new(p).expect("no NUL in a literal path");
        Self {
            flags: base | libc::CLONE_NEWUSER,
            maps: vec![
                (path("/proc/self/setgroups"), b"deny".to_vec()),
                (
                    path("/proc/self/uid_map"),
                    format!("{uid} {uid} 1").into_bytes(),
                ),
                (
                    path("/proc/self/gid_map"),
                    format!("{gid} {gid} 1").into_bytes(),
                ),
            ],
        }
    }

    /// Enter the namespaces; `false` when the kernel refuses (the keeper
    /// then works as a subreaper only).
    fn enter(&self) -> bool {
        // SAFETY: plain system calls on prepared, NUL-terminated buffers.
        unsafe {
            if libc::unshare(self.flags) != 0 {
                return false;
            }
            for (path, contents) in &self.maps {
                let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
                if fd < 0 {
                    return false;
                }
                let written = libc::write(fd, contents.as_ptr().cast(), contents.len());
                libc::close(fd);
                if written != contents.len() as isize {
                    return false;
                }
            }
        }
        true
    }
}

/// In the command, PID 1 of its namespace: a `/proc` of its own, mounted in
/// a mount namespace whose changes do not reach the host.
///
/// # Safety
///
/// Async-signal-safe system calls only; call between `fork` and `exec`.
unsafe fn mount_own_proc() -> io::Result<()> {
    // SAFETY: literal, NUL-terminated arguments.
    unsafe {
        if libc::mount(
            std::ptr::null(),
            c"/".as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        ) != 0
        {
            return Err(io::Error::last_os_error());
        }
        if libc::mount(
            c"proc".as_ptr(),
            c"/proc".as_ptr(),
            c"proc".as_ptr(),
            libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
            std::ptr::null(),
        ) != 0
        {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// The keeper's life: wait for the command, then make sure nothing it
/// started is left, and exit as it did.
///
/// # Safety
///
/// Async-signal-safe system calls only; call in the keeper after `fork`.
unsafe fn keep(command: libc::pid_t, in_namespace: bool) -> ! {
    // SAFETY: plain system calls on stack buffers.
    unsafe {
        // Nothing of the host's is needed here; above all not the pipe std
        // uses to learn that `exec` happened, which must close when the
        // command execs, nor the command's output pipes.
        libc::syscall(libc::SYS_close_range, 0u32, u32::MAX, 0u32);
        let mut signals: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut signals);
        libc::sigaddset(&mut signals, libc::SIGCHLD);
        libc::sigaddset(&mut signals, STOP_SIGNAL);
        libc::sigprocmask(libc::SIG_BLOCK, &signals, std::ptr::null_mut());

        let mut status: Option<libc::c_int> = None;
        let mut ending = false;
        loop {
            // Reap whatever has ended.
            loop {
                let mut raw = 0;
                let pid = libc::waitpid(-1, &mut raw, libc::WNOHANG);
                if pid == command {
                    status = Some(raw);
                    ending = true;
                } else if pid > 0 {
                    continue;
                } else if pid < 0 && ending {
                    // No child left at all: nothing outlives the command.
                    exit_as(status);
                } else {
                    break;
                }
            }
            if ending {
                kill_descendants(command, in_namespace);
            }
            let mut info: libc::siginfo_t = std::mem::zeroed();
            if libc::sigwaitinfo(&signals, &mut info) == STOP_SIGNAL {
                ending = true;
            }
        }
    }
}

/// Kill everything below the keeper. In a namespace, killing its PID 1 is
/// enough: the kernel kills the rest. Otherwise every orphan was
/// reparented to the keeper, so its children are all there is; a child that
/// forks while being killed leaves orphans that the next round finds.
///
/// # Safety
///
/// Async-signal-safe system calls only.
unsafe fn kill_descendants(command: libc::pid_t, in_namespace: bool) {
    // SAFETY: plain system calls on stack buffers.
    unsafe {
        libc::kill(command, libc::SIGKILL);
        libc::killpg(command, libc::SIGKILL);
        if in_namespace {
            return;
        }
        let mut path = [0u8; 64];
        children_path(&mut path, libc::getpid());
        let fd = libc::open(path.as_ptr().cast(), libc::O_RDONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return;
        }
        let mut buffer = [0u8; 4096];
        let mut pid: libc::pid_t = 0;
        loop {
            let read = libc::read(fd, buffer.as_mut_ptr().cast(), buffer.len());
            if read <= 0 {
                break;
            }
            for &byte in &buffer[..read as usize] {
                if byte.is_ascii_digit() {
                    pid = pid
                        .saturating_mul(10)
                        .saturating_add((byte - b'0') as libc::pid_t);
                } else if pid > 0 {
                    libc::kill(pid, libc::SIGKILL);
                    pid = 0;
                }
            }
        }
        if pid > 0 {
            libc::kill(pid, libc::SIGKILL);
        }
        libc::close(fd);
    }
}

/// Write `/proc/self/task/<pid>/children` into `buffer` (NUL-terminated)
/// without allocating.
fn children_path(buffer: &mut [u8; 64], pid: libc::pid_t) {
    const HEAD: &[u8] = b"/proc/self/task/";
    const TAIL: &[u8] = b"/children";
    let mut digits = [0u8; 12];
    let mut n = pid.unsigned_abs();
    let mut count = 0;
    loop {
        digits[count] = b'0' + (n % 10) as u8;
        count += 1;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    let mut len = 0;
    for &b in HEAD {
        buffer[len] = b;
        len += 1;
    }
    for i in (0..count).rev() {
        buffer[len] = digits[i];
        len += 1;
    }
    for &b in TAIL {
        buffer[len] = b;
        len += 1;
    }
    buffer[len] = 0;
}

/// Exit with the command's status: its code, or the signal that killed it.
///
/// # Safety
///
/// Async-signal-safe system calls only.
unsafe fn exit_as(status: Option<libc::c_int>) -> ! {
    // SAFETY: plain system calls.
    unsafe {
        match status {
            Some(raw) if libc::WIFEXITED(raw) => libc::_exit(libc::WEXITSTATUS(raw)),
            Some(raw) if libc::WIFSIGNALED(raw) => {
                let signal = libc::WTERMSIG(raw);
                let mut all: libc::sigset_t = std::mem::zeroed();
                libc::sigfillset(&mut all);
                libc::sigprocmask(libc::SIG_UNBLOCK, &all, std::ptr::null_mut());
                libc::signal(signal, libc::SIG_DFL);
                libc::kill(libc::getpid(), signal);
                libc::_exit(128 + signal)
            }
            _ => libc::_exit(127),
        }
    }
}

/// How commands are isolated in this process: found once, by starting a
/// child that tries to make the namespaces.
pub(crate) fn isolation() -> ProcessIsolation {
    static FOUND: OnceLock<ProcessIsolation> = OnceLock::new();
    *FOUND.get_or_init(|| {
        use std::os::unix::process::CommandExt;
        let namespaces = Namespaces::for_this_process();
        let keeper = Keeper::without_namespaces();
        let mut probe = std::process::Command::new("/bin/sh");
        probe
            .args(["-c", "exit 0"])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        // SAFETY: the hook makes system calls only (see `Keeper::split`).
        unsafe {
            probe.pre_exec(move || {
                if !namespaces.enter() {
                    return Err(io::Error::from_raw_os_error(libc::EPERM));
                }
                keeper.split()?;
                mount_own_proc()
            });
        }
        match probe.status() {
            Ok(status) if status.success() => ProcessIsolation::PidNamespace,
            _ => ProcessIsolation::Subreaper,
        }
    })
}

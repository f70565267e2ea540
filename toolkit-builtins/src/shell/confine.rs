//! Kernel confinement of the child with Landlock (Linux): the wall behind
//! the command filter, on by default.
//!
//! The ruleset is built in the parent, where allocating and opening files is
//! safe; the child only calls `restrict_self` between `fork` and `exec`. The
//! child may then:
//! - read and run programs from the system directories and `/etc` (less its
//!   secrets, see [`readable`](super::readable)), read (and run from) the
//!   extra directories the policy and the workspace name and those the
//!   policy appends to `PATH`, and read and write the workspace and a
//!   temporary directory of its own, nothing else;
//! - connect or bind TCP only on the ports the policy allows (ABI 4+);
//! - neither reach abstract Unix sockets nor signal processes outside its
//!   own domain, the host and the keeper among them (ABI 6+).
//!
//! Landlock also keeps the host's `/proc/<pid>/environ` and `mem`
//! unreadable from the domain: the kernel's ptrace check refuses a process
//! in a domain access to one outside it.

use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, NetPort, PathBeneath, PathFd,
    Ruleset, RulesetAttr, RulesetCreated, RulesetCreatedAttr, Scope,
};

use super::policy::NetAccess;
use super::{Confinement, ShellError, ShellPolicy};

/// The newest Landlock ABI these rules are written for (scoping came with
/// 6); older kernels get the subset they support.
const TARGET_ABI: ABI = ABI::V6;

/// Device files a confined command may write to.
const WRITABLE_DEVICES: &[&str] = &["/dev/null", "/dev/tty", "/dev/zero", "/dev/full"];

/// The Landlock ABI version the running kernel offers, `None` without Landlock.
pub fn landlock_abi() -> Option<u32> {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: the version query takes no ruleset and writes nothing.
    let version = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    u32::try_from(version).ok().filter(|v| *v > 0)
}

/// Whether the running kernel enforces Landlock.
pub fn landlock_available() -> bool {
    landlock_abi().is_some()
}

/// A ruleset ready to be applied in the child.
///
/// Applied with raw system calls, since the child of a multi-threaded
/// process may not allocate: the ruleset was built in the parent, and the
/// child only adds the one rule it could not know beforehand (its own
/// `/proc`, mounted after the fork) and restricts itself.
pub(crate) struct Prepared {
    ruleset: Option<OwnedFd>,
    read_access: u64,
}

/// `struct landlock_path_beneath_attr` of the kernel's API.
#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: i32,
}

impl Prepared {
    /// Confine the calling (child) process. With `own_proc`, the `/proc`
    /// now mounted (the command's own, in its PID namespace) may be read:
    /// the parent's rule named the host's, another file system.
    ///
    /// Async-signal-safe: system calls only, no allocation.
    pub(crate) fn enforce(&mut self, own_proc: bool) -> std::io::Result<()> {
        const LANDLOCK_RULE_PATH_BENEATH: libc::c_int = 1;
        let Some(ruleset) = self.ruleset.take() else {
            return Ok(());
        };
        // SAFETY: plain system calls on a descriptor we own and stack values
        // of the kernel's layout.
        unsafe {
            if own_proc {
                let proc = libc::open(
                    c"/proc".as_ptr(),
                    libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
                );
                if proc < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                let attr = PathBeneathAttr {
                    allowed_access: self.read_access,
                    parent_fd: proc,
                };
                let added = libc::syscall(
                    libc::SYS_landlock_add_rule,
                    ruleset.as_raw_fd(),
                    LANDLOCK_RULE_PATH_BENEATH,
                    &attr as *const PathBeneathAttr,
                    0,
                );
                libc::close(proc);
                if added != 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::syscall(libc::SYS_landlock_restrict_self, ruleset.as_raw_fd(), 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
        Ok(())
    }
}

/// Where a confined command may read, and where it may write.
pub(crate) struct Paths<'a> {
    /// The workspace root: read and write.
    pub(crate) workspace: &'a Path,
    /// The command's own temporary directory: read and write.
    pub(crate) temp: &'a Path,
    /// The workspace's extra read-only directories.
    pub(crate) read_only: &'a [PathBuf],
}

/// Build the ruleset for `policy`, or `None` when confinement is off or,
/// in best-effort mode, unavailable.
pub(crate) fn prepare(
    policy: &ShellPolicy,
    paths: &Paths<'_>,
) -> Result<Option<Prepared>, ShellError> {
    let required = match policy.confinement {
        Confinement::Off => return Ok(None),
        Confinement::Required => true,
        Confinement::BestEffort => false,
    };
    if !landlock_available() {
        if required {
            return Err(ShellError::Confinement(
                "Landlock confinement is required but this kernel does not provide it".into(),
            ));
        }
        return Ok(None);
    }
    let ruleset = build(policy, paths).map_err(|e| ShellError::Confinement(e.to_string()))?;
    let ruleset: Option<OwnedFd> = ruleset.into();
    if ruleset.is_none() && required {
        return Err(ShellError::Confinement(
            "Landlock confinement is required but no ruleset could be made".into(),
        ));
    }
    Ok(Some(Prepared {
        ruleset,
        read_access: AccessFs::from_read(TARGET_ABI).bits(),
    }))
}

fn build(
    policy: &ShellPolicy,
    paths: &Paths<'_>,
) -> Result<RulesetCreated, landlock::RulesetError> {
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(TARGET_ABI))?;
    if policy.network != NetAccess::Any {
        ruleset = ruleset.handle_access(AccessNet::from_all(TARGET_ABI))?;
    }
    let mut created = ruleset.scope(Scope::from_all(TARGET_ABI))?.create()?;

    // Reading includes running: the directories appended to `PATH` hold
    // programs the command runs by name.
    let readable = super::readable::system_paths()
        .into_iter()
        .chain(policy.extra_read_dirs.iter().cloned())
        .chain(policy.path_append.iter().cloned())
        .chain(paths.read_only.iter().cloned());
    for path in readable {
        created = add_path(created, &path, AccessFs::from_read(TARGET_ABI))?;
    }
    for device in WRITABLE_DEVICES {
        created = add_path(created, Path::new(device), AccessFs::from_file(TARGET_ABI))?;
    }
    for dir in [paths.workspace, paths.temp] {
        created = add_path(created, dir, AccessFs::from_all(TARGET_ABI))?;
    }
    if let NetAccess::Ports { connect, bind } = &policy.network {
        for port in connect {
            created = created.add_rule(NetPort::new(*port, AccessNet::ConnectTcp))?;
        }
        for port in bind {
            created = created.add_rule(NetPort::new(*port, AccessNet::BindTcp))?;
        }
    }
    Ok(created)
}

/// Allow `access` beneath `path`; a path that does not exist (or cannot be
/// opened) is skipped, and a file gets only the rights a file can have.
fn add_path(
    ruleset: RulesetCreated,
    path: &Path,
    access: landlock::BitFlags<AccessFs>,
) -> Result<RulesetCreated, landlock::RulesetError> {
    let Ok(metadata) = std::fs::metadata(path) else {
        return Ok(ruleset);
    };
    let Ok(fd) = PathFd::new(path) else {
        return Ok(ruleset);
    };
    let access = if metadata.is_dir() {
        access
    } else {
        access & AccessFs::from_file(TARGET_ABI)
    };
    ruleset.add_rule(PathBeneath::new(fd, access))
}

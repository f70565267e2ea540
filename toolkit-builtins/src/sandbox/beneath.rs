//! The file-system half of resolution: open a path *below a directory
//! handle* so that no symlink, `..` or rename can lead the open outside it.
//!
//! Why handles rather than checking a string and then opening it: between
//! the check and the open, anyone who can write in the workspace can swap a
//! directory for a symlink to `/`. Opening relative to a held directory
//! descriptor, with the kernel refusing to leave it, closes that window.
//!
//! Why `rustix` rather than `cap-std`: on Linux we need exactly one call,
//! `openat2` with `RESOLVE_BENEATH`, plus `openat`/`mkdirat`/`renameat` on
//! held descriptors for writes; `rustix` gives those as safe functions
//! without cap-std's larger surface (its own `Dir`/`File` types and several
//! extra crates). Where `openat2` is missing (kernels before 5.6, other
//! Unixes, or a seccomp filter that forbids it) [`walk`] resolves one
//! component at a time with `O_NOFOLLOW`, following only symlinks that stay
//! below the handle — the same algorithm cap-std uses.

use std::ffi::OsString;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use rustix::fs::{Mode, OFlags};

/// Why an open below a handle failed.
#[derive(Debug)]
pub enum BeneathError {
    /// The path leads outside the handle (through `..` or a symlink).
    Escapes,
    /// The operating system refused.
    Io(io::Error),
}

impl From<io::Error> for BeneathError {
    fn from(error: io::Error) -> Self {
        BeneathError::Io(error)
    }
}

impl From<rustix::io::Errno> for BeneathError {
    fn from(errno: rustix::io::Errno) -> Self {
        BeneathError::Io(errno.into())
    }
}

/// How many symlinks one resolution may follow (Linux's own limit).
const MAX_SYMLINKS: usize = 40;

/// Open `relative` below `dir` with `flags` (and `mode` when creating).
/// An empty `relative` opens `dir` itself again.
pub fn open_beneath(
    dir: BorrowedFd<'_>,
    relative: &Path,
    flags: OFlags,
    mode: Mode,
) -> Result<OwnedFd, BeneathError> {
    let flags = flags | OFlags::CLOEXEC;
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        use std::sync::atomic::{AtomicBool, Ordering};
        // Remembered so a kernel without openat2 costs one failed call, not one per open.
        static NO_OPENAT2: AtomicBool = AtomicBool::new(false);
        if !NO_OPENAT2.load(Ordering::Relaxed) {
            use rustix::fs::ResolveFlags;
            let target: &Path = if relative.as_os_str().is_empty() {
                Path::new(".")
            } else {
                relative
            };
            let resolve = ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS;
            match rustix::fs::openat2(dir, target, flags, mode, resolve) {
                Ok(fd) => return Ok(fd),
                Err(rustix::io::Errno::XDEV) => return Err(BeneathError::Escapes),
                Err(rustix::io::Errno::NOSYS | rustix::io::Errno::PERM) => {
                    NO_OPENAT2.store(true, Ordering::Relaxed);
                }
                // openat2 fails with EAGAIN when a concurrent rename raced the
                // lookup; the walk below resolves it without that retry loop.
                Err(rustix::io::Errno::AGAIN) => {}
                Err(errno) => return Err(errno.into()),
            }
        }
    }
    walk(dir, relative, flags, mode)
}

/// Resolve `relative` below `dir` one component at a time, never letting the
/// kernel follow a symlink: each link is read and its target resolved by the
/// same rules, so `..` can never climb above `dir` and absolute targets are
/// refused.
pub fn walk(
    dir: BorrowedFd<'_>,
    relative: &Path,
    flags: OFlags,
    mode: Mode,
) -> Result<OwnedFd, BeneathError> {
    let mut pending: Vec<OsString> = Vec::new();
    push_components(&mut pending, relative)?;
    // Directories opened so far, below `dir`; the last is the current one.
    let mut stack: Vec<OwnedFd> = Vec::new();
    let mut links = 0usize;
    loop {
        let current = stack.last().map_or(dir, |fd| fd.as_fd());
        let Some(name) = pending.pop() else {
            // Nothing left: the path named a directory already on the stack.
            return Ok(rustix::fs::openat(current, ".", flags, mode)?);
        };
        if name == ".." {
            if stack.pop().is_none() {
                return Err(BeneathError::Escapes);
            }
            continue;
        }
        let last = pending.is_empty();
        let step_flags = if last {
            flags | OFlags::NOFOLLOW
        } else {
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC
        };
        match rustix::fs::openat(current, name.as_os_str(), step_flags, mode) {
            Ok(fd) if last => return Ok(fd),
            Ok(fd) => stack.push(fd),
            Err(errno @ (rustix::io::Errno::LOOP | rustix::io::Errno::NOTDIR)) => {
                let target = match rustix::fs::readlinkat(current, name.as_os_str(), Vec::new()) {
                    Ok(target) => target,
                    // Not a symlink: the original error stands.
                    Err(_) => return Err(errno.into()),
                };
                links += 1;
                if links > MAX_SYMLINKS {
                    return Err(rustix::io::Errno::LOOP.into());
                }
                let target = PathBuf::from(std::ffi::OsStr::from_bytes(target.as_bytes()));
                push_components(&mut pending, &target)?;
            }
            Err(errno) => return Err(errno.into()),
        }
    }
}

/// Push the components of `path` so that the first is popped first.
fn push_components(pending: &mut Vec<OsString>, path: &Path) -> Result<(), BeneathError> {
    let mut parts = Vec::new();
    for component in path.components() {
        match component {
            Component::RootDir | Component::Prefix(_) => return Err(BeneathError::Escapes),
            Component::CurDir => {}
            Component::ParentDir => parts.push(OsString::from("..")),
            Component::Normal(name) => parts.push(name.to_owned()),
        }
    }
    pending.extend(parts.into_iter().rev());
    Ok(())
}

/// Open directory `relative` below `dir`, creating it and any missing
/// parents. Each directory is created with `mkdirat` on the handle of its
/// parent, so a symlink swapped in cannot redirect the creation.
pub fn create_dirs_beneath(dir: BorrowedFd<'_>, relative: &Path) -> Result<OwnedFd, BeneathError> {
    let dir_flags = OFlags::RDONLY | OFlags::DIRECTORY;
    let mut current = open_beneath(dir, Path::new(""), dir_flags, Mode::empty())?;
    let mut prefix = PathBuf::new();
    for component in relative.components() {
        let Component::Normal(name) = component else {
            return Err(BeneathError::Escapes);
        };
        prefix.push(name);
        current = match open_beneath(dir, &prefix, dir_flags, Mode::empty()) {
            Ok(fd) => fd,
            Err(BeneathError::Io(e)) if e.kind() == io::ErrorKind::NotFound => {
                match rustix::fs::mkdirat(&current, name, Mode::from_raw_mode(0o777)) {
                    Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                    Err(errno) => return Err(errno.into()),
                }
                rustix::fs::openat(
                    &current,
                    name,
                    dir_flags | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                    Mode::empty(),
                )?
            }
            Err(e) => return Err(e),
        };
    }
    Ok(current)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn root() -> (tempfile::TempDir, OwnedFd) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("ws/sub")).unwrap();
        std::fs::write(dir.path().join("ws/sub/in.txt"), "inside").unwrap();
        std::fs::write(dir.path().join("secret.txt"), "outside").unwrap();
        let fd = rustix::fs::open(
            dir.path().join("ws"),
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .unwrap();
        (dir, fd)
    }

    fn read(fd: OwnedFd) -> String {
        std::io::read_to_string(std::fs::File::from(fd)).unwrap()
    }

    /// The walk is what runs where openat2 is missing; it must refuse
    /// exactly what openat2 refuses.
    #[test]
    fn the_walk_follows_inside_links_and_refuses_escapes() {
        let (dir, ws) = root();
        let w = dir.path().join("ws");
        symlink("sub/in.txt", w.join("good")).unwrap();
        symlink("../secret.txt", w.join("up")).unwrap();
        symlink(dir.path().join("secret.txt"), w.join("abs")).unwrap();
        symlink("../..", w.join("sub/deep")).unwrap();
        symlink("loop", w.join("loop")).unwrap();
        let by_walk = |p: &str| walk(ws.as_fd(), Path::new(p), OFlags::RDONLY, Mode::empty());
        let by_openat2 =
            |p: &str| open_beneath(ws.as_fd(), Path::new(p), OFlags::RDONLY, Mode::empty());
        check(&by_walk);
        // Both ways of opening agree.
        check(&by_openat2);
    }

    fn check(open: &dyn Fn(&str) -> Result<OwnedFd, BeneathError>) {
        assert_eq!(read(open("good").unwrap()), "inside");
        assert_eq!(read(open("sub/in.txt").unwrap()), "inside");
        assert_eq!(read(open("sub/../sub/in.txt").unwrap()), "inside");
        assert!(matches!(open("up"), Err(BeneathError::Escapes)));
        assert!(matches!(open("abs"), Err(BeneathError::Escapes)));
        assert!(matches!(open("../secret.txt"), Err(BeneathError::Escapes)));
        assert!(matches!(
            open("sub/deep/ws/sub/in.txt"),
            Err(BeneathError::Escapes)
        ));
        assert!(matches!(open("loop"), Err(BeneathError::Io(_))));
    }

    #[test]
    fn directories_are_created_below_the_handle_only() {
        let (dir, ws) = root();
        let w = dir.path().join("ws");
        create_dirs_beneath(ws.as_fd(), Path::new("a/b/c")).unwrap();
        assert!(w.join("a/b/c").is_dir());
        symlink(dir.path(), w.join("out")).unwrap();
        assert!(matches!(
            create_dirs_beneath(ws.as_fd(), Path::new("out/made")),
            Err(BeneathError::Escapes)
        ));
        assert!(!dir.path().join("made").exists());
    }
}

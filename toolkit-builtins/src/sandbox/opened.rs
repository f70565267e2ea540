//! Files and directories the sandbox has opened: what tools hold instead
//! of paths. Everything below an [`OpenedDir`] is opened relative to its
//! handle, by the same rules as below the workspace root.

use std::fs::File;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};

use rustix::fs::{Mode, OFlags};

use super::beneath::{BeneathError, open_beneath};
use super::special;

/// A file opened inside the workspace, with the path it was found at.
#[derive(Debug)]
pub struct OpenedFile {
    /// The open file.
    pub file: File,
    /// Its absolute path (for messages; the file is already open).
    pub path: PathBuf,
}

/// A directory opened inside the workspace: files below it are opened
/// relative to its handle, so they cannot escape it either.
#[derive(Debug)]
pub struct OpenedDir {
    pub(super) fd: OwnedFd,
    pub(super) path: PathBuf,
}

impl OpenedDir {
    /// Its absolute path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Open the regular file at `relative` below this directory for
    /// reading, refusing any way out of it. For a file the caller already
    /// knows to be regular (from a directory listing): the open cannot block
    /// on a FIFO swapped in since, and anything but a regular file is
    /// refused after it.
    pub fn open_file(&self, relative: &Path) -> io::Result<File> {
        match open_beneath(
            self.fd.as_fd(),
            relative,
            special::READ_FLAGS,
            Mode::empty(),
        ) {
            Ok(fd) => match special::settle(&fd)? {
                rustix::fs::FileType::RegularFile => Ok(File::from(fd)),
                _ => Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "not a regular file",
                )),
            },
            Err(BeneathError::Io(e)) => Err(e),
            Err(BeneathError::Escapes) => Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                "leads outside the searched directory",
            )),
        }
    }

    /// When the entry called `name` directly in this directory was last
    /// modified (a symlink's own time, not its target's). One `fstatat` on
    /// the held handle: the cheap way to look up many entries of one
    /// directory.
    pub fn modified_of(&self, name: &std::ffi::OsStr) -> io::Result<std::time::SystemTime> {
        if name.as_encoded_bytes().contains(&b'/') || name == ".." {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "not a name in this directory",
            ));
        }
        let stat = rustix::fs::statat(&self.fd, name, rustix::fs::AtFlags::SYMLINK_NOFOLLOW)?;
        let since_epoch = std::time::Duration::new(
            u64::try_from(stat.st_mtime).unwrap_or(0),
            u32::try_from(stat.st_mtime_nsec).unwrap_or(0),
        );
        Ok(std::time::UNIX_EPOCH + since_epoch)
    }

    /// Open the subdirectory at `relative` below this one.
    pub fn open_subdir(&self, relative: &Path) -> io::Result<OpenedDir> {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY;
        match open_beneath(self.fd.as_fd(), relative, flags, Mode::empty()) {
            Ok(fd) => Ok(OpenedDir {
                fd,
                path: self.path.join(relative),
            }),
            Err(BeneathError::Io(e)) => Err(e),
            Err(BeneathError::Escapes) => Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                "leads outside the searched directory",
            )),
        }
    }

    /// Another handle to the same directory.
    pub fn try_clone(&self) -> io::Result<OpenedDir> {
        Ok(OpenedDir {
            fd: self.fd.try_clone()?,
            path: self.path.clone(),
        })
    }

    /// The handle itself, for a caller that reads the directory on its own.
    pub fn into_fd(self) -> OwnedFd {
        self.fd
    }
}

impl AsFd for OpenedDir {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

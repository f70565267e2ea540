//! The workspace sandbox: every path a tool touches is resolved here.
//!
//! A tool names a path as the model wrote it. [`Workspace`] splits it into a
//! base directory (the workspace root, or for reads one of the extra
//! read-only directories) and a relative part, refusing what a string alone
//! shows to be wrong: `..` above the base, absolute paths elsewhere, `~`, NUL
//! bytes, overlong paths. The file is then opened *relative to a directory
//! handle* held since the workspace was made, with the kernel refusing to
//! leave it (`openat2` with `RESOLVE_BENEATH`): a symlink pointing out, or
//! one swapped in between a check and a use, cannot lead the open outside.
//! Symlinks are followed only while they stay below the handle, and only
//! relative ones: an absolute link target is always refused.
//!
//! Writes create missing directories with `mkdirat` on the handle of their
//! parent and replace files by renaming a temporary file within the same
//! held directory, so they cannot be redirected either.
//!
//! Prefer [`Workspace::open_file`], [`Workspace::open_dir`] and
//! [`Workspace::write_atomic`] over [`Workspace::resolve`]: a path string
//! handed to another API is checked now and used later, and that gap is what
//! a symlink race exploits.

mod beneath;
mod located;
pub(crate) mod special;
mod write;

use std::borrow::Cow;
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustix::fs::{Mode, OFlags};
use toolsmith::{ToolContext, ToolError};

use beneath::{BeneathError, open_beneath};
use located::{Base, Located, locate};

pub use located::{MAX_NAME_BYTES, MAX_PATH_BYTES};

/// What a tool means to do with a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Read it: the workspace and the extra read-only directories are open.
    Read,
    /// Create, change or delete it: only the workspace is open.
    Write,
}

/// Why a path was refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SandboxError {
    /// The path leads outside every directory the tool may use.
    #[error("`{path}` is outside the workspace; use a path relative to the workspace root")]
    Outside {
        /// The path as the model wrote it.
        path: String,
    },
    /// The path is not a usable path at all.
    #[error("`{path}` is not a valid path: {reason}")]
    Invalid {
        /// The path as the model wrote it.
        path: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// The file system refused while resolving.
    #[error("cannot resolve `{path}`: {message}")]
    Io {
        /// The path as the model wrote it.
        path: String,
        /// The operating system's message.
        message: String,
    },
    /// A symlink on the way leads outside the workspace.
    #[error(
        "`{path}` leads outside the workspace through a symlink; only links that stay inside (and are relative) are followed"
    )]
    Escapes {
        /// The path as the model wrote it.
        path: String,
    },
    /// The path is in a directory that may only be read.
    #[error("`{path}` is in a read-only directory; only files inside the workspace can be changed")]
    ReadOnly {
        /// The path as the model wrote it.
        path: String,
    },
    /// Nothing exists at the path.
    #[error("`{path}` does not exist")]
    NotFound {
        /// The path as the model wrote it.
        path: String,
    },
    /// The path names a FIFO, socket or device: reading one can block
    /// forever or never end, so it is never opened for reading.
    #[error("`{path}` is {what}; reading it could block or never end, so it is refused")]
    Special {
        /// The path as the model wrote it.
        path: String,
        /// What it is: "a named pipe (FIFO)", "a socket", "a device file".
        what: &'static str,
    },
}

impl From<SandboxError> for ToolError {
    fn from(error: SandboxError) -> Self {
        ToolError::failed(error)
    }
}

/// The directories file tools may use: a writable root and extra read-only
/// directories. Put one in the context's state; without one, tools fall back
/// to the context's workspace path.
///
/// Cloning is cheap: the directory handles are shared.
///
/// ```
/// use toolsmith_builtins::sandbox::{Access, Workspace};
///
/// let dir = std::env::temp_dir();
/// let workspace = Workspace::new(&dir).unwrap();
/// assert!(workspace.resolve("notes/today.md", Access::Write).is_ok());
/// assert!(workspace.resolve("../elsewhere", Access::Read).is_err());
/// ```
#[derive(Debug, Clone)]
pub struct Workspace {
    root: Arc<Handle>,
    read_only: Vec<Arc<Handle>>,
    read_only_paths: Vec<PathBuf>,
}

/// A directory: its canonical path and an open handle to it.
#[derive(Debug)]
struct Handle {
    path: PathBuf,
    fd: OwnedFd,
}

impl Handle {
    fn open(path: &Path) -> io::Result<Self> {
        let path = path.canonicalize()?;
        let fd = rustix::fs::open(
            &path,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        Ok(Self { path, fd })
    }
}

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
    fd: OwnedFd,
    path: PathBuf,
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

impl Workspace {
    /// A workspace rooted at `root`, which must exist.
    pub fn new(root: impl AsRef<Path>) -> io::Result<Self> {
        Ok(Self {
            root: Arc::new(Handle::open(root.as_ref())?),
            read_only: Vec::new(),
            read_only_paths: Vec::new(),
        })
    }

    /// Also allow reads (never writes) under `dir`, which must exist.
    pub fn with_read_only_dir(mut self, dir: impl AsRef<Path>) -> io::Result<Self> {
        let handle = Handle::open(dir.as_ref())?;
        self.read_only_paths.push(handle.path.clone());
        self.read_only.push(Arc::new(handle));
        Ok(self)
    }

    /// The workspace root, canonical.
    pub fn root(&self) -> &Path {
        &self.root.path
    }

    /// The extra read-only directories, canonical.
    pub fn read_only_dirs(&self) -> &[PathBuf] {
        &self.read_only_paths
    }

    /// The workspace of a call: the [`Workspace`] in the context's state, or
    /// one rooted at the context's workspace path.
    pub fn of(ctx: &ToolContext) -> Result<Cow<'_, Workspace>, ToolError> {
        if let Some(workspace) = ctx.state::<Workspace>() {
            return Ok(Cow::Borrowed(workspace));
        }
        let root = ctx
            .workspace()
            .ok_or_else(|| ToolError::failed("no workspace is configured for file tools"))?;
        Workspace::new(root)
            .map(Cow::Owned)
            .map_err(|e| ToolError::failed(format!("the workspace is unusable: {e}")))
    }

    /// Split `path` into its base and relative part, checking `access`.
    pub(crate) fn locate(&self, path: &str, access: Access) -> Result<Located, SandboxError> {
        let located = locate(path, &self.root.path, &self.read_only_paths)?;
        if access == Access::Write && located.base != Base::Root {
            return Err(SandboxError::ReadOnly {
                path: path.to_owned(),
            });
        }
        Ok(located)
    }

    fn handle(&self, base: Base) -> &Handle {
        match base {
            Base::Root => &self.root,
            Base::ReadOnly(index) => &self.read_only[index],
        }
    }

    /// Turn a failed open into the error a model reads.
    fn refusal(path: &str, error: BeneathError) -> SandboxError {
        match error {
            BeneathError::Escapes => SandboxError::Escapes {
                path: path.to_owned(),
            },
            BeneathError::Io(e) if e.kind() == io::ErrorKind::NotFound => SandboxError::NotFound {
                path: path.to_owned(),
            },
            BeneathError::Io(e)
                if e.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error()) =>
            {
                SandboxError::Escapes {
                    path: path.to_owned(),
                }
            }
            BeneathError::Io(e) => SandboxError::Io {
                path: path.to_owned(),
                message: e.to_string(),
            },
        }
    }

    /// Open the file at `path` for reading. Symlinks are followed only while
    /// they stay inside the directory the path is in. A FIFO, socket or
    /// device is refused ([`SandboxError::Special`]) by its type before it
    /// is opened; a directory opens (callers say what to do instead).
    pub fn open_file(&self, path: &str) -> Result<OpenedFile, SandboxError> {
        let located = self.locate(path, Access::Read)?;
        let handle = self.handle(located.base);
        let special = |what| SandboxError::Special {
            path: path.to_owned(),
            what,
        };
        let io = |e: io::Error| SandboxError::Io {
            path: path.to_owned(),
            message: e.to_string(),
        };
        // An O_PATH descriptor opens nothing: no FIFO wait, no device
        // driver. Its type decides whether the file is opened at all.
        let probe = open_beneath(
            handle.fd.as_fd(),
            &located.relative,
            OFlags::PATH,
            Mode::empty(),
        )
        .map_err(|e| Self::refusal(path, e))?;
        if let Some(what) = special::special_kind(special::type_of(&probe).map_err(io)?) {
            return Err(special(what));
        }
        drop(probe);
        let fd = open_beneath(
            handle.fd.as_fd(),
            &located.relative,
            special::READ_FLAGS,
            Mode::empty(),
        )
        .map_err(|e| Self::refusal(path, e))?;
        special::settle(&fd).map_err(|refused| match refused {
            special::Refused::Special(what) => special(what),
            special::Refused::Io(e) => io(e),
        })?;
        Ok(OpenedFile {
            file: File::from(fd),
            path: handle.path.join(&located.relative),
        })
    }

    /// Open the directory at `path` for `access`.
    pub fn open_dir(&self, path: &str, access: Access) -> Result<OpenedDir, SandboxError> {
        let located = self.locate(path, access)?;
        let handle = self.handle(located.base);
        let flags = OFlags::RDONLY | OFlags::DIRECTORY;
        let fd = open_beneath(handle.fd.as_fd(), &located.relative, flags, Mode::empty())
            .map_err(|e| Self::refusal(path, e))?;
        Ok(OpenedDir {
            fd,
            path: handle.path.join(&located.relative),
        })
    }

    /// The directories from the base `path` lies in (the workspace root or
    /// a read-only directory) down to `path`'s parent, outermost first, each
    /// opened below the base's handle. A search reads their ignore files,
    /// and none above the base. One that cannot be opened is left out.
    pub fn parents_of_dir(&self, path: &str) -> Result<Vec<OpenedDir>, SandboxError> {
        let located = self.locate(path, Access::Read)?;
        let handle = self.handle(located.base);
        let flags = OFlags::RDONLY | OFlags::DIRECTORY;
        let mut parents: Vec<&Path> = located.relative.ancestors().skip(1).collect();
        parents.reverse();
        Ok(parents
            .into_iter()
            .filter_map(|relative| {
                let fd = open_beneath(handle.fd.as_fd(), relative, flags, Mode::empty()).ok()?;
                Some(OpenedDir {
                    fd,
                    path: handle.path.join(relative),
                })
            })
            .collect())
    }

    /// Replace (or create) the file at `path` with `contents` atomically:
    /// parent directories are created, the bytes go to a temporary file in
    /// the same directory, and a rename puts it in place, so readers see the
    /// old file or the new one, never half of it. A symlink at `path` is
    /// replaced, never written through. Returns the file's absolute path.
    pub fn write_atomic(&self, path: &str, contents: &[u8]) -> Result<PathBuf, SandboxError> {
        let located = self.locate(path, Access::Write)?;
        let Some(name) = located.relative.file_name() else {
            return Err(SandboxError::Invalid {
                path: path.to_owned(),
                reason: "it names the workspace root, not a file",
            });
        };
        let parent = located.relative.parent().unwrap_or(Path::new(""));
        let dir = beneath::create_dirs_beneath(self.root.fd.as_fd(), parent)
            .map_err(|e| Self::refusal(path, e))?;
        write::replace(dir.as_fd(), name, contents).map_err(|e| SandboxError::Io {
            path: path.to_owned(),
            message: e.to_string(),
        })?;
        Ok(self.root.path.join(&located.relative))
    }

    /// Resolve `path` (relative to the root, or absolute) for `access`.
    ///
    /// Returns an absolute path inside an allowed directory, following
    /// symlinks of the part that exists (a symlink leading out is refused as
    /// [`SandboxError::Outside`]); a path that does not exist yet is checked
    /// through its nearest existing ancestor. The answer is only true when
    /// given: prefer the `open_*` methods and [`Workspace::write_atomic`],
    /// which leave no gap between the check and the use.
    pub fn resolve(&self, path: &str, access: Access) -> Result<PathBuf, SandboxError> {
        let located = self.locate(path, access)?;
        let handle = self.handle(located.base);
        let joined = handle.path.join(&located.relative);
        let resolved = canonicalize_existing_prefix(&joined).map_err(|e| SandboxError::Io {
            path: path.to_owned(),
            message: e.to_string(),
        })?;
        let allowed = resolved.starts_with(&self.root.path)
            || (access == Access::Read
                && self.read_only_paths.iter().any(|d| resolved.starts_with(d)));
        if allowed {
            Ok(resolved)
        } else {
            Err(SandboxError::Outside {
                path: path.to_owned(),
            })
        }
    }
}

/// Canonicalize the longest existing prefix of `path` and append the rest,
/// refusing `..` in the part that does not exist yet.
fn canonicalize_existing_prefix(path: &Path) -> io::Result<PathBuf> {
    let mut existing = path.to_path_buf();
    let mut rest = Vec::new();
    loop {
        match existing.canonicalize() {
            Ok(canonical) => {
                let mut out = canonical;
                for part in rest.iter().rev() {
                    out.push(part);
                }
                return Ok(out);
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                let name = match existing.components().next_back() {
                    Some(std::path::Component::Normal(name)) => name.to_owned(),
                    _ => {
                        return Err(io::Error::new(
                            io::ErrorKind::InvalidInput,
                            "`..` past a missing directory",
                        ));
                    }
                };
                rest.push(name);
                if !existing.pop() {
                    return Err(e);
                }
            }
            Err(e) => return Err(e),
        }
    }
}

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
//! A path is checked once: [`Workspace::locate`] returns a
//! [`WorkspacePath`], which tools pass along and open, never a string to
//! check again. What a file *is* (FIFO, socket, device, a file of `/proc`
//! or `/sys`) is judged on the opened descriptor, in `special.rs`, for every
//! read.
//!
//! Prefer [`WorkspacePath::open_file`], [`WorkspacePath::open_dir`] and
//! [`WorkspacePath::write_atomic`] over [`Workspace::resolve`]: a path string
//! handed to another API is checked now and used later, and that gap is what
//! a symlink race exploits.

mod beneath;
mod located;
mod opened;
mod path;
mod real_name;
pub(crate) mod special;
mod write;

use std::borrow::Cow;
use std::io;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustix::fs::{Mode, OFlags};
use toolsmith::{ToolContext, ToolError};

use located::{Base, locate};

pub use located::{MAX_NAME_BYTES, MAX_PATH_BYTES};
pub use opened::{OpenedDir, OpenedFile};
pub use path::WorkspacePath;

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
    /// The path names a FIFO, socket, device or a file the kernel makes up
    /// as it is read (`/proc`, `/sys`): reading one can block forever or
    /// never end, so it is never opened for reading.
    #[error("`{path}` is {what}; reading it could block or never end, so it is refused")]
    Special {
        /// The path as the model wrote it.
        path: String,
        /// What it is: "a named pipe (FIFO)", "a socket", "a device file",
        /// "a file of /proc, made up by the kernel as it is read", ...
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
/// assert!(workspace.locate("notes/today.md", Access::Write).is_ok());
/// assert!(workspace.locate("../elsewhere", Access::Read).is_err());
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

    /// Check `path` as the model wrote it for `access`, once: split it into
    /// the directory it lies in (the root, or for reading an extra
    /// read-only directory) and a normalised part below, refusing what the
    /// string alone shows to be wrong (`..` above the base, absolute paths
    /// elsewhere, `~`, NUL bytes, overlong paths; for writing, a read-only
    /// directory). What the file system holds is judged when the returned
    /// path is opened.
    pub fn locate(&self, path: &str, access: Access) -> Result<WorkspacePath, SandboxError> {
        let located = locate(path, &self.root.path, &self.read_only_paths)?;
        if access == Access::Write && located.base != Base::Root {
            return Err(SandboxError::ReadOnly {
                path: path.to_owned(),
            });
        }
        let base = match located.base {
            Base::Root => &self.root,
            Base::ReadOnly(index) => &self.read_only[index],
        };
        Ok(WorkspacePath::new(
            path,
            access,
            Arc::clone(base),
            located.relative,
        ))
    }

    /// Resolve `path` (relative to the root, or absolute) for `access`.
    ///
    /// Returns an absolute path inside an allowed directory, following
    /// symlinks of the part that exists (a symlink leading out is refused as
    /// [`SandboxError::Outside`]); a path that does not exist yet is checked
    /// through its nearest existing ancestor. The answer is only true when
    /// given: prefer [`Workspace::locate`] and the methods of the
    /// [`WorkspacePath`] it returns, which leave no gap between the check
    /// and the use.
    pub fn resolve(&self, path: &str, access: Access) -> Result<PathBuf, SandboxError> {
        let joined = self.locate(path, access)?.absolute();
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

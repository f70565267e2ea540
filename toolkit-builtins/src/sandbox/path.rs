//! A path checked once: [`WorkspacePath`] is what [`Workspace::locate`]
//! returns, and what a tool passes along from then on.
//!
//! It holds the directory handle its base was opened as and the normalised
//! part below it, so every later use opens below that handle (see
//! [`super::beneath`]) and no use checks the string again. It can only be
//! made by [`Workspace::locate`]: a tool cannot hand an unchecked path to
//! an operation that takes one.
//!
//! [`Workspace::locate`]: super::Workspace::locate

use std::fmt;
use std::io;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustix::fs::{Mode, OFlags};

use super::beneath::{self, BeneathError, open_beneath};
use super::opened::{OpenedDir, OpenedFile};
use super::{Access, Handle, SandboxError, special, write};

/// A path the sandbox has located inside the workspace (or, for reading,
/// an extra read-only directory), for one kind of [`Access`].
///
/// Made only by [`Workspace::locate`](super::Workspace::locate), which
/// refuses what the string alone shows to be wrong; its methods open below
/// the held directory handle, where the kernel refuses the rest (symlinks
/// out, `..` through links, special files). Displays as the model wrote it.
///
/// ```
/// use toolsmith_builtins::sandbox::{Access, Workspace};
///
/// let dir = tempfile::tempdir().unwrap();
/// let workspace = Workspace::new(dir.path()).unwrap();
/// let notes = workspace.locate("notes/today.md", Access::Write).unwrap();
/// notes.write_atomic(b"- call Ana\n").unwrap();
/// let mut text = String::new();
/// std::io::Read::read_to_string(&mut notes.open_file().unwrap().file, &mut text).unwrap();
/// assert_eq!(text, "- call Ana\n");
/// assert!(workspace.locate("../elsewhere", Access::Read).is_err());
/// ```
#[derive(Debug, Clone)]
pub struct WorkspacePath {
    /// The path as the model wrote it, for messages.
    given: String,
    access: Access,
    /// The directory the path lies in, held open.
    base: Arc<Handle>,
    /// Normalised: only normal components; empty for the base itself.
    relative: PathBuf,
}

impl WorkspacePath {
    /// Only [`Workspace::locate`](super::Workspace::locate) calls this,
    /// after its checks.
    pub(super) fn new(given: &str, access: Access, base: Arc<Handle>, relative: PathBuf) -> Self {
        Self {
            given: given.to_owned(),
            access,
            base,
            relative,
        }
    }

    /// The path as the model wrote it.
    pub fn as_given(&self) -> &str {
        &self.given
    }

    /// What the path was located for.
    pub fn access(&self) -> Access {
        self.access
    }

    /// The part below the directory the path lies in, normalised (no `.`,
    /// `..` or root); empty when the path names that directory.
    pub fn relative(&self) -> &Path {
        &self.relative
    }

    /// The absolute path, as the string says: the directory's canonical
    /// path joined with [`relative`](Self::relative). For messages and
    /// keys; symlinks in it are not resolved, and opening it by this name
    /// would check nothing.
    pub fn absolute(&self) -> PathBuf {
        self.base.path.join(&self.relative)
    }

    /// Open the file for reading. Symlinks are followed only while they stay
    /// below the directory the path lies in. A FIFO, socket, device or a
    /// file the kernel makes up as it is read (`/proc`, `/sys`) is refused
    /// ([`SandboxError::Special`]) by what it is before it is opened; a
    /// directory opens (callers say what to do instead).
    pub fn open_file(&self) -> Result<OpenedFile, SandboxError> {
        let refused = |refused| match refused {
            special::Refused::Special(what) => SandboxError::Special {
                path: self.given.clone(),
                what,
            },
            special::Refused::Io(e) => self.io(e),
        };
        // An O_PATH descriptor opens nothing: no FIFO wait, no device
        // driver. What it is decides whether the file is opened at all.
        let probe = self.open(OFlags::PATH)?;
        special::refusal_of(&probe).map_err(refused)?;
        drop(probe);
        let fd = self.open(special::READ_FLAGS)?;
        special::settle(&fd).map_err(refused)?;
        Ok(OpenedFile {
            file: std::fs::File::from(fd),
            path: self.absolute(),
        })
    }

    /// Open the file as [`open_file`](Self::open_file) does, with
    /// [`OpenedFile::path`] set to the name the kernel found it at: no
    /// symlink, `.` or `..` in it, below the directory the path lies in.
    ///
    /// For handing a file to something that opens it later by name (a
    /// channel sending an attachment): a link the model named could be
    /// repointed outside by then; the real name has no link to repoint.
    pub fn open_file_by_real_name(&self) -> Result<OpenedFile, SandboxError> {
        let mut opened = self.open_file()?;
        let real = super::real_name::of(&opened.file, &opened.path).map_err(|e| self.io(e))?;
        if !real.starts_with(&self.base.path) {
            return Err(SandboxError::Escapes {
                path: self.given.clone(),
            });
        }
        opened.path = real;
        Ok(opened)
    }

    /// Open the directory the path names.
    pub fn open_dir(&self) -> Result<OpenedDir, SandboxError> {
        let fd = self.open(OFlags::RDONLY | OFlags::DIRECTORY)?;
        Ok(OpenedDir {
            fd,
            path: self.absolute(),
        })
    }

    /// The directories from the one the path lies in (the workspace root or
    /// a read-only directory) down to the path's parent, outermost first,
    /// each opened below the held handle. A search reads their ignore
    /// files, and none above. One that cannot be opened is left out.
    pub fn parent_dirs(&self) -> Vec<OpenedDir> {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY;
        let mut parents: Vec<&Path> = self.relative.ancestors().skip(1).collect();
        parents.reverse();
        parents
            .into_iter()
            .filter_map(|relative| {
                let fd = open_beneath(self.base.fd.as_fd(), relative, flags, Mode::empty()).ok()?;
                Some(OpenedDir {
                    fd,
                    path: self.base.path.join(relative),
                })
            })
            .collect()
    }

    /// Replace (or create) the file with `contents` atomically: parent
    /// directories are created, the bytes go to a temporary file in the
    /// same directory, and a rename puts it in place, so readers see the
    /// old file or the new one, never half of it. A symlink at the path is
    /// replaced, never written through. Only a path located for
    /// [`Access::Write`] is written (one located for reading may lie in a
    /// read-only directory). Returns the file's absolute path.
    pub fn write_atomic(&self, contents: &[u8]) -> Result<PathBuf, SandboxError> {
        if self.access != Access::Write {
            return Err(SandboxError::Invalid {
                path: self.given.clone(),
                reason: "it was located for reading, not for writing",
            });
        }
        let Some(name) = self.relative.file_name() else {
            return Err(SandboxError::Invalid {
                path: self.given.clone(),
                reason: "it names the workspace root, not a file",
            });
        };
        let parent = self.relative.parent().unwrap_or(Path::new(""));
        let dir = beneath::create_dirs_beneath(self.base.fd.as_fd(), parent)
            .map_err(|e| self.refusal(e))?;
        write::replace(dir.as_fd(), name, contents).map_err(|e| self.io(e))?;
        Ok(self.absolute())
    }

    /// Open the path below the held handle with `flags`.
    fn open(&self, flags: OFlags) -> Result<std::os::fd::OwnedFd, SandboxError> {
        open_beneath(self.base.fd.as_fd(), &self.relative, flags, Mode::empty())
            .map_err(|e| self.refusal(e))
    }

    fn io(&self, error: io::Error) -> SandboxError {
        SandboxError::Io {
            path: self.given.clone(),
            message: error.to_string(),
        }
    }

    /// Turn a failed open into the error a model reads.
    fn refusal(&self, error: BeneathError) -> SandboxError {
        let path = self.given.clone();
        match error {
            BeneathError::Escapes => SandboxError::Escapes { path },
            BeneathError::Io(e) if e.kind() == io::ErrorKind::NotFound => {
                SandboxError::NotFound { path }
            }
            // Too many links, or a link the kernel would have to jump
            // through (`/proc/<pid>/fd/N`): both are ways out.
            BeneathError::Io(e)
                if e.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error()) =>
            {
                SandboxError::Escapes { path }
            }
            BeneathError::Io(e) => self.io(e),
        }
    }
}

impl fmt::Display for WorkspacePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.given)
    }
}

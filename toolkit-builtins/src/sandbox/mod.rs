//! The workspace sandbox: every path a tool touches is resolved here.
//!
//! A tool names a path as the model wrote it; [`Workspace::resolve`] turns it
//! into a path inside the workspace root (or inside one of the extra
//! read-only directories, for reads) or refuses it with a message the model
//! can act on.

use std::borrow::Cow;
use std::io;
use std::path::{Component, Path, PathBuf};

use toolkit::{ToolContext, ToolError};

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
}

impl From<SandboxError> for ToolError {
    fn from(error: SandboxError) -> Self {
        ToolError::failed(error)
    }
}

/// The directories file tools may use: a writable root and extra read-only
/// directories. Put one in the context's state; without one, tools fall back
/// to the context's workspace path.
#[derive(Debug, Clone)]
pub struct Workspace {
    root: PathBuf,
    read_only: Vec<PathBuf>,
}

impl Workspace {
    /// A workspace rooted at `root`, which must exist.
    pub fn new(root: impl AsRef<Path>) -> io::Result<Self> {
        Ok(Self {
            root: root.as_ref().canonicalize()?,
            read_only: Vec::new(),
        })
    }

    /// Also allow reads (never writes) under `dir`, which must exist.
    pub fn with_read_only_dir(mut self, dir: impl AsRef<Path>) -> io::Result<Self> {
        self.read_only.push(dir.as_ref().canonicalize()?);
        Ok(self)
    }

    /// The workspace root, canonical.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The extra read-only directories, canonical.
    pub fn read_only_dirs(&self) -> &[PathBuf] {
        &self.read_only
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

    /// Resolve `path` (relative to the root, or absolute) for `access`.
    ///
    /// Returns an absolute path inside an allowed directory, following
    /// symlinks of the part that exists; a path that does not exist yet is
    /// checked through its nearest existing ancestor.
    pub fn resolve(&self, path: &str, access: Access) -> Result<PathBuf, SandboxError> {
        let invalid = |reason| SandboxError::Invalid {
            path: path.to_owned(),
            reason,
        };
        if path.contains('\0') {
            return Err(invalid("it contains a NUL byte"));
        }
        if path.starts_with('~') {
            return Err(SandboxError::Outside {
                path: path.to_owned(),
            });
        }
        let joined = self.root.join(path);
        let resolved = canonicalize_existing_prefix(&joined).map_err(|e| SandboxError::Io {
            path: path.to_owned(),
            message: e.to_string(),
        })?;
        let allowed = resolved.starts_with(&self.root)
            || (access == Access::Read && self.read_only.iter().any(|d| resolved.starts_with(d)));
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
                    Some(Component::Normal(name)) => name.to_owned(),
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

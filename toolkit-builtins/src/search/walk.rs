//! The walk both search tools share: parallel, `.gitignore`-aware, noise
//! skipped, never following symlinks.

use std::path::{Path, PathBuf};

use ignore::WalkBuilder;
use toolsmith::ToolError;

use crate::fs::noise::is_noise_dir;
use crate::sandbox::{Access, OpenedDir, Workspace};

/// A directory to search, opened in the workspace, and how to name what is
/// found in it so the model can pass the names back to other tools.
pub struct SearchRoot {
    /// The directory, held open.
    pub dir: OpenedDir,
    /// What to put before a path found below it (the `path` argument as
    /// given, normalised; empty for the workspace root).
    prefix: PathBuf,
}

impl SearchRoot {
    /// Open `path` for searching.
    pub fn open(workspace: &Workspace, path: &str) -> Result<Self, ToolError> {
        let dir = workspace.open_dir(path, Access::Read)?;
        let prefix = match dir.path().strip_prefix(workspace.root()) {
            Ok(relative) => relative.to_path_buf(),
            Err(_) => dir.path().to_path_buf(),
        };
        Ok(Self { dir, prefix })
    }

    /// A parallel walk of the directory.
    pub fn walker(&self) -> WalkBuilder {
        let mut builder = WalkBuilder::new(self.dir.path());
        builder
            .hidden(false)
            .parents(true)
            .ignore(true)
            .git_ignore(true)
            .git_exclude(true)
            .git_global(false)
            .require_git(false)
            .follow_links(false)
            .threads(0)
            .filter_entry(|entry| {
                !(entry.depth() > 0
                    && entry.file_type().is_some_and(|t| t.is_dir())
                    && is_noise_dir(entry.file_name()))
            });
        builder
    }

    /// `absolute` (found by the walk) relative to the searched directory.
    pub fn relative<'p>(&self, absolute: &'p Path) -> &'p Path {
        absolute.strip_prefix(self.dir.path()).unwrap_or(absolute)
    }

    /// The name to show for `relative` (below the searched directory).
    pub fn display(&self, relative: &Path) -> String {
        self.prefix.join(relative).to_string_lossy().into_owned()
    }
}

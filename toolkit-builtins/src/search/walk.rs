//! The walk both search tools share: parallel, ignore files honoured (read
//! safely, see [`super::ignores`]), noise skipped, never following symlinks.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ignore::WalkBuilder;
use toolsmith::ToolError;

use super::ignores::IgnoreRules;
use crate::fs::noise::is_noise_dir;
use crate::sandbox::{OpenedDir, Workspace, WorkspacePath};

/// A directory to search, opened in the workspace, and how to name what is
/// found in it so the model can pass the names back to other tools.
pub struct SearchRoot {
    /// The directory, held open.
    pub dir: OpenedDir,
    /// What to put before a path found below it (the `path` argument as
    /// given, normalised; empty for the workspace root).
    prefix: PathBuf,
    /// The ignore rules in force below it.
    rules: Arc<IgnoreRules>,
}

impl SearchRoot {
    /// Open `target` for searching, with the ignore files of it and its
    /// parents up to the directory it lies in (the workspace root or a
    /// read-only directory).
    pub fn open(workspace: &Workspace, target: &WorkspacePath) -> Result<Self, ToolError> {
        let path = target.as_given();
        let dir = target.open_dir()?;
        let parents = target.parent_dirs();
        let prefix = match dir.path().strip_prefix(workspace.root()) {
            Ok(relative) => relative.to_path_buf(),
            Err(_) => dir.path().to_path_buf(),
        };
        let for_rules = dir
            .try_clone()
            .map_err(|e| ToolError::failed(format!("cannot search `{path}`: {e}")))?;
        let rules = Arc::new(IgnoreRules::new(for_rules, &parents));
        Ok(Self { dir, prefix, rules })
    }

    /// A parallel walk of the directory. The `ignore` crate reads no ignore
    /// file itself: every one of its own filters that would open a file is
    /// off, and the rules come from [`IgnoreRules`].
    pub fn walker(&self) -> WalkBuilder {
        let mut builder = WalkBuilder::new(self.dir.path());
        let rules = self.rules.clone();
        builder
            .standard_filters(false)
            .hidden(false)
            .parents(false)
            .ignore(false)
            .git_ignore(false)
            .git_exclude(false)
            .git_global(false)
            .require_git(false)
            .follow_links(false)
            .threads(0)
            .filter_entry(move |entry| {
                if entry.depth() == 0 {
                    return true;
                }
                let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
                if is_dir && is_noise_dir(entry.file_name()) {
                    return false;
                }
                !rules.is_ignored(entry.path(), is_dir)
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

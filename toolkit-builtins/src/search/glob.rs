//! `glob`: files whose path matches a pattern, newest first.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use ignore::WalkState;
use toolsmith::{ToolContext, ToolError, tool};

use super::pattern::PathGlob;
use super::walk::SearchRoot;
use crate::fs::FsLimits;
use crate::sandbox::{OpenedDir, Workspace};

/// Find files by name pattern, most recently modified first.
///
/// `*.rs` matches file names at any depth; a pattern with `/` such as
/// `src/**/*.test.ts` matches paths from `path` down. Files ignored by
/// `.gitignore` and noise directories (`.git`, `node_modules`, `target`,
/// virtualenvs, build output) are skipped. Prefer this over `find`.
#[tool(read_only, idempotent, category = filesystem_read)]
pub fn glob(
    ctx: &ToolContext,
    /// The glob, such as `**/*.py` or `*.{ts,tsx}`.
    #[arg(min_length = 1)]
    pattern: String,
    /// Directory to search, relative to the workspace root.
    #[arg(default = ".".to_owned())]
    path: String,
    /// Most paths to return (default 200).
    #[arg(minimum = 1)]
    max_results: Option<usize>,
) -> Result<String, ToolError> {
    let workspace = Workspace::of(ctx)?;
    let max = max_results.unwrap_or(FsLimits::of(ctx).default_glob_results);
    let glob = PathGlob::new(&pattern).map_err(ToolError::failed)?;
    let root = SearchRoot::open(&workspace, &path)?;
    let found: Mutex<Vec<(SystemTime, PathBuf)>> = Mutex::new(Vec::new());
    root.walker().build_parallel().run(|| {
        let (root, glob, found) = (&root, &glob, &found);
        // The directory of the last match, held open: a walker thread takes
        // one directory at a time, so most lookups reuse it.
        let mut parent_dir: Option<(PathBuf, OpenedDir)> = None;
        Box::new(move |entry| {
            let Ok(entry) = entry else {
                return WalkState::Continue;
            };
            if entry.depth() == 0 || entry.file_type().is_none_or(|t| t.is_dir()) {
                return WalkState::Continue;
            }
            let relative = root.relative(entry.path());
            if glob.is_match(relative) {
                // The walk lists directories by path; looking the match up
                // again in a directory opened below the held handle drops
                // anything a symlink swapped in mid-walk showed from outside.
                let parent = relative.parent().unwrap_or(Path::new(""));
                let Some(name) = relative.file_name() else {
                    return WalkState::Continue;
                };
                // Compared as bytes: `Path`'s `==` parses both into components.
                let cached =
                    |(path, _): &(PathBuf, OpenedDir)| path.as_os_str() == parent.as_os_str();
                if !parent_dir.as_ref().is_some_and(cached) {
                    parent_dir = root
                        .dir
                        .open_subdir(parent)
                        .ok()
                        .map(|d| (parent.to_path_buf(), d));
                }
                let Some((_, dir)) = &parent_dir else {
                    return WalkState::Continue;
                };
                let Ok(modified) = dir.modified_of(name) else {
                    return WalkState::Continue;
                };
                let relative = relative.to_path_buf();
                found
                    .lock()
                    .unwrap_or_else(|poisoned| poisoned.into_inner())
                    .push((modified, relative));
            }
            WalkState::Continue
        })
    });
    let mut found = found.into_inner().unwrap_or_else(|p| p.into_inner());
    if found.is_empty() {
        return Ok(format!("No files match `{pattern}` in `{path}`."));
    }
    let total = found.len();
    // Newest first; equal times (common: files unpacked together) by path,
    // as bytes, so the order is stable between calls and cheap to compute.
    found.sort_unstable_by(|a, b| {
        b.0.cmp(&a.0).then_with(|| {
            a.1.as_os_str()
                .as_encoded_bytes()
                .cmp(b.1.as_os_str().as_encoded_bytes())
        })
    });
    let mut out = String::new();
    for (_, relative) in found.iter().take(max) {
        out.push_str(&root.display(relative));
        out.push('\n');
    }
    if total > max {
        out.push_str(&format!(
            "(showing the {max} newest of {total} files; narrow the pattern or path, or raise max_results)\n"
        ));
    }
    Ok(out)
}

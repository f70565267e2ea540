//! `glob`: files whose path matches a pattern, newest first.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::ffi::OsStr;
use std::io::Read;
use std::os::unix::ffi::OsStringExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::SystemTime;

use crate::fs::blocking::Stop;
use ignore::WalkState;
use toolsmith::{ToolContext, ToolError, tool};

use super::pattern::PathGlob;
use super::walk::SearchRoot;
use crate::fs::FsLimits;
use crate::fs::sniff;
use crate::sandbox::{Access, OpenedDir, Workspace};

/// Find files by name pattern, most recently modified first.
///
/// `*.rs` matches file names at any depth; a pattern with `/` such as
/// `src/**/*.test.ts` matches paths from `path` down. Files ignored by
/// `.gitignore`, noise directories (`.git`, `node_modules`, `target`,
/// virtualenvs, build output) and binary files are skipped, as grep skips
/// them; `include_binary` lists binary files too. Prefer this over `find`.
#[tool(read_only, idempotent, category = filesystem_read)]
pub async fn glob(
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
    /// List binary files (images, archives, executables) too.
    #[arg(default = false)]
    include_binary: bool,
) -> Result<String, ToolError> {
    crate::fs::blocking::run(ctx, move |ctx, stop| {
        glob_blocking(ctx, stop, pattern, path, max_results, include_binary)
    })
    .await?
}

/// The body of [`glob`], on a blocking thread.
fn glob_blocking(
    ctx: &ToolContext,
    stop: &Stop,
    pattern: String,
    path: String,
    max_results: Option<usize>,
    include_binary: bool,
) -> Result<String, ToolError> {
    let workspace = Workspace::of(ctx)?;
    let limits = FsLimits::of(ctx);
    let max = max_results
        .unwrap_or(limits.default_glob_results)
        .min(MAX_GLOB_RESULTS);
    let glob = PathGlob::new(&pattern).map_err(ToolError::failed)?;
    let root = SearchRoot::open(&workspace, &workspace.locate(&path, Access::Read)?)?;
    let found = Mutex::new(Newest::new(max));
    let binary = AtomicUsize::new(0);
    root.walker().build_parallel().run(|| {
        let (root, glob, found, binary) = (&root, &glob, &found, &binary);
        // The directory of the last match, held open: a walker thread takes
        // one directory at a time, so most lookups reuse it.
        let mut parent_dir: Option<(PathBuf, OpenedDir)> = None;
        Box::new(move |entry| {
            if stop.is_set() {
                return WalkState::Quit;
            }
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
                if !include_binary && is_binary_file(dir, name) {
                    binary.fetch_add(1, Ordering::Relaxed);
                    return WalkState::Continue;
                }
                found
                    .lock()
                    .unwrap_or_else(|poisoned| poisoned.into_inner())
                    .offer(modified, relative);
            }
            WalkState::Continue
        })
    });
    let found = found.into_inner().unwrap_or_else(|p| p.into_inner());
    let total = found.total;
    let binary = match binary.into_inner() {
        0 => String::new(),
        1 => "(1 binary file left out; include_binary=true lists it)\n".to_owned(),
        n => format!("({n} binary files left out; include_binary=true lists them)\n"),
    };
    if total == 0 {
        return Ok(format!("No files match `{pattern}` in `{path}`.\n{binary}")
            .trim_end()
            .to_owned());
    }
    let kept = found.into_sorted();
    let mut out = String::new();
    let mut shown = 0usize;
    for relative in &kept {
        let line = root.display(relative);
        if !out.is_empty() && out.len() + line.len() + 1 > limits.max_listing_chars {
            break;
        }
        out.push_str(&line);
        out.push('\n');
        shown += 1;
    }
    if total > shown {
        out.push_str(&format!(
            "(showing the {shown} newest of {total} files; narrow the pattern or path, or raise max_results)\n"
        ));
    }
    out.push_str(&binary);
    Ok(out)
}

/// Whether the file `name` in `dir` is binary by the rule `grep` skips
/// files by ([`sniff::is_binary`] on its first [`sniff::SNIFF_BYTES`]).
/// Opened below the held directory like grep's files: the open cannot block
/// on a FIFO (`O_NONBLOCK`), anything but a regular file is refused before a
/// byte is read, a symlink leading out is not followed. A
/// file that cannot be read is not known to be binary, and stays listed.
fn is_binary_file(dir: &OpenedDir, name: &OsStr) -> bool {
    let Ok(file) = dir.open_file(Path::new(name)) else {
        return false;
    };
    let mut head = Vec::with_capacity(sniff::SNIFF_BYTES);
    match file.take(sniff::SNIFF_BYTES as u64).read_to_end(&mut head) {
        Ok(_) => sniff::is_binary(&head),
        Err(_) => false,
    }
}

/// Paths `glob` returns at most, whatever a call asks for.
pub const MAX_GLOB_RESULTS: usize = 10_000;

/// The `max` newest matches seen so far, and how many there were: memory
/// stays at `max` paths however many files match.
struct Newest {
    max: usize,
    total: usize,
    /// Worst on top: the oldest, then the greatest path.
    heap: BinaryHeap<(Reverse<SystemTime>, Vec<u8>)>,
}

impl Newest {
    fn new(max: usize) -> Self {
        Self {
            max,
            total: 0,
            heap: BinaryHeap::new(),
        }
    }

    fn offer(&mut self, modified: SystemTime, relative: &Path) {
        self.total += 1;
        let key = (
            Reverse(modified),
            relative.as_os_str().as_encoded_bytes().to_vec(),
        );
        if self.heap.len() < self.max {
            self.heap.push(key);
        } else if self.heap.peek().is_some_and(|worst| key < *worst) {
            self.heap.pop();
            self.heap.push(key);
        }
    }

    /// Newest first; equal times (common: files unpacked together) by path,
    /// as bytes, so the order is stable between calls.
    fn into_sorted(self) -> Vec<PathBuf> {
        self.heap
            .into_sorted_vec()
            .into_iter()
            .map(|(_, bytes)| PathBuf::from(std::ffi::OsString::from_vec(bytes)))
            .collect()
    }
}

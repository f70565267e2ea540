//! `list_dir`: what a directory holds, optionally all the way down.
//!
//! Directories are read through handles opened below the workspace's own
//! (never by path), so a directory swapped for a symlink mid-listing cannot
//! lead the listing out.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use super::blocking::Stop;
use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use toolsmith::{ToolContext, ToolError, tool};

use super::FsLimits;
use super::noise::is_noise_dir;
use super::sniff::human_size;
use crate::sandbox::{Access, Workspace, WorkspacePath};

/// List the files and directories in a directory.
///
/// Directories end with `/`, files show their size, symlinks their target.
/// Noise (`.git`, `node_modules`, `target`, `__pycache__`, virtualenvs,
/// build output) is skipped and named at the end. Use glob to find files by
/// name and grep to search their content.
#[tool(read_only, idempotent, category = filesystem_read)]
pub async fn list_dir(
    ctx: &ToolContext,
    /// Directory to list, relative to the workspace root.
    #[arg(default = ".".to_owned())]
    path: String,
    /// Also list everything below, breadth first.
    #[arg(default = false)]
    recursive: bool,
    /// Most entries to return (default 500).
    #[arg(minimum = 1)]
    max_entries: Option<usize>,
) -> Result<String, ToolError> {
    super::blocking::run(ctx, move |ctx, stop| {
        list_dir_blocking(ctx, stop, path, recursive, max_entries)
    })
    .await?
}

/// The body of [`list_dir`], on a blocking thread.
fn list_dir_blocking(
    ctx: &ToolContext,
    stop: &Stop,
    path: String,
    recursive: bool,
    max_entries: Option<usize>,
) -> Result<String, ToolError> {
    let workspace = Workspace::of(ctx)?;
    let limits = FsLimits::of(ctx);
    let max = max_entries.unwrap_or(limits.default_list_entries);
    let target = workspace.locate(&path, Access::Read)?;
    let dir = target.open_dir().map_err(|e| match e {
        crate::SandboxError::Io { .. } if is_file(&target) => ToolError::failed(format!(
            "`{path}` is a file, not a directory; use read_file to read it"
        )),
        other => other.into(),
    })?;
    let listing = walk(dir.into_fd(), recursive, max, stop)
        .map_err(|e| ToolError::failed(format!("cannot list `{path}`: {e}")))?;
    Ok(listing.render(&path, max, limits.max_listing_chars))
}

/// Whether `target` is a regular file, to say so instead of "not a
/// directory".
fn is_file(target: &WorkspacePath) -> bool {
    target
        .open_file()
        .is_ok_and(|f| f.file.metadata().is_ok_and(|m| m.is_file()))
}

#[derive(Default)]
struct Listing {
    /// `(relative path, suffix)` per entry, in the order found.
    entries: Vec<(PathBuf, String)>,
    /// Noise directories left out.
    skipped: Vec<PathBuf>,
    /// Whether the cap stopped the walk.
    truncated: bool,
}

impl Listing {
    fn render(mut self, path: &str, max: usize, max_chars: usize) -> String {
        if self.entries.is_empty() && self.skipped.is_empty() {
            return format!("`{path}` is empty");
        }
        self.entries.sort();
        let mut out = String::new();
        let mut shown = 0usize;
        for (entry, suffix) in &self.entries {
            let entry = entry.to_string_lossy();
            if !out.is_empty() && out.len() + entry.len() + suffix.len() + 1 > max_chars {
                break;
            }
            out.push_str(&entry);
            out.push_str(suffix);
            out.push('\n');
            shown += 1;
        }
        if shown < self.entries.len() {
            out.push_str(&format!(
                "(output capped at {max_chars} characters after {shown} of {} entries; list a subdirectory to see more)\n",
                self.entries.len()
            ));
        }
        if !self.skipped.is_empty() {
            self.skipped.sort();
            // Named up to a few: a tree of many `node_modules` adds no more.
            let mut names: Vec<String> = self
                .skipped
                .iter()
                .take(20)
                .map(|p| format!("{}/", p.display()))
                .collect();
            if self.skipped.len() > names.len() {
                names.push(format!("and {} more", self.skipped.len() - names.len()));
            }
            out.push_str(&format!("(skipped noise: {})\n", names.join(", ")));
        }
        if self.truncated {
            out.push_str(&format!(
                "(stopped at {max} entries; list a subdirectory or raise max_entries to see more)\n"
            ));
        }
        out
    }
}

/// Read directories breadth first from `root`, up to `max` entries.
fn walk(root: OwnedFd, recursive: bool, max: usize, stop: &Stop) -> rustix::io::Result<Listing> {
    let mut listing = Listing::default();
    let mut queue: VecDeque<(OwnedFd, PathBuf)> = VecDeque::from([(root, PathBuf::new())]);
    while let Some((fd, prefix)) = queue.pop_front() {
        if stop.is_set() {
            // Nobody waits for the answer any more.
            break;
        }
        let mut names: Vec<(OsString, FileType)> = Vec::new();
        for entry in rustix::fs::Dir::read_from(&fd)? {
            let entry = entry?;
            let name = entry.file_name().to_bytes();
            if name == b"." || name == b".." {
                continue;
            }
            let name = OsString::from(std::ffi::OsStr::from_bytes(name));
            names.push((name, entry.file_type()));
        }
        names.sort_by(|a, b| a.0.cmp(&b.0));
        for (name, file_type) in names {
            let stat = rustix::fs::statat(&fd, name.as_os_str(), AtFlags::SYMLINK_NOFOLLOW);
            let file_type = match (&stat, file_type) {
                (Ok(stat), FileType::Unknown) => FileType::from_raw_mode(stat.st_mode),
                _ => file_type,
            };
            let relative = prefix.join(&name);
            if file_type == FileType::Directory && is_noise(&fd, &name) {
                listing.skipped.push(relative);
                continue;
            }
            if listing.entries.len() >= max {
                listing.truncated = true;
                return Ok(listing);
            }
            let suffix = match file_type {
                FileType::Directory => "/".to_owned(),
                FileType::Symlink => {
                    match rustix::fs::readlinkat(&fd, name.as_os_str(), Vec::new()) {
                        Ok(target) => format!(" -> {}", target.to_string_lossy()),
                        Err(_) => " -> ?".to_owned(),
                    }
                }
                FileType::RegularFile => match &stat {
                    Ok(stat) => format!("  ({})", human_size(stat.st_size as u64)),
                    Err(_) => String::new(),
                },
                _ => "  (special file)".to_owned(),
            };
            if recursive && file_type == FileType::Directory {
                let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
                // An unreadable subdirectory is listed but not entered.
                if let Ok(sub) = rustix::fs::openat(&fd, name.as_os_str(), flags, Mode::empty()) {
                    queue.push_back((sub, relative.clone()));
                }
            }
            listing.entries.push((relative, suffix));
        }
    }
    Ok(listing)
}

/// Noise by name, or a Python virtual environment by its `pyvenv.cfg`.
fn is_noise(dir: &OwnedFd, name: &std::ffi::OsStr) -> bool {
    if is_noise_dir(name) {
        return true;
    }
    let mut cfg = name.to_owned();
    cfg.push("/pyvenv.cfg");
    rustix::fs::statat(dir.as_fd(), cfg.as_os_str(), AtFlags::SYMLINK_NOFOLLOW).is_ok()
}

//! `.ignore`, `.gitignore` and `.git/info/exclude`, read as data from the
//! workspace.
//!
//! The `ignore` crate would open these files itself, by path: a FIFO named
//! `.gitignore` would block the walk in `open()` forever, a link to
//! `/dev/zero` or to a huge sparse file would be read whole, and a link to a
//! file outside the workspace would let that file's lines decide what the
//! tools list. So its own ignore-file reading is off, and the rules are
//! built here from files read safely: below the handle of their directory,
//! only when they are regular files (symlinks are not followed, as git does
//! not follow them either), without waiting on a FIFO swapped in, and at
//! most [`MAX_IGNORE_FILE_BYTES`] of each. Ignore files are read from the
//! searched directory and its parents up to the workspace root (or the
//! read-only directory it is in), never above.
//!
//! Precedence is ripgrep's: a match in any `.ignore` beats one in any
//! `.gitignore`, which beats `.git/info/exclude`; within one kind, the
//! deepest directory's last matching line decides (so `!negation` works).

use std::collections::HashMap;
use std::fs::File;
use std::io::Read;
use std::os::fd::{AsFd, BorrowedFd};
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use rustix::fs::{AtFlags, FileType, Mode, OFlags};

use crate::sandbox::OpenedDir;
use crate::sandbox::special::{READ_FLAGS, settle};

/// Bytes read of one ignore file; lines past it are not used.
pub const MAX_IGNORE_FILE_BYTES: u64 = 64 * 1024;
/// Bytes of ignore files one directory's rules may hold with its parents':
/// a deep tree of large ignore files cannot grow one chain without bound.
const MAX_CHAIN_BYTES: usize = 1024 * 1024;
/// Directories whose rules are kept for reuse; past either cap the cache is
/// emptied (rules are read again when needed: slower, never wrong).
const MAX_CACHED_DIRS: usize = 4096;
const MAX_CACHED_BYTES: usize = 16 * 1024 * 1024;

/// The three kinds, strongest first.
const KINDS: usize = 3;

/// The rules of one directory, linked to its parent's.
struct Level {
    /// `.ignore`, `.gitignore`, `.git/info/exclude`, each if present.
    matchers: [Option<Gitignore>; KINDS],
    parent: Option<Arc<Level>>,
    /// Bytes of ignore files read for this level and its parents.
    chain_bytes: usize,
    /// Bytes read for this level alone.
    own_bytes: usize,
}

impl Level {
    fn empty(parent: Option<Arc<Level>>) -> Self {
        let chain_bytes = parent.as_ref().map_or(0, |p| p.chain_bytes);
        Self {
            matchers: [None, None, None],
            parent,
            chain_bytes,
            own_bytes: 0,
        }
    }

    /// Read the ignore files of the directory `dir` (at `path`).
    fn read(dir: BorrowedFd<'_>, path: &Path, parent: Option<Arc<Level>>) -> Self {
        let mut level = Self::empty(parent);
        let exclude = open_git_info(dir);
        let sources: [(Option<BorrowedFd<'_>>, &str, PathBuf); KINDS] = [
            (Some(dir), ".ignore", path.join(".ignore")),
            (Some(dir), ".gitignore", path.join(".gitignore")),
            (
                exclude.as_ref().map(|fd| fd.as_fd()),
                "exclude",
                path.join(".git/info/exclude"),
            ),
        ];
        for (kind, (fd, name, from)) in sources.into_iter().enumerate() {
            let Some(fd) = fd else { continue };
            let room = MAX_CHAIN_BYTES.saturating_sub(level.chain_bytes);
            let cap = MAX_IGNORE_FILE_BYTES.min(room as u64);
            let Some(text) = read_regular(fd, name, cap) else {
                continue;
            };
            level.chain_bytes += text.len();
            level.own_bytes += text.len();
            level.matchers[kind] = build(path, from, &text);
        }
        level
    }
}

/// `.git/info` below `dir`, when `.git` is a real directory there.
fn open_git_info(dir: BorrowedFd<'_>) -> Option<std::os::fd::OwnedFd> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let git = rustix::fs::openat(dir, ".git", flags, Mode::empty()).ok()?;
    rustix::fs::openat(&git, "info", flags, Mode::empty()).ok()
}

/// The text of `name` in `dir` if it is a regular file (not a link, FIFO,
/// socket or device), at most `cap` bytes of it, cut after its last whole
/// line when the cap stopped the read.
fn read_regular(dir: BorrowedFd<'_>, name: &str, cap: u64) -> Option<String> {
    // Refused by type before opening; the open cannot block if a FIFO was
    // swapped in since, and the type is checked again on what was opened.
    let stat = rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW).ok()?;
    if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
        return None;
    }
    let fd = rustix::fs::openat(dir, name, READ_FLAGS | OFlags::NOFOLLOW, Mode::empty()).ok()?;
    if settle(&fd).ok()? != FileType::RegularFile {
        return None;
    }
    let mut bytes = Vec::new();
    File::from(fd).take(cap).read_to_end(&mut bytes).ok()?;
    if bytes.len() as u64 == cap {
        let end = memchr::memrchr(b'\n', &bytes).map_or(0, |i| i + 1);
        bytes.truncate(end);
    }
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// Rules from `text`, anchored at `dir`; lines that are no valid globs are
/// skipped, as git skips them.
fn build(dir: &Path, from: PathBuf, text: &str) -> Option<Gitignore> {
    let mut builder = GitignoreBuilder::new(dir);
    for line in text.lines() {
        let _ = builder.add_line(Some(from.clone()), line);
    }
    builder.build().ok().filter(|g| !g.is_empty())
}

#[derive(Default)]
struct Cache {
    levels: HashMap<PathBuf, Arc<Level>>,
    bytes: usize,
}

/// The ignore rules of one walk: read once per directory, shared by the
/// walk's threads.
pub struct IgnoreRules {
    /// The searched directory, held open; subdirectories open below it.
    dir: OpenedDir,
    /// The rules of the searched directory and its parents.
    top: Arc<Level>,
    cache: RwLock<Cache>,
}

impl IgnoreRules {
    /// Rules for a walk of `dir`, whose parents up to the base directory
    /// are `ancestors` (outermost first).
    pub fn new(dir: OpenedDir, ancestors: &[OpenedDir]) -> Self {
        let mut top: Option<Arc<Level>> = None;
        for ancestor in ancestors {
            let fd = ancestor.as_fd();
            top = Some(Arc::new(Level::read(fd, ancestor.path(), top)));
        }
        let top = Arc::new(Level::read(dir.as_fd(), dir.path(), top));
        Self {
            dir,
            top,
            cache: RwLock::default(),
        }
    }

    /// Whether the entry at `path` (absolute, below the searched
    /// directory, as the walk names it) is ignored.
    pub fn is_ignored(&self, path: &Path, is_dir: bool) -> bool {
        let Ok(relative) = path.strip_prefix(self.dir.path()) else {
            return false;
        };
        let parent = relative.parent().unwrap_or(Path::new(""));
        let level = self.level(parent);
        for kind in 0..KINDS {
            let mut at = Some(&level);
            while let Some(current) = at {
                if let Some(rules) = &current.matchers[kind] {
                    match rules.matched(path, is_dir) {
                        Match::Ignore(_) => return true,
                        Match::Whitelist(_) => return false,
                        Match::None => {}
                    }
                }
                at = current.parent.as_ref();
            }
        }
        false
    }

    /// The rules in force in the directory `relative` (below the searched
    /// one), reading what is not cached yet, outermost first.
    fn level(&self, relative: &Path) -> Arc<Level> {
        let mut missing: Vec<&Path> = Vec::new();
        let mut found = None;
        for dir in relative.ancestors() {
            if dir.as_os_str().is_empty() {
                found = Some(self.top.clone());
                break;
            }
            if let Some(level) = self.cached(dir) {
                found = Some(level);
                break;
            }
            missing.push(dir);
        }
        let mut level = found.unwrap_or_else(|| self.top.clone());
        for dir in missing.into_iter().rev() {
            let read = match self.dir.open_subdir(dir) {
                Ok(opened) => Level::read(opened.as_fd(), opened.path(), Some(level)),
                // A directory gone or unreadable adds no rules.
                Err(_) => Level::empty(Some(level)),
            };
            level = Arc::new(read);
            self.remember(dir, &level);
        }
        level
    }

    fn cached(&self, dir: &Path) -> Option<Arc<Level>> {
        let cache = self.cache.read().unwrap_or_else(|p| p.into_inner());
        cache.levels.get(dir).cloned()
    }

    fn remember(&self, dir: &Path, level: &Arc<Level>) {
        let mut cache = self.cache.write().unwrap_or_else(|p| p.into_inner());
        if cache.levels.len() >= MAX_CACHED_DIRS || cache.bytes >= MAX_CACHED_BYTES {
            *cache = Cache::default();
        }
        cache.bytes += level.own_bytes + dir.as_os_str().len();
        cache.levels.insert(dir.to_path_buf(), level.clone());
    }
}

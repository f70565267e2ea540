//! [`FileState`]: what one agent session has read, so `edit_file` and
//! `write_file` refuse to change a file the model has not seen as it is now,
//! and `read_file` does not send the same unchanged lines twice.
//!
//! A version of a file is its length and a keyed hash of its whole content
//! when the file is small enough to edit, and otherwise its device, inode,
//! length and modification time. The hash is what makes the check robust:
//! a modification time has the file system's granularity (a second on some,
//! a clock tick on others), so two writes of the same length within one tick
//! look alike by time, never by content; and a `touch` changes the time but
//! not what the model knows. The hash is SipHash with a random key (std's
//! `RandomState`), so file content cannot be crafted to collide with it.

use std::collections::HashMap;
use std::collections::hash_map::{DefaultHasher, RandomState};
use std::fmt;
use std::fs::Metadata;
use std::hash::{BuildHasher, Hasher};
use std::io::{self, Read};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use toolsmith::{ToolContext, ToolError};

/// Files one session tracks at most; past it the least recently used is
/// forgotten, and editing it asks for a read again (the safe side).
const MAX_FILES: usize = 4096;

/// Line ranges remembered per file version, the latest kept.
const MAX_RANGES: usize = 16;

/// What the file tools of one agent session know about the files it read:
/// put one in the session's context and the file tools track reads and
/// writes through it.
///
/// - **Read before write**: `edit_file`, `write_file` and `notebook_edit`
///   refuse to change an existing file this session has not read with
///   `read_file`, or that changed on disk since it was last read, and tell
///   the model to read it first. Creating a new file needs no read, and a
///   file the session wrote or edited counts as read at its new version.
/// - **Unchanged reads**: `read_file` of lines it already returned, from a
///   file whose content has not changed since, answers with a short note
///   instead of the same text. Calling it again with the same arguments
///   returns the text, so a model that lost the earlier answer (a host that
///   trimmed the conversation, say) is never stuck; a host that trims the
///   conversation can also call [`FileState::clear`].
///
/// Each part can be turned off. Without a `FileState` in the context the
/// tools track nothing and behave as they always did: the state belongs to
/// one conversation, and only the host knows where one begins, so none is
/// made up. One state is one session: share it between the calls of a
/// session (the context's state is shared by its clones; a host building a
/// context per turn passes the same `Arc` with
/// [`ToolContext::with_shared_state`]), and give every session its own.
///
/// ```
/// use std::sync::Arc;
/// use toolsmith::ToolContext;
/// use toolsmith_builtins::fs::FileState;
///
/// // One per conversation, shared by every turn of it.
/// let session = Arc::new(FileState::new().skip_unchanged_reads(false));
/// let ctx = ToolContext::new()
///     .with_workspace(std::env::temp_dir())
///     .with_shared_state(session.clone());
/// assert!(ctx.state::<FileState>().unwrap().requires_read_before_write());
/// // After the host compacted the conversation, forget what it saw.
/// session.clear();
/// ```
pub struct FileState {
    files: Mutex<Files>,
    require_read: bool,
    skip_unchanged: bool,
    keys: RandomState,
}

impl FileState {
    /// A state with both checks on.
    pub fn new() -> Self {
        Self {
            files: Mutex::new(Files::default()),
            require_read: true,
            skip_unchanged: true,
            keys: RandomState::new(),
        }
    }

    /// Whether `edit_file`, `write_file` and `notebook_edit` refuse to
    /// change an existing file not read (or changed since) in this session.
    /// On by default.
    pub fn require_read_before_write(mut self, on: bool) -> Self {
        self.require_read = on;
        self
    }

    /// Whether `read_file` answers a repeated read of unchanged lines with
    /// a note instead of the text. On by default.
    pub fn skip_unchanged_reads(mut self, on: bool) -> Self {
        self.skip_unchanged = on;
        self
    }

    /// Whether writes need a read first.
    pub fn requires_read_before_write(&self) -> bool {
        self.require_read
    }

    /// Whether repeated reads of unchanged lines get a note.
    pub fn skips_unchanged_reads(&self) -> bool {
        self.skip_unchanged
    }

    /// Forget every read: the next write of an existing file needs a read
    /// again, and the next read returns the text. For a host that dropped
    /// earlier tool results from the conversation.
    pub fn clear(&self) {
        let mut files = self.lock();
        files.map.clear();
    }

    /// How many files the state remembers.
    pub fn len(&self) -> usize {
        self.lock().map.len()
    }

    /// Whether the state remembers no file.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The state in `ctx`, if the host put one there.
    pub(crate) fn of(ctx: &ToolContext) -> Option<&FileState> {
        ctx.state::<FileState>()
    }

    /// A fresh hash of content, keyed for this state.
    pub(crate) fn digest(&self) -> Digest {
        Digest {
            hasher: self.keys.build_hasher(),
            len: 0,
        }
    }

    /// The version of `content`, as the session now knows it.
    pub(crate) fn version_of(&self, content: &[u8]) -> Version {
        let mut digest = self.digest();
        digest.update(content);
        Version {
            len: content.len() as u64,
            digest: Some(digest.finish()),
            stamp: None,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Files> {
        // A panic elsewhere cannot leave the map half-changed in a way that
        // matters: at worst one entry is missing, which asks for a read.
        self.files.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Refuse a write of the existing file `key` (named `path` to the
    /// model) at version `current`, unless it was read at that version.
    pub(crate) fn check_write(
        &self,
        path: &str,
        key: &Path,
        current: &Version,
    ) -> Result<(), ToolError> {
        if !self.require_read {
            return Ok(());
        }
        let files = self.lock();
        match files.map.get(key) {
            None => Err(ToolError::failed(format!(
                "`{path}` has not been read in this session; read it with read_file first, then change it (existing files are changed only once their current content has been read)"
            ))),
            Some(entry) if !entry.version.same_as(current) => Err(ToolError::failed(format!(
                "`{path}` changed on disk since it was last read; read it again with read_file, then make the change against its current content"
            ))),
            Some(_) => Ok(()),
        }
    }

    /// A read of `key` at `version` showed `lines` (`None` when no lines
    /// were shown: an image, a binary file, an empty file). Returns
    /// [`Seen::Unchanged`] instead of recording when those lines were
    /// already shown from this content: the caller sends a note, and the
    /// range is forgotten so that asking again sends the text.
    pub(crate) fn saw(&self, key: &Path, version: Version, lines: Option<Lines>) -> Seen {
        let mut files = self.lock();
        let tick = files.next_tick();
        if let Some(entry) = files.map.get_mut(key) {
            entry.used = tick;
            if entry.version.same_as(&version) {
                let known = version.digest.is_some() && entry.version.digest.is_some();
                if let Some(lines) = lines {
                    let covering = entry.shown.iter().position(|r| r.covers(lines));
                    if let (true, true, Some(index)) = (self.skip_unchanged, known, covering) {
                        entry.shown.remove(index);
                        return Seen::Unchanged;
                    }
                    entry.push(lines);
                }
                // The newest version carries the freshest stamp.
                entry.version = version;
                return Seen::Recorded;
            }
            entry.version = version;
            entry.shown.clear();
            if let Some(lines) = lines {
                entry.push(lines);
            }
            return Seen::Recorded;
        }
        files.insert(key.to_path_buf(), version, lines, tick);
        Seen::Recorded
    }

    /// The session wrote `key`, which now holds the content of `version`:
    /// the model knows it, so it counts as read, but no lines were shown.
    pub(crate) fn wrote(&self, key: &Path, version: Version) {
        let mut files = self.lock();
        let tick = files.next_tick();
        match files.map.get_mut(key) {
            Some(entry) => {
                entry.version = version;
                entry.shown.clear();
                entry.used = tick;
            }
            None => files.insert(key.to_path_buf(), version, None, tick),
        }
    }
}

impl Default for FileState {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for FileState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FileState")
            .field("files", &self.len())
            .field("require_read_before_write", &self.require_read)
            .field("skip_unchanged_reads", &self.skip_unchanged)
            .finish()
    }
}

/// What [`FileState::saw`] made of a read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Seen {
    /// Recorded; send the text.
    Recorded,
    /// The same lines of the same content were sent before.
    Unchanged,
}

#[derive(Default)]
struct Files {
    map: HashMap<PathBuf, Entry>,
    tick: u64,
}

impl Files {
    fn next_tick(&mut self) -> u64 {
        self.tick += 1;
        self.tick
    }

    fn insert(&mut self, key: PathBuf, version: Version, lines: Option<Lines>, tick: u64) {
        if self.map.len() >= MAX_FILES
            && let Some(oldest) = self
                .map
                .iter()
                .min_by_key(|(_, entry)| entry.used)
                .map(|(key, _)| key.clone())
        {
            self.map.remove(&oldest);
        }
        let mut entry = Entry {
            version,
            shown: Vec::new(),
            used: tick,
        };
        if let Some(lines) = lines {
            entry.push(lines);
        }
        self.map.insert(key, entry);
    }
}

struct Entry {
    version: Version,
    /// Line ranges shown from this version.
    shown: Vec<Lines>,
    /// When last used, for forgetting the least recently used.
    used: u64,
}

impl Entry {
    fn push(&mut self, lines: Lines) {
        if self.shown.iter().any(|r| r.covers(lines)) {
            return;
        }
        if self.shown.len() >= MAX_RANGES {
            self.shown.remove(0);
        }
        self.shown.push(lines);
    }
}

/// Lines `first..=last` of a file, 1-based.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Lines {
    /// The first line shown.
    pub first: u64,
    /// The last line shown.
    pub last: u64,
}

impl Lines {
    fn covers(self, other: Lines) -> bool {
        self.first <= other.first && other.last <= self.last
    }
}

/// One version of a file, as far as the tools can tell versions apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Version {
    len: u64,
    /// The keyed hash of the whole content, when it was read whole.
    digest: Option<u64>,
    /// Where and when, for a file too large to hash.
    stamp: Option<Stamp>,
}

impl Version {
    /// A version from what was read: `digest` (of the whole file, when it
    /// was read whole) and the file's metadata.
    pub(crate) fn read(metadata: &Metadata, digest: Option<(u64, u64)>) -> Version {
        Version {
            len: digest.map_or(metadata.len(), |(len, _)| len),
            digest: digest.map(|(_, hash)| hash),
            stamp: Some(Stamp::of(metadata)),
        }
    }

    /// Whether both name the same content: by hash when both have one
    /// (robust), else by device, inode, length and modification time.
    fn same_as(&self, other: &Version) -> bool {
        if self.len != other.len {
            return false;
        }
        match (self.digest, other.digest, self.stamp, other.stamp) {
            (Some(a), Some(b), _, _) => a == b,
            (_, _, Some(a), Some(b)) => a == b,
            _ => false,
        }
    }
}

/// A file's identity and modification time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    dev: u64,
    ino: u64,
    mtime: i64,
    mtime_nsec: i64,
}

impl Stamp {
    fn of(metadata: &Metadata) -> Stamp {
        Stamp {
            dev: metadata.dev(),
            ino: metadata.ino(),
            mtime: metadata.mtime(),
            mtime_nsec: metadata.mtime_nsec(),
        }
    }
}

/// A keyed hash of content fed in pieces, and its length.
pub(crate) struct Digest {
    hasher: DefaultHasher,
    len: u64,
}

impl Digest {
    /// Feed the next bytes. `Hasher::write` is a stream: pieces hash as
    /// their concatenation does.
    pub(crate) fn update(&mut self, bytes: &[u8]) {
        self.hasher.write(bytes);
        self.len += bytes.len() as u64;
    }

    /// Bytes fed so far.
    pub(crate) fn len(&self) -> u64 {
        self.len
    }

    /// The hash of everything fed.
    fn finish(&self) -> u64 {
        self.hasher.finish()
    }

    /// Length and hash of everything fed.
    pub(crate) fn result(&self) -> (u64, u64) {
        (self.len, self.finish())
    }
}

/// A reader that hashes what passes through it, when asked to.
pub(crate) struct Digesting<R> {
    inner: R,
    /// `None` when nothing is tracked.
    pub(crate) digest: Option<Digest>,
}

impl<R> Digesting<R> {
    /// Hash what is read from `inner` into `digest`, if any.
    pub(crate) fn new(inner: R, digest: Option<Digest>) -> Self {
        Self { inner, digest }
    }
}

impl<R: Read> Read for Digesting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        if let Some(digest) = &mut self.digest {
            digest.update(&buf[..n]);
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn version(state: &FileState, text: &str) -> Version {
        state.version_of(text.as_bytes())
    }

    #[test]
    fn pieces_hash_as_their_concatenation() {
        let state = FileState::new();
        let mut pieces = state.digest();
        pieces.update(b"hello ");
        pieces.update(b"");
        pieces.update(b"world");
        let mut whole = state.digest();
        whole.update(b"hello world");
        assert_eq!(pieces.result(), whole.result());
        let mut other = state.digest();
        other.update(b"hello worle");
        assert_ne!(other.result(), whole.result());
    }

    #[test]
    fn writes_need_a_read_of_the_same_content() {
        let state = FileState::new();
        let key = Path::new("/ws/a.txt");
        let err = state
            .check_write("a.txt", key, &version(&state, "one"))
            .unwrap_err();
        assert!(err.to_string().contains("has not been read"), "{err}");
        let lines = Some(Lines { first: 1, last: 1 });
        assert_eq!(
            state.saw(key, version(&state, "one"), lines),
            Seen::Recorded
        );
        state
            .check_write("a.txt", key, &version(&state, "one"))
            .unwrap();
        let err = state
            .check_write("a.txt", key, &version(&state, "two"))
            .unwrap_err();
        assert!(err.to_string().contains("changed on disk"), "{err}");
        state.wrote(key, version(&state, "two"));
        state
            .check_write("a.txt", key, &version(&state, "two"))
            .unwrap();
        let off = FileState::new().require_read_before_write(false);
        off.check_write("a.txt", key, &version(&off, "x")).unwrap();
    }

    #[test]
    fn a_repeated_read_is_noted_once_then_sent_again() {
        let state = FileState::new();
        let key = Path::new("/ws/a.txt");
        let all = Lines { first: 1, last: 10 };
        let part = Lines { first: 2, last: 5 };
        assert_eq!(
            state.saw(key, version(&state, "x"), Some(all)),
            Seen::Recorded
        );
        assert_eq!(
            state.saw(key, version(&state, "x"), Some(part)),
            Seen::Unchanged
        );
        // The range that answered is forgotten: asking again sends the text.
        assert_eq!(
            state.saw(key, version(&state, "x"), Some(part)),
            Seen::Recorded
        );
        assert_eq!(
            state.saw(key, version(&state, "x"), Some(part)),
            Seen::Unchanged
        );
        // New content: sent, whatever was shown before.
        assert_eq!(
            state.saw(key, version(&state, "y"), Some(part)),
            Seen::Recorded
        );
        // Written by the session: counts as read, but no lines were shown.
        state.wrote(key, version(&state, "z"));
        assert_eq!(
            state.saw(key, version(&state, "z"), Some(part)),
            Seen::Recorded
        );
        let off = FileState::new().skip_unchanged_reads(false);
        off.saw(key, version(&off, "x"), Some(all));
        assert_eq!(off.saw(key, version(&off, "x"), Some(all)), Seen::Recorded);
    }

    #[test]
    fn the_least_recently_used_file_is_forgotten() {
        let state = FileState::new();
        for i in 0..MAX_FILES + 10 {
            state.wrote(Path::new(&format!("/ws/{i}")), version(&state, "x"));
        }
        assert_eq!(state.len(), MAX_FILES);
        assert!(
            state
                .check_write("0", Path::new("/ws/0"), &version(&state, "x"))
                .is_err()
        );
        let last = format!("/ws/{}", MAX_FILES + 9);
        state
            .check_write("last", Path::new(&last), &version(&state, "x"))
            .unwrap();
        state.clear();
        assert!(state.is_empty());
    }
}

//! Saving a result too large for the context to a file the model can read
//! back in pieces.
//!
//! The file is written to a temporary name and renamed into place, so a
//! reader (the model's next `read_file`, or a crash) never sees half a file.
//! Names come from the tool name and the call id, which the model or the
//! provider chose, so they are reduced to a safe alphabet and an existing
//! file is never overwritten: some providers reuse ids like `call_0` on every
//! turn, and an earlier reference must keep pointing at its own result.

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::ShapeConfig;
use super::count::{count_chars, count_lines, quantity};
use super::meta::Persisted;
use super::truncate::head_cut;

/// Longest name part kept from a tool name or call id; file systems limit
/// names to 255 bytes and the rest of the name needs room.
const MAX_NAME_PART: usize = 64;

/// Between the preview and the reference.
const SEPARATOR: &str = "\n\n";

/// How many `-2`, `-3`, ... suffixes to try before giving up on a name.
const MAX_SUFFIX: usize = 100;

/// Why a result could not be saved; shown in the output's metadata.
#[derive(Debug, thiserror::Error)]
pub(super) enum PersistError {
    /// A relative directory needs a workspace to be resolved against.
    #[error("persist_dir {0:?} is relative and the call has no workspace")]
    NoWorkspace(PathBuf),
    /// Creating the directory or writing the file failed.
    #[error("could not write {path:?}: {source}")]
    Io {
        /// The directory or file involved.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
    /// The reference alone is longer than the limit, so it cannot replace the result.
    #[error("the reference to {path:?} does not fit in {limit} characters")]
    ReferenceTooLong {
        /// The saved file, removed again.
        path: PathBuf,
        /// The content limit.
        limit: usize,
    },
}

/// A saved result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Saved {
    /// Where the file is, for the host.
    pub path: PathBuf,
    /// How the model should name it: relative to the workspace when inside it.
    pub shown: String,
}

/// Write `content` to a new file in `dir` named after the tool and the call.
pub(super) fn save(
    content: &str,
    dir: &Path,
    tool_name: &str,
    call_id: &str,
    workspace: Option<&Path>,
) -> Result<Saved, PersistError> {
    let dir = resolve_dir(dir, workspace)?;
    let stem = format!(
        "{}-{}",
        sanitize(tool_name, "tool"),
        sanitize(call_id, "call")
    );
    let path = write_new(&dir, &stem, content)?;
    let shown = shown_path(&path, workspace);
    Ok(Saved { path, shown })
}

/// What replaces a saved result: its start, and where the rest is.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Replacement {
    /// Preview and reference, within the content limit.
    pub text: String,
    /// The [`PERSISTED`](super::meta::PERSISTED) metadata.
    pub facts: Persisted,
}

/// Replace `content` (`total_chars` long, saved as `saved`) by as much of its
/// start as fits and a reference the model can follow.
///
/// If even the reference does not fit, the file is removed again, since
/// nothing will point at it.
pub(super) fn preview_with_reference(
    content: &str,
    total_chars: usize,
    saved: Saved,
    config: &ShapeConfig,
) -> Result<Replacement, PersistError> {
    let lines = count_lines(content);
    let reference = |partial: bool| {
        format!(
            "[{}Full result ({}, {}) saved to {}; use {} with offset and limit to read it]",
            if partial {
                "Showing the start only. "
            } else {
                ""
            },
            quantity(total_chars, "character"),
            quantity(lines, "line"),
            saved.shown,
            config.read_tool,
        )
    };
    let limit = config.content_limit();
    let with_preview = reference(true);
    let room = limit.checked_sub(count_chars(&with_preview) + SEPARATOR.len());
    let (end, preview_chars) =
        head_cut(content, room.unwrap_or(0).min(config.persist_preview_chars));
    let text = if preview_chars > 0 {
        [&content[..end], SEPARATOR, &with_preview].concat()
    } else {
        reference(false)
    };
    if count_chars(&text) > limit {
        let _ = fs::remove_file(&saved.path);
        return Err(PersistError::ReferenceTooLong {
            path: saved.path,
            limit,
        });
    }
    let facts = Persisted {
        path: saved.path.display().to_string(),
        shown_path: saved.shown,
        chars: total_chars,
        lines,
        preview_chars,
    };
    Ok(Replacement { text, facts })
}

fn resolve_dir(dir: &Path, workspace: Option<&Path>) -> Result<PathBuf, PersistError> {
    if dir.is_absolute() {
        return Ok(dir.to_owned());
    }
    workspace
        .map(|root| root.join(dir))
        .ok_or_else(|| PersistError::NoWorkspace(dir.to_owned()))
}

/// Letters, digits, `-` and `_` survive; anything else (path separators, dots,
/// spaces, non-ASCII) becomes `_`, so no name can climb out of the directory
/// or hide as a dot file.
fn sanitize(part: &str, fallback: &str) -> String {
    let clean: String = part
        .chars()
        .take(MAX_NAME_PART)
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if clean.is_empty() {
        fallback.to_owned()
    } else {
        clean
    }
}

/// Write to a temporary file, then rename it to the first free name.
fn write_new(dir: &Path, stem: &str, content: &str) -> Result<PathBuf, PersistError> {
    let io_error = |path: &Path| {
        let path = path.to_owned();
        move |source| PersistError::Io { path, source }
    };
    fs::create_dir_all(dir).map_err(io_error(dir))?;
    // Unique per process and per call, so concurrent calls never share one.
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let temp = dir.join(format!(
        ".{stem}.{}.{}.tmp",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let written = write_temp(&temp, content)
        .map_err(io_error(&temp))
        .and_then(|()| {
            let target = free_name(dir, stem)?;
            fs::rename(&temp, &target).map_err(io_error(&target))?;
            Ok(target)
        });
    if written.is_err() {
        // Best effort: a stray temporary file is harmless, a second error is noise.
        let _ = fs::remove_file(&temp);
    }
    written
}

fn write_temp(path: &Path, content: &str) -> io::Result<()> {
    let mut file = File::create_new(path)?;
    file.write_all(content.as_bytes())?;
    file.flush()
}

fn free_name(dir: &Path, stem: &str) -> Result<PathBuf, PersistError> {
    for n in 1..=MAX_SUFFIX {
        let name = if n == 1 {
            format!("{stem}.txt")
        } else {
            format!("{stem}-{n}.txt")
        };
        let candidate = dir.join(name);
        let taken = candidate.try_exists().map_err(|source| PersistError::Io {
            path: candidate.clone(),
            source,
        })?;
        if !taken {
            return Ok(candidate);
        }
    }
    Err(PersistError::Io {
        path: dir.join(format!("{stem}.txt")),
        source: io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!("{MAX_SUFFIX} files with this name exist already"),
        ),
    })
}

/// The path as the model should pass it to `read_file`: relative to the
/// workspace with `/` separators when inside it, absolute otherwise.
fn shown_path(path: &Path, workspace: Option<&Path>) -> String {
    let relative = workspace.and_then(|root| path.strip_prefix(root).ok());
    match relative {
        Some(relative) => relative
            .components()
            .filter(|c| !matches!(c, Component::CurDir))
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/"),
        None => path.display().to_string(),
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// A directory under the system temp dir, removed when dropped; the crate
    /// has no `tempfile` dependency and needs nothing more than this.
    pub(in super::super) struct TempDir(pub PathBuf);

    impl TempDir {
        pub(in super::super) fn new(label: &str) -> Self {
            static NEXT: AtomicU64 = AtomicU64::new(0);
            let path = std::env::temp_dir().join(format!(
                "toolsmith-shape-{label}-{}-{}",
                std::process::id(),
                NEXT.fetch_add(1, Ordering::Relaxed)
            ));
            fs::create_dir_all(&path).expect("temp dir");
            Self(path)
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn the_full_content_is_saved_under_the_workspace() {
        let ws = TempDir::new("save");
        let content = "line\n".repeat(10_000);
        let saved = save(
            &content,
            Path::new(".tool-results"),
            "read_file",
            "call_1",
            Some(&ws.0),
        )
        .unwrap();
        assert_eq!(saved.shown, ".tool-results/read_file-call_1.txt");
        assert_eq!(fs::read_to_string(&saved.path).unwrap(), content);
        let leftovers: Vec<_> = fs::read_dir(ws.0.join(".tool-results"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(
            leftovers.len(),
            1,
            "no temporary file is left: {leftovers:?}"
        );
    }

    #[test]
    fn a_reused_call_id_gets_a_new_file() {
        let ws = TempDir::new("reuse");
        let dir = Path::new("out");
        let first = save("one", dir, "grep", "call_0", Some(&ws.0)).unwrap();
        let second = save("two", dir, "grep", "call_0", Some(&ws.0)).unwrap();
        assert_eq!(second.shown, "out/grep-call_0-2.txt");
        assert_eq!(fs::read_to_string(first.path).unwrap(), "one");
        assert_eq!(fs::read_to_string(second.path).unwrap(), "two");
    }

    #[test]
    fn names_cannot_leave_the_directory() {
        assert_eq!(sanitize("../../etc/passwd", "x"), "______etc_passwd");
        assert_eq!(sanitize("", "call"), "call");
        assert_eq!(sanitize("漢字", "x"), "__");
        assert_eq!(sanitize(&"a".repeat(500), "x").len(), MAX_NAME_PART);
    }

    #[test]
    fn an_absolute_dir_needs_no_workspace_and_is_shown_whole() {
        let dir = TempDir::new("absolute");
        let saved = save("x", &dir.0, "exec", "c", None).unwrap();
        assert_eq!(saved.shown, saved.path.display().to_string());
    }

    #[test]
    fn the_preview_shrinks_to_make_room_for_the_reference() {
        let dir = TempDir::new("preview");
        let content = "abc\n".repeat(1_000);
        let config = ShapeConfig::default().max_chars(300);
        let saved = save(&content, &dir.0, "exec", "c", Some(&dir.0)).unwrap();
        let replaced = preview_with_reference(&content, 4_000, saved, &config).unwrap();
        assert!(count_chars(&replaced.text) <= 300);
        assert!(replaced.text.starts_with("abc\nabc\n"));
        assert!(
            replaced
                .text
                .ends_with("saved to exec-c.txt; use read_file with offset and limit to read it]")
        );
        assert_eq!(replaced.facts.lines, 1_000);
    }

    #[test]
    fn without_room_for_a_preview_only_the_reference_is_left() {
        let dir = TempDir::new("no-preview");
        let config = ShapeConfig::default()
            .persist_preview_chars(0)
            .read_tool("cat_file");
        let saved = save("a\nb", &dir.0, "exec", "c", Some(&dir.0)).unwrap();
        let replaced = preview_with_reference("a\nb", 3, saved, &config).unwrap();
        assert_eq!(
            replaced.text,
            "[Full result (3 characters, 2 lines) saved to exec-c.txt; \
             use cat_file with offset and limit to read it]"
        );
    }

    #[test]
    fn a_reference_too_long_for_the_limit_removes_its_file() {
        let dir = TempDir::new("too-long");
        let deep = dir.0.join("d".repeat(150));
        let saved = save("x", &deep, "exec", "c", None).unwrap();
        let path = saved.path.clone();
        let config = ShapeConfig::default().max_chars(0);
        let err = preview_with_reference("x", 1, saved, &config).unwrap_err();
        assert!(matches!(err, PersistError::ReferenceTooLong { .. }));
        assert!(!path.exists());
    }

    #[test]
    fn a_relative_dir_without_workspace_is_an_error() {
        let err = save("x", Path::new("rel"), "exec", "c", None).unwrap_err();
        assert!(matches!(err, PersistError::NoWorkspace(_)));
    }
}

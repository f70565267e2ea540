//! `write_file`: create or replace a file atomically, showing the diff.

use std::io::Read;
use std::path::PathBuf;

use super::blocking::Stop;
use toolsmith::{ToolContext, ToolError, ToolOutput, tool};

use super::FsLimits;
use super::diff;
use super::state::{FileState, Version};
use crate::sandbox::{Access, SandboxError, Workspace, WorkspacePath};

/// Create a file or replace its whole content.
///
/// Parent directories are created. The file is written to a temporary file
/// and renamed into place, so nobody ever sees half of it. To replace an
/// existing file, read it first. To change part of a file, use edit_file
/// instead.
#[tool(destructive, idempotent, exclusive, category = filesystem_write, risk = medium)]
pub async fn write_file(
    ctx: &ToolContext,
    /// Path of the file, relative to the workspace root.
    #[arg(min_length = 1)]
    path: String,
    /// The complete new content of the file.
    content: String,
) -> Result<ToolOutput, ToolError> {
    super::blocking::run(ctx, move |ctx, stop| {
        write_file_blocking(ctx, stop, path, content)
    })
    .await?
}

/// The body of [`write_file`], on a blocking thread.
fn write_file_blocking(
    ctx: &ToolContext,
    _stop: &Stop,
    path: String,
    content: String,
) -> Result<ToolOutput, ToolError> {
    let workspace = Workspace::of(ctx)?;
    let limits = FsLimits::of(ctx);
    let state = FileState::of(ctx);
    let target = workspace.locate(&path, Access::Write)?;
    let prior = read_previous(&target, limits.max_edit_bytes, state)?;
    if let Previous::Text(old) = &prior.previous
        && *old == content
    {
        // Nothing is written, and the model has shown it knows the content.
        if let (Some(state), Some((key, version))) = (state, prior.seen) {
            state.wrote(&key, version);
        }
        return Ok(ToolOutput::text(format!(
            "`{path}` already has this content; nothing changed."
        )));
    }
    prior.check_read(state, &path)?;
    let written = target.write_atomic(content.as_bytes())?;
    if let Some(state) = state {
        state.wrote(&written, state.version_of(content.as_bytes()));
    }
    let lines = content.lines().count();
    let bytes = content.len();
    let (summary, display) = match &prior.previous {
        Previous::Missing => (
            format!("Created `{path}` ({lines} lines, {bytes} bytes)."),
            diff::unified(&path, None, &content),
        ),
        Previous::Text(old) => {
            let (added, removed) = diff::line_counts(old, &content);
            (
                format!(
                    "Replaced `{path}` (+{added} -{removed} lines; now {lines} lines, {bytes} bytes)."
                ),
                diff::unified(&path, Some(old), &content),
            )
        }
        Previous::Opaque(what) => (
            format!("Replaced `{path}` ({what}) with {lines} lines, {bytes} bytes."),
            format!("replaced {what} `{path}` with {lines} new lines"),
        ),
    };
    Ok(ToolOutput::text(summary).with_display(display))
}

/// What a file held before it is replaced.
pub(super) enum Previous {
    /// Nothing was there.
    Missing,
    /// Text that can be diffed.
    Text(String),
    /// Something not worth diffing, described.
    Opaque(String),
}

/// A file about to be changed: what it held, and with a [`FileState`],
/// where it is and which version of it is there now.
pub(super) struct Prior {
    /// What it held.
    pub previous: Previous,
    /// For an existing file, when a state tracks the session: its key (the
    /// absolute path the state knows it by) and its version.
    pub seen: Option<(PathBuf, Version)>,
}

impl Prior {
    /// Refuse to change an existing file the session has not read at its
    /// current version (when the state asks for that).
    pub(super) fn check_read(
        &self,
        state: Option<&FileState>,
        path: &str,
    ) -> Result<(), ToolError> {
        match (state, &self.seen) {
            (Some(state), Some((key, version))) => state.check_write(path, key, version),
            _ => Ok(()),
        }
    }
}

/// Read the file at `target` for a diff, if it exists and is small text.
/// `target` was located for writing, so a read-only file is never read on
/// a writer's behalf. With a `state`, the content read is hashed into the
/// file's version.
pub(super) fn read_previous(
    target: &WorkspacePath,
    max_bytes: u64,
    state: Option<&FileState>,
) -> Result<Prior, ToolError> {
    let path = target.as_given();
    let opened = match target.open_file() {
        Ok(opened) => opened,
        Err(SandboxError::NotFound { .. }) => {
            return Ok(Prior {
                previous: Previous::Missing,
                seen: None,
            });
        }
        Err(e) => return Err(e.into()),
    };
    let metadata = opened
        .file
        .metadata()
        .map_err(|e| ToolError::failed(format!("cannot read `{path}`: {e}")))?;
    if metadata.is_dir() {
        return Err(ToolError::failed(format!(
            "`{path}` is a directory; give the path of a file"
        )));
    }
    let too_big =
        |len: u64| Previous::Opaque(format!("a file of {}", super::sniff::human_size(len)));
    let seen = |digest| state.map(|_| (opened.path.clone(), Version::read(&metadata, digest)));
    if metadata.len() > max_bytes {
        return Ok(Prior {
            previous: too_big(metadata.len()),
            seen: seen(None),
        });
    }
    let mut bytes = Vec::new();
    // One byte past the cap tells a file that grew since it was measured.
    (&opened.file)
        .take(max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| ToolError::failed(format!("cannot read `{path}`: {e}")))?;
    if bytes.len() as u64 > max_bytes {
        return Ok(Prior {
            previous: too_big(bytes.len() as u64),
            seen: seen(None),
        });
    }
    let digest = state.map(|state| {
        let mut digest = state.digest();
        digest.update(&bytes);
        digest.result()
    });
    Ok(Prior {
        previous: match String::from_utf8(bytes) {
            Ok(text) => Previous::Text(text),
            Err(_) => Previous::Opaque("a binary file".to_owned()),
        },
        seen: seen(digest),
    })
}

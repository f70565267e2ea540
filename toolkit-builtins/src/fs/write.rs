//! `write_file`: create or replace a file atomically, showing the diff.

use std::io::Read;

use super::blocking::Stop;
use toolsmith::{ToolContext, ToolError, ToolOutput, tool};

use super::FsLimits;
use super::diff;
use crate::sandbox::{Access, SandboxError, Workspace};

/// Create a file or replace its whole content.
///
/// Parent directories are created. The file is written to a temporary file
/// and renamed into place, so nobody ever sees half of it. To change part of
/// a file, use edit_file instead.
#[tool(destructive, idempotent, exclusive, category = filesystem_write, risk = medium)]
pub async fn write_file(
    ctx: &ToolContext,
    /// Path of the file, relative to the workspace root.
    #[arg(min_length = 1)]
    path: String,
    /// The complete new content of the file.
    content: String,
) -> Result<ToolOutput, ToolError> {
    let ctx = ctx.clone();
    super::blocking::run(move |stop| write_file_blocking(&ctx, stop, path, content)).await?
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
    let old = read_previous(&workspace, &path, limits.max_edit_bytes)?;
    if let Previous::Text(old) = &old
        && *old == content
    {
        return Ok(ToolOutput::text(format!(
            "`{path}` already has this content; nothing changed."
        )));
    }
    workspace.write_atomic(&path, content.as_bytes())?;
    let lines = content.lines().count();
    let bytes = content.len();
    let (summary, display) = match &old {
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

/// Read the file at `path` for a diff, if it exists and is small text.
/// Refuses first if the path may not be written: a read-only file is never
/// read on a writer's behalf.
pub(super) fn read_previous(
    workspace: &Workspace,
    path: &str,
    max_bytes: u64,
) -> Result<Previous, ToolError> {
    workspace.locate(path, Access::Write)?;
    let opened = match workspace.open_file(path) {
        Ok(opened) => opened,
        Err(SandboxError::NotFound { .. }) => return Ok(Previous::Missing),
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
    if !metadata.is_file() {
        return Err(ToolError::failed(format!(
            "`{path}` is not a regular file; only regular files can be written"
        )));
    }
    if metadata.len() > max_bytes {
        return Ok(Previous::Opaque(format!(
            "a file of {}",
            super::sniff::human_size(metadata.len())
        )));
    }
    let mut bytes = Vec::new();
    opened
        .file
        .take(max_bytes)
        .read_to_end(&mut bytes)
        .map_err(|e| ToolError::failed(format!("cannot read `{path}`: {e}")))?;
    Ok(match String::from_utf8(bytes) {
        Ok(text) => Previous::Text(text),
        Err(_) => Previous::Opaque("a binary file".to_owned()),
    })
}

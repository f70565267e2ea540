//! `edit_file`: replace a passage of a file, showing the diff.

use super::blocking::Stop;
use toolsmith::{ToolContext, ToolError, ToolOutput, tool};

use super::matching::{self, How};
use super::write::{Previous, read_previous};
use super::{FsLimits, diff};
use crate::sandbox::Workspace;

/// Replace text in a file.
///
/// `old_text` is looked up exactly first, then ignoring differences in
/// whitespace and indentation. It must occur once, unless `replace_all` is
/// set or `occurrence` picks one. When it is not found, the error shows the
/// most similar passage of the file. Read the file first.
#[tool(destructive, exclusive, category = filesystem_write, risk = medium)]
pub async fn edit_file(
    ctx: &ToolContext,
    /// Path of the file, relative to the workspace root.
    #[arg(min_length = 1)]
    path: String,
    /// The text to replace, including enough surrounding lines to be unique.
    #[arg(min_length = 1)]
    old_text: String,
    /// The text to put in its place.
    new_text: String,
    /// Replace every occurrence, not just one.
    #[arg(default = false)]
    replace_all: bool,
    /// Which occurrence to replace when there are several, 1-based.
    #[arg(minimum = 1)]
    occurrence: Option<u64>,
) -> Result<ToolOutput, ToolError> {
    let ctx = ctx.clone();
    super::blocking::run(move |stop| {
        edit_file_blocking(
            &ctx,
            stop,
            path,
            old_text,
            new_text,
            replace_all,
            occurrence,
        )
    })
    .await?
}

/// The body of [`edit_file`], on a blocking thread.
fn edit_file_blocking(
    ctx: &ToolContext,
    _stop: &Stop,
    path: String,
    old_text: String,
    new_text: String,
    replace_all: bool,
    occurrence: Option<u64>,
) -> Result<ToolOutput, ToolError> {
    let workspace = Workspace::of(ctx)?;
    let limits = FsLimits::of(ctx);
    let content = match read_previous(&workspace, &path, limits.max_edit_bytes)? {
        Previous::Text(content) => content,
        Previous::Missing => {
            return Err(ToolError::failed(format!(
                "`{path}` does not exist; use write_file to create it"
            )));
        }
        Previous::Opaque(what) => {
            return Err(ToolError::failed(format!(
                "`{path}` is {what}; edit_file changes text files up to {}",
                super::sniff::human_size(limits.max_edit_bytes)
            )));
        }
    };
    if old_text == new_text {
        return Err(ToolError::failed(
            "old_text and new_text are the same; nothing would change",
        ));
    }
    if replace_all && occurrence.is_some() {
        return Err(ToolError::failed(
            "give either replace_all or occurrence, not both",
        ));
    }
    let Some(found) = matching::find(&content, &old_text) else {
        return Err(ToolError::failed(not_found(&path, &content, &old_text)));
    };
    let count = found.ranges.len();
    let chosen: Vec<_> = match (occurrence, replace_all) {
        (Some(n), _) => {
            let index = usize::try_from(n - 1).unwrap_or(usize::MAX);
            let Some(range) = found.ranges.get(index) else {
                return Err(ToolError::failed(format!(
                    "occurrence {n} asked for, but old_text occurs {count} time(s) in `{path}`"
                )));
            };
            vec![range.clone()]
        }
        (None, true) => found.ranges.clone(),
        (None, false) if count > 1 => {
            let lines: Vec<String> = found
                .ranges
                .iter()
                .take(10)
                .map(|r| matching::line_of(&content, r.start).to_string())
                .collect();
            return Err(ToolError::failed(format!(
                "old_text occurs {count} times in `{path}` (at lines {}); add surrounding lines to make it unique, set replace_all=true, or pick one with occurrence=N",
                lines.join(", ")
            )));
        }
        (None, false) => found.ranges.clone(),
    };
    let first_line = matching::line_of(&content, chosen[0].start);
    let mut edited = content.clone();
    for range in chosen.iter().rev() {
        let replacement = match found.how {
            How::Exact => new_text.clone(),
            How::Crlf => new_text.replace("\r\n", "\n").replace('\n', "\r\n"),
            How::Whitespace => matching::adapt(&content, range, &old_text, &new_text),
        };
        edited.replace_range(range.clone(), &replacement);
    }
    workspace.write_atomic(&path, edited.as_bytes())?;
    let (added, removed) = diff::line_counts(&content, &edited);
    let what = if chosen.len() == 1 {
        format!("1 occurrence at line {first_line}")
    } else {
        format!(
            "{} occurrences, the first at line {first_line}",
            chosen.len()
        )
    };
    let how = if found.how == How::Whitespace {
        " (matched ignoring whitespace differences)"
    } else {
        ""
    };
    Ok(ToolOutput::text(format!(
        "Edited `{path}`: replaced {what} (+{added} -{removed} lines){how}."
    ))
    .with_display(diff::unified(&path, Some(&content), &edited)))
}

/// The error for text that is not in the file, with the closest passage.
fn not_found(path: &str, content: &str, old_text: &str) -> String {
    match matching::most_similar(content, old_text) {
        Some(similar) => {
            let last = similar.first_line + similar.text.lines().count().max(1) - 1;
            format!(
                "old_text was not found in `{path}`. The most similar text ({:.0}% alike, lines {}-{last}) is:\n{}\nCopy it exactly (read_file shows the current content) and try again.",
                similar.ratio * 100.0,
                similar.first_line,
                similar.text
            )
        }
        None => format!(
            "old_text was not found in `{path}`, and nothing in it is similar; read the file to see its current content"
        ),
    }
}

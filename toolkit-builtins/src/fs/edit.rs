//! `edit_file`: replace a passage of a file, or what a regex matches,
//! showing the model the changed lines and the user the whole diff.

use std::ops::Range;

use super::blocking::Stop;
use toolsmith::{ToolContext, ToolError, ToolOutput, tool};

use super::diff::{self, Replaced};
use super::matching::{self, How, MAX_MATCHES};
use super::rewrite;
use super::state::FileState;
use super::write::{Previous, Prior, read_previous};
use super::{FsLimits, sniff};
use crate::sandbox::{Access, Workspace};

/// Replace text in a file.
///
/// `old_text` is looked up exactly first, then ignoring differences in
/// whitespace and indentation. With `regex` set, `old_text` is a regular
/// expression (Rust syntax; `(?m)` makes `^`/`$` match at every line, `(?s)`
/// lets `.` match line breaks) and `new_text` may use its groups as `$1`,
/// `${1}` or `${name}` (`$$` is a `$`). It must match once, unless
/// `replace_all` is set or `occurrence` picks one. When nothing matches, the
/// error says why (for literal text, with the most similar passage). The
/// answer shows the changed lines with their new line numbers. Read the
/// file first.
#[tool(destructive, exclusive, category = filesystem_write, risk = medium)]
pub async fn edit_file(
    ctx: &ToolContext,
    /// Path of the file, relative to the workspace root.
    #[arg(min_length = 1)]
    path: String,
    /// The text to replace, including enough surrounding lines to be
    /// unique; a regular expression when `regex` is set.
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
    /// Take `old_text` as a regular expression and `new_text` as its
    /// replacement, with `$1` or `${name}` for groups.
    #[arg(default = false)]
    regex: bool,
) -> Result<ToolOutput, ToolError> {
    let edit = Edit {
        path,
        old_text,
        new_text,
        replace_all,
        occurrence,
        regex,
    };
    super::blocking::run(ctx, move |ctx, stop| edit_file_blocking(ctx, stop, edit)).await?
}

/// The arguments of one edit.
struct Edit {
    path: String,
    old_text: String,
    new_text: String,
    replace_all: bool,
    occurrence: Option<u64>,
    regex: bool,
}

/// The body of [`edit_file`], on a blocking thread.
fn edit_file_blocking(ctx: &ToolContext, stop: &Stop, edit: Edit) -> Result<ToolOutput, ToolError> {
    let Edit {
        path,
        old_text,
        new_text,
        replace_all,
        occurrence,
        regex,
    } = edit;
    if !regex && old_text == new_text {
        return Err(ToolError::failed(
            "old_text and new_text are the same; nothing would change",
        ));
    }
    if replace_all && occurrence.is_some() {
        return Err(ToolError::failed(
            "give either replace_all or occurrence, not both",
        ));
    }
    // A bad pattern is refused before the file is read.
    let pattern = if regex {
        let pattern = rewrite::compile(&old_text).map_err(ToolError::failed)?;
        rewrite::check_template(&pattern, &new_text).map_err(ToolError::failed)?;
        Some(pattern)
    } else {
        None
    };
    let workspace = Workspace::of(ctx)?;
    let limits = FsLimits::of(ctx);
    let state = FileState::of(ctx);
    let target = workspace.locate(&path, Access::Write)?;
    let prior = read_previous(&target, limits.max_edit_bytes, state)?;
    let Prior { previous, seen } = prior;
    let content = match previous {
        Previous::Text(content) => content,
        Previous::Missing => {
            return Err(ToolError::failed(format!(
                "`{path}` does not exist; use write_file to create it"
            )));
        }
        Previous::Opaque(what) => {
            return Err(ToolError::failed(format!(
                "`{path}` is {what}; edit_file changes text files up to {}",
                sniff::human_size(limits.max_edit_bytes)
            )));
        }
    };
    if let (Some(state), Some((key, version))) = (state, &seen) {
        state.check_write(&path, key, version)?;
    }
    let (ranges, how, what) = match &pattern {
        Some(pattern) => {
            let ranges =
                rewrite::find(pattern, &content, MAX_MATCHES, stop).ok_or(ToolError::Cancelled)?;
            if ranges.is_empty() {
                return Err(ToolError::failed(rewrite::no_match(
                    &path, &content, &old_text,
                )));
            }
            (ranges, None, "the pattern matches")
        }
        None => {
            let Some(found) = matching::find(&content, &old_text) else {
                return Err(ToolError::failed(not_found(&path, &content, &old_text)));
            };
            (found.ranges, Some(found.how), "old_text occurs")
        }
    };
    let chosen = choose(&ranges, &content, &path, what, replace_all, occurrence)?;
    let texts: Vec<String> = match (&pattern, how) {
        (Some(pattern), _) => rewrite::expand(pattern, &content, &new_text, &chosen, stop)
            .ok_or(ToolError::Cancelled)?,
        (None, how) => chosen
            .iter()
            .map(|&i| match how {
                Some(How::Crlf) => new_text.replace("\r\n", "\n").replace('\n', "\r\n"),
                Some(How::Whitespace) => {
                    matching::adapt(&content, &ranges[i], &old_text, &new_text)
                }
                _ => new_text.clone(),
            })
            .collect(),
    };
    let chosen_ranges: Vec<Range<usize>> = chosen.iter().map(|&i| ranges[i].clone()).collect();
    let edited = splice(
        &content,
        &chosen_ranges,
        &texts,
        limits.max_edit_bytes,
        &path,
    )?;
    if edited == content {
        return Err(ToolError::failed(format!(
            "the replacement leaves `{path}` as it is; nothing changed"
        )));
    }
    let written = target.write_atomic(edited.as_bytes())?;
    if let Some(state) = state {
        state.wrote(&written, state.version_of(edited.as_bytes()));
    }
    let replaced: Vec<Replaced> = chosen_ranges
        .iter()
        .zip(&texts)
        .map(|(range, text)| Replaced {
            old: range.clone(),
            new_len: text.len(),
        })
        .collect();
    let compact = diff::compact(&content, &edited, &replaced);
    let first_line = matching::line_of(&content, chosen_ranges[0].start);
    let (one, many) = if regex {
        ("match", "matches")
    } else {
        ("occurrence", "occurrences")
    };
    let what = if chosen.len() == 1 {
        format!("1 {one} at line {first_line}")
    } else {
        format!("{} {many}, the first at line {first_line}", chosen.len())
    };
    let how = if how == Some(How::Whitespace) {
        " (matched ignoring whitespace differences)"
    } else {
        ""
    };
    Ok(ToolOutput::text(format!(
        "Edited `{path}`: replaced {what} (+{} -{} lines){how}.\n{}",
        compact.added, compact.removed, compact.text
    ))
    .with_display(diff::unified(&path, Some(&content), &edited)))
}

/// Which of the `ranges` to replace, by index: all with `replace_all`, the
/// one `occurrence` names, or the only one; several without either is
/// refused with where they are. `what` starts the messages ("old_text
/// occurs", "the pattern matches").
fn choose(
    ranges: &[Range<usize>],
    content: &str,
    path: &str,
    what: &str,
    replace_all: bool,
    occurrence: Option<u64>,
) -> Result<Vec<usize>, ToolError> {
    let count = ranges.len();
    let times = if count > MAX_MATCHES {
        format!("more than {MAX_MATCHES} times")
    } else {
        format!("{count} time(s)")
    };
    match (occurrence, replace_all) {
        (Some(n), _) => {
            let index = usize::try_from(n - 1).unwrap_or(usize::MAX);
            if index >= count.min(MAX_MATCHES) {
                return Err(ToolError::failed(format!(
                    "occurrence {n} asked for, but {what} {times} in `{path}`"
                )));
            }
            Ok(vec![index])
        }
        _ if count > MAX_MATCHES => Err(ToolError::failed(format!(
            "{what} {times} in `{path}`; edit_file changes at most {MAX_MATCHES} places in one call, so narrow it"
        ))),
        (None, true) => Ok((0..count).collect()),
        (None, false) if count > 1 => {
            let lines: Vec<String> = ranges
                .iter()
                .take(10)
                .map(|r| matching::line_of(content, r.start).to_string())
                .collect();
            let more = if count > 10 { ", ..." } else { "" };
            Err(ToolError::failed(format!(
                "{what} {count} times in `{path}` (at lines {}{more}); add surrounding lines to make it unique, set replace_all=true, or pick one with occurrence=N",
                lines.join(", ")
            )))
        }
        (None, false) => Ok(vec![0]),
    }
}

/// `content` with each of `ranges` (in order, not overlapping) replaced by
/// the text at the same index, built in one pass (replacing in place would
/// move the rest of the file once per range). Refused past `max_bytes`: a
/// large text put in many places could otherwise grow without bound, and
/// edit_file could not open the result again.
fn splice(
    content: &str,
    ranges: &[Range<usize>],
    texts: &[String],
    max_bytes: u64,
    path: &str,
) -> Result<String, ToolError> {
    let removed: usize = ranges.iter().map(|r| r.len()).sum();
    let added: usize = texts.iter().map(String::len).sum();
    let size = (content.len() - removed).saturating_add(added);
    if size as u64 > max_bytes {
        return Err(ToolError::failed(format!(
            "the edit would make `{path}` {}, more than the {} edit_file writes",
            sniff::human_size(size as u64),
            sniff::human_size(max_bytes)
        )));
    }
    let mut out = String::with_capacity(size);
    let mut at = 0;
    for (range, text) in ranges.iter().zip(texts) {
        out.push_str(&content[at..range.start]);
        out.push_str(text);
        at = range.end;
    }
    out.push_str(&content[at..]);
    Ok(out)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splicing_is_one_pass_and_bounded() {
        let out = splice("a-b-c", &[0..1, 4..5], &["AA".into(), "".into()], 100, "f").unwrap();
        assert_eq!(out, "AA-b-");
        let err = splice(
            "aaaa",
            &[0..1, 1..2],
            &["x".repeat(60), "x".repeat(60)],
            100,
            "f",
        )
        .unwrap_err();
        assert!(err.to_string().contains("more than the 100 B"), "{err}");
    }

    #[test]
    fn several_matches_need_a_choice() {
        let ranges = vec![0..1, 2..3, 4..5];
        let content = "a\na\na\n";
        let err = choose(&ranges, content, "f", "old_text occurs", false, None).unwrap_err();
        assert!(
            err.to_string()
                .contains("3 times in `f` (at lines 1, 2, 3)"),
            "{err}"
        );
        assert_eq!(
            choose(&ranges, content, "f", "x", true, None).unwrap(),
            [0, 1, 2]
        );
        assert_eq!(
            choose(&ranges, content, "f", "x", false, Some(2)).unwrap(),
            [1]
        );
        let err = choose(&ranges, content, "f", "the pattern matches", false, Some(4)).unwrap_err();
        assert!(
            err.to_string().contains("the pattern matches 3 time(s)"),
            "{err}"
        );
        let many: Vec<Range<usize>> = (0..=MAX_MATCHES).map(|i| i..i + 1).collect();
        let err = choose(&many, content, "f", "x", true, None).unwrap_err();
        assert!(err.to_string().contains("more than 100000 times"), "{err}");
        assert_eq!(
            choose(&many, content, "f", "x", false, Some(5)).unwrap(),
            [4]
        );
    }
}

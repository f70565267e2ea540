//! `grep`: search file contents with a regex or a fixed string.

use std::fs::File;
use std::path::PathBuf;
use std::sync::Mutex;

use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder};
use ignore::WalkState;
use ignore::types::TypesBuilder;
use toolsmith::schemars::JsonSchema;
use toolsmith::serde::Deserialize;
use toolsmith::{ToolContext, ToolError, tool};

use super::pattern::PathGlob;
use super::sink::{Collect, FileHits, Item, Keep, Line};
use super::walk::SearchRoot;
use crate::fs::FsLimits;
use crate::sandbox::Workspace;

/// What `grep` returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(crate = "toolsmith::serde", rename_all = "snake_case")]
#[schemars(crate = "toolsmith::schemars")]
pub enum OutputMode {
    /// The paths of files that match (cheapest).
    #[default]
    FilesWithMatches,
    /// Matching lines with their line numbers, and context if asked.
    Content,
    /// How many lines match in each file.
    Count,
}

/// Search file contents for a regular expression (or a fixed string).
///
/// Returns matching files by default; `output_mode="content"` shows the
/// lines with numbers (and context), `"count"` counts per file. Binary
/// files, `.gitignore`d files and noise directories are skipped. On broad
/// searches, count first, then ask for content. Prefer this over shell grep.
#[tool(read_only, idempotent, category = filesystem_read)]
#[allow(clippy::too_many_arguments)]
pub fn grep(
    ctx: &ToolContext,
    /// Regular expression (Rust/ripgrep syntax), or the literal text when
    /// `fixed_strings` is set.
    #[arg(min_length = 1)]
    pattern: String,
    /// File or directory to search, relative to the workspace root.
    #[arg(default = ".".to_owned())]
    path: String,
    /// Only files matching this glob, such as `*.rs` or `src/**/*.{ts,tsx}`;
    /// a leading `!` excludes instead.
    glob: Option<String>,
    /// Only files of this type, as ripgrep names them: `rust`, `py`, `js`,
    /// `ts`, `go`, `java`, `c`, `cpp`, `md`...
    #[arg(rename = "type")]
    file_type: Option<String>,
    /// files_with_matches (default), content or count.
    #[arg(default = OutputMode::FilesWithMatches)]
    output_mode: OutputMode,
    /// Ignore case.
    #[arg(default = false)]
    case_insensitive: bool,
    /// Take `pattern` as literal text, not a regex.
    #[arg(default = false)]
    fixed_strings: bool,
    /// Let `.` match newlines and patterns span lines.
    #[arg(default = false)]
    multiline: bool,
    /// Lines of context before and after each match (content mode).
    #[arg(minimum = 0, maximum = 100)]
    context: Option<u32>,
    /// Lines of context before each match (content mode).
    #[arg(minimum = 0, maximum = 100)]
    before_context: Option<u32>,
    /// Lines of context after each match (content mode).
    #[arg(minimum = 0, maximum = 100)]
    after_context: Option<u32>,
    /// Most results to return: files, or matching lines in content mode
    /// (default 250).
    #[arg(minimum = 1)]
    head_limit: Option<usize>,
    /// Results to skip first, to page through a long answer.
    #[arg(default = 0, minimum = 0)]
    offset: usize,
) -> Result<String, ToolError> {
    let workspace = Workspace::of(ctx)?;
    let limits = FsLimits::of(ctx);
    let limit = head_limit.unwrap_or(limits.default_grep_results);
    let matcher = build_matcher(&pattern, case_insensitive, fixed_strings, multiline)?;
    let filter = glob
        .as_deref()
        .map(PathGlob::new)
        .transpose()
        .map_err(ToolError::failed)?;
    let keep = match output_mode {
        OutputMode::FilesWithMatches => Keep::First,
        OutputMode::Count => Keep::Count,
        OutputMode::Content => Keep::Lines(offset.saturating_add(limit) as u64),
    };
    let (before, after) = match output_mode {
        OutputMode::Content => (
            before_context.or(context).unwrap_or(0),
            after_context.or(context).unwrap_or(0),
        ),
        _ => (0, 0),
    };
    let mut builder = SearcherBuilder::new();
    builder
        .binary_detection(BinaryDetection::quit(0))
        .line_number(true)
        .multi_line(multiline)
        .before_context(before as usize)
        .after_context(after as usize);
    let search = Search {
        matcher,
        builder,
        keep,
        line_chars: limits.max_line_chars,
    };
    let (hits, root) = match SearchRoot::open(&workspace, &path) {
        Ok(root) => (
            search.tree(&root, file_type.as_deref(), filter.as_ref())?,
            Some(root),
        ),
        Err(_) if is_file(&workspace, &path) => (search.one_file(&workspace, &path)?, None),
        Err(e) => return Err(e),
    };
    let name = |hits: &FileHits| match &root {
        Some(root) => root.display(&hits.relative),
        None => path.clone(),
    };
    if hits.is_empty() {
        return Ok(format!("No matches for `{pattern}` in `{path}`."));
    }
    let page = Page {
        offset,
        limit,
        max_chars: limits.max_grep_chars,
    };
    Ok(match output_mode {
        OutputMode::FilesWithMatches => page.files(&hits, &name),
        OutputMode::Count => page.counts(&hits, &name),
        OutputMode::Content => page.content(&hits, &name),
    })
}

fn build_matcher(
    pattern: &str,
    case_insensitive: bool,
    fixed_strings: bool,
    multiline: bool,
) -> Result<RegexMatcher, ToolError> {
    let mut builder = RegexMatcherBuilder::new();
    builder
        .case_insensitive(case_insensitive)
        .fixed_strings(fixed_strings)
        .multi_line(true);
    if multiline {
        builder.dot_matches_new_line(true);
    } else {
        // Lets the searcher look for matches a line at a time, the fast way.
        builder.line_terminator(Some(b'\n'));
    }
    builder.build(pattern).map_err(|e| {
        let hint = if !multiline && e.to_string().contains(r#""\n""#) {
            "Set multiline=true to match across lines."
        } else {
            "Escape special characters, or set fixed_strings=true to search for the text as written."
        };
        ToolError::failed(format!(
            "`{pattern}` is not a valid regular expression: {e}\n{hint}"
        ))
    })
}

fn is_file(workspace: &Workspace, path: &str) -> bool {
    workspace
        .open_file(path)
        .is_ok_and(|f| f.file.metadata().is_ok_and(|m| m.is_file()))
}

/// One search: the matcher, how to search, what to keep.
struct Search {
    matcher: RegexMatcher,
    builder: SearcherBuilder,
    keep: Keep,
    line_chars: usize,
}

impl Search {
    /// Search `file`, returning its hits if it matched.
    fn file(&self, searcher: &mut Searcher, relative: PathBuf, file: &File) -> Option<FileHits> {
        let mut hits = FileHits {
            relative,
            ..FileHits::default()
        };
        let sink = Collect {
            hits: &mut hits,
            keep: self.keep,
            line_chars: self.line_chars,
        };
        // A file that cannot be read midway is left out, as rg does.
        searcher.search_file(&self.matcher, file, sink).ok()?;
        (hits.matches > 0).then_some(hits)
    }

    fn one_file(&self, workspace: &Workspace, path: &str) -> Result<Vec<FileHits>, ToolError> {
        let opened = workspace.open_file(path)?;
        let mut searcher = self.builder.build();
        Ok(self
            .file(&mut searcher, PathBuf::new(), &opened.file)
            .into_iter()
            .collect())
    }

    /// Search every file below `root` in parallel; hits sorted by path.
    fn tree(
        &self,
        root: &SearchRoot,
        file_type: Option<&str>,
        filter: Option<&PathGlob>,
    ) -> Result<Vec<FileHits>, ToolError> {
        let mut walker = root.walker();
        if let Some(name) = file_type {
            walker.types(file_types(name)?);
        }
        let found: Mutex<Vec<FileHits>> = Mutex::new(Vec::new());
        walker.build_parallel().run(|| {
            let mut searcher = self.builder.build();
            let found = &found;
            Box::new(move |entry| {
                let Ok(entry) = entry else {
                    return WalkState::Continue;
                };
                if !entry.file_type().is_some_and(|t| t.is_file()) {
                    return WalkState::Continue;
                }
                let relative = root.relative(entry.path());
                if filter.is_some_and(|f| !f.is_match(relative)) {
                    return WalkState::Continue;
                }
                // Opened below the searched directory's handle, not by path.
                let Ok(file) = root.dir.open_file(relative) else {
                    return WalkState::Continue;
                };
                if let Some(hits) = self.file(&mut searcher, relative.to_path_buf(), &file) {
                    found
                        .lock()
                        .unwrap_or_else(|poisoned| poisoned.into_inner())
                        .push(hits);
                }
                WalkState::Continue
            })
        });
        let mut found = found.into_inner().unwrap_or_else(|p| p.into_inner());
        found.sort_unstable_by(|a, b| a.relative.cmp(&b.relative));
        Ok(found)
    }
}

/// ripgrep's file type `name`, selected.
fn file_types(name: &str) -> Result<ignore::types::Types, ToolError> {
    let mut builder = TypesBuilder::new();
    builder.add_defaults();
    let known: Vec<String> = builder
        .definitions()
        .into_iter()
        .map(|d| d.name().to_owned())
        .collect();
    if !known.iter().any(|k| k == name) {
        let close: Vec<&str> = known
            .iter()
            .filter(|k| k.starts_with(&name[..1.min(name.len())]))
            .map(String::as_str)
            .take(20)
            .collect();
        return Err(ToolError::failed(format!(
            "`{name}` is not a known file type; types starting alike: {}. Or use glob, such as `*.ext`",
            close.join(", ")
        )));
    }
    builder
        .select(name)
        .build()
        .map_err(|e| ToolError::failed(format!("file type `{name}`: {e}")))
}

/// Which part of the results to show.
struct Page {
    offset: usize,
    limit: usize,
    max_chars: usize,
}

impl Page {
    fn files(&self, hits: &[FileHits], name: &dyn Fn(&FileHits) -> String) -> String {
        let mut out = String::new();
        let mut shown = 0;
        for file in hits.iter().skip(self.offset).take(self.limit) {
            if out.len() > self.max_chars {
                break;
            }
            out.push_str(&name(file));
            out.push('\n');
            shown += 1;
        }
        self.note(&mut out, shown, hits.len(), "files");
        out
    }

    fn counts(&self, hits: &[FileHits], name: &dyn Fn(&FileHits) -> String) -> String {
        let mut out = String::new();
        let mut shown = 0;
        for file in hits.iter().skip(self.offset).take(self.limit) {
            if out.len() > self.max_chars {
                break;
            }
            out.push_str(&format!("{}:{}\n", name(file), file.matches));
            shown += 1;
        }
        let total: u64 = hits.iter().map(|h| h.matches).sum();
        self.note(&mut out, shown, hits.len(), "files");
        out.push_str(&format!(
            "(total: {total} matching lines in {} files)\n",
            hits.len()
        ));
        out
    }

    fn content(&self, hits: &[FileHits], name: &dyn Fn(&FileHits) -> String) -> String {
        let mut out = String::new();
        let mut seen = 0usize;
        let mut emitted = 0usize;
        let mut capped = false;
        let emit = |out: &mut String, line: &Line| {
            let mark = if line.is_match { ':' } else { '-' };
            out.push_str(&format!("{}{mark}{}\n", line.number, line.text));
        };
        'files: for file in hits {
            let mut header = false;
            let mut pending: Vec<&Line> = Vec::new();
            let mut trailing = false;
            let mut gap = false;
            for item in &file.items {
                match item {
                    Item::Break => {
                        pending.clear();
                        trailing = false;
                        gap = header;
                    }
                    Item::Line(line) if !line.is_match => {
                        if trailing {
                            emit(&mut out, line);
                        } else {
                            pending.push(line);
                        }
                    }
                    Item::Line(line) => {
                        seen += 1;
                        if seen <= self.offset {
                            pending.clear();
                            continue;
                        }
                        if emitted >= self.limit {
                            break 'files;
                        }
                        if out.len() > self.max_chars {
                            capped = true;
                            break 'files;
                        }
                        if !header {
                            if !out.is_empty() {
                                out.push('\n');
                            }
                            out.push_str(&name(file));
                            out.push('\n');
                            header = true;
                        } else if gap {
                            out.push_str("--\n");
                        }
                        gap = false;
                        for context in pending.drain(..) {
                            emit(&mut out, context);
                        }
                        emit(&mut out, line);
                        emitted += 1;
                        trailing = true;
                    }
                }
            }
        }
        let total: u64 = hits.iter().map(|h| h.matches).sum();
        let total = usize::try_from(total).unwrap_or(usize::MAX);
        if capped {
            out.push_str(&format!(
                "(output capped at {} characters; showing matches {}-{} of {total}; call grep with offset={} to continue)\n",
                self.max_chars,
                self.offset + 1,
                self.offset + emitted,
                self.offset + emitted
            ));
        } else {
            self.note(&mut out, emitted, total, "matching lines");
        }
        out
    }

    /// Say how to see more when this page is not everything.
    fn note(&self, out: &mut String, shown: usize, total: usize, what: &str) {
        let end = self.offset + shown;
        if self.offset >= total {
            out.push_str(&format!(
                "(offset {} is past the end: there are {total} {what})\n",
                self.offset
            ));
        } else if end < total {
            out.push_str(&format!(
                "(showing {}-{end} of {total} {what}; call grep with offset={end} to see more)\n",
                self.offset + 1
            ));
        }
    }
}

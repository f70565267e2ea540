//! `grep`: search file contents with a regex or a fixed string.

use std::collections::BinaryHeap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::fs::blocking::Stop;
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
use crate::fs::sniff::{self, human_size};
use crate::sandbox::{Access, SandboxError, Workspace};

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
pub async fn grep(
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
    crate::fs::blocking::run(ctx, move |ctx, stop| {
        grep_blocking(
            ctx,
            stop,
            pattern,
            path,
            glob,
            file_type,
            output_mode,
            case_insensitive,
            fixed_strings,
            multiline,
            context,
            before_context,
            after_context,
            head_limit,
            offset,
        )
    })
    .await?
}

/// The body of [`grep`], on a blocking thread.
#[allow(clippy::too_many_arguments)]
fn grep_blocking(
    ctx: &ToolContext,
    stop: &Stop,
    pattern: String,
    path: String,
    glob: Option<String>,
    file_type: Option<String>,
    output_mode: OutputMode,
    case_insensitive: bool,
    fixed_strings: bool,
    multiline: bool,
    context: Option<u32>,
    before_context: Option<u32>,
    after_context: Option<u32>,
    head_limit: Option<usize>,
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
    let (before, after) = match output_mode {
        OutputMode::Content => (
            before_context.or(context).unwrap_or(0),
            after_context.or(context).unwrap_or(0),
        ),
        _ => (0, 0),
    };
    let mut builder = SearcherBuilder::new();
    builder
        // The one binary rule of the file tools (`sniff::is_binary`): the
        // searcher stops at the byte, so a file holding one early is skipped.
        .binary_detection(BinaryDetection::quit(sniff::BINARY_BYTE))
        .line_number(true)
        .multi_line(multiline)
        .before_context(before as usize)
        .after_context(after as usize)
        // Multiline search holds the whole file: at most the multiline cap.
        // Line search holds a line and its context: at most the line cap.
        // (The searcher needs room for one read past the end: a file of
        // exactly the cap still fits.)
        .heap_limit(Some(
            if multiline {
                limits.max_multiline_bytes
            } else {
                limits.max_search_line_bytes
            }
            .saturating_add(READ_SLACK),
        ));
    let search = Search {
        matcher,
        builder,
        line_chars: limits.max_line_chars,
        multiline_bytes: multiline.then_some(limits.max_multiline_bytes as u64),
        stop: stop.clone(),
        skipped: Mutex::new(Skipped::default()),
    };
    // First every file is searched for whether (or how often) it matches;
    // content mode then searches again, in order, only the files the page
    // shows, so no more lines are held than the page can hold.
    let keep = match output_mode {
        OutputMode::FilesWithMatches => Keep::First,
        OutputMode::Count | OutputMode::Content => Keep::Count,
    };
    let target = workspace.locate(&path, Access::Read)?;
    let (found, root) = match SearchRoot::open(&workspace, &target) {
        Ok(root) => (
            search.tree(&root, keep, file_type.as_deref(), filter.as_ref())?,
            Some(root),
        ),
        Err(not_dir) => match target.open_file() {
            Ok(opened) if opened.file.metadata().is_ok_and(|m| m.is_file()) => {
                (search.one_file(opened.file, keep), None)
            }
            Err(special @ SandboxError::Special { .. }) => return Err(special.into()),
            _ => return Err(not_dir),
        },
    };
    let skipped = search
        .skipped
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .note();
    if stop.is_set() {
        return Err(ToolError::Cancelled);
    }
    let name = |relative: &Path| match &root {
        Some(root) => root.display(relative),
        None => path.clone(),
    };
    if found.total_files == 0 {
        return Ok(format!("No matches for `{pattern}` in `{path}`.{skipped}"));
    }
    let page = Page {
        offset,
        limit,
        max_chars: limits.max_grep_chars,
    };
    let mut out = match output_mode {
        OutputMode::FilesWithMatches => page.files(&found, &name),
        OutputMode::Count => page.counts(&found, &name),
        OutputMode::Content => {
            let mut content = Content::new(&page, found.total_matches);
            let mut before = 0u64;
            let mut searcher = search.builder.build();
            for hit in &found.files {
                if content.is_full() || stop.is_set() {
                    break;
                }
                let seen = before;
                before += hit.matches;
                if before <= offset as u64 {
                    continue;
                }
                // Matches of this file the page skips, and how many it shows.
                let skip = (offset as u64).saturating_sub(seen);
                let keep = Keep::Lines {
                    skip,
                    upto: skip + content.room() as u64,
                    bytes: limits.max_grep_chars,
                };
                let lines = match &root {
                    Some(root) => root.dir.open_file(&hit.relative).ok().and_then(|file| {
                        search.file(&mut searcher, &file, hit.relative.clone(), keep)
                    }),
                    None => target.open_file().ok().and_then(|opened| {
                        search.file(&mut searcher, &opened.file, PathBuf::new(), keep)
                    }),
                };
                // A file changed since the first pass shows what it holds now.
                let Some(lines) = lines else { continue };
                content.add(&lines, seen + skip, &name(&hit.relative));
            }
            content.finish()
        }
    };
    out.push_str(&skipped);
    Ok(out)
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

/// Room the searcher's buffer needs beyond the data it holds.
const READ_SLACK: usize = 64 * 1024;

/// Files kept from the first pass, by path; past it only counted, and the
/// note says to narrow the search.
pub const MAX_GREP_FILES: usize = 100_000;

/// One search: the matcher, how to search, what was left out.
struct Search {
    matcher: RegexMatcher,
    builder: SearcherBuilder,
    line_chars: usize,
    /// The multiline cap, for a multiline search.
    multiline_bytes: Option<u64>,
    stop: Stop,
    skipped: Mutex<Skipped>,
}

/// What the first pass found: the first [`MAX_GREP_FILES`] matching files by
/// path, and totals over all.
#[derive(Default)]
struct Found {
    files: Vec<FileHits>,
    total_files: usize,
    total_matches: u64,
}

impl Search {
    /// Search `file`, returning its hits if it matched. A file that cannot
    /// be searched is recorded in `skipped` with the reason.
    fn file(
        &self,
        searcher: &mut Searcher,
        file: &File,
        relative: PathBuf,
        keep: Keep,
    ) -> Option<FileHits> {
        if let Some(cap) = self.multiline_bytes {
            let size = file.metadata().map_or(0, |m| m.len());
            if size > cap {
                self.skip(
                    &relative,
                    format!(
                        "{}, more than the {} a multiline search reads",
                        human_size(size),
                        human_size(cap)
                    ),
                );
                return None;
            }
        }
        let mut hits = FileHits {
            relative,
            ..FileHits::default()
        };
        let sink = Collect::new(&mut hits, keep, self.line_chars, &self.stop);
        if let Err(e) = searcher.search_file(&self.matcher, file, sink) {
            let reason = if e.to_string().contains("allocation limit") {
                match self.multiline_bytes {
                    Some(cap) => {
                        format!("more than the {} a multiline search reads", human_size(cap))
                    }
                    None => "a line longer than the search holds".to_owned(),
                }
            } else {
                format!("cannot be read: {e}")
            };
            self.skip(&hits.relative, reason);
            return None;
        }
        (hits.matches > 0).then_some(hits)
    }

    fn skip(&self, relative: &Path, reason: String) {
        self.skipped
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .add(relative, reason);
    }

    fn one_file(&self, file: File, keep: Keep) -> Found {
        let mut found = Found::default();
        if let Some(hits) = self.file(&mut self.builder.build(), &file, PathBuf::new(), keep) {
            found.total_files = 1;
            found.total_matches = hits.matches;
            found.files.push(hits);
        }
        found
    }

    /// Search every file below `root` in parallel; hits sorted by path.
    fn tree(
        &self,
        root: &SearchRoot,
        keep: Keep,
        file_type: Option<&str>,
        filter: Option<&PathGlob>,
    ) -> Result<Found, ToolError> {
        let mut walker = root.walker();
        if let Some(name) = file_type {
            walker.types(file_types(name)?);
        }
        let first: Mutex<First> = Mutex::new(First::default());
        walker.build_parallel().run(|| {
            let first = &first;
            let mut searcher = self.builder.build();
            Box::new(move |entry| {
                if self.stop.is_set() {
                    return WalkState::Quit;
                }
                let Ok(entry) = entry else {
                    return WalkState::Continue;
                };
                // Refused by type before opening: only regular files.
                if !entry.file_type().is_some_and(|t| t.is_file()) {
                    return WalkState::Continue;
                }
                let relative = root.relative(entry.path());
                if filter.is_some_and(|f| !f.is_match(relative)) {
                    return WalkState::Continue;
                }
                // Opened below the searched directory's handle, not by path;
                // a FIFO swapped in since the listing cannot block the open
                // (`O_NONBLOCK`) and is refused before it is read.
                let Ok(file) = root.dir.open_file(relative) else {
                    return WalkState::Continue;
                };
                if let Some(hits) = self.file(&mut searcher, &file, relative.to_path_buf(), keep) {
                    first
                        .lock()
                        .unwrap_or_else(|poisoned| poisoned.into_inner())
                        .offer(hits);
                }
                WalkState::Continue
            })
        });
        Ok(first
            .into_inner()
            .unwrap_or_else(|p| p.into_inner())
            .into_found())
    }
}

/// The matching files with the smallest paths, at most [`MAX_GREP_FILES`].
#[derive(Default)]
struct First {
    heap: BinaryHeap<FileHits>,
    total_files: usize,
    total_matches: u64,
}

impl First {
    fn offer(&mut self, hits: FileHits) {
        self.total_files += 1;
        self.total_matches += hits.matches;
        self.heap.push(hits);
        if self.heap.len() > MAX_GREP_FILES {
            self.heap.pop();
        }
    }

    fn into_found(self) -> Found {
        Found {
            files: self.heap.into_sorted_vec(),
            total_files: self.total_files,
            total_matches: self.total_matches,
        }
    }
}

/// Files left out of a search, and why: the first few named.
#[derive(Default)]
struct Skipped {
    count: usize,
    named: Vec<String>,
}

impl Skipped {
    const NAMED: usize = 5;

    fn add(&mut self, relative: &Path, reason: String) {
        self.count += 1;
        if self.named.len() < Self::NAMED {
            self.named
                .push(format!("`{}` ({reason})", relative.display()));
        }
    }

    /// A note for the end of the output, or nothing.
    fn note(&self) -> String {
        if self.count == 0 {
            return String::new();
        }
        let more = if self.count > self.named.len() {
            format!(" and {} more", self.count - self.named.len())
        } else {
            String::new()
        };
        format!("\n(not searched: {}{more})\n", self.named.join(", "))
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
    fn files(&self, found: &Found, name: &dyn Fn(&Path) -> String) -> String {
        let mut out = String::new();
        let mut shown = 0;
        for file in found.files.iter().skip(self.offset).take(self.limit) {
            let line = name(&file.relative);
            if !out.is_empty() && out.len() + line.len() + 1 > self.max_chars {
                break;
            }
            out.push_str(&line);
            out.push('\n');
            shown += 1;
        }
        self.note(&mut out, shown, found, "files");
        out
    }

    fn counts(&self, found: &Found, name: &dyn Fn(&Path) -> String) -> String {
        let mut out = String::new();
        let mut shown = 0;
        for file in found.files.iter().skip(self.offset).take(self.limit) {
            let line = format!("{}:{}\n", name(&file.relative), file.matches);
            if !out.is_empty() && out.len() + line.len() > self.max_chars {
                break;
            }
            out.push_str(&line);
            shown += 1;
        }
        self.note(&mut out, shown, found, "files");
        out.push_str(&format!(
            "(total: {} matching lines in {} files)\n",
            found.total_matches, found.total_files
        ));
        out
    }

    /// Say how to see more when this page is not everything.
    fn note(&self, out: &mut String, shown: usize, found: &Found, what: &str) {
        let total = found.total_files;
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
        if total > found.files.len() {
            out.push_str(&format!(
                "(only the first {} files by path are kept; narrow the path, glob or type to see the rest)\n",
                found.files.len()
            ));
        }
    }
}

/// Content mode's output, built one file at a time within the page's limit
/// and character cap.
struct Content<'p> {
    page: &'p Page,
    out: String,
    total: u64,
    emitted: usize,
    capped: bool,
}

impl<'p> Content<'p> {
    fn new(page: &'p Page, total: u64) -> Self {
        Self {
            page,
            out: String::new(),
            total,
            emitted: 0,
            capped: false,
        }
    }

    fn is_full(&self) -> bool {
        self.capped || self.emitted >= self.page.limit
    }

    /// Matching lines the page still shows.
    fn room(&self) -> usize {
        self.page.limit.saturating_sub(self.emitted)
    }

    /// Append one line, unless the cap is reached.
    fn emit(&mut self, line: &Line) -> bool {
        if self.out.len() > self.page.max_chars {
            self.capped = true;
            return false;
        }
        let mark = if line.is_match { ':' } else { '-' };
        self.out
            .push_str(&format!("{}{mark}{}\n", line.number, line.text));
        true
    }

    /// Show the lines of one file, whose first kept match is match number
    /// `seen + 1` of the whole search.
    fn add(&mut self, file: &FileHits, seen: u64, name: &str) {
        let mut header = false;
        let mut pending: Vec<&Line> = Vec::new();
        let mut trailing = false;
        let mut gap = false;
        let mut seen = seen;
        for item in &file.items {
            match item {
                Item::Break => {
                    pending.clear();
                    trailing = false;
                    gap = header;
                }
                Item::Line(line) if !line.is_match => {
                    if trailing {
                        if !self.emit(line) {
                            return;
                        }
                    } else {
                        pending.push(line);
                    }
                }
                Item::Line(line) => {
                    seen += 1;
                    if seen <= self.page.offset as u64 {
                        pending.clear();
                        continue;
                    }
                    if self.is_full() {
                        return;
                    }
                    if self.out.len() > self.page.max_chars {
                        self.capped = true;
                        return;
                    }
                    if !header {
                        if !self.out.is_empty() {
                            self.out.push('\n');
                        }
                        self.out.push_str(name);
                        self.out.push('\n');
                        header = true;
                    } else if gap {
                        self.out.push_str("--\n");
                    }
                    gap = false;
                    for context in pending.drain(..) {
                        if !self.emit(context) {
                            return;
                        }
                    }
                    if !self.emit(line) {
                        return;
                    }
                    self.emitted += 1;
                    trailing = true;
                }
            }
        }
    }

    fn finish(mut self) -> String {
        let total = usize::try_from(self.total).unwrap_or(usize::MAX);
        let offset = self.page.offset;
        let end = offset + self.emitted;
        if self.capped {
            self.out.push_str(&format!(
                "(output capped at {} characters; showing matches {}-{end} of {total}; call grep with offset={end} to continue)\n",
                self.page.max_chars,
                offset + 1,
            ));
        } else if offset >= total {
            self.out.push_str(&format!(
                "(offset {offset} is past the end: there are {total} matching lines)\n"
            ));
        } else if end < total {
            self.out.push_str(&format!(
                "(showing {}-{end} of {total} matching lines; call grep with offset={end} to see more)\n",
                offset + 1
            ));
        }
        self.out
    }
}

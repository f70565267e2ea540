//! What `grep` keeps of one file while searching it.

use std::io;
use std::path::PathBuf;

use grep_searcher::{Searcher, Sink, SinkContext, SinkMatch};

use crate::fs::blocking::Stop;

/// One line to show.
#[derive(Debug, Clone)]
pub struct Line {
    /// 1-based.
    pub number: u64,
    /// The text, without its line ending, cut to the line cap.
    pub text: String,
    /// A matching line, or context around one.
    pub is_match: bool,
}

/// A line, or a gap between groups of lines.
#[derive(Debug, Clone)]
pub enum Item {
    /// A line to show.
    Line(Line),
    /// Lines were left out here.
    Break,
}

/// What one file gave.
#[derive(Debug, Clone, Default)]
pub struct FileHits {
    /// Below the searched directory.
    pub relative: PathBuf,
    /// Matching lines (all of them, unless the search stopped early).
    pub matches: u64,
    /// The lines kept, for content mode.
    pub items: Vec<Item>,
}

// Ordered by path alone: the first pass keeps the files with the smallest.
impl PartialEq for FileHits {
    fn eq(&self, other: &Self) -> bool {
        self.relative == other.relative
    }
}

impl Eq for FileHits {}

impl PartialOrd for FileHits {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for FileHits {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.relative.cmp(&other.relative)
    }
}

/// How much of a file the sink keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keep {
    /// Stop at the first match: only whether it matches.
    First,
    /// Count every matching line; keep none.
    Count,
    /// Keep matching lines `skip + 1 ..= upto` and their context, holding
    /// at most about `bytes` of text; stop searching after them.
    Lines {
        /// Matching lines passed over first (an earlier page).
        skip: u64,
        /// The last matching line kept.
        upto: u64,
        /// Text kept at most, in bytes (one line more may pass it).
        bytes: usize,
    },
}

/// A [`Sink`] filling a [`FileHits`].
pub struct Collect<'h> {
    hits: &'h mut FileHits,
    keep: Keep,
    line_chars: usize,
    stop: &'h Stop,
    /// Bytes of text kept so far.
    kept: usize,
}

impl<'h> Collect<'h> {
    /// A sink keeping `keep` of the file in `hits`, cutting lines longer
    /// than `line_chars` and quitting when `stop` is set.
    pub fn new(hits: &'h mut FileHits, keep: Keep, line_chars: usize, stop: &'h Stop) -> Self {
        Self {
            hits,
            keep,
            line_chars,
            stop,
            kept: 0,
        }
    }

    fn keeping(&self) -> bool {
        matches!(self.keep, Keep::Lines { skip, upto, bytes }
            if self.hits.matches >= skip && self.hits.matches <= upto && self.kept <= bytes)
    }

    /// Whether to read on: not once everything to keep is kept.
    fn more(&self) -> bool {
        if self.stop.is_set() {
            return false;
        }
        match self.keep {
            Keep::First => self.hits.matches == 0,
            Keep::Count => true,
            Keep::Lines { upto, bytes, .. } => self.hits.matches <= upto && self.kept <= bytes,
        }
    }

    fn push(&mut self, number: u64, bytes: &[u8], is_match: bool) {
        let text = String::from_utf8_lossy(bytes);
        let text = text.trim_end_matches(['\n', '\r']);
        let text = match text.char_indices().nth(self.line_chars) {
            Some((cut, _)) => format!("{}… [line cut]", &text[..cut]),
            None => text.to_owned(),
        };
        self.kept += text.len();
        self.hits.items.push(Item::Line(Line {
            number,
            text,
            is_match,
        }));
    }
}

impl Sink for Collect<'_> {
    type Error = io::Error;

    fn matched(&mut self, _: &Searcher, found: &SinkMatch<'_>) -> Result<bool, io::Error> {
        let first = found.line_number().unwrap_or(0);
        for (index, line) in found.lines().enumerate() {
            self.hits.matches += 1;
            if self.keeping() && self.hits.matches > self.skip() {
                self.push(first + index as u64, line, true);
            }
        }
        Ok(self.more())
    }

    fn context(&mut self, _: &Searcher, context: &SinkContext<'_>) -> Result<bool, io::Error> {
        if self.keeping() {
            let number = context.line_number().unwrap_or(0);
            self.push(number, context.bytes(), false);
        }
        Ok(self.more())
    }

    fn context_break(&mut self, _: &Searcher) -> Result<bool, io::Error> {
        if self.keeping() && !self.hits.items.is_empty() {
            self.hits.items.push(Item::Break);
        }
        Ok(self.more())
    }
}

impl Collect<'_> {
    fn skip(&self) -> u64 {
        match self.keep {
            Keep::Lines { skip, .. } => skip,
            _ => 0,
        }
    }
}

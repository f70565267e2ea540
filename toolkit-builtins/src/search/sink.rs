//! What `grep` keeps of one file while searching it.

use std::io;
use std::path::PathBuf;

use grep_searcher::{Searcher, Sink, SinkContext, SinkMatch};

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
    /// Matching lines (all of them, even those not kept).
    pub matches: u64,
    /// The lines kept, for content mode.
    pub items: Vec<Item>,
}

/// How much of a file the sink keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keep {
    /// Stop at the first match: only whether it matches.
    First,
    /// Count every matching line; keep none.
    Count,
    /// Keep up to this many matching lines (and their context); count all.
    Lines(u64),
}

/// A [`Sink`] filling a [`FileHits`].
pub struct Collect<'h> {
    pub hits: &'h mut FileHits,
    pub keep: Keep,
    pub line_chars: usize,
}

impl Collect<'_> {
    fn keeping(&self) -> bool {
        matches!(self.keep, Keep::Lines(max) if self.hits.matches <= max)
    }

    fn push(&mut self, number: u64, bytes: &[u8], is_match: bool) {
        let text = String::from_utf8_lossy(bytes);
        let text = text.trim_end_matches(['\n', '\r']);
        let text = match text.char_indices().nth(self.line_chars) {
            Some((cut, _)) => format!("{}… [line cut]", &text[..cut]),
            None => text.to_owned(),
        };
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
            if self.keeping() {
                self.push(first + index as u64, line, true);
            }
        }
        Ok(self.keep != Keep::First)
    }

    fn context(&mut self, _: &Searcher, context: &SinkContext<'_>) -> Result<bool, io::Error> {
        if self.keeping() {
            let number = context.line_number().unwrap_or(0);
            self.push(number, context.bytes(), false);
        }
        Ok(true)
    }

    fn context_break(&mut self, _: &Searcher) -> Result<bool, io::Error> {
        if self.keeping() && !self.hits.items.is_empty() {
            self.hits.items.push(Item::Break);
        }
        Ok(true)
    }
}

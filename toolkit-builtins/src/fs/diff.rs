//! Diffs of a change: a unified diff of the whole file for the person
//! watching, and a compact one of the changed lines, numbered, for the model.

use std::ops::Range;
use std::time::Duration;

use similar::{ChangeTag, TextDiff};

/// How long a whole-file diff may search for the smallest one; past it the
/// diff is still correct, only less minimal. A huge file rewritten
/// everywhere would otherwise cost time quadratic in its lines.
const DIFF_TIMEOUT: Duration = Duration::from_secs(1);

/// Lines of the compact diff the model reads, at most.
pub const MAX_COMPACT_LINES: usize = 80;

/// Characters of the compact diff the model reads, at most.
pub const MAX_COMPACT_CHARS: usize = 8_000;

/// Characters of one line of the compact diff before it is cut.
const MAX_COMPACT_LINE_CHARS: usize = 400;

/// A unified diff from `old` (`None` for a new file) to `new`, with three
/// lines of context, headed `a/PATH` and `b/PATH` as git does.
pub fn unified(path: &str, old: Option<&str>, new: &str) -> String {
    let before = if old.is_some() {
        format!("a/{path}")
    } else {
        "/dev/null".to_owned()
    };
    TextDiff::configure()
        .timeout(DIFF_TIMEOUT)
        .diff_lines(old.unwrap_or(""), new)
        .unified_diff()
        .context_radius(3)
        .header(&before, &format!("b/{path}"))
        .to_string()
}

/// Lines added and removed between `old` and `new`.
pub fn line_counts(old: &str, new: &str) -> (usize, usize) {
    let diff = TextDiff::configure()
        .timeout(DIFF_TIMEOUT)
        .diff_lines(old, new);
    let mut added = 0;
    let mut removed = 0;
    for change in diff.iter_all_changes() {
        match change.tag() {
            ChangeTag::Insert => added += 1,
            ChangeTag::Delete => removed += 1,
            ChangeTag::Equal => {}
        }
    }
    (added, removed)
}

/// One replacement an edit made: the byte range it replaced in the old
/// content, and the length of the text put there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replaced {
    /// Replaced bytes of the old content.
    pub old: Range<usize>,
    /// Bytes of the new text.
    pub new_len: usize,
}

/// The changed lines of an edit, for the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compact {
    /// Removed lines as `-N|TEXT` (old numbers), added lines as `+N|TEXT`
    /// (new numbers), one line of context around each change as ` N|TEXT`
    /// (new numbers), changes apart separated by `…`; bounded, with a note
    /// when lines were left out.
    pub text: String,
    /// Lines added, over the whole edit.
    pub added: usize,
    /// Lines removed, over the whole edit.
    pub removed: usize,
}

/// The compact diff of an edit from `old` to `new`, made of the
/// `replaced` ranges (in order, not overlapping). Built from where the
/// edit was made rather than by searching for differences, so it costs time
/// linear in the file whatever was changed: each change is the whole lines
/// it touched, less the lines that read the same before and after.
pub fn compact(old: &str, new: &str, replaced: &[Replaced]) -> Compact {
    let groups = groups(old, new, replaced);
    let mut out = Out::default();
    for (index, group) in groups.iter().enumerate() {
        let previous = index.checked_sub(1).map(|i| &groups[i]);
        // The line above: shown unless the previous change ends right there
        // (its own lines are above) or it showed that line as its context.
        match previous {
            Some(p) if p.new.end == group.new.start => {}
            Some(p) if line_end(new, p.new.end) == group.new.start => {}
            _ if group.new.start == 0 => out.gap(),
            _ => {
                out.gap();
                let start = line_start(new, group.new.start - 1);
                out.line(' ', group.first_new - 1, &new[start..group.new.start]);
            }
        }
        let gone = old[group.old.clone()].split_inclusive('\n');
        for (i, line) in gone.enumerate() {
            out.line('-', group.first_old + i, line);
        }
        let came = new[group.new.clone()].split_inclusive('\n');
        for (i, line) in came.enumerate() {
            out.line('+', group.first_new + i, line);
        }
        // The line below, unless the next change starts there.
        let next = groups.get(index + 1);
        if group.new.end < new.len() && next.is_none_or(|n| n.new.start != group.new.end) {
            let end = line_end(new, group.new.end);
            out.line(' ', group.first_new + group.added, &new[group.new.end..end]);
        }
    }
    Compact {
        text: out.finish(),
        added: groups.iter().map(|g| g.added).sum(),
        removed: groups.iter().map(|g| g.removed).sum(),
    }
}

/// Lines one change replaced: whole lines, less those that read the same
/// before and after.
struct Group {
    /// The removed lines, in the old content.
    old: Range<usize>,
    /// The added lines, in the new content.
    new: Range<usize>,
    /// The number of the first removed line, in the old content.
    first_old: usize,
    /// The number of the first added line (or of the line after a
    /// deletion), in the new content.
    first_new: usize,
    added: usize,
    removed: usize,
}

/// The changes of an edit, in order; replacements that share a line are
/// one change.
fn groups(old: &str, new: &str, replaced: &[Replaced]) -> Vec<Group> {
    let mut old_lines = LineCursor::new(old);
    let mut new_lines = LineCursor::new(new);
    let mut groups = Vec::new();
    for hunk in hunks(old, replaced) {
        let before: Vec<&str> = old[hunk.old.clone()].split_inclusive('\n').collect();
        let after: Vec<&str> = new[hunk.new.clone()].split_inclusive('\n').collect();
        let same_start = before
            .iter()
            .zip(&after)
            .take_while(|(a, b)| a == b)
            .count();
        let same_end = before[same_start..]
            .iter()
            .rev()
            .zip(after[same_start..].iter().rev())
            .take_while(|(a, b)| a == b)
            .count();
        let gone = &before[same_start..before.len() - same_end];
        let came = &after[same_start..after.len() - same_end];
        if gone.is_empty() && came.is_empty() {
            continue;
        }
        let bytes = |lines: &[&str]| lines.iter().map(|l| l.len()).sum::<usize>();
        let old_start = hunk.old.start + bytes(&before[..same_start]);
        let new_start = hunk.new.start + bytes(&after[..same_start]);
        groups.push(Group {
            old: old_start..old_start + bytes(gone),
            new: new_start..new_start + bytes(came),
            first_old: old_lines.line_at(old_start),
            first_new: new_lines.line_at(new_start),
            added: came.len(),
            removed: gone.len(),
        });
    }
    groups
}

/// A stretch of whole lines one or more replacements touched.
struct Hunk {
    old: Range<usize>,
    new: Range<usize>,
}

/// The whole lines each replacement touched, merged where they overlap, with
/// where those lines are in the new content: the text around a replacement
/// is untouched, so its position only moves by what the replacements before
/// it added or removed.
fn hunks(old: &str, replaced: &[Replaced]) -> Vec<Hunk> {
    let mut hunks: Vec<Hunk> = Vec::new();
    let mut shift: isize = 0;
    for r in replaced {
        let start = line_start(old, r.old.start);
        let last = if r.old.is_empty() {
            r.old.start
        } else {
            r.old.end - 1
        };
        let mut end = line_end(old, last).max(r.old.end);
        if end == r.old.end && !r.old.is_empty() && end < old.len() {
            // The replacement took a line break, and its text may not put
            // one back: the next line may now be part of this one.
            end = line_end(old, end);
        }
        let new_start = start.saturating_add_signed(shift);
        shift += r.new_len as isize - r.old.len() as isize;
        let new_end = end.saturating_add_signed(shift);
        match hunks.last_mut() {
            // A line two replacements share is one change.
            Some(hunk) if start < hunk.old.end => {
                hunk.old.end = end;
                hunk.new.end = new_end;
            }
            _ => hunks.push(Hunk {
                old: start..end,
                new: new_start..new_end,
            }),
        }
    }
    hunks
}

/// Where the line holding byte `at` starts.
fn line_start(text: &str, at: usize) -> usize {
    memchr::memrchr(b'\n', &text.as_bytes()[..at]).map_or(0, |i| i + 1)
}

/// Where the line holding byte `at` ends, after its `\n`.
fn line_end(text: &str, at: usize) -> usize {
    match text.as_bytes().get(at..) {
        Some(rest) => memchr::memchr(b'\n', rest).map_or(text.len(), |i| at + i + 1),
        None => text.len(),
    }
}

/// Line numbers of increasing byte offsets, counted once.
struct LineCursor<'t> {
    text: &'t str,
    at: usize,
    line: usize,
}

impl<'t> LineCursor<'t> {
    fn new(text: &'t str) -> Self {
        Self {
            text,
            at: 0,
            line: 1,
        }
    }

    /// The 1-based line of byte `at`, no earlier than the last one asked.
    fn line_at(&mut self, at: usize) -> usize {
        if at > self.at {
            self.line += memchr::memchr_iter(b'\n', &self.text.as_bytes()[self.at..at]).count();
            self.at = at;
        }
        self.line
    }
}

/// The compact diff's text within its bounds.
#[derive(Default)]
struct Out {
    text: String,
    lines: usize,
    left_out: usize,
    /// Whether a change was written, so the next needs a separator.
    started: bool,
}

impl Out {
    fn gap(&mut self) {
        if self.started && self.left_out == 0 && self.lines < MAX_COMPACT_LINES {
            self.push("…\n");
        }
        self.started = true;
    }

    fn line(&mut self, sign: char, number: usize, text: &str) {
        let text = text.trim_end_matches(['\n', '\r']);
        let line = match text.char_indices().nth(MAX_COMPACT_LINE_CHARS) {
            Some((cut, _)) => format!("{sign}{number}|{}… [line cut]\n", &text[..cut]),
            None => format!("{sign}{number}|{text}\n"),
        };
        if sign != ' ' && self.left_out > 0 {
            self.left_out += 1;
        } else if self.lines >= MAX_COMPACT_LINES
            || self.text.len() + line.len() > MAX_COMPACT_CHARS
        {
            // Context lines past the bound are not worth a mention.
            if sign != ' ' {
                self.left_out += 1;
            }
        } else {
            self.push(&line);
        }
    }

    fn push(&mut self, line: &str) {
        self.text.push_str(line);
        self.lines += 1;
    }

    fn finish(mut self) -> String {
        if self.left_out > 0 {
            self.text.push_str(&format!(
                "(… {} more changed lines not shown; read_file shows the file as it is now)\n",
                self.left_out
            ));
        }
        self.text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The compact diff of replacing each `(from, to)` once, in order.
    fn edit(old: &str, changes: &[(&str, &str)]) -> (String, Compact) {
        let mut replaced = Vec::new();
        let mut new = String::new();
        let mut at = 0;
        for (from, to) in changes {
            let start = at + old[at..].find(from).unwrap();
            new.push_str(&old[at..start]);
            new.push_str(to);
            replaced.push(Replaced {
                old: start..start + from.len(),
                new_len: to.len(),
            });
            at = start + from.len();
        }
        new.push_str(&old[at..]);
        let compact = compact(old, &new, &replaced);
        (new, compact)
    }

    #[test]
    fn the_compact_diff_numbers_the_changed_lines() {
        let (_, diff) = edit("a\nb\nc\nd\n", &[("b\n", "B\nB2\n")]);
        assert_eq!(diff.text, " 1|a\n-2|b\n+2|B\n+3|B2\n 4|c\n");
        assert_eq!((diff.added, diff.removed), (2, 1));
        // A word inside a line: the whole line, before and after.
        let (_, diff) = edit("let x = 1;\nlet y = 2;\n", &[("y", "z")]);
        assert_eq!(diff.text, " 1|let x = 1;\n-2|let y = 2;\n+2|let z = 2;\n");
        // Lines the same before and after are not shown as changed.
        let (_, diff) = edit("a\nb\nc\n", &[("a\nb\nc", "a\nX\nc")]);
        assert_eq!(diff.text, " 1|a\n-2|b\n+2|X\n 3|c\n");
        // A deletion, and an insertion at the very end.
        let (_, diff) = edit("a\nb\nc\n", &[("b\n", "")]);
        assert_eq!(diff.text, " 1|a\n-2|b\n 2|c\n");
        let (_, diff) = edit("a\n", &[("a\n", "a\nz\n")]);
        assert_eq!(diff.text, " 1|a\n+2|z\n");
        // A line break replaced by none joins two lines, and shows it.
        let (_, diff) = edit("a\nb\nc\nd\n", &[("b\n", "B")]);
        assert_eq!(diff.text, " 1|a\n-2|b\n-3|c\n+2|Bc\n 3|d\n");
    }

    #[test]
    fn changes_apart_are_separated_and_line_numbers_move() {
        let old = "1\n2\n3\n4\n5\n6\n7\n";
        let (_, diff) = edit(old, &[("2\n", "2a\n2b\n"), ("6", "six")]);
        assert_eq!(
            diff.text,
            " 1|1\n-2|2\n+2|2a\n+3|2b\n 4|3\n…\n 6|5\n-6|6\n+7|six\n 8|7\n"
        );
        // Two changes on one line are one change.
        let (_, diff) = edit("a b c\n", &[("a", "A"), ("c", "C")]);
        assert_eq!(diff.text, "-1|a b c\n+1|A b C\n");
        // Changes on lines next to each other follow each other; one line
        // between them is shown once.
        let (_, diff) = edit("a\nb\nc\nd\n", &[("a", "A"), ("b", "B"), ("d", "D")]);
        assert_eq!(diff.text, "-1|a\n+1|A\n-2|b\n+2|B\n 3|c\n-4|d\n+4|D\n");
    }

    #[test]
    fn the_compact_diff_is_bounded() {
        let old: String = (0..1000).map(|i| format!("line {i}\n")).collect();
        let changes: Vec<(String, String)> = (0..1000)
            .map(|i| (format!("line {i}\n"), format!("LINE {i}\n")))
            .collect();
        let changes: Vec<(&str, &str)> = changes
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect();
        let (_, diff) = edit(&old, &changes);
        assert_eq!((diff.added, diff.removed), (1000, 1000));
        assert!(
            diff.text.lines().count() <= MAX_COMPACT_LINES + 1,
            "{}",
            diff.text
        );
        assert!(diff.text.len() <= MAX_COMPACT_CHARS + 200);
        assert!(
            diff.text.ends_with(
                "more changed lines not shown; read_file shows the file as it is now)\n"
            ),
            "{}",
            diff.text
        );
        let long = "x".repeat(5000);
        let (_, diff) = edit(&format!("{long}\n"), &[("x", "y")]);
        assert!(diff.text.contains("… [line cut]"), "{}", diff.text);
        assert!(diff.text.len() < 1000);
    }

    #[test]
    fn diffs_are_unified_with_git_headers() {
        let diff = unified("a.txt", Some("one\ntwo\n"), "one\n2\n");
        assert!(
            diff.starts_with("--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n"),
            "{diff}"
        );
        assert!(diff.contains("-two\n+2\n"), "{diff}");
        assert!(unified("n.txt", None, "x\n").starts_with("--- /dev/null\n+++ b/n.txt\n"));
        assert_eq!(line_counts("a\nb\n", "a\nc\nd\n"), (2, 1));
    }
}

//! Finding the text `edit_file` is asked to replace: exactly first, then
//! ignoring differences in whitespace, and when neither finds it, the most
//! similar passage to show the model.

use std::ops::Range;
use std::time::Duration;

use similar::TextDiff;

/// How the text was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum How {
    /// Byte for byte.
    Exact,
    /// Byte for byte once `\n` in the search text became the file's `\r\n`.
    Crlf,
    /// The same words, with different whitespace between them.
    Whitespace,
}

/// Where the text occurs, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// Byte ranges in the file, not overlapping.
    pub ranges: Vec<Range<usize>>,
    /// How they were found.
    pub how: How,
}

/// Places `edit_file` changes at most in one call: a file of a million
/// one-letter matches would otherwise hold a range per byte.
pub const MAX_MATCHES: usize = 100_000;

/// Find `needle` in `content`: exactly, then with the file's line endings,
/// then ignoring whitespace differences. At most one more than
/// [`MAX_MATCHES`] ranges are collected: the caller refuses that many.
pub fn find(content: &str, needle: &str) -> Option<Found> {
    let exact = |needle: &str| -> Vec<Range<usize>> {
        content
            .match_indices(needle)
            .take(MAX_MATCHES + 1)
            .map(|(start, text)| start..start + text.len())
            .collect()
    };
    let ranges = exact(needle);
    if !ranges.is_empty() {
        return Some(Found {
            ranges,
            how: How::Exact,
        });
    }
    if content.contains("\r\n") && needle.contains('\n') && !needle.contains('\r') {
        let ranges = exact(&needle.replace('\n', "\r\n"));
        if !ranges.is_empty() {
            return Some(Found {
                ranges,
                how: How::Crlf,
            });
        }
    }
    let words: Vec<String> = needle.split_whitespace().map(regex::escape).collect();
    if words.is_empty() {
        return None;
    }
    let pattern = regex::RegexBuilder::new(&words.join(r"\s+"))
        .size_limit(1 << 22)
        .build()
        .ok()?;
    let ranges: Vec<_> = pattern
        .find_iter(content)
        .take(MAX_MATCHES + 1)
        .map(|m| m.range())
        .collect();
    (!ranges.is_empty()).then_some(Found {
        ranges,
        how: How::Whitespace,
    })
}

/// The replacement to put at `range` for a whitespace-tolerant match: the
/// match starts at the first word and ends at the last, so the new text
/// loses its leading indentation and trailing whitespace, and its lines are
/// re-indented from the model's indentation to the file's.
pub fn adapt(content: &str, range: &Range<usize>, old_text: &str, new_text: &str) -> String {
    let line_start = content[..range.start].rfind('\n').map_or(0, |i| i + 1);
    let file_indent = leading_whitespace(&content[line_start..]);
    let old_indent = old_text
        .lines()
        .find(|line| !line.trim().is_empty())
        .map_or("", leading_whitespace);
    let body = new_text.trim_start_matches([' ', '\t']).trim_end();
    let mut out = String::with_capacity(body.len());
    for (index, line) in body.split('\n').enumerate() {
        if index > 0 {
            out.push('\n');
            match line.strip_prefix(old_indent) {
                Some(rest) if old_indent != file_indent => {
                    out.push_str(file_indent);
                    out.push_str(rest);
                    continue;
                }
                _ => {}
            }
        }
        out.push_str(line);
    }
    out
}

fn leading_whitespace(line: &str) -> &str {
    let end = line
        .find(|c: char| c != ' ' && c != '\t')
        .unwrap_or(line.len());
    &line[..end]
}

/// The 1-based line a byte offset falls on.
pub fn line_of(content: &str, offset: usize) -> usize {
    memchr::memchr_iter(b'\n', &content.as_bytes()[..offset]).count() + 1
}

/// A passage of the file that resembles the text that was not found.
#[derive(Debug, Clone, PartialEq)]
pub struct Similar {
    /// First line, 1-based.
    pub first_line: usize,
    /// The passage.
    pub text: String,
    /// How alike, 0 to 1.
    pub ratio: f32,
}

/// The passage of `content` with as many lines as `needle` that is most
/// like it, if any is at least half alike.
pub fn most_similar(content: &str, needle: &str) -> Option<Similar> {
    let lines: Vec<&str> = content.lines().collect();
    let wanted = needle.lines().count().max(1);
    let first = needle.lines().map(str::trim).find(|l| !l.is_empty())?;
    let offset_in_needle = needle.lines().position(|l| l.trim() == first)?;
    // Stage one: lines like the needle's first non-blank line, cheaply.
    let mut candidates: Vec<(f32, usize)> = lines
        .iter()
        .enumerate()
        .take(50_000)
        .map(|(i, line)| (ratio(first, line.trim()), i))
        .collect();
    candidates.sort_by(|a, b| b.0.total_cmp(&a.0));
    // Stage two: whole passages around the best of them.
    candidates
        .into_iter()
        .take(5)
        .filter_map(|(_, i)| {
            let start = i.checked_sub(offset_in_needle)?;
            let end = (start + wanted).min(lines.len());
            let text = lines[start..end].join("\n");
            Some(Similar {
                first_line: start + 1,
                ratio: ratio(needle.trim_end(), &text),
                text,
            })
        })
        .max_by(|a, b| a.ratio.total_cmp(&b.ratio))
        .filter(|best| best.ratio >= 0.5)
}

fn ratio(a: &str, b: &str) -> f32 {
    TextDiff::configure()
        .timeout(Duration::from_millis(50))
        .diff_chars(a, b)
        .ratio()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_then_line_endings_then_whitespace() {
        assert_eq!(find("a b a", "a").unwrap().ranges, vec![0..1, 4..5]);
        assert_eq!(find("x\r\ny\r\n", "x\ny").unwrap().how, How::Crlf);
        let found = find("fn f() {\n    let  x = 1;\n}", "let x =\n 1;").unwrap();
        assert_eq!(found.how, How::Whitespace);
        assert_eq!(found.ranges, vec![13..24]);
        assert!(find("abc", "xyz").is_none());
        assert!(find("abc", "  ").is_none());
    }

    #[test]
    fn tolerant_replacements_take_the_file_indentation() {
        let content = "fn f() {\n        a();\n        b();\n}\n";
        let old = "    a();\n    b();\n";
        let found = find(content, old).unwrap();
        let new = adapt(content, &found.ranges[0], old, "    a();\n    c();\n");
        assert_eq!(new, "a();\n        c();");
    }

    #[test]
    fn the_most_similar_passage_is_found() {
        let content = "one\nfn compute(x: i32) -> i32 {\n    x * 2\n}\nlast\n";
        let best = most_similar(content, "fn compute(x: u32) -> u32 {\n    x * 2\n}").unwrap();
        assert_eq!(best.first_line, 2);
        assert!(best.text.starts_with("fn compute(x: i32)"));
        assert!(most_similar(content, "zzzzzzzzzzzzzzzz").is_none());
    }

    #[test]
    fn lines_are_counted_from_one() {
        assert_eq!(line_of("a\nb\nc", 0), 1);
        assert_eq!(line_of("a\nb\nc", 4), 3);
    }
}

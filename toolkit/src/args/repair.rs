//! Arguments text that is almost JSON, repaired where one reading is the
//! only one, and otherwise refused with where it went wrong.
//!
//! Models send JSON with slips a strict parser refuses. Only text that
//! serde_json refuses is looked at, and only these repairs are made:
//!
//! - a Markdown code fence around the object (```` ```json ... ``` ````) is
//!   taken off;
//! - text before the object (or before its code fence) is dropped when it
//!   is a label or prose: no brackets, backticks or double quotes in it,
//!   and a colon, if any, only at its end, after more than one word or
//!   after the one word `arguments` (`arguments:`, `Here are the
//!   arguments:`, `<tool_call>`); text after the object (or after its
//!   closing fence) is dropped when it holds no brackets or double quotes;
//! - `//` and `/* */` comments are dropped;
//! - a comma before `}` or `]` is dropped;
//! - a line break, tab or other control character written raw inside a
//!   string is escaped;
//! - a single-quoted string becomes a double-quoted one (`\'` inside it
//!   becomes `'`, `"` becomes `\"`);
//! - Python's `True`, `False` and `None` become `true`, `false`, `null`;
//! - closing brackets missing at the very end are added, only when the
//!   text ends just after a complete value: a string value, `true`,
//!   `false`, `null` or a closed object or array. Text that ends inside a
//!   string, after a comma, colon or key, or in a number (which may have
//!   been cut short) is refused.
//!
//! The repaired text must then parse as it stands; nothing else is
//! guessed, so a single-quoted string holding an apostrophe, which ends
//! the string early, leaves text that does not parse and is refused.
//! Each kind of repair made is reported once, with where it was first made
//! and how often.
//!
//! The pass is one loop over the bytes, with no recursion: brackets are
//! counted on a stack of at most 129 entries (serde_json refuses deeper
//! text anyway), and the repaired text is at most six times as long as the
//! text sent (a raw control character becomes `\u00XX`).

use serde_json::Value;

use super::Cast;
use super::node::MAX_DEPTH;

/// What a repaired payload's casts say they became.
pub(crate) const REPAIRED: &str = "repaired";

/// The longest excerpt of the text quoted in a refusal, in characters.
const EXCERPT: usize = 60;

/// The kinds of repair, in the order they are reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Fence,
    TextBefore,
    TextAfter,
    Comment,
    TrailingComma,
    SingleQuotes,
    RawControl,
    Python,
    MissingClose,
}

const KINDS: [Kind; 9] = [
    Kind::Fence,
    Kind::TextBefore,
    Kind::TextAfter,
    Kind::Comment,
    Kind::TrailingComma,
    Kind::SingleQuotes,
    Kind::RawControl,
    Kind::Python,
    Kind::MissingClose,
];

impl Kind {
    fn describe(self) -> &'static str {
        match self {
            Self::Fence => "code fence around the JSON",
            Self::TextBefore => "text before the object",
            Self::TextAfter => "text after the object",
            Self::Comment => "comment",
            Self::TrailingComma => "trailing comma",
            Self::SingleQuotes => "single-quoted string",
            Self::RawControl => "raw line break or control character in a string",
            Self::Python => "Python literal (True, False or None)",
            Self::MissingClose => "missing closing bracket at the end",
        }
    }
}

/// Parse arguments text as JSON, repairing it if it needs it.
///
/// Returns the value and one cast per kind of repair made (none for JSON
/// that parses as sent), or the reason to refuse it, with where parsing
/// failed and an excerpt of the text.
pub(super) fn parse(text: &str) -> Result<(Value, Vec<Cast>), String> {
    let strict = match serde_json::from_str(text) {
        Ok(value) => return Ok((value, Vec::new())),
        Err(e) => e,
    };
    let refuse_strict = || {
        let offset = offset_of(text, strict.line(), strict.column());
        refusal(text, &reason(&strict), offset)
    };
    let repaired = match Repairer::new(text).run() {
        Ok(Some(repaired)) => repaired,
        Ok(None) => return Err(refuse_strict()),
        Err(Stop { offset, reason }) => return Err(refusal(text, reason, offset)),
    };
    if repaired.counts.iter().all(|&(count, _)| count == 0) {
        return Err(refuse_strict());
    }
    let candidate = match String::from_utf8(repaired.out) {
        Ok(candidate) => candidate,
        // Never: only ASCII is added, removed or replaced.
        Err(_) => return Err(refuse_strict()),
    };
    match serde_json::from_str(&candidate) {
        Ok(value) => {
            let casts = KINDS
                .iter()
                .zip(&repaired.counts)
                .filter(|(_, (count, _))| *count > 0)
                .map(|(kind, &(count, at))| Cast {
                    path: String::new(),
                    from: describe_repair(text, *kind, count, at),
                    to: REPAIRED.into(),
                })
                .collect();
            Ok((value, casts))
        }
        Err(e) => {
            let at = offset_of(&candidate, e.line(), e.column());
            let offset = map_back(&repaired.marks, at).min(text.len());
            Err(refusal(text, &reason(&e), offset))
        }
    }
}

/// `trailing comma at line 1, column 9 (2 times)`.
fn describe_repair(text: &str, kind: Kind, count: usize, at: usize) -> String {
    let (line, column) = line_column(text, at);
    let times = if count > 1 {
        format!(" ({count} times)")
    } else {
        String::new()
    };
    format!("{} at line {line}, column {column}{times}", kind.describe())
}

/// Why a repair was not made: where in the text sent, and what was wrong.
struct Stop {
    offset: usize,
    reason: &'static str,
}

/// The repaired text, and where each of its bytes came from.
struct Repaired {
    out: Vec<u8>,
    /// `(out, in)`: from byte `out` of the repaired text on, bytes come
    /// from the text sent at `in` onwards, up to the next mark.
    marks: Vec<(usize, usize)>,
    /// How often each kind of repair was made, and where first.
    counts: [(usize, usize); KINDS.len()],
}

/// What the last bytes written were, to tell a trailing comma and a
/// complete value at the end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token {
    None,
    Open,
    Close,
    Comma,
    Colon,
    Str,
    Number,
    Literal,
    Other,
}

struct Repairer<'a> {
    text: &'a str,
    bytes: &'a [u8],
    i: usize,
    out: Vec<u8>,
    marks: Vec<(usize, usize)>,
    counts: [(usize, usize); KINDS.len()],
    stack: Vec<u8>,
    last: Token,
    before_last: Token,
    /// Where the last comma was written, and where it was sent.
    last_comma: (usize, usize),
    fenced: bool,
}

impl<'a> Repairer<'a> {
    fn new(text: &'a str) -> Self {
        Self {
            text,
            bytes: text.as_bytes(),
            i: 0,
            out: Vec::with_capacity(text.len() + 8),
            marks: Vec::new(),
            counts: [(0, 0); KINDS.len()],
            stack: Vec::new(),
            last: Token::None,
            before_last: Token::None,
            last_comma: (0, 0),
            fenced: false,
        }
    }

    fn note(&mut self, kind: Kind, at: usize) {
        let index = KINDS.iter().position(|k| *k == kind).unwrap_or(0);
        let slot = &mut self.counts[index];
        if slot.0 == 0 {
            slot.1 = at;
        }
        slot.0 += 1;
    }

    /// After an edit: from here on, output bytes come from `self.i`.
    fn mark(&mut self) {
        self.marks.push((self.out.len(), self.i));
    }

    fn token(&mut self, token: Token) {
        self.before_last = self.last;
        self.last = token;
    }

    /// The text repaired, `None` when it holds no object to repair.
    fn run(mut self) -> Result<Option<Repaired>, Stop> {
        let Some(start) = self.bytes.iter().position(|&b| b == b'{') else {
            return Ok(None);
        };
        if !self.head(start) {
            return Ok(None);
        }
        self.i = start;
        self.mark();
        let n = self.bytes.len();
        while self.i < n {
            let b = self.bytes[self.i];
            match b {
                b'{' | b'[' => {
                    if self.stack.len() > MAX_DEPTH {
                        return Ok(None);
                    }
                    self.stack.push(b);
                    self.out.push(b);
                    self.i += 1;
                    self.token(Token::Open);
                }
                b'}' | b']' => {
                    let opener = if b == b'}' { b'{' } else { b'[' };
                    if self.stack.last() != Some(&opener) {
                        // Mismatched: left for the parser to report.
                        self.out.extend_from_slice(&self.bytes[self.i..]);
                        return Ok(Some(self.finish()));
                    }
                    if self.last == Token::Comma {
                        let (out, at) = self.last_comma;
                        self.out[out] = b' ';
                        self.note(Kind::TrailingComma, at);
                    }
                    self.stack.pop();
                    self.out.push(b);
                    self.i += 1;
                    self.token(Token::Close);
                    if self.stack.is_empty() {
                        self.tail();
                        return Ok(Some(self.finish()));
                    }
                }
                b',' => {
                    if matches!(self.last, Token::Comma | Token::Open) {
                        return Err(Stop {
                            offset: self.i,
                            reason: "comma with no value before it",
                        });
                    }
                    self.last_comma = (self.out.len(), self.i);
                    self.out.push(b);
                    self.i += 1;
                    self.token(Token::Comma);
                }
                b':' => {
                    self.out.push(b);
                    self.i += 1;
                    self.token(Token::Colon);
                }
                b'"' | b'\'' => self.string(b)?,
                b'/' if matches!(self.bytes.get(self.i + 1), Some(b'/' | b'*')) => {
                    self.comment()?;
                }
                b' ' | b'\t' | b'\n' | b'\r' => {
                    self.out.push(b);
                    self.i += 1;
                }
                _ => self.word(),
            }
        }
        self.close()?;
        Ok(Some(self.finish()))
    }

    fn finish(self) -> Repaired {
        Repaired {
            out: self.out,
            marks: self.marks,
            counts: self.counts,
        }
    }

    /// Whether the text before the object, `text[..start]`, may be dropped:
    /// a label or prose, then a code fence's opening line.
    fn head(&mut self, start: usize) -> bool {
        let mut label = &self.text[..start];
        if let Some(fence) = label.rfind("```") {
            let info = &label[fence + 3..];
            if !info
                .trim()
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
            {
                return false;
            }
            self.fenced = true;
            self.note(Kind::Fence, fence);
            label = &label[..fence];
        }
        let label = label.trim();
        if label.is_empty() {
            return true;
        }
        if label
            .bytes()
            .any(|b| matches!(b, b'"' | b'[' | b']' | b'}' | b'`'))
        {
            return false;
        }
        if let Some(colon) = label.find(':') {
            let before = label[..colon].trim_end();
            let ends_there = colon == label.len() - 1;
            let prose = before.contains(char::is_whitespace);
            let quoted = before.ends_with('\'');
            if !ends_there || quoted || !(prose || before.eq_ignore_ascii_case("arguments")) {
                return false;
            }
        }
        let at = label.as_ptr() as usize - self.text.as_ptr() as usize;
        self.note(Kind::TextBefore, at);
        true
    }

    /// After the object closed: a fence's closing line and prose are
    /// dropped; anything else is left for the parser to report.
    fn tail(&mut self) {
        let rest = &self.text[self.i..];
        let mut after = rest.trim();
        if self.fenced
            && let Some(inner) = after.strip_prefix("```")
        {
            after = inner.trim();
        }
        if after.is_empty() {
            return;
        }
        if after
            .bytes()
            .any(|b| matches!(b, b'"' | b'{' | b'}' | b'[' | b']'))
        {
            self.out.extend_from_slice(rest.as_bytes());
            return;
        }
        let offset = self.i + (after.as_ptr() as usize - rest.as_ptr() as usize);
        self.note(Kind::TextAfter, offset);
    }

    /// A string from `self.i`, double- or single-quoted, written
    /// double-quoted with raw control characters escaped.
    fn string(&mut self, quote: u8) -> Result<(), Stop> {
        let start = self.i;
        if quote == b'\'' {
            self.note(Kind::SingleQuotes, start);
        }
        self.out.push(b'"');
        self.i += 1;
        loop {
            let Some(&b) = self.bytes.get(self.i) else {
                return Err(Stop {
                    offset: start,
                    reason: "string never closed (a string cut short is not completed)",
                });
            };
            match b {
                _ if b == quote => {
                    self.out.push(b'"');
                    self.i += 1;
                    break;
                }
                b'\\' => {
                    let Some(&next) = self.bytes.get(self.i + 1) else {
                        self.i += 1;
                        continue;
                    };
                    if quote == b'\'' && next == b'\'' {
                        self.out.push(b'\'');
                        self.i += 2;
                        self.mark();
                    } else {
                        self.out.extend_from_slice(&[b'\\', next]);
                        self.i += 2;
                    }
                }
                b'"' => {
                    // Only inside a single-quoted string.
                    self.out.extend_from_slice(b"\\\"");
                    self.i += 1;
                    self.mark();
                }
                0..0x20 => {
                    self.note(Kind::RawControl, self.i);
                    match b {
                        b'\n' => self.out.extend_from_slice(b"\\n"),
                        b'\r' => self.out.extend_from_slice(b"\\r"),
                        b'\t' => self.out.extend_from_slice(b"\\t"),
                        _ => {
                            const HEX: &[u8; 16] = b"0123456789abcdef";
                            self.out.extend_from_slice(b"\\u00");
                            self.out.push(HEX[usize::from(b >> 4)]);
                            self.out.push(HEX[usize::from(b & 0xf)]);
                        }
                    }
                    self.i += 1;
                    self.mark();
                }
                _ => {
                    self.out.push(b);
                    self.i += 1;
                }
            }
        }
        self.token(Token::Str);
        if quote == b'\'' {
            // An apostrophe inside the string ended it early: refused
            // here, where it happened, rather than where parsing fails.
            let next = self.bytes[self.i..]
                .iter()
                .find(|b| !b.is_ascii_whitespace());
            if !matches!(next, None | Some(b',' | b'}' | b']' | b':' | b'/')) {
                return Err(Stop {
                    offset: self.i - 1,
                    reason: "single-quoted string ended early, by an apostrophe in it or a \
                             missing comma (write strings in double quotes)",
                });
            }
        }
        Ok(())
    }

    /// A `//` or `/* */` comment from `self.i`, dropped.
    fn comment(&mut self) -> Result<(), Stop> {
        let start = self.i;
        let rest = &self.bytes[start + 2..];
        if self.bytes[start + 1] == b'/' {
            let end = rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
            self.i = start + 2 + end;
        } else {
            let Some(end) = rest.windows(2).position(|w| w == b"*/") else {
                return Err(Stop {
                    offset: start,
                    reason: "comment never closed",
                });
            };
            self.i = start + 2 + end + 2;
        }
        self.note(Kind::Comment, start);
        self.mark();
        Ok(())
    }

    /// A bare word: a number, a literal, or something for the parser to
    /// refuse. Python's literals become JSON's.
    fn word(&mut self) {
        let start = self.i;
        let n = self.bytes.len();
        let mut end = start + 1;
        while end < n
            && !matches!(
                self.bytes[end],
                b' ' | b'\t'
                    | b'\n'
                    | b'\r'
                    | b'{'
                    | b'}'
                    | b'['
                    | b']'
                    | b':'
                    | b','
                    | b'"'
                    | b'\''
            )
            && !(self.bytes[end] == b'/' && matches!(self.bytes.get(end + 1), Some(b'/' | b'*')))
        {
            end += 1;
        }
        let word = &self.bytes[start..end];
        self.i = end;
        let python = match word {
            b"True" => Some(&b"true"[..]),
            b"False" => Some(&b"false"[..]),
            b"None" => Some(&b"null"[..]),
            _ => None,
        };
        if let Some(json) = python {
            self.note(Kind::Python, start);
            self.out.extend_from_slice(json);
            self.mark();
            self.token(Token::Literal);
            return;
        }
        self.out.extend_from_slice(word);
        let token = match word {
            b"true" | b"false" | b"null" => Token::Literal,
            [b'0'..=b'9' | b'-', ..] => Token::Number,
            _ => Token::Other,
        };
        self.token(token);
    }

    /// At the end of the text with brackets still open: close them when
    /// the text ends just after a complete value.
    fn close(&mut self) -> Result<(), Stop> {
        let end = self.bytes.len();
        let complete = match self.last {
            Token::Close | Token::Literal => true,
            Token::Str => self.stack.last() == Some(&b'[') || self.before_last == Token::Colon,
            _ => false,
        };
        if !complete {
            let reason = match self.last {
                Token::Number => {
                    "end of text in a number, which may be cut short, with brackets still open"
                }
                _ => "end of text before the value is complete and the brackets are closed",
            };
            return Err(Stop {
                offset: end,
                reason,
            });
        }
        self.note(Kind::MissingClose, end);
        while let Some(open) = self.stack.pop() {
            self.out.push(if open == b'{' { b'}' } else { b']' });
        }
        Ok(())
    }
}

/// Where byte `at` of the repaired text came from in the text sent.
fn map_back(marks: &[(usize, usize)], at: usize) -> usize {
    let index = marks.partition_point(|&(out, _)| out <= at);
    match index.checked_sub(1).and_then(|i| marks.get(i)) {
        Some(&(out, input)) => input + (at - out),
        None => at,
    }
}

/// serde_json's message without its ` at line L column C`.
fn reason(error: &serde_json::Error) -> String {
    let text = error.to_string();
    let suffix = format!(" at line {} column {}", error.line(), error.column());
    text.strip_suffix(&suffix).unwrap_or(&text).to_owned()
}

/// The byte offset of serde_json's 1-based line and column (a column in
/// bytes, 0 before the line's first byte).
fn offset_of(text: &str, line: usize, column: usize) -> usize {
    let mut start = 0;
    if line > 1 {
        let mut seen = 1;
        for (index, byte) in text.bytes().enumerate() {
            if byte == b'\n' {
                seen += 1;
                if seen == line {
                    start = index + 1;
                    break;
                }
            }
        }
    }
    let line_end = text[start..]
        .find('\n')
        .map_or(text.len(), |end| start + end);
    floor_boundary(text, (start + column.saturating_sub(1)).min(line_end))
}

fn floor_boundary(text: &str, mut at: usize) -> usize {
    at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// Line and column, both from 1, of byte `at`; the column in characters.
fn line_column(text: &str, at: usize) -> (usize, usize) {
    let at = floor_boundary(text, at);
    let before = &text[..at];
    let line = before.bytes().filter(|&b| b == b'\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, text[line_start..at].chars().count() + 1)
}

/// The refusal: the reason, where, and the line there with a caret under
/// the place, at most [`EXCERPT`] characters of it.
fn refusal(text: &str, reason: &str, at: usize) -> String {
    let at = floor_boundary(text, at);
    let (line, column) = line_column(text, at);
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[at..].find('\n').map_or(text.len(), |i| at + i);
    let before: Vec<char> = text[line_start..at].chars().collect();
    let after = text[at..line_end].chars();
    let half = EXCERPT / 2;
    let skip = before.len().saturating_sub(half);
    let mut excerpt = String::new();
    if skip > 0 {
        excerpt.push('…');
    }
    let shown = |c: char| if c.is_control() { ' ' } else { c };
    excerpt.extend(before[skip..].iter().copied().map(shown));
    let caret = excerpt.chars().count();
    let room = EXCERPT - (before.len() - skip);
    let mut after = after.map(shown);
    excerpt.extend(after.by_ref().take(room));
    if after.next().is_some() {
        excerpt.push('…');
    }
    format!(
        "{reason} at line {line}, column {column}:\n    {}\n    {}^\n",
        excerpt.trim_end(),
        " ".repeat(caret)
    )
}

#[cfg(test)]
#[path = "tests/repair.rs"]
mod tests;

//! Read a function's doc comment the way the model should see it.
//!
//! A doc comment is written for two readers. Sections rustdoc conventions
//! reserve for programmers (`# Errors`, `# Panics`, `# Safety`,
//! `# Examples`) would only cost the model tokens and invite it to reason
//! about panics it cannot cause, so they are left out of the tool's
//! description. A `# Arguments` section describes the parameters: it is
//! left out of the description too, and each of its entries describes its
//! parameter in the schema, where the model looks for it.

/// A doc comment split into what the model is shown.
#[derive(Debug, Default, PartialEq)]
pub struct Doc {
    /// The text for the model, or `None` when nothing is left.
    pub description: Option<String>,
    /// Each `# Arguments` entry, as (name as written, its text).
    pub arguments: Vec<(String, String)>,
    /// The titles of the sections that were left out, as written.
    pub removed: Vec<String>,
}

impl Doc {
    /// The `# Arguments` text for the parameter called `name`, if any.
    pub fn argument(&self, name: &str) -> Option<&str> {
        self.arguments
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, text)| text.as_str())
    }
}

/// Section titles for programmers, compared without case.
const PROGRAMMER_SECTIONS: &[&str] = &["errors", "panics", "safety", "examples", "example"];

/// Titles of a section that describes the parameters.
const ARGUMENT_SECTIONS: &[&str] = &["arguments", "parameters"];

/// What to do with the lines of the current section.
enum Section {
    /// Keep them in the description.
    Kept,
    /// Leave them out; the heading's level ends the section.
    Removed { level: usize },
    /// Leave them out, and read them as parameter descriptions.
    Arguments { level: usize },
}

/// Split `text` (a doc comment, joined) into the description and the
/// parameter descriptions of its `# Arguments` section.
pub fn read(text: &str) -> Doc {
    let mut doc = Doc::default();
    let mut kept: Vec<&str> = Vec::new();
    let mut argument_lines: Vec<&str> = Vec::new();
    let mut section = Section::Kept;
    let mut fence = Fence::default();
    for line in text.lines() {
        // A `#` line inside a code block is a hidden line of a doctest, not
        // a heading.
        let heading = if fence.is_open() { None } else { heading(line) };
        fence.see(line);
        if let Some((level, title)) = heading {
            let ends = match section {
                Section::Kept => true,
                Section::Removed { level: at } | Section::Arguments { level: at } => level <= at,
            };
            if ends {
                let key = title.trim_end_matches(':').trim().to_ascii_lowercase();
                section = if PROGRAMMER_SECTIONS.contains(&key.as_str()) {
                    doc.removed.push(title.to_owned());
                    Section::Removed { level }
                } else if ARGUMENT_SECTIONS.contains(&key.as_str()) {
                    doc.removed.push(title.to_owned());
                    Section::Arguments { level }
                } else {
                    Section::Kept
                };
                if !matches!(section, Section::Kept) {
                    continue;
                }
            }
        }
        match section {
            Section::Kept => kept.push(line),
            Section::Removed { .. } => {}
            Section::Arguments { .. } => argument_lines.push(line),
        }
    }
    let description = collapse_blank_lines(&kept);
    doc.description = (!description.is_empty()).then_some(description);
    doc.arguments = argument_entries(&argument_lines);
    doc
}

/// An ATX heading (`## Title`): its level and title.
fn heading(line: &str) -> Option<(usize, &str)> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let rest = &line[indent..];
    let level = rest.len() - rest.trim_start_matches('#').len();
    if !(1..=6).contains(&level) {
        return None;
    }
    let after = &rest[level..];
    if !(after.is_empty() || after.starts_with([' ', '\t'])) {
        return None;
    }
    // A closing run of `#` is not part of the title.
    let title = after.trim().trim_end_matches('#').trim_end();
    Some((level, title))
}

/// Whether a line is inside a fenced code block (```` ``` ```` or `~~~`).
#[derive(Default)]
struct Fence {
    /// The opening fence's character and length while a block is open.
    open: Option<(char, usize)>,
}

impl Fence {
    fn is_open(&self) -> bool {
        self.open.is_some()
    }

    /// Note `line`, which may open or close a block.
    fn see(&mut self, line: &str) {
        let trimmed = line.trim_start_matches(' ');
        if line.len() - trimmed.len() > 3 {
            return;
        }
        let Some(c) = trimmed.chars().next().filter(|c| *c == '`' || *c == '~') else {
            return;
        };
        let run = trimmed.len() - trimmed.trim_start_matches(c).len();
        if run < 3 {
            return;
        }
        match self.open {
            None => self.open = Some((c, run)),
            Some((open, len)) if open == c && run >= len && trimmed[run..].trim().is_empty() => {
                self.open = None;
            }
            Some(_) => {}
        }
    }
}

/// The kept lines as one text: leading and trailing blank lines dropped,
/// and a run of blank lines (left where a section was cut out) made one.
/// Blank lines inside a code block are kept as written.
fn collapse_blank_lines(lines: &[&str]) -> String {
    let mut out: Vec<&str> = Vec::new();
    let mut fence = Fence::default();
    for line in lines {
        let blank = line.trim().is_empty();
        if blank && !fence.is_open() && out.last().is_none_or(|l| l.trim().is_empty()) {
            continue;
        }
        fence.see(line);
        out.push(line);
    }
    out.join("\n").trim().to_owned()
}

/// The entries of an `# Arguments` list: `* `name` - text`, `- name: text`,
/// with `*`, `-` or `+` bullets, the name in backticks or not, and `-`, `:`,
/// `–` or `—` before the text. Lines that follow an entry continue it.
fn argument_entries(lines: &[&str]) -> Vec<(String, String)> {
    let mut entries: Vec<(String, String)> = Vec::new();
    // Whether the last line belongs to an entry that may go on, and whether
    // a blank line came after it (a new paragraph must be indented).
    let mut open = false;
    let mut after_blank = false;
    for line in lines {
        if line.trim().is_empty() {
            after_blank = open;
            continue;
        }
        if let Some(entry) = argument_entry(line) {
            entries.push(entry);
            open = true;
            after_blank = false;
            continue;
        }
        let indented = line.starts_with("  ") || line.starts_with('\t');
        match entries.last_mut() {
            Some((_, text)) if open && (!after_blank || indented) => {
                text.push_str(if after_blank { "\n\n" } else { " " });
                text.push_str(line.trim());
                after_blank = false;
            }
            _ => open = false,
        }
    }
    entries.retain(|(_, text)| !text.is_empty());
    entries
}

/// One list item naming a parameter, or `None` if the line is not one.
fn argument_entry(line: &str) -> Option<(String, String)> {
    let rest = line.trim_start();
    let rest = rest
        .strip_prefix("* ")
        .or_else(|| rest.strip_prefix("- "))
        .or_else(|| rest.strip_prefix("+ "))?
        .trim_start();
    let (name, rest) = match rest.strip_prefix('`') {
        Some(quoted) => {
            let end = quoted.find('`')?;
            (&quoted[..end], &quoted[end + 1..])
        }
        None => {
            let end = rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '#'))
                .unwrap_or(rest.len());
            rest.split_at(end)
        }
    };
    let name = name.trim().trim_start_matches("r#");
    if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || c == '_') {
        return None;
    }
    let mut rest = rest.trim_start();
    // A type in parentheses after the name: `* `limit` (u32) - text`.
    if let Some(inner) = rest.strip_prefix('(') {
        rest = inner.split_once(')')?.1.trim_start();
    }
    let text = ["-", ":", "–", "—"]
        .iter()
        .find_map(|sep| rest.strip_prefix(sep))?;
    Some((name.to_owned(), text.trim().to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn description(text: &str) -> Option<String> {
        read(text).description
    }

    #[test]
    fn a_plain_doc_comment_is_kept_whole() {
        let text = "Read a file.\n\nReturns its text.";
        assert_eq!(description(text).as_deref(), Some(text));
        assert!(read(text).removed.is_empty());
    }

    #[test]
    fn sections_for_programmers_are_left_out() {
        let text = "Read a file.\n\n# Errors\n\nWhen it is missing.\n\n# Panics\n\nNever.\n\n# Safety\n\nSafe.\n\n# Examples\n\n```\nread(\"a\");\n```";
        let doc = read(text);
        assert_eq!(doc.description.as_deref(), Some("Read a file."));
        assert_eq!(doc.removed, ["Errors", "Panics", "Safety", "Examples"]);
    }

    #[test]
    fn a_section_ends_at_a_heading_of_the_same_or_a_higher_level() {
        let text = "Intro.\n\n## Errors\n\nBad.\n\n### Detail\n\nStill errors.\n\n## Usage\n\nKept.\n\n# Notes\n\nKept too.";
        assert_eq!(
            description(text).as_deref(),
            Some("Intro.\n\n## Usage\n\nKept.\n\n# Notes\n\nKept too.")
        );
    }

    #[test]
    fn titles_are_matched_without_case_and_with_a_colon_or_closing_hashes() {
        let text = "Intro.\n\n# ERRORS:\n\nx\n\n## example ##\n\ny\n\n# Returns\n\nA count.";
        assert_eq!(
            description(text).as_deref(),
            Some("Intro.\n\n# Returns\n\nA count.")
        );
    }

    #[test]
    fn a_hash_line_in_a_code_block_is_not_a_heading() {
        let text = "Intro.\n\n```\n# Errors\nlet x = 1;\n```\n\nAfter.";
        assert_eq!(description(text).as_deref(), Some(text));
        let text =
            "Intro.\n\n# Examples\n\n```\n# use std::fs;\n# fn main() {}\n```\n\n# Notes\n\nKept.";
        assert_eq!(
            description(text).as_deref(),
            Some("Intro.\n\n# Notes\n\nKept.")
        );
    }

    #[test]
    fn blank_lines_inside_a_kept_code_block_stay() {
        let text = "Intro.\n\n```text\na\n\n\nb\n```";
        assert_eq!(description(text).as_deref(), Some(text));
    }

    #[test]
    fn hashes_without_a_space_are_not_a_heading() {
        let text = "Intro.\n#Errors are fine here.\n####### seven";
        assert_eq!(description(text).as_deref(), Some(text));
    }

    #[test]
    fn only_sections_for_programmers_leave_no_description() {
        let doc = read("# Errors\n\nAlways.");
        assert_eq!(doc.description, None);
        assert_eq!(doc.removed, ["Errors"]);
    }

    #[test]
    fn an_arguments_section_describes_the_parameters() {
        let text = "Search the notes.\n\n# Arguments\n\n* `query` - The words to find.\n* limit - How many\n  notes at most.\n- `tag`: A tag to filter by.\n- exact : Match whole words.\n+ `case` (bool) – Match case.\n\n# Errors\n\nWhen the index is missing.";
        let doc = read(text);
        assert_eq!(doc.description.as_deref(), Some("Search the notes."));
        assert_eq!(
            doc.arguments,
            [
                ("query".to_owned(), "The words to find.".to_owned()),
                ("limit".to_owned(), "How many notes at most.".to_owned()),
                ("tag".to_owned(), "A tag to filter by.".to_owned()),
                ("exact".to_owned(), "Match whole words.".to_owned()),
                ("case".to_owned(), "Match case.".to_owned()),
            ]
        );
        assert_eq!(doc.argument("limit"), Some("How many notes at most."));
        assert_eq!(doc.argument("missing"), None);
    }

    #[test]
    fn an_indented_paragraph_continues_an_entry_and_other_text_does_not() {
        let text = "X.\n\n# Arguments\n\n* `a` - First.\n\n  More about a.\n\nNot about a.\n* `r#type` - A keyword.";
        let doc = read(text);
        assert_eq!(
            doc.arguments,
            [
                ("a".to_owned(), "First.\n\nMore about a.".to_owned()),
                ("type".to_owned(), "A keyword.".to_owned()),
            ]
        );
    }

    #[test]
    fn lines_that_name_no_parameter_are_not_entries() {
        let doc = read(
            "X.\n\n# Arguments\n\nAll of them are optional.\n* no separator here\n* `two words` - x\n* `empty` -",
        );
        assert!(doc.arguments.is_empty(), "{:?}", doc.arguments);
        assert_eq!(doc.description.as_deref(), Some("X."));
    }
}

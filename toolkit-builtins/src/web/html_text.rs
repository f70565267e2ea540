//! An HTML tree as plain text: blocks apart, list items and table rows on
//! lines of their own, whitespace collapsed (kept inside `<pre>`), and no
//! markup at all. `web_fetch` gives it for `extract_mode: "text"`.
//!
//! The walk keeps its own stack, so a tree of any depth renders without
//! recursion; it visits each node once.

use std::rc::Rc;

use markup5ever_rcdom::{Handle, NodeData};

/// The text of `roots`, in order.
pub(crate) fn render(roots: &[Handle]) -> String {
    let mut out = Writer::default();
    let mut stack: Vec<Step> = roots
        .iter()
        .rev()
        .map(|n| Step::Enter(Rc::clone(n)))
        .collect();
    while let Some(step) = stack.pop() {
        let node = match step {
            Step::Leave { gap, pre } => {
                if pre {
                    out.pre = out.pre.saturating_sub(1);
                }
                out.gap(gap);
                continue;
            }
            Step::Enter(node) => node,
        };
        match &node.data {
            NodeData::Text { contents } => out.text(&contents.borrow()),
            NodeData::Document => {
                stack.extend(
                    node.children
                        .borrow()
                        .iter()
                        .rev()
                        .cloned()
                        .map(Step::Enter),
                );
            }
            NodeData::Element { name, .. } => {
                let name = name.local.as_ref();
                if is_hidden(name) {
                    continue;
                }
                match name {
                    "br" => out.gap(1),
                    "td" | "th" => out.cell(),
                    _ => {}
                }
                let gap = gap_around(name);
                out.gap(gap);
                if name == "li" {
                    out.prefix = Some("- ");
                }
                let pre = name == "pre";
                if pre {
                    out.pre += 1;
                }
                stack.push(Step::Leave { gap, pre });
                stack.extend(
                    node.children
                        .borrow()
                        .iter()
                        .rev()
                        .cloned()
                        .map(Step::Enter),
                );
            }
            _ => {}
        }
    }
    out.finish()
}

/// One step of the walk.
enum Step {
    /// Write a node and what it holds.
    Enter(Handle),
    /// Close an element: the gap after it, and whether it was a `<pre>`.
    Leave { gap: u8, pre: bool },
}

/// Text written so far, and the separation owed before the next word.
#[derive(Default)]
struct Writer {
    out: String,
    /// Line breaks owed before the next text (1: a new line, 2: a blank line).
    gap: u8,
    /// A space owed before the next word.
    space: bool,
    /// A tab owed before the next word (between table cells).
    tab: bool,
    /// What the next text starts with (a list item's dash).
    prefix: Option<&'static str>,
    /// How many `<pre>` elements are open: their text is kept as it is.
    pre: usize,
}

impl Writer {
    fn gap(&mut self, lines: u8) {
        if lines == 0 {
            return;
        }
        self.gap = self.gap.max(lines);
        self.space = false;
        self.tab = false;
    }

    fn cell(&mut self) {
        if self.gap == 0 && !self.out.is_empty() && !self.out.ends_with('\n') {
            self.tab = true;
            self.space = false;
        }
    }

    /// Pay what is owed before writing text.
    fn settle(&mut self) {
        if !self.out.is_empty() {
            if self.gap > 0 {
                let kept = self.out.trim_end_matches([' ', '\t']).len();
                self.out.truncate(kept);
                let have = self.out.len() - self.out.trim_end_matches('\n').len();
                for _ in have..usize::from(self.gap) {
                    self.out.push('\n');
                }
            } else if self.tab {
                self.out.push('\t');
            } else if self.space && !self.out.ends_with([' ', '\n', '\t']) {
                self.out.push(' ');
            }
        }
        self.gap = 0;
        self.space = false;
        self.tab = false;
        if let Some(prefix) = self.prefix.take() {
            self.out.push_str(prefix);
        }
    }

    fn text(&mut self, text: &str) {
        if self.pre > 0 {
            if !text.is_empty() {
                self.settle();
                self.out.push_str(text);
            }
            return;
        }
        if text.starts_with(char::is_whitespace) {
            self.space = true;
        }
        let mut words = text.split_whitespace().peekable();
        while let Some(word) = words.next() {
            self.settle();
            self.out.push_str(word);
            if words.peek().is_some() {
                self.space = true;
            }
        }
        if text.ends_with(char::is_whitespace) {
            self.space = true;
        }
    }

    fn finish(self) -> String {
        self.out.trim_end().to_string()
    }
}

/// Line breaks before and after an element: a blank line around blocks,
/// a new line around list items, rows and definition terms, none inline.
fn gap_around(name: &str) -> u8 {
    match name {
        "li" | "tr" | "dt" | "dd" | "figcaption" | "caption" => 1,
        "p" | "div" | "section" | "article" | "main" | "header" | "footer" | "aside" | "nav"
        | "blockquote" | "pre" | "ul" | "ol" | "dl" | "table" | "figure" | "form" | "fieldset"
        | "address" | "hr" | "h1" | "h2" | "h3" | "h4" | "h5" | "h6" | "details" | "summary"
        | "body" => 2,
        _ => 0,
    }
}

/// Elements whose content is never shown as text: those main-content
/// extraction leaves out of every measure, and the title (written in the
/// head line) and formulas, which read badly as text.
fn is_hidden(name: &str) -> bool {
    super::main_content::is_hidden_tag(name) || matches!(name, "title" | "math")
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;
    use crate::web::html::{Budget, MAX_DEPTH, parse};

    fn text(page: &str) -> String {
        let parsed = parse(
            page,
            Budget {
                max_depth: MAX_DEPTH,
                max_text: 1_000_000,
                deadline: Instant::now() + Duration::from_secs(60),
            },
        );
        render(&[parsed.document])
    }

    #[test]
    fn blocks_are_apart_and_markup_is_gone() {
        assert_eq!(
            text(
                "<h1>Title</h1><p>Some <b>bold</b>\n  and <a href=/x>a link</a>.</p>\
                 <ul><li>one</li><li>two</li></ul><p>a<br>b</p>"
            ),
            "Title\n\nSome bold and a link.\n\n- one\n- two\n\na\nb"
        );
    }

    #[test]
    fn tables_are_rows_of_cells_and_pre_keeps_its_lines() {
        assert_eq!(
            text(
                "<table><tr><th>a</th><th>b</th></tr><tr><td>1</td><td>2</td></tr></table><pre>x  y\n  z</pre>"
            ),
            "a\tb\n1\t2\n\nx  y\n  z"
        );
    }

    #[test]
    fn scripts_styles_and_the_title_are_not_text() {
        assert_eq!(
            text(
                "<html><head><title>T</title><style>p{}</style></head><body><script>x()</script><p>kept</p></body></html>"
            ),
            "kept"
        );
    }
}

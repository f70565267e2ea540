//! HTML parsed within budgets: how deep elements may nest, how much text is
//! kept, and how long parsing may take.
//!
//! html5ever builds the tree, so pages read as browsers read them. A filter
//! sits between its tokenizer and its tree builder and decides what reaches
//! the tree: start tags past the depth budget are left out (their text is
//! kept), and once the text budget or the deadline is spent nothing more is
//! read. A tree builder fed nesting of any depth would spend time
//! quadratic in it, and every recursive walk over the tree (the Markdown
//! converter's included) would need stack in proportion to it; with the
//! filter, neither depends on the page. A last iterative pass flattens
//! whatever the tree builder still nested past the budget (it may re-open
//! formatting elements on its own), so the bound holds for every page.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::Instant;

use html5ever::TokenizerResult;
use html5ever::tendril::StrTendril;
use html5ever::tokenizer::{
    BufferQueue, Tag, TagKind, Token, TokenSink, TokenSinkResult, Tokenizer, TokenizerOpts,
};
use html5ever::tree_builder::{TreeBuilder, TreeBuilderOpts};
use html5ever::{LocalName, local_name};
use markup5ever_rcdom::{Handle, Node, NodeData, RcDom};

/// How deep elements may nest in a parsed tree. Pages people read nest a
/// few dozen levels; past this, elements are dropped and their text kept.
pub(crate) const MAX_DEPTH: usize = 128;

/// Levels the tree builder adds on its own (`html`, `body`, `tbody`, …)
/// before the last pass flattens.
const BUILDER_SLACK: usize = 16;

/// How many open elements an end tag is matched against. An end tag that
/// matches none of them is passed on unmatched; scanning further would make
/// each end tag cost as much as the page is deep.
const END_TAG_SCAN: usize = MAX_DEPTH;

/// How many of the innermost open elements a start tag that closes some
/// implicitly (`<li>`, `<td>`, `<p>`) looks at.
const IMPLIED_SCAN: usize = 8;

/// Input is fed to the parser in pieces of this many bytes, so a spent
/// budget stops the reading early.
const CHUNK_BYTES: usize = 16 * 1024;

/// What one parse may spend.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Budget {
    /// Elements nested deeper than this are left out (their text is kept).
    pub max_depth: usize,
    /// Characters of text (whitespace runs counting one) and link targets
    /// kept; parsing stops once this is spent.
    pub max_text: usize,
    /// Parsing stops at this instant.
    pub deadline: Instant,
}

/// Why parsing stopped before the end of the page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cut {
    /// The text budget was spent.
    Size,
    /// The deadline passed.
    Time,
}

/// A parsed page.
pub(crate) struct Parsed {
    /// The document node; no element in it nests deeper than the budget
    /// (plus the few levels the tree builder adds).
    pub document: Handle,
    /// Why the page was not read to its end, if it was not.
    pub cut: Option<Cut>,
}

/// Parse `html` within `budget`.
pub(crate) fn parse(html: &str, budget: Budget) -> Parsed {
    let builder = TreeBuilder::new(
        RcDom::default(),
        TreeBuilderOpts {
            // As the Markdown converter parses: `<noscript>` is raw text.
            scripting_enabled: true,
            ..Default::default()
        },
    );
    let filter = Filter {
        inner: builder,
        budget,
        open: RefCell::new(Vec::new()),
        forwarded_depth: Cell::new(0),
        raw_open: Cell::new(0),
        spent: Cell::new(0),
        after_space: Cell::new(true),
        cut: Cell::new(None),
    };
    let tokenizer = Tokenizer::new(filter, TokenizerOpts::default());
    let input = BufferQueue::default();
    let mut rest = html;
    while !rest.is_empty() && tokenizer.sink.cut.get().is_none() {
        let mut end = rest.len().min(CHUNK_BYTES);
        while !rest.is_char_boundary(end) {
            end += 1;
        }
        let (chunk, after) = rest.split_at(end);
        rest = after;
        input.push_back(StrTendril::from_slice(chunk));
        // A script end tag or a `<meta charset>` pauses the tokenizer;
        // nothing runs scripts here, and the text is already decoded.
        while !matches!(tokenizer.feed(&input), TokenizerResult::Done) {}
    }
    if tokenizer.sink.cut.get().is_some() {
        // Whatever was queued is not read: the budget is spent.
        while input.pop_front().is_some() {}
    }
    tokenizer.end();
    let cut = tokenizer.sink.cut.get();
    let document = tokenizer.sink.inner.sink.document.clone();
    flatten(&document, budget.max_depth + BUILDER_SLACK);
    Parsed { document, cut }
}

/// One element the filter saw open.
struct Open {
    name: LocalName,
    /// Whether its start tag reached the tree builder.
    forwarded: bool,
    /// Whether its content is text no reader sees (a script, a style).
    raw: bool,
}

/// The filter between tokenizer and tree builder (see the module's notes).
struct Filter {
    inner: TreeBuilder<Handle, RcDom>,
    budget: Budget,
    /// The elements open as the filter counts them. Its own count, not the
    /// tree builder's: the two differ where HTML closes elements implicitly,
    /// and the last pass covers the difference.
    open: RefCell<Vec<Open>>,
    /// How many entries of `open` were forwarded.
    forwarded_depth: Cell<usize>,
    /// How many entries of `open` hold raw text.
    raw_open: Cell<usize>,
    /// Text budget spent so far.
    spent: Cell<usize>,
    /// Whether the last text counted ended in whitespace.
    after_space: Cell<bool>,
    cut: Cell<Option<Cut>>,
}

impl TokenSink for Filter {
    type Handle = Handle;

    fn process_token(&self, token: Token, line: u64) -> TokenSinkResult<Handle> {
        if self.cut.get().is_some() {
            return match token {
                Token::EOFToken => self.inner.process_token(token, line),
                _ => TokenSinkResult::Continue,
            };
        }
        if Instant::now() >= self.budget.deadline {
            self.cut.set(Some(Cut::Time));
            return TokenSinkResult::Continue;
        }
        match token {
            Token::TagToken(tag) if tag.kind == TagKind::StartTag => self.start_tag(tag, line),
            Token::TagToken(tag) => self.end_tag(tag, line),
            Token::CharacterTokens(text) => self.text(text, line),
            // Comments never reach a reader; parse errors are not reported.
            Token::CommentToken(_) | Token::ParseError(_) => TokenSinkResult::Continue,
            token => self.inner.process_token(token, line),
        }
    }

    fn end(&self) {
        self.inner.end();
    }

    fn adjusted_current_node_present_but_not_in_html_namespace(&self) -> bool {
        self.inner
            .adjusted_current_node_present_but_not_in_html_namespace()
    }
}

impl Filter {
    fn start_tag(&self, tag: Tag, line: u64) -> TokenSinkResult<Handle> {
        let within = self.forwarded_depth.get() < self.budget.max_depth;
        // Void elements and self-closed ones (`<path/>`, `<div/>`) hold
        // nothing, so they open no level; a self-closed HTML element is
        // closed right away by an end tag of its own, so it cannot open a
        // level in the tree builder either.
        if is_void(&tag.name) || tag.self_closing {
            if !within {
                return TokenSinkResult::Continue;
            }
            self.charge(tag_cost(&tag));
            let closing = (!is_void(&tag.name)).then(|| Tag {
                kind: TagKind::EndTag,
                name: tag.name.clone(),
                self_closing: false,
                attrs: Vec::new(),
            });
            let result = self.inner.process_token(Token::TagToken(tag), line);
            if let Some(closing) = closing {
                let _ = self.inner.process_token(Token::TagToken(closing), line);
            }
            return result;
        }
        self.close_implied(&tag.name, line);
        let within = self.forwarded_depth.get() < self.budget.max_depth;
        let raw = hides_text(&tag.name);
        self.open.borrow_mut().push(Open {
            name: tag.name.clone(),
            forwarded: within,
            raw,
        });
        if raw {
            self.raw_open.set(self.raw_open.get() + 1);
        }
        if within {
            self.forwarded_depth.set(self.forwarded_depth.get() + 1);
            self.charge(tag_cost(&tag));
            return self.inner.process_token(Token::TagToken(tag), line);
        }
        // Left out of the tree; the tokenizer must still read a script or
        // a style as raw text, as it would have had the tag gone through.
        match raw_kind(&tag.name) {
            Some(kind) => TokenSinkResult::RawData(kind),
            None => TokenSinkResult::Continue,
        }
    }

    fn end_tag(&self, tag: Tag, line: u64) -> TokenSinkResult<Handle> {
        let open = self.open.borrow();
        let lowest = open.len().saturating_sub(END_TAG_SCAN);
        let Some(found) = (lowest..open.len())
            .rev()
            .find(|&i| open[i].name == tag.name)
        else {
            drop(open);
            // Unmatched (`</p>` with no `<p>`, `</br>`): the tree builder
            // knows what HTML makes of it, and it opens no level.
            if self.forwarded_depth.get() < self.budget.max_depth {
                self.charge(1);
                return self.inner.process_token(Token::TagToken(tag), line);
            }
            return TokenSinkResult::Continue;
        };
        drop(open);
        self.close_from(found, line)
    }

    /// Close the entries of `open` from `index` up, innermost first, each
    /// explicitly, so the tree builder keeps no formatting element open (to
    /// re-open later) that the filter no longer counts.
    fn close_from(&self, index: usize, line: u64) -> TokenSinkResult<Handle> {
        let closed: Vec<Open> = self.open.borrow_mut().drain(index..).collect();
        let mut result = TokenSinkResult::Continue;
        for entry in closed.into_iter().rev() {
            if entry.raw {
                self.raw_open.set(self.raw_open.get() - 1);
            }
            if entry.forwarded {
                self.forwarded_depth.set(self.forwarded_depth.get() - 1);
                let closing = Tag {
                    kind: TagKind::EndTag,
                    name: entry.name,
                    self_closing: false,
                    attrs: Vec::new(),
                };
                result = self.inner.process_token(Token::TagToken(closing), line);
            }
        }
        result
    }

    /// Close what HTML closes implicitly before `name` opens (`<p>` after a
    /// `<p>`, `<li>` after a `<li>`, a cell after a cell), so pages that
    /// leave those end tags out do not use up the depth budget. Only the
    /// few innermost entries are looked at.
    fn close_implied(&self, name: &LocalName, line: u64) {
        let (closes, stops): (&[LocalName], &[LocalName]) = match *name {
            local_name!("li") => (
                &[local_name!("li"), local_name!("p")],
                &[local_name!("ul"), local_name!("ol"), local_name!("menu")],
            ),
            local_name!("dt") | local_name!("dd") => (
                &[local_name!("dt"), local_name!("dd"), local_name!("p")],
                &[local_name!("dl")],
            ),
            local_name!("tr") => (
                &[local_name!("tr"), local_name!("td"), local_name!("th")],
                &[
                    local_name!("table"),
                    local_name!("tbody"),
                    local_name!("thead"),
                    local_name!("tfoot"),
                ],
            ),
            local_name!("td") | local_name!("th") => (
                &[local_name!("td"), local_name!("th")],
                &[local_name!("tr"), local_name!("table")],
            ),
            local_name!("tbody") | local_name!("thead") | local_name!("tfoot") => (
                &[
                    local_name!("tbody"),
                    local_name!("thead"),
                    local_name!("tfoot"),
                    local_name!("tr"),
                    local_name!("td"),
                    local_name!("th"),
                ],
                &[local_name!("table")],
            ),
            local_name!("option") => (&[local_name!("option")], &[local_name!("select")]),
            ref block if closes_p(block) => (&[local_name!("p")], &[]),
            _ => return,
        };
        let found = {
            let open = self.open.borrow();
            let lowest = open.len().saturating_sub(IMPLIED_SCAN);
            let mut found = None;
            for i in (lowest..open.len()).rev() {
                if stops.contains(&open[i].name) {
                    break;
                }
                if closes.contains(&open[i].name) {
                    found = Some(i);
                }
            }
            found
        };
        if let Some(index) = found {
            let _ = self.close_from(index, line);
        }
    }

    fn text(&self, text: StrTendril, line: u64) -> TokenSinkResult<Handle> {
        if self.raw_open.get() > 0 {
            // Script and style bodies: never text a reader sees.
            return TokenSinkResult::Continue;
        }
        let room = self.budget.max_text.saturating_sub(self.spent.get());
        let mut counted = 0;
        let mut after_space = self.after_space.get();
        let mut cut_at = None;
        for (i, c) in text.char_indices() {
            let space = c.is_whitespace();
            if !(space && after_space) {
                if counted == room {
                    cut_at = Some(i);
                    break;
                }
                counted += 1;
            }
            after_space = space;
        }
        self.spent.set(self.spent.get() + counted);
        self.after_space.set(after_space);
        let kept = match cut_at {
            None => text,
            Some(at) => {
                self.cut.set(Some(Cut::Size));
                StrTendril::from_slice(&text[..at])
            }
        };
        if kept.is_empty() {
            return TokenSinkResult::Continue;
        }
        self.inner.process_token(Token::CharacterTokens(kept), line)
    }

    /// Spend `cost` of the text budget on markup that shows in the output.
    fn charge(&self, cost: usize) {
        let spent = self.spent.get().saturating_add(cost);
        self.spent.set(spent);
        if spent > self.budget.max_text {
            self.cut.set(Some(Cut::Size));
        }
    }
}

/// What a tag adds to the output: a little for itself, and the attributes
/// a reader sees (link targets, image sources, titles).
fn tag_cost(tag: &Tag) -> usize {
    1 + tag
        .attrs
        .iter()
        .filter(|a| {
            matches!(
                a.name.local,
                local_name!("href")
                    | local_name!("src")
                    | local_name!("alt")
                    | local_name!("title")
            )
        })
        .map(|a| a.value.len())
        .sum::<usize>()
}

/// Block elements whose start tag closes an open `<p>`.
fn closes_p(name: &LocalName) -> bool {
    matches!(
        *name,
        local_name!("p")
            | local_name!("div")
            | local_name!("ul")
            | local_name!("ol")
            | local_name!("dl")
            | local_name!("table")
            | local_name!("h1")
            | local_name!("h2")
            | local_name!("h3")
            | local_name!("h4")
            | local_name!("h5")
            | local_name!("h6")
            | local_name!("pre")
            | local_name!("blockquote")
            | local_name!("section")
            | local_name!("article")
            | local_name!("aside")
            | local_name!("header")
            | local_name!("footer")
            | local_name!("nav")
            | local_name!("main")
            | local_name!("form")
            | local_name!("figure")
            | local_name!("address")
            | local_name!("fieldset")
    )
}

/// Elements that never hold anything.
fn is_void(name: &LocalName) -> bool {
    matches!(
        *name,
        local_name!("area")
            | local_name!("base")
            | local_name!("br")
            | local_name!("col")
            | local_name!("embed")
            | local_name!("hr")
            | local_name!("img")
            | local_name!("input")
            | local_name!("link")
            | local_name!("meta")
            | local_name!("source")
            | local_name!("track")
            | local_name!("wbr")
    )
}

/// How the tokenizer reads the content of elements whose content is not
/// markup; `None` for ordinary elements.
fn raw_kind(name: &LocalName) -> Option<html5ever::tokenizer::states::RawKind> {
    use html5ever::tokenizer::states::RawKind;
    match *name {
        local_name!("script") => Some(RawKind::ScriptData),
        local_name!("style")
        | local_name!("xmp")
        | local_name!("iframe")
        | local_name!("noembed")
        | local_name!("noframes")
        | local_name!("noscript") => Some(RawKind::Rawtext),
        local_name!("title") | local_name!("textarea") => Some(RawKind::Rcdata),
        _ => None,
    }
}

/// Elements whose content is raw text no reader sees: it is never kept.
fn hides_text(name: &LocalName) -> bool {
    raw_kind(name).is_some() && !matches!(*name, local_name!("title") | local_name!("textarea"))
}

/// Elements whose text is left out of a subtree's text.
fn is_hidden(name: &LocalName) -> bool {
    hides_text(name) || matches!(*name, local_name!("template") | local_name!("head"))
}

/// Replace every element at `limit` levels below the document by its text,
/// without recursion.
fn flatten(document: &Handle, limit: usize) {
    let mut stack = vec![(Rc::clone(document), 0usize)];
    while let Some((node, depth)) = stack.pop() {
        if depth >= limit && matches!(node.data, NodeData::Element { .. }) {
            let text = text_content(&node, usize::MAX);
            // The old subtree is dropped here; rcdom drops nodes without
            // recursion.
            let old = std::mem::take(&mut *node.children.borrow_mut());
            drop(old);
            if !text.is_empty() {
                let leaf = Node::new(NodeData::Text {
                    contents: RefCell::new(StrTendril::from(text)),
                });
                leaf.parent.set(Some(Rc::downgrade(&node)));
                node.children.borrow_mut().push(leaf);
            }
            continue;
        }
        for child in node.children.borrow().iter() {
            stack.push((Rc::clone(child), depth + 1));
        }
    }
}

/// The text under `node` in document order, scripts and styles left out,
/// at most `max_bytes` bytes (cut on a character boundary); no recursion.
pub(crate) fn text_content(node: &Handle, max_bytes: usize) -> String {
    let mut out = String::new();
    let mut stack: Vec<Handle> = node.children.borrow().iter().rev().cloned().collect();
    while let Some(node) = stack.pop() {
        match &node.data {
            NodeData::Text { contents } => {
                let contents = contents.borrow();
                let room = max_bytes - out.len();
                if contents.len() > room {
                    let mut end = room;
                    while !contents.is_char_boundary(end) {
                        end -= 1;
                    }
                    out.push_str(&contents[..end]);
                    break;
                }
                out.push_str(&contents);
            }
            NodeData::Element { name, .. } if is_hidden(&name.local) => {}
            _ => stack.extend(node.children.borrow().iter().rev().cloned()),
        }
    }
    out
}

/// The depth of the deepest node under `node` (tests and measurements).
#[cfg(test)]
pub(crate) fn depth_of(node: &Handle) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(Rc::clone(node), 0usize)];
    while let Some((node, depth)) = stack.pop() {
        deepest = deepest.max(depth);
        for child in node.children.borrow().iter() {
            stack.push((Rc::clone(child), depth + 1));
        }
    }
    deepest
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn budget(max_text: usize) -> Budget {
        Budget {
            max_depth: MAX_DEPTH,
            max_text,
            deadline: Instant::now() + Duration::from_secs(60),
        }
    }

    #[test]
    fn nesting_past_the_budget_is_flattened_and_its_text_kept() {
        let depth = 5_000;
        let page = format!("{}deep{}", "<div>".repeat(depth), "</div>".repeat(depth));
        let parsed = parse(&page, budget(1_000));
        assert!(depth_of(&parsed.document) <= MAX_DEPTH + BUILDER_SLACK);
        assert_eq!(text_content(&parsed.document, 100), "deep");
        assert_eq!(parsed.cut, None);
    }

    #[test]
    fn formatting_elements_the_builder_reopens_stay_within_the_bound() {
        // Unclosed formatting elements are re-opened by the tree builder
        // after each block that closes them; with distinct attributes no
        // limit of HTML's own applies.
        let mut page = String::new();
        for round in 0..400 {
            page.push_str("<div>");
            for i in 0..50 {
                page.push_str(&format!("<b id=\"r{round}i{i}\">"));
            }
            page.push_str("</div>x");
        }
        let parsed = parse(&page, budget(1_000_000));
        assert!(depth_of(&parsed.document) <= MAX_DEPTH + BUILDER_SLACK);
    }

    #[test]
    fn the_text_budget_stops_reading() {
        let page = format!("<p>{}</p><p>after</p>", "word ".repeat(10_000));
        let parsed = parse(&page, budget(100));
        assert_eq!(parsed.cut, Some(Cut::Size));
        let text = text_content(&parsed.document, usize::MAX);
        assert!(text.len() <= 100, "{}", text.len());
        assert!(!text.contains("after"));
    }

    #[test]
    fn implied_end_tags_do_not_use_up_the_depth_budget() {
        let items: String = (0..1_000).map(|i| format!("<li>item {i}")).collect();
        let paragraphs: String = (0..1_000).map(|i| format!("<p>para {i}")).collect();
        let rows: String = (0..1_000)
            .map(|i| format!("<tr><td>a{i}<td>b{i}"))
            .collect();
        let page = format!("<ul>{items}</ul>{paragraphs}<table>{rows}</table><h1>end</h1>");
        let parsed = parse(&page, budget(1_000_000));
        // Nothing was left out: the last heading is still an element.
        let markdown = htmd::HtmlToMarkdown::new().tree_to_markdown(&parsed.document);
        assert!(
            markdown.contains("# end"),
            "{}",
            &markdown[markdown.len() - 200..]
        );
        assert!(markdown.contains("para 999"));
        assert!(depth_of(&parsed.document) < 12);
    }

    #[test]
    fn a_charset_declaration_does_not_stop_reading() {
        let page = "<html><head><meta charset=\"utf-8\"><title>t</title></head><body><p>kept</p></body></html>";
        let parsed = parse(page, budget(1_000));
        assert_eq!(parsed.cut, None);
        assert!(text_content(&parsed.document, usize::MAX).ends_with("kept"));
    }

    #[test]
    fn a_spent_deadline_stops_reading() {
        let parsed = parse(
            "<p>never read</p>",
            Budget {
                deadline: Instant::now(),
                ..budget(1_000)
            },
        );
        assert_eq!(parsed.cut, Some(Cut::Time));
        assert_eq!(text_content(&parsed.document, usize::MAX), "");
    }

    #[test]
    fn scripts_past_the_budget_are_still_read_as_raw_text() {
        let page = format!(
            "{}<script>if (a < b) {{ x('<p>hidden</p>') }}</script>shown",
            "<div>".repeat(MAX_DEPTH + 10)
        );
        let parsed = parse(&page, budget(1_000));
        assert_eq!(text_content(&parsed.document, usize::MAX), "shown");
    }
}

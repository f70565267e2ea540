//! The main content of a page, told apart from its boilerplate in the
//! manner of Mozilla's Readability: navigation, headers, footers,
//! sidebars, cookie banners and forms are dropped, paragraphs are scored,
//! their scores flow to the blocks that hold them, and the best block (with
//! the siblings that belong to it) is the content.
//!
//! It works on a tree [`super::html::parse`] built within its budgets, so
//! the tree is at most [`super::html::MAX_DEPTH`] levels deep (plus the few
//! the tree builder adds) and holds a bounded number of nodes. Every pass
//! here is an iterative walk with its own stack, and each costs a constant
//! amount per node (a paragraph passes its score at most
//! [`SCORED_ANCESTORS`] levels up), so neither stack nor time depends on
//! what the page holds.
//!
//! When no block stands out (a short page, a list of links, a page of
//! nested junk) the whole page is kept, boilerplate still dropped; when
//! dropping the boilerplate would leave nothing, the page is kept whole.

use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use markup5ever_rcdom::{Handle, Node, NodeData};

/// Text (in characters, whitespace runs counting one) a block needs to be
/// scored as a paragraph; shorter ones are captions, buttons and labels.
const MIN_PARAGRAPH_CHARS: usize = 25;

/// Text the chosen block (with its siblings) must hold to be taken as the
/// page's main content; with less, the whole page is kept.
const MIN_CONTENT_CHARS: usize = 140;

/// How many levels up a paragraph's score reaches: its parent gets all of
/// it, the grandparent half, the levels above a third of it per level.
const SCORED_ANCESTORS: usize = 5;

/// Class and id words that mark boilerplate (Readability's list, with
/// cookie and newsletter banners added). Matched anywhere in the class or
/// id, so `site-footer` and `commentList` match.
const UNLIKELY_WORDS: &[&str] = &[
    "-ad-",
    "ad-break",
    "advert",
    "agegate",
    "ai2html",
    "banner",
    "breadcrumb",
    "combx",
    "comment",
    "community",
    "cover-wrap",
    "disqus",
    "extra",
    "footer",
    "gdpr",
    "header",
    "legends",
    "masthead",
    "menu",
    "navbar",
    "pager",
    "pagination",
    "popup",
    "promo",
    "related",
    "remark",
    "replies",
    "rss",
    "share",
    "sharing",
    "shoutbox",
    "sidebar",
    "skip-link",
    "skyscraper",
    "social",
    "sponsor",
    "supplemental",
    "toolbar",
    "yom-remote",
];

/// Class and id words that mark boilerplate whatever else the class says
/// (a `cookie-consent-content` banner is still a banner).
const ALWAYS_UNLIKELY_WORDS: &[&str] = &[
    "cookie",
    "consent",
    "gdpr",
    "newsletter",
    "subscribe",
    "modal",
];

/// Class and id words of blocks that may hold the content: an element
/// matching one of them is not dropped for an [`UNLIKELY_WORDS`] match.
const MAYBE_CONTENT_WORDS: &[&str] = &[
    "article", "body", "column", "content", "entry", "main", "mathjax", "story",
];

/// Class and id words that raise a block's score (Readability's list).
const POSITIVE_WORDS: &[&str] = &[
    "article", "blog", "body", "content", "entry", "h-entry", "hentry", "main", "page", "post",
    "story", "text",
];

/// Class and id words that lower a block's score (Readability's list).
const NEGATIVE_WORDS: &[&str] = &[
    "-ad-",
    "banner",
    "combx",
    "comment",
    "com-",
    "contact",
    "footer",
    "gdpr",
    "hidden",
    "masthead",
    "media",
    "meta",
    "outbrain",
    "promo",
    "related",
    "scroll",
    "share",
    "shoutbox",
    "sidebar",
    "skyscraper",
    "sponsor",
    "shopping",
    "tags",
    "widget",
];

/// ARIA roles of landmarks and widgets that are never the content.
const BOILERPLATE_ROLES: &[&str] = &[
    "alert",
    "alertdialog",
    "banner",
    "complementary",
    "contentinfo",
    "dialog",
    "menu",
    "menubar",
    "navigation",
    "search",
];

/// Commas in the scripts Readability counts (Latin, Arabic, CJK, …): more
/// commas, more prose.
const COMMAS: &[char] = &[
    ',', '\u{060C}', '\u{FE50}', '\u{FE10}', '\u{FE11}', '\u{2E41}', '\u{2E34}', '\u{2E32}',
    '\u{FF0C}',
];

/// What was found: the nodes to convert, in document order, and whether
/// they are the page's main content or the whole page.
pub(crate) struct Content {
    /// The blocks to convert, in document order.
    pub nodes: Vec<Handle>,
    /// Whether a main block was told apart from the rest of the page.
    pub main: bool,
    /// Nodes taken out of the tree, kept alive until the content is
    /// converted: their addresses key the measurements, and an address
    /// freed and reused would confuse them.
    _removed: Vec<Handle>,
}

/// The main content of the page parsed into `document`. The tree is
/// changed: boilerplate is taken out of it.
pub(crate) fn find(document: &Handle) -> Content {
    let body = body_of(document);
    let mut removed = Vec::new();

    let stats = measure(&body);
    let page_text = stats.of(&body).text;
    let boilerplate = boilerplate_in(&body, &stats, page_text);
    let boilerplate_text: usize = boilerplate.iter().map(|n| stats.of(n).text).sum();
    // A page that is nothing but boilerplate is still better read whole
    // than not at all.
    if page_text.saturating_sub(boilerplate_text) >= MIN_PARAGRAPH_CHARS || boilerplate_text == 0 {
        detach(&boilerplate, &mut removed);
    }

    let stats = measure(&body);
    let Some((top, top_score)) = best_candidate(&body, &stats) else {
        return Content {
            nodes: vec![body],
            main: false,
            _removed: removed,
        };
    };
    let nodes = with_siblings(&top, top_score, &stats);
    let content_text: usize = nodes.iter().map(|n| stats.of(n).text).sum();
    if content_text < MIN_CONTENT_CHARS {
        return Content {
            nodes: vec![body],
            main: false,
            _removed: removed,
        };
    }
    let clutter = clutter_in(&nodes, &stats);
    detach(&clutter, &mut removed);
    Content {
        nodes,
        main: true,
        _removed: removed,
    }
}

/// What a subtree holds, summed over it.
#[derive(Debug, Default, Clone, Copy)]
struct Stats {
    /// Characters of text, whitespace runs counting one.
    text: usize,
    /// Characters of text inside links.
    link_text: usize,
    /// Commas in the text.
    commas: usize,
    /// Whether it is or holds the page's marked main content (`main`,
    /// `article`, `role="main"`).
    holds_main: bool,
}

impl Stats {
    /// The share of the text that is link text, 0 to 1.
    fn link_density(&self) -> f64 {
        if self.text == 0 {
            0.0
        } else {
            self.link_text as f64 / self.text as f64
        }
    }
}

/// [`Stats`] of every element of a tree, keyed by node address.
struct Measured(HashMap<usize, Stats>);

impl Measured {
    fn of(&self, node: &Handle) -> Stats {
        self.0.get(&key(node)).copied().unwrap_or_default()
    }
}

/// A node's identity for the maps here (its address; nodes are kept alive
/// while the maps are used).
fn key(node: &Handle) -> usize {
    Rc::as_ptr(node) as usize
}

/// Measure every element under (and including) `root`, children before
/// parents, without recursion.
fn measure(root: &Handle) -> Measured {
    let mut stats: HashMap<usize, Stats> = HashMap::new();
    let mut stack = vec![(Rc::clone(root), false)];
    while let Some((node, children_done)) = stack.pop() {
        // The root may be the document itself, on a page without a body.
        let name = match &node.data {
            NodeData::Element { name, .. } => name.local.as_ref(),
            NodeData::Document => "",
            _ => continue,
        };
        if is_hidden_tag(name) {
            continue;
        }
        if !children_done {
            stack.push((Rc::clone(&node), true));
            for child in node.children.borrow().iter() {
                if element_name(child).is_some() {
                    stack.push((Rc::clone(child), false));
                }
            }
            continue;
        }
        let mut sum = Stats {
            holds_main: is_main_landmark(&node),
            ..Stats::default()
        };
        for child in node.children.borrow().iter() {
            match &child.data {
                NodeData::Text { contents } => {
                    let contents = contents.borrow();
                    sum.text += text_len(&contents);
                    sum.commas += contents.chars().filter(|c| COMMAS.contains(c)).count();
                }
                NodeData::Element { .. } => {
                    let inner = stats.get(&key(child)).copied().unwrap_or_default();
                    sum.text += inner.text;
                    sum.link_text += inner.link_text;
                    sum.commas += inner.commas;
                    sum.holds_main |= inner.holds_main;
                }
                _ => {}
            }
        }
        if name == "a" {
            sum.link_text = sum.text;
        }
        stats.insert(key(&node), sum);
    }
    Measured(stats)
}

/// The boilerplate under `body`: each element that is never content, not
/// looked into further. `page_text` is the text of the whole body.
fn boilerplate_in(body: &Handle, stats: &Measured, page_text: usize) -> Vec<Handle> {
    let mut found = Vec::new();
    // (node, whether it is inside the page's marked main content)
    let mut stack = vec![(Rc::clone(body), false)];
    while let Some((node, in_main)) = stack.pop() {
        for child in node.children.borrow().iter() {
            let Some(name) = element_name(child) else {
                continue;
            };
            if is_boilerplate(child, name, in_main, stats.of(child), page_text) {
                found.push(Rc::clone(child));
            } else {
                stack.push((Rc::clone(child), in_main || is_main_landmark(child)));
            }
        }
    }
    found
}

/// Whether the element `node` (named `name`) is boilerplate.
fn is_boilerplate(
    node: &Handle,
    name: &str,
    in_main: bool,
    stats: Stats,
    page_text: usize,
) -> bool {
    if matches!(name, "html" | "body" | "main" | "article") || stats.holds_main {
        return false;
    }
    if !is_visible(node) {
        return true;
    }
    match name {
        "nav" | "aside" | "footer" | "dialog" | "menu" | "button" | "select" | "textarea" => {
            return true;
        }
        // A header inside an article is the article's own: its title.
        "header" => return !in_main,
        _ => {}
    }
    if attr(node, "role").is_some_and(|role| BOILERPLATE_ROLES.contains(&role.trim())) {
        return true;
    }
    if attr(node, "aria-modal").is_some_and(|v| v.trim() == "true") {
        return true;
    }
    // A form or a marked block that holds most of the page is a wrapper
    // (some sites put the whole page in one form), not a widget.
    if stats.text * 2 > page_text {
        return false;
    }
    if name == "form" {
        return true;
    }
    if name == "a" {
        return false;
    }
    let words = class_and_id(node);
    if words.is_empty() {
        return false;
    }
    ALWAYS_UNLIKELY_WORDS.iter().any(|w| words.contains(w))
        || (UNLIKELY_WORDS.iter().any(|w| words.contains(w))
            && !MAYBE_CONTENT_WORDS.iter().any(|w| words.contains(w)))
}

/// The block with the best score under `body` and its score: paragraphs
/// are scored by length and commas, and pass their score to the blocks
/// above them; a block's score is lowered by its share of link text.
fn best_candidate(body: &Handle, stats: &Measured) -> Option<(Handle, f64)> {
    // In the order first scored, so ties go to the first in the page.
    let mut candidates: Vec<(Handle, f64)> = Vec::new();
    let mut index: HashMap<usize, usize> = HashMap::new();
    let mut stack = vec![Rc::clone(body)];
    while let Some(node) = stack.pop() {
        for child in node.children.borrow().iter().rev() {
            if element_name(child).is_some_and(|n| !is_hidden_tag(n)) {
                stack.push(Rc::clone(child));
            }
        }
        if !is_paragraph(&node) {
            continue;
        }
        let measured = stats.of(&node);
        if measured.text < MIN_PARAGRAPH_CHARS {
            continue;
        }
        let score = 1.0 + measured.commas as f64 + (measured.text / 100).min(3) as f64;
        let mut ancestor = parent_of(&node);
        for level in 0..SCORED_ANCESTORS {
            let Some(current) = ancestor else {
                break;
            };
            // The scores stop below the root element: `<html>` is never the
            // content, and a node without a parent element is not in the page.
            let Some(above) = parent_of(&current) else {
                break;
            };
            if element_name(&above).is_none() {
                break;
            }
            let slot = *index.entry(key(&current)).or_insert_with(|| {
                candidates.push((Rc::clone(&current), initial_score(&current)));
                candidates.len() - 1
            });
            let divider = match level {
                0 => 1.0,
                1 => 2.0,
                _ => level as f64 * 3.0,
            };
            candidates[slot].1 += score / divider;
            ancestor = Some(above);
        }
    }
    let mut best: Option<(Handle, f64)> = None;
    for (node, score) in candidates {
        let score = score * (1.0 - stats.of(&node).link_density());
        if best.as_ref().is_none_or(|(_, b)| score > *b) {
            best = Some((node, score));
        }
    }
    best
}

/// `top` and the siblings that belong with it, in document order: blocks
/// that scored well themselves, paragraphs of prose, and a heading right
/// before a block that is kept.
fn with_siblings(top: &Handle, top_score: f64, stats: &Measured) -> Vec<Handle> {
    let Some(parent) = parent_of(top) else {
        return vec![Rc::clone(top)];
    };
    let threshold = (top_score * 0.2).max(10.0);
    let top_class = attr(top, "class").unwrap_or_default();
    let siblings: Vec<Handle> = parent
        .children
        .borrow()
        .iter()
        .filter(|c| element_name(c).is_some_and(|n| !is_hidden_tag(n)))
        .cloned()
        .collect();
    let mut keep: Vec<bool> = siblings
        .iter()
        .map(|sibling| {
            if Rc::ptr_eq(sibling, top) {
                return true;
            }
            let measured = stats.of(sibling);
            let mut score = 0.0;
            if is_paragraph(sibling) && measured.text >= MIN_PARAGRAPH_CHARS {
                score += 1.0 + measured.commas as f64 + (measured.text / 100).min(3) as f64;
            }
            if !top_class.is_empty() && attr(sibling, "class").as_deref() == Some(&*top_class) {
                score += top_score * 0.2;
            }
            if score * (1.0 - measured.link_density()) >= threshold {
                return true;
            }
            element_name(sibling) == Some("p") && is_prose(sibling, measured)
        })
        .collect();
    // A heading (or an article's header, with its title and byline) goes
    // with the block it introduces.
    for i in (0..siblings.len().saturating_sub(1)).rev() {
        let introduces = is_heading(&siblings[i])
            || (element_name(&siblings[i]) == Some("header")
                && stats.of(&siblings[i]).link_density() < 0.5);
        if !keep[i] && keep[i + 1] && introduces {
            keep[i] = true;
        }
    }
    siblings
        .into_iter()
        .zip(keep)
        .filter_map(|(sibling, kept)| kept.then_some(sibling))
        .collect()
}

/// Whether a paragraph next to the content reads as part of it: long with
/// few links, or short, without links, and ending a sentence.
fn is_prose(node: &Handle, measured: Stats) -> bool {
    let density = measured.link_density();
    if measured.text > 80 {
        return density < 0.25;
    }
    if measured.text == 0 || density > 0.0 {
        return false;
    }
    let text = super::html::text_content(node, 1_000);
    let text = text.trim_end();
    text.ends_with('.') || text.ends_with('。')
}

/// Blocks inside the content that are clutter: marked as such by their
/// class, or mostly links (share bars, tag lists, "related" boxes).
fn clutter_in(roots: &[Handle], stats: &Measured) -> Vec<Handle> {
    let mut found = Vec::new();
    let mut stack: Vec<Handle> = roots.to_vec();
    while let Some(node) = stack.pop() {
        for child in node.children.borrow().iter() {
            let Some(name) = element_name(child) else {
                continue;
            };
            let clutter = matches!(name, "div" | "section" | "ul" | "ol" | "dl" | "table") && {
                let measured = stats.of(child);
                // Prose is content, whatever its class says.
                measured.commas < 10 && (class_weight(child) < 0.0 || measured.link_density() > 0.5)
            };
            if clutter {
                found.push(Rc::clone(child));
            } else {
                stack.push(Rc::clone(child));
            }
        }
    }
    found
}

/// Take `nodes` out of the tree (each parent's children filtered once),
/// keeping them alive in `removed`.
fn detach(nodes: &[Handle], removed: &mut Vec<Handle>) {
    let gone: HashSet<usize> = nodes.iter().map(key).collect();
    let mut parents: Vec<Handle> = Vec::new();
    let mut seen = HashSet::new();
    for node in nodes {
        if let Some(parent) = parent_of(node)
            && seen.insert(key(&parent))
        {
            parents.push(parent);
        }
    }
    for parent in parents {
        parent
            .children
            .borrow_mut()
            .retain(|child| !gone.contains(&key(child)));
    }
    removed.extend(nodes.iter().cloned());
}

/// The page's `<body>`, or the document when it has none.
fn body_of(document: &Handle) -> Handle {
    let mut stack = vec![Rc::clone(document)];
    // The body is a child of the root element; look two levels down.
    for _ in 0..2 {
        let mut next = Vec::new();
        for node in &stack {
            for child in node.children.borrow().iter() {
                if element_name(child) == Some("body") {
                    return Rc::clone(child);
                }
                if element_name(child).is_some() {
                    next.push(Rc::clone(child));
                }
            }
        }
        stack = next;
    }
    Rc::clone(document)
}

/// The text of the page's `<title>`, at most `max_bytes` bytes of it.
pub(crate) fn title_of(document: &Handle, max_bytes: usize) -> Option<String> {
    let mut stack = vec![Rc::clone(document)];
    while let Some(node) = stack.pop() {
        if element_name(&node) == Some("title") {
            let text = super::html::text_content(&node, max_bytes);
            return (!text.trim().is_empty()).then_some(text);
        }
        // The title is in the head; the body is not searched.
        if element_name(&node) == Some("body") {
            continue;
        }
        stack.extend(node.children.borrow().iter().rev().cloned());
    }
    None
}

/// The parent of `node`, if it has one still alive.
fn parent_of(node: &Node) -> Option<Handle> {
    let weak = node.parent.take();
    let parent = weak.as_ref().and_then(|w| w.upgrade());
    node.parent.set(weak);
    parent
}

/// The local name of an element; `None` for other nodes.
fn element_name(node: &Node) -> Option<&str> {
    match &node.data {
        NodeData::Element { name, .. } => Some(name.local.as_ref()),
        _ => None,
    }
}

/// The value of attribute `name`, lowercased.
fn attr(node: &Node, name: &str) -> Option<String> {
    let NodeData::Element { attrs, .. } = &node.data else {
        return None;
    };
    attrs
        .borrow()
        .iter()
        .find(|a| a.name.local.as_ref() == name)
        .map(|a| a.value.to_lowercase())
}

/// The class and id of an element, lowercased, in one string.
fn class_and_id(node: &Node) -> String {
    let mut words = attr(node, "class").unwrap_or_default();
    if let Some(id) = attr(node, "id") {
        words.push(' ');
        words.push_str(&id);
    }
    words.trim().to_string()
}

/// Readability's class weight: 25 for each of class and id that reads as
/// content, minus 25 for each that reads as boilerplate.
fn class_weight(node: &Node) -> f64 {
    let mut weight = 0.0;
    for name in ["class", "id"] {
        let Some(value) = attr(node, name) else {
            continue;
        };
        if NEGATIVE_WORDS.iter().any(|w| value.contains(w)) {
            weight -= 25.0;
        }
        if POSITIVE_WORDS.iter().any(|w| value.contains(w)) {
            weight += 25.0;
        }
    }
    weight
}

/// A block's score before any paragraph adds to it: by what kind of block
/// it is, and by its class weight.
fn initial_score(node: &Node) -> f64 {
    let by_tag = match element_name(node).unwrap_or_default() {
        "article" | "main" => 10.0,
        "div" => 5.0,
        "pre" | "td" | "blockquote" => 3.0,
        "address" | "ol" | "ul" | "dl" | "dd" | "dt" | "li" | "form" => -3.0,
        "h1" | "h2" | "h3" | "h4" | "h5" | "h6" | "th" => -5.0,
        _ => 0.0,
    };
    by_tag + class_weight(node)
}

/// Whether `node` is scored as a paragraph: a `<p>` or `<pre>`, or a
/// block that holds text but no other blocks (a `<div>` used as one).
fn is_paragraph(node: &Node) -> bool {
    match element_name(node) {
        Some("p" | "pre") => true,
        Some("td" | "div" | "section" | "article" | "main" | "blockquote") => !node
            .children
            .borrow()
            .iter()
            .any(|c| element_name(c).is_some_and(is_block)),
        _ => false,
    }
}

/// Elements that start a block of their own.
fn is_block(name: &str) -> bool {
    matches!(
        name,
        "address"
            | "article"
            | "aside"
            | "blockquote"
            | "dd"
            | "div"
            | "dl"
            | "dt"
            | "fieldset"
            | "figure"
            | "footer"
            | "form"
            | "h1"
            | "h2"
            | "h3"
            | "h4"
            | "h5"
            | "h6"
            | "header"
            | "hr"
            | "li"
            | "main"
            | "nav"
            | "ol"
            | "p"
            | "pre"
            | "section"
            | "table"
            | "ul"
    )
}

fn is_heading(node: &Node) -> bool {
    matches!(
        element_name(node),
        Some("h1" | "h2" | "h3" | "h4" | "h5" | "h6")
    )
}

/// Elements whose text is never content (the parser keeps none of a
/// script's or a style's text; these are left out of every measure too).
pub(super) fn is_hidden_tag(name: &str) -> bool {
    matches!(
        name,
        "script"
            | "style"
            | "noscript"
            | "template"
            | "head"
            | "iframe"
            | "object"
            | "embed"
            | "svg"
            | "canvas"
    )
}

/// `main`, `article` or `role="main"`: the page's own mark of its content.
fn is_main_landmark(node: &Node) -> bool {
    matches!(element_name(node), Some("main" | "article"))
        || attr(node, "role").is_some_and(|r| r.trim() == "main")
}

/// Whether an element may be seen: not `hidden`, not `aria-hidden`, not
/// styled away inline.
fn is_visible(node: &Node) -> bool {
    if attr(node, "hidden").is_some() {
        return false;
    }
    if attr(node, "aria-hidden").is_some_and(|v| v.trim() == "true") {
        return false;
    }
    attr(node, "style").is_none_or(|style| {
        let style: String = style.chars().filter(|c| !c.is_whitespace()).collect();
        !style.contains("display:none") && !style.contains("visibility:hidden")
    })
}

/// Characters of `text` with each whitespace run counting one.
fn text_len(text: &str) -> usize {
    let mut count = 0;
    let mut after_space = true;
    for c in text.chars() {
        let space = c.is_whitespace();
        if !(space && after_space) {
            count += 1;
        }
        after_space = space;
    }
    count
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;
    use crate::web::html::{self, Budget, MAX_DEPTH};

    fn parse(page: &str) -> Handle {
        html::parse(
            page,
            Budget {
                max_depth: MAX_DEPTH,
                max_text: 1_000_000,
                deadline: Instant::now() + Duration::from_secs(60),
            },
        )
        .document
    }

    fn text_of(content: &Content) -> String {
        content
            .nodes
            .iter()
            .map(|n| html::text_content(n, usize::MAX))
            .collect::<Vec<_>>()
            .join("\n")
    }

    const PROSE: &str = "The committee met on Tuesday, discussed the budget at length, \
        and agreed to publish the figures, the minutes and the schedule next week.";

    #[test]
    fn the_article_is_kept_and_the_boilerplate_dropped() {
        let page = format!(
            "<body><header><a href=/>Home</a></header><nav><a href=/a>A</a> <a href=/b>B</a></nav>\
             <div class=\"layout\"><aside>Sidebar words that are long enough to count, surely.</aside>\
             <article><h1>Headline</h1><p>{PROSE}</p><p>{PROSE}</p>\
             <div class=share><a href=/t>Tweet</a> <a href=/f>Share</a></div></article></div>\
             <div id=cookie-banner>We use cookies, to do things, many things, all of them.</div>\
             <footer>Copyright, all rights reserved, and so on and so forth.</footer></body>"
        );
        let document = parse(&page);
        let content = find(&document);
        assert!(content.main);
        let text = text_of(&content);
        assert!(text.contains("Headline"), "{text}");
        assert_eq!(text.matches("The committee met").count(), 2, "{text}");
        for gone in ["Home", "Sidebar", "Tweet", "cookies", "Copyright"] {
            assert!(!text.contains(gone), "{gone} in {text}");
        }
    }

    #[test]
    fn a_page_of_paragraphs_without_a_container_keeps_them_all() {
        let page = format!("<body><p>{PROSE}</p><p>{PROSE}</p><p>{PROSE}</p></body>");
        let document = parse(&page);
        let content = find(&document);
        assert_eq!(text_of(&content).matches("The committee met").count(), 3);
    }

    #[test]
    fn a_short_page_is_kept_whole() {
        let document = parse("<body><h1>Title</h1><p>Hello world.</p></body>");
        let content = find(&document);
        assert!(!content.main);
        assert_eq!(text_of(&content), "TitleHello world.");
    }

    #[test]
    fn a_page_of_only_boilerplate_is_kept_rather_than_emptied() {
        let document = parse("<body><nav><a href=/a>Only a menu here</a> and words</nav></body>");
        let content = find(&document);
        assert!(text_of(&content).contains("Only a menu here"));
    }

    #[test]
    fn a_form_wrapping_the_whole_page_is_not_boilerplate() {
        let page = format!(
            "<body><form id=aspnetForm><div><p>{PROSE}</p><p>{PROSE}</p></div></form></body>"
        );
        let document = parse(&page);
        let content = find(&document);
        assert!(content.main);
        assert_eq!(text_of(&content).matches("The committee met").count(), 2);
    }

    #[test]
    fn hidden_elements_are_dropped() {
        let page = format!(
            "<body><div><p>{PROSE}</p><p hidden>Secret hidden text.</p>\
             <div style=\"display: none\">Invisible text.</div>\
             <div aria-hidden=true>Decorative text.</div><p>{PROSE}</p></div></body>"
        );
        let document = parse(&page);
        let text = text_of(&find(&document));
        assert!(!text.contains("Secret"), "{text}");
        assert!(!text.contains("Invisible"), "{text}");
        assert!(!text.contains("Decorative"), "{text}");
    }

    #[test]
    fn the_title_is_read_from_the_head() {
        let document = parse("<html><head><title> A page </title></head><body>x</body></html>");
        assert_eq!(title_of(&document, 100).as_deref(), Some(" A page "));
        let document = parse("<body>no title</body>");
        assert_eq!(title_of(&document, 100), None);
    }

    #[test]
    fn whitespace_runs_count_once() {
        assert_eq!(text_len("  a \n\t b  "), 4);
        assert_eq!(text_len(""), 0);
    }
}

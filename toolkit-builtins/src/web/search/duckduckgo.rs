//! DuckDuckGo's HTML results page, read with a real HTML parser.

use std::rc::Rc;

use html5ever::tendril::TendrilSink;
use markup5ever_rcdom::{Handle, NodeData, RcDom};
use toolsmith::async_trait;

use super::{SearchBackend, SearchError, SearchResult, endpoint, text_of};

/// DuckDuckGo's HTML endpoint. It takes no API key.
#[derive(Debug, Clone)]
pub struct DuckDuckGo {
    base_url: String,
}

impl Default for DuckDuckGo {
    fn default() -> Self {
        Self::new()
    }
}

impl DuckDuckGo {
    /// DuckDuckGo at `https://html.duckduckgo.com`.
    pub fn new() -> Self {
        Self {
            base_url: "https://html.duckduckgo.com".into(),
        }
    }

    /// Use another base URL.
    pub fn with_base_url(mut self, base_url: impl Into<String>) -> Self {
        self.base_url = base_url.into();
        self
    }
}

#[async_trait]
impl SearchBackend for DuckDuckGo {
    fn name(&self) -> &'static str {
        "duckduckgo"
    }

    async fn search(
        &self,
        http: &reqwest::Client,
        query: &str,
        count: usize,
    ) -> Result<Vec<SearchResult>, SearchError> {
        let mut url = endpoint(self.name(), &self.base_url, "html/")?;
        url.query_pairs_mut().append_pair("q", query);
        let page = text_of(self.name(), http.get(url)).await?;
        let mut results = parse_results(&page);
        results.truncate(count);
        Ok(results)
    }
}

/// The organic results of a results page, ads left out.
pub(crate) fn parse_results(page: &str) -> Vec<SearchResult> {
    let dom = html5ever::parse_document(RcDom::default(), Default::default()).one(page);
    let mut results = Vec::new();
    walk(&dom.document, &mut results);
    results.retain(|r| !r.url.is_empty());
    results
}

fn walk(node: &Handle, results: &mut Vec<SearchResult>) {
    if let NodeData::Element { name, attrs, .. } = &node.data {
        let attrs = attrs.borrow();
        let attr = |key: &str| {
            attrs
                .iter()
                .find(|a| &*a.name.local == key)
                .map(|a| a.value.to_string())
        };
        let classes = attr("class").unwrap_or_default();
        let has_class = |c: &str| classes.split_whitespace().any(|x| x == c);
        if has_class("result--ad") {
            return;
        }
        if &*name.local == "a" && has_class("result__a") {
            results.push(SearchResult {
                title: text_content(node),
                url: attr("href").map(|h| target_of(&h)).unwrap_or_default(),
                snippet: String::new(),
            });
            return;
        }
        if has_class("result__snippet") {
            if let Some(last) = results.last_mut() {
                last.snippet = text_content(node);
            }
            return;
        }
    }
    for child in node.children.borrow().iter() {
        walk(child, results);
    }
}

fn text_content(node: &Handle) -> String {
    fn collect(node: &Rc<markup5ever_rcdom::Node>, out: &mut String) {
        if let NodeData::Text { contents } = &node.data {
            out.push_str(&contents.borrow());
        }
        for child in node.children.borrow().iter() {
            collect(child, out);
        }
    }
    let mut out = String::new();
    collect(node, &mut out);
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// DuckDuckGo links through `/l/?uddg=<target>`; return the target.
fn target_of(href: &str) -> String {
    let absolute = if href.starts_with("//") {
        format!("https:{href}")
    } else {
        href.to_string()
    };
    let Ok(url) = url::Url::parse(&absolute) else {
        return href.to_string();
    };
    url.query_pairs()
        .find(|(k, _)| k == "uddg")
        .map(|(_, v)| v.into_owned())
        .unwrap_or(absolute)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redirect_links_are_unwrapped_and_ads_skipped() {
        let page = r#"<div class="result result--ad"><a class="result__a" href="https://ads.example/">Ad</a></div>
            <div class="result"><h2><a class="result__a" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fwww.rust-lang.org%2F&amp;rut=x">The <b>Rust</b> Language</a></h2>
            <a class="result__snippet" href="x">A language empowering <b>everyone</b>.</a></div>"#;
        assert_eq!(
            parse_results(page),
            [SearchResult {
                title: "The Rust Language".into(),
                url: "https://www.rust-lang.org/".into(),
                snippet: "A language empowering everyone.".into(),
            }]
        );
    }
}

//! DuckDuckGo's HTML results page, read with a real HTML parser.

use std::rc::Rc;
use std::time::Instant;

use markup5ever_rcdom::{Handle, NodeData};
use reqwest::header::HeaderMap;
use toolsmith::async_trait;

use super::{SearchBackend, SearchClient, SearchError, SearchResult, endpoint, web_url};
use crate::web::extract::CONVERSION_TIME;
use crate::web::html;

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
        http: &SearchClient,
        query: &str,
        count: usize,
    ) -> Result<Vec<SearchResult>, SearchError> {
        let mut url = endpoint(self.name(), &self.base_url, "html/")?;
        url.query_pairs_mut().append_pair("q", query);
        let page = http.get(url, HeaderMap::new()).await?.body;
        // Parsing is CPU work: off the async threads.
        tokio::task::spawn_blocking(move || parse_results(&page, count))
            .await
            .map_err(|e| SearchError::Parse {
                backend: "duckduckgo",
                message: format!("the results page could not be read: {e}"),
            })
    }
}

/// At most `count` organic results of a results page, ads left out. The
/// page is parsed within the same budgets as a fetched page (depth, size,
/// time), and walked without recursion.
pub(crate) fn parse_results(page: &str, count: usize) -> Vec<SearchResult> {
    let parsed = html::parse(
        page,
        html::Budget {
            max_depth: html::MAX_DEPTH,
            max_text: page.len(),
            deadline: Instant::now() + CONVERSION_TIME,
        },
    );
    let mut results: Vec<SearchResult> = Vec::new();
    // The document is held to the end: rcdom's drop takes the children of
    // every node below the one dropped, even of nodes still referenced.
    let document = parsed.document;
    let mut stack: Vec<Handle> = vec![Rc::clone(&document)];
    // Results with a link that may reach the model.
    let mut kept = 0;
    while let Some(node) = stack.pop() {
        if kept > count {
            break;
        }
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
                continue;
            }
            if &*name.local == "a" && has_class("result__a") {
                // A link that is not http or https is kept as empty, so the
                // snippet after it is not taken for another result's.
                let url = attr("href")
                    .and_then(|h| web_url(&target_of(&h)))
                    .unwrap_or_default();
                kept += usize::from(!url.is_empty());
                results.push(SearchResult {
                    title: html::text_content(&node, TEXT_BYTES),
                    url,
                    snippet: String::new(),
                });
                continue;
            }
            if has_class("result__snippet") {
                if let Some(last) = results.last_mut() {
                    last.snippet = html::text_content(&node, TEXT_BYTES);
                }
                continue;
            }
        }
        // Children in document order: the last pushed is taken first.
        stack.extend(node.children.borrow().iter().rev().cloned());
    }
    // A snippet follows its title, so the result one past `count` was read
    // only to be sure the last one kept has its snippet.
    results.retain(|r| !r.url.is_empty());
    results.truncate(count);
    results
}

/// The most bytes of a title's or snippet's text read from the page.
const TEXT_BYTES: usize = 4 * SearchResult::MAX_SNIPPET_CHARS;

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
            parse_results(page, 10),
            [SearchResult {
                title: "The Rust Language".into(),
                url: "https://www.rust-lang.org/".into(),
                snippet: "A language empowering everyone.".into(),
            }]
        );
    }
}

//! Hostile pages, bodies and search answers against the web tools, served
//! from real loopback servers. Each test that could overflow the stack runs
//! in a child process (`web_support::isolated`), so an abort is a failed
//! test; every test is bounded in time.
#![cfg(feature = "web")]

mod web_support;

use std::time::{Duration, Instant};

use serde_json::json;
use toolsmith::{ToolContext, ToolFilter, ToolOutput, ToolRegistry};
use toolsmith_builtins::net::NetPolicy;
use toolsmith_builtins::web::{
    Brave, DuckDuckGo, HttpPolicy, SearchBackend, SearchConfig, Searxng, Tavily, WebPolicy,
};
use web_support::{Reply, Server, isolated};

/// The longest any one call here may take (debug builds included).
const CALL_DEADLINE: Duration = Duration::from_secs(120);

async fn call(ctx: &ToolContext, tool: &str, args: serde_json::Value) -> ToolOutput {
    let registry = ToolRegistry::from_inventory(&ToolFilter::default().names([tool])).unwrap();
    tokio::time::timeout(CALL_DEADLINE, registry.call(tool, args, ctx))
        .await
        .unwrap_or_else(|_| panic!("{tool} did not return within {CALL_DEADLINE:?}"))
}

fn allowing(server: &Server) -> NetPolicy {
    NetPolicy::new()
        .allow(&format!("127.0.0.1:{}", server.port()))
        .unwrap()
}

/// `open` repeated `depth` times, a marker, then `close` repeated.
fn nested(open: &str, close: &str, depth: usize) -> String {
    format!(
        "<html><body>{}BOTTOM-MARKER{}<p>after</p></body></html>",
        open.repeat(depth),
        close.repeat(depth)
    )
}

/// One page per kind of nesting: blocks, inline formatting, lists, tables,
/// foreign content, self-closed tags, links, quotes, and formatting
/// elements the tree builder re-opens by itself.
fn hostile_pages(depth: usize) -> Vec<(&'static str, String)> {
    let reopened: String = (0..depth / 50)
        .map(|round| {
            let bolds: String = (0..50).map(|i| format!("<b id=r{round}i{i}>")).collect();
            format!("<div>{bolds}</div>x")
        })
        .collect();
    vec![
        ("div", nested("<div>", "</div>", depth)),
        ("unclosed div", nested("<div>", "", depth)),
        ("b", nested("<b>", "</b>", depth)),
        (
            "span with attributes",
            nested("<span class=a title=t>", "</span>", depth),
        ),
        ("list", nested("<ul><li>", "</li></ul>", depth)),
        (
            "table",
            nested("<table><tr><td>", "</td></tr></table>", depth),
        ),
        ("svg", format!("<svg>{}", nested("<g>", "</g>", depth))),
        (
            "math",
            format!("<math>{}", nested("<mrow>", "</mrow>", depth)),
        ),
        ("self-closed", nested("<div/>", "", depth)),
        (
            "link",
            nested("<a href=\"https://example.com/\">", "</a>", depth),
        ),
        ("quote", nested("<blockquote>", "</blockquote>", depth)),
        ("template", nested("<template>", "</template>", depth)),
        (
            "re-opened formatting",
            format!("<html><body>{reopened}BOTTOM-MARKER</body></html>"),
        ),
    ]
}

/// A server answering `/<index>` with page `index` of `pages`, as HTML.
async fn serving_pages(pages: Vec<String>) -> Server {
    Server::start(move |request| {
        let index: usize = request.target[1..]
            .split(['/', '?'])
            .next()
            .and_then(|first| first.parse().ok())
            .unwrap_or(0);
        Reply::ok("text/html", pages[index].clone())
    })
    .await
}

#[tokio::test]
async fn deeply_nested_pages_of_every_kind_are_converted() {
    if isolated("deeply_nested_pages_of_every_kind_are_converted") {
        return;
    }
    // A few thousand levels (about 15 KB) aborted the process before.
    let pages = hostile_pages(3_000);
    let names: Vec<&str> = pages.iter().map(|(name, _)| *name).collect();
    let server = serving_pages(pages.into_iter().map(|(_, page)| page).collect()).await;
    let ctx = ToolContext::new().with_state(WebPolicy::new().with_net(allowing(&server)));
    for (index, name) in names.iter().enumerate() {
        let out = call(
            &ctx,
            "web_fetch",
            json!({ "url": server.url(&format!("/{index}")) }),
        )
        .await;
        assert!(!out.is_error, "{name}: {}", out.content);
        assert!(out.content.chars().count() < 52_000, "{name}");
        // Text past the depth budget is kept, flattened.
        if !matches!(*name, "svg" | "math" | "template") {
            assert!(
                out.content.contains("BOTTOM-MARKER"),
                "{name}: {}",
                out.content
            );
        }
    }
}

#[tokio::test]
async fn deeply_nested_pages_of_every_kind_give_their_text_in_text_mode() {
    if isolated("deeply_nested_pages_of_every_kind_give_their_text_in_text_mode") {
        return;
    }
    let pages = hostile_pages(3_000);
    let names: Vec<&str> = pages.iter().map(|(name, _)| *name).collect();
    let server = serving_pages(pages.into_iter().map(|(_, page)| page).collect()).await;
    let ctx = ToolContext::new().with_state(WebPolicy::new().with_net(allowing(&server)));
    for (index, name) in names.iter().enumerate() {
        let out = call(
            &ctx,
            "web_fetch",
            json!({ "url": server.url(&format!("/{index}")), "extract_mode": "text" }),
        )
        .await;
        assert!(!out.is_error, "{name}: {}", out.content);
        assert!(out.content.chars().count() < 52_000, "{name}");
        if !matches!(*name, "svg" | "math" | "template") {
            assert!(
                out.content.contains("BOTTOM-MARKER"),
                "{name}: {}",
                out.content
            );
        }
    }
}

/// A sentence of prose, long enough to be scored as a paragraph.
const PROSE: &str = "The article goes on, sentence after sentence, with commas, clauses and facts.";

#[tokio::test]
async fn the_main_content_is_found_past_a_huge_navigation_and_under_deep_nesting() {
    if isolated("the_main_content_is_found_past_a_huge_navigation_and_under_deep_nesting") {
        return;
    }
    // Each list of links is longer than the output cap: reading only as
    // much of the page as is shown would never reach the article.
    let links: String = (0..2_000)
        .map(|i| format!("<li><a href=\"/section/{i}\">Section {i}</a></li>"))
        .collect();
    let article: String = (0..20)
        .map(|i| format!("<p>ARTICLE-{i}. {PROSE}</p>"))
        .collect();
    let huge_nav = format!(
        "<html><body><nav><ul>{links}</ul></nav><div class=sidebar>{links}</div>\
         <article>{article}</article><footer>{links}</footer></body></html>"
    );
    // The article sits under more levels than the depth budget: its text
    // is flattened into the block at the budget, and found there.
    let buried = format!(
        "<html><body><nav>{links}</nav>{}<article>{article}</article>{}</body></html>",
        "<div>".repeat(5_000),
        "</div>".repeat(5_000)
    );
    let server = serving_pages(vec![huge_nav, buried]).await;
    let ctx = ToolContext::new().with_state(WebPolicy::new().with_net(allowing(&server)));
    for index in 0..2 {
        for mode in ["markdown", "text"] {
            let out = call(
                &ctx,
                "web_fetch",
                json!({ "url": server.url(&format!("/{index}")), "extract_mode": mode }),
            )
            .await;
            assert!(!out.is_error, "{}", out.content);
            assert!(out.content.contains("ARTICLE-0."), "{index} {mode}");
            assert!(out.content.contains("ARTICLE-19."), "{index} {mode}");
            assert!(!out.content.contains("Section 1999"), "{index} {mode}");
        }
    }
}

#[tokio::test]
async fn a_page_of_a_hundred_thousand_scored_blocks_stays_within_the_budgets() {
    // Every block is a candidate: the scoring is linear in the page, and
    // the output is capped like any other.
    let page = format!(
        "<html><body>{}</body></html>",
        format!("<div class=post><div><p>{PROSE}</p></div></div>").repeat(100_000)
    );
    let server = Server::start(move |_| Reply::ok("text/html", page.clone())).await;
    let ctx = ToolContext::new().with_state(
        WebPolicy::new()
            .with_net(allowing(&server))
            .with_max_response_bytes(16 * 1024 * 1024)
            .with_max_chars(2_000),
    );
    for mode in ["markdown", "text"] {
        let out = call(
            &ctx,
            "web_fetch",
            json!({ "url": server.url("/"), "extract_mode": mode }),
        )
        .await;
        assert!(!out.is_error, "{}", out.content);
        assert!(out.content.contains(PROSE), "{}", out.content);
        assert!(out.content.chars().count() < 2_500, "{}", out.content);
        assert!(
            out.content.contains("the rest is not shown"),
            "{}",
            out.content
        );
    }
}

#[tokio::test]
async fn the_deepest_pages_convert_within_the_budget() {
    if isolated("the_deepest_pages_convert_within_the_budget") {
        return;
    }
    let depths = [3_000, 100_000, 1_000_000];
    let pages: Vec<String> = depths
        .iter()
        .map(|&d| nested("<div>", "</div>", d))
        .collect();
    let sizes: Vec<usize> = pages.iter().map(String::len).collect();
    let server = serving_pages(pages).await;
    let ctx = ToolContext::new().with_state(
        WebPolicy::new()
            .with_net(allowing(&server))
            .with_max_response_bytes(16 * 1024 * 1024),
    );
    for (index, depth) in depths.iter().enumerate() {
        let started = Instant::now();
        let out = call(
            &ctx,
            "web_fetch",
            json!({ "url": server.url(&format!("/{index}")) }),
        )
        .await;
        let took = started.elapsed();
        assert!(!out.is_error, "{}", out.content);
        let complete = out.content.contains("BOTTOM-MARKER");
        // Either read to the end, or stopped at the time budget and saying so.
        assert!(
            complete
                || out
                    .content
                    .contains("[… reading the page stopped after 5 s"),
            "{}",
            out.content
        );
        println!(
            "FIGURE: a page nested {depth} levels deep ({} bytes) fetched and converted in {} ms ({})",
            sizes[index],
            took.as_millis(),
            if complete {
                "read to the end"
            } else {
                "stopped at the time budget"
            }
        );
    }
}

#[tokio::test]
async fn a_huge_page_is_converted_only_up_to_the_cap() {
    let page = format!(
        "<html><body>{}<p>LAST</p></body></html>",
        "<p>Some words of text in a paragraph.</p>\n".repeat(50_000)
    );
    let server = Server::start(move |_| Reply::ok("text/html", page.clone())).await;
    let ctx = ToolContext::new().with_state(
        WebPolicy::new()
            .with_net(allowing(&server))
            .with_max_response_bytes(4 * 1024 * 1024)
            .with_max_chars(1_000),
    );
    let out = call(&ctx, "web_fetch", json!({ "url": server.url("/") })).await;
    assert!(!out.is_error, "{}", out.content);
    assert!(
        out.content
            .contains("[… the content goes on past 1000 characters; the rest is not shown]"),
        "{}",
        out.content
    );
    assert!(!out.content.contains("LAST"));
    assert!(out.content.chars().count() < 1_400, "{}", out.content);
}

/// Arrays nested `levels` deep, repeated until the body is about `bytes`
/// long: indentation makes it hundreds of times longer pretty-printed.
fn deep_json(levels: usize, bytes: usize) -> String {
    let unit = format!("{}1{}", "[".repeat(levels), "]".repeat(levels));
    let units = bytes / (unit.len() + 1);
    format!("[{}]", vec![unit; units].join(","))
}

#[tokio::test]
async fn json_formatting_stops_at_the_cap() {
    if isolated("json_formatting_stops_at_the_cap") {
        return;
    }
    let wide = deep_json(120, 500_000);
    let too_deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let server = Server::start(move |request| match request.target.as_str() {
        "/wide" => Reply::ok("application/json", wide.clone()),
        _ => Reply::ok("application/json", too_deep.clone()),
    })
    .await;
    let net = allowing(&server);
    let http = ToolContext::new().with_state(
        HttpPolicy::new(["127.0.0.1"])
            .with_net(net.clone())
            .with_max_response_bytes(1024 * 1024),
    );
    let fetch = ToolContext::new().with_state(
        WebPolicy::new()
            .with_net(net)
            .with_max_response_bytes(1024 * 1024),
    );
    for path in ["/wide", "/deep"] {
        let url = server.url(path);
        let outs = [
            call(
                &http,
                "http_request",
                json!({ "method": "GET", "url": url }),
            )
            .await,
            call(&fetch, "web_fetch", json!({ "url": url })).await,
        ];
        for out in outs {
            assert!(!out.is_error, "{path}: {}", &out.content[..300]);
            let chars = out.content.chars().count();
            assert!(chars < 50_500, "{path}: {chars} characters");
            assert!(out.content.contains("not shown"), "{path}");
        }
    }
}

/// A config for `backend` at `server`'s loopback address (allowed because
/// it is the backend's own address).
fn config_for(name: &str, base: &str) -> SearchConfig {
    let base = base.to_string();
    match name {
        "brave" => SearchConfig::new(Brave::new("k").with_base_url(base)),
        "tavily" => SearchConfig::new(Tavily::new("k").with_base_url(base)),
        "searxng" => SearchConfig::new(Searxng::new(base)),
        _ => SearchConfig::new(DuckDuckGo::new().with_base_url(base)),
    }
}

const BACKENDS: [&str; 4] = ["brave", "tavily", "searxng", "duckduckgo"];

/// The answer each backend's API gives, holding `results` as
/// `(title, url, snippet)`.
fn answer(backend: &str, results: &[(String, String, String)]) -> Reply {
    let items: Vec<serde_json::Value> = results
        .iter()
        .map(|(title, url, snippet)| {
            json!({ "title": title, "url": url, "description": snippet, "content": snippet })
        })
        .collect();
    match backend {
        "brave" => Reply::ok(
            "application/json",
            json!({ "web": { "results": items } }).to_string(),
        ),
        "tavily" | "searxng" => {
            Reply::ok("application/json", json!({ "results": items }).to_string())
        }
        _ => {
            let page: String = results
                .iter()
                .map(|(title, url, snippet)| {
                    format!(
                        "<div class=\"result\"><a class=\"result__a\" href=\"{}\">{title}</a>\
                         <a class=\"result__snippet\">{snippet}</a></div>",
                        url.replace('&', "&amp;").replace('"', "&quot;")
                    )
                })
                .collect();
            Reply::ok("text/html", format!("<html><body>{page}</body></html>"))
        }
    }
}

async fn search(
    config: &SearchConfig,
) -> Result<Vec<toolsmith_builtins::web::SearchResult>, String> {
    tokio::time::timeout(CALL_DEADLINE, config.search("q", 10))
        .await
        .expect("the search did not return in time")
        .map_err(|e| e.to_string())
}

#[tokio::test]
async fn only_http_and_https_result_urls_reach_the_model() {
    let hostile = [
        "javascript:alert(1)",
        "JavaScript:alert(1)",
        " javascript:alert(1)",
        "java\tscript:alert(1)",
        "file:///etc/passwd",
        "data:text/html,<script>alert(1)</script>",
        "vbscript:msgbox(1)",
        "ftp://files.example/x",
        "about:blank",
        "chrome://settings",
        "//evil.example/x",
        "/relative/path",
        "http://",
        "",
    ];
    let mut results: Vec<(String, String, String)> = hostile
        .iter()
        .map(|url| ("bad".to_string(), url.to_string(), "bad".to_string()))
        .collect();
    results.push(("good".into(), "https://ok.example/a".into(), "s".into()));
    results.push(("good".into(), "http://ok.example/b".into(), "s".into()));
    // DuckDuckGo's own redirect links are unwrapped first.
    let ddg_wrapped = [
        "//duckduckgo.com/l/?uddg=javascript%3Aalert(1)",
        "//duckduckgo.com/l/?uddg=file%3A%2F%2F%2Fetc%2Fpasswd",
    ];
    for backend in BACKENDS {
        let mut listed = results.clone();
        if backend == "duckduckgo" {
            for url in ddg_wrapped {
                listed.insert(0, ("bad".into(), url.into(), "bad".into()));
            }
        }
        let server = Server::start(move |_| answer(backend, &listed)).await;
        let found = search(&config_for(backend, &server.url("/")))
            .await
            .unwrap();
        let urls: Vec<&str> = found.iter().map(|r| r.url.as_str()).collect();
        let mut expected = vec!["https://ok.example/a", "http://ok.example/b"];
        if backend == "duckduckgo" {
            // Its pages link scheme-relative: read as https.
            expected.insert(0, "https://evil.example/x");
        }
        assert_eq!(urls, expected, "{backend}");
    }
}

#[tokio::test]
async fn huge_backend_answers_are_read_only_up_to_the_limit_and_capped() {
    for backend in BACKENDS {
        // An answer that never ends: read up to the byte limit, no further.
        let endless = Server::start(move |_| Reply::Endless {
            content_type: if backend == "duckduckgo" {
                "text/html"
            } else {
                "application/json"
            }
            .into(),
            fill: b' ',
        })
        .await;
        let outcome = search(&config_for(backend, &endless.url("/"))).await;
        match backend {
            "duckduckgo" => assert_eq!(outcome, Ok(Vec::new())),
            _ => assert!(
                outcome
                    .as_ref()
                    .unwrap_err()
                    .contains("larger than the byte limit"),
                "{backend}: {outcome:?}"
            ),
        }
        // Fields of megabytes are cut where the results are built.
        let long = "word ".repeat(200_000);
        let results = vec![(long.clone(), "https://ok.example/".to_string(), long); 3];
        let server = Server::start(move |_| answer(backend, &results)).await;
        let config =
            config_for(backend, &server.url("/")).with_max_response_bytes(16 * 1024 * 1024);
        let ctx = ToolContext::new().with_state(config);
        let out = call(&ctx, "web_search", json!({ "query": "q", "count": 10 })).await;
        assert!(!out.is_error, "{backend}: {}", &out.content[..300]);
        let chars = out.content.chars().count();
        assert!(chars < 5_000, "{backend}: {chars} characters");
        assert_eq!(out.content.matches("https://ok.example/").count(), 3);
    }
}

#[tokio::test]
async fn deeply_nested_duckduckgo_pages_are_read_within_budgets() {
    if isolated("deeply_nested_duckduckgo_pages_are_read_within_budgets") {
        return;
    }
    let result = "<div class=\"result\"><a class=\"result__a\" href=\"https://ok.example/\">Found</a>\
                  <a class=\"result__snippet\">snippet</a></div>";
    let mut pages: Vec<String> = hostile_pages(3_000)
        .into_iter()
        .map(|(_, page)| page.replace("</body>", &format!("{result}</body>")))
        .collect();
    pages.push(format!("{}{result}", "<div>".repeat(400_000)));
    pages.push(format!(
        "{}{}{result}",
        "<div>".repeat(400_000),
        "</div>".repeat(400_000)
    ));
    let count = pages.len();
    let server = serving_pages(pages).await;
    for index in 0..count {
        let config =
            SearchConfig::new(DuckDuckGo::new().with_base_url(server.url(&format!("/{index}"))))
                .with_max_response_bytes(8 * 1024 * 1024);
        let started = Instant::now();
        let found = search(&config).await;
        println!(
            "page {index}: {:?} in {} ms",
            found.as_ref().map(Vec::len),
            started.elapsed().as_millis()
        );
        let found = found.unwrap();
        assert!(found.len() <= 1, "{found:?}");
        // A result after the nesting closes is found; one nested past the
        // depth budget is flattened away.
        if index == 0 {
            assert_eq!(found.len(), 1);
        }
    }
}

#[tokio::test]
async fn every_backend_redirect_is_checked_by_the_network_guard() {
    for backend in BACKENDS {
        let refused = Server::start(move |_| answer(backend, &[])).await;
        let target = refused.url("/stolen");
        let backend_server = Server::start(move |_| Reply::redirect(302, &target)).await;
        let err = search(&config_for(backend, &backend_server.url("/")))
            .await
            .unwrap_err();
        assert!(
            err.contains("only public addresses may be reached"),
            "{backend}: {err}"
        );
        assert_eq!(backend_server.requests().len(), 1, "{backend}");
        assert_eq!(
            refused.requests().len(),
            0,
            "{backend}: the refused port was reached"
        );
        // A redirect to the backend's own host and port is followed.
        let server = Server::start(move |request| {
            if request.target.contains("/moved") {
                answer(
                    backend,
                    &[("t".into(), "https://ok.example/".into(), "s".into())],
                )
            } else {
                Reply::redirect(307, "/moved")
            }
        })
        .await;
        let found = search(&config_for(backend, &server.url("/")))
            .await
            .unwrap();
        assert_eq!(found.len(), 1, "{backend}");
        // An allow list opens other destinations.
        let allowed = Server::start(move |_| answer(backend, &[])).await;
        let target = allowed.url("/");
        let redirecting = Server::start(move |_| Reply::redirect(302, &target)).await;
        let config = config_for(backend, &redirecting.url("/")).with_net(allowing(&allowed));
        assert_eq!(search(&config).await, Ok(Vec::new()), "{backend}");
        assert_eq!(allowed.requests().len(), 1);
    }
}

/// A backend a host writes itself goes through the same client, and its
/// results meet the same URL check.
#[derive(Debug)]
struct Custom(String);

#[toolsmith::async_trait]
impl SearchBackend for Custom {
    fn name(&self) -> &'static str {
        "custom"
    }

    async fn search(
        &self,
        http: &toolsmith_builtins::web::SearchClient,
        _query: &str,
        _count: usize,
    ) -> Result<Vec<toolsmith_builtins::web::SearchResult>, toolsmith_builtins::web::SearchError>
    {
        let answer = http
            .get(url::Url::parse(&self.0).unwrap(), Default::default())
            .await?;
        Ok(vec![toolsmith_builtins::web::SearchResult {
            title: answer.body,
            url: "javascript:alert(1)".into(),
            snippet: String::new(),
        }])
    }
}

#[tokio::test]
async fn a_custom_backend_is_guarded_too() {
    let refused = Server::start(|_| Reply::ok("text/plain", "x")).await;
    let target = refused.url("/");
    let server = Server::start(move |_| Reply::redirect(302, &target)).await;
    let err = search(&SearchConfig::new(Custom(server.url("/"))))
        .await
        .unwrap_err();
    assert!(err.contains("only public addresses"), "{err}");
    assert_eq!(refused.requests().len(), 0);
    let plain = Server::start(|_| Reply::ok("text/plain", "x")).await;
    let found = search(&SearchConfig::new(Custom(plain.url("/"))))
        .await
        .unwrap();
    assert!(found.is_empty(), "{found:?}");
}

/// The parsed tree is dropped without recursion: rcdom's nodes let go of
/// their descendants iteratively, so a tree of any depth cannot overflow
/// the stack when it is freed.
#[test]
fn a_tree_100_000_levels_deep_is_dropped_without_recursion() {
    if isolated("a_tree_100_000_levels_deep_is_dropped_without_recursion") {
        return;
    }
    use markup5ever_rcdom::{Node, NodeData};
    // On a thread with the default stack, as a host's would be.
    std::thread::spawn(|| {
        let root = Node::new(NodeData::Document);
        let mut parent = std::rc::Rc::clone(&root);
        for _ in 0..100_000 {
            let child = Node::new(NodeData::Comment {
                contents: "level".into(),
            });
            child.parent.set(Some(std::rc::Rc::downgrade(&parent)));
            parent
                .children
                .borrow_mut()
                .push(std::rc::Rc::clone(&child));
            parent = child;
        }
        drop(parent);
        drop(root);
    })
    .join()
    .unwrap();
}

/// A server that compresses its body unasked (this client asks for no
/// compression and decodes none): the model gets an error naming the
/// encoding, not the compressed bytes as text; a body marked `identity` is
/// read as usual.
#[tokio::test]
async fn a_body_compressed_unasked_is_refused_by_name() {
    let gzip_of_hello: &[u8] = &[
        0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0xcb, 0x48, 0xcd, 0xc9, 0xc9,
        0x07, 0x00, 0x86, 0xa6, 0x10, 0x36, 0x05, 0x00, 0x00, 0x00,
    ];
    let server = Server::start(move |request| {
        let encoding = match request.target.as_str() {
            "/gzip" => "gzip",
            "/twice" => "identity, br",
            _ => "identity",
        };
        let body: Vec<u8> = if encoding == "identity" {
            b"<p>plain hello</p>".to_vec()
        } else {
            gzip_of_hello.to_vec()
        };
        Reply::Fixed {
            status: 200,
            headers: vec![
                ("Content-Type".into(), "text/html".into()),
                ("Content-Encoding".into(), encoding.into()),
            ],
            body,
        }
    })
    .await;
    let ctx = ToolContext::new().with_state(WebPolicy::new().with_net(allowing(&server)));
    for (path, encoding) in [("/gzip", "gzip"), ("/twice", "br")] {
        let out = call(&ctx, "web_fetch", json!({"url": server.url(path)})).await;
        assert!(out.is_error, "{path}: {}", out.content);
        assert!(
            out.content.contains(&format!("`{encoding}`")),
            "{path}: {}",
            out.content
        );
        assert!(!out.content.contains('\u{8b}'), "{path}: {}", out.content);
    }
    let out = call(&ctx, "web_fetch", json!({"url": server.url("/plain")})).await;
    assert!(!out.is_error, "{}", out.content);
    assert!(out.content.contains("plain hello"), "{}", out.content);
}

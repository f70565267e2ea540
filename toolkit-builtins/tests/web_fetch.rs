//! `web_fetch` against real HTTP servers on loopback.
#![cfg(feature = "web")]

mod web_support;

use serde_json::json;
use toolsmith::exec::ShapeConfig;
use toolsmith::pipeline::Pipeline;
use toolsmith::{ToolCategory, ToolContext, ToolFilter, ToolOutput, ToolRegistry};
use toolsmith_builtins::net::NetPolicy;
use toolsmith_builtins::web::{EXTERNAL_CONTENT_BANNER, WebPolicy};
use web_support::{Reply, Server};

/// The tool's own output, not cut to the length the pipeline's shaping allows by default.
fn registry() -> ToolRegistry {
    let whole = Pipeline::new().with_shape(ShapeConfig::default().max_chars(usize::MAX));
    ToolRegistry::from_inventory(&ToolFilter::default().names(["web_fetch"]))
        .unwrap()
        .with_pipeline(whole)
}

/// A context whose guard allows exactly these loopback servers.
fn allowing(servers: &[&Server], policy: WebPolicy) -> ToolContext {
    let mut net = NetPolicy::new();
    for server in servers {
        net = net.allow(&format!("127.0.0.1:{}", server.port())).unwrap();
    }
    ToolContext::new().with_state(policy.with_net(net))
}

async fn fetch(ctx: &ToolContext, url: &str) -> ToolOutput {
    registry()
        .call("web_fetch", json!({ "url": url }), ctx)
        .await
}

#[tokio::test]
async fn html_becomes_framed_markdown() {
    let server = Server::start(|_| {
        Reply::ok(
            "text/html; charset=utf-8",
            "<html><head><title>T</title><script>steal()</script></head>\
             <body><h1>Title</h1><p>Hello <b>world</b>, see <a href=\"https://example.com/\">this</a>.</p></body></html>",
        )
    })
    .await;
    let out = fetch(
        &allowing(&[&server], WebPolicy::new()),
        &server.url("/page"),
    )
    .await;
    assert!(!out.is_error, "{}", out.content);
    assert_eq!(
        out.content,
        format!(
            "{EXTERNAL_CONTENT_BANNER}\nURL: {}\nStatus: 200\nTitle: T\nContent-Type: text/html\n\n\
             # Title\n\nHello **world**, see [this](https://example.com/).\n\
             [End of external content]",
            server.url("/page")
        )
    );
}

#[tokio::test]
async fn json_is_pretty_printed_and_binary_summarized() {
    let server = Server::start(|request| match request.target.as_str() {
        "/data.json" => Reply::ok(
            "application/json",
            r#"{"name":"toolsmith","tags":["a","b"]}"#,
        ),
        _ => Reply::ok("image/png", vec![0x89, b'P', b'N', b'G', 0, 0, 0, 0]),
    })
    .await;
    let ctx = allowing(&[&server], WebPolicy::new());
    let out = fetch(&ctx, &server.url("/data.json")).await;
    assert!(
        out.content.contains(
            "{\n  \"name\": \"toolsmith\",\n  \"tags\": [\n    \"a\",\n    \"b\"\n  ]\n}"
        ),
        "{}",
        out.content
    );
    let out = fetch(&ctx, &server.url("/logo.png")).await;
    assert!(
        out.content
            .contains("(binary content of image/png, 8 bytes; not shown as text)"),
        "{}",
        out.content
    );
}

#[tokio::test]
async fn content_is_cut_at_the_character_cap() {
    let server = Server::start(|_| Reply::ok("text/plain", "é".repeat(1000))).await;
    let ctx = allowing(&[&server], WebPolicy::new().with_max_chars(300));
    let out = registry()
        .call(
            "web_fetch",
            json!({ "url": server.url("/"), "max_chars": 200 }),
            &ctx,
        )
        .await;
    assert!(
        out.content.contains(&format!(
            "\n\n{}\n[… 800 more characters not shown]",
            "é".repeat(200)
        )),
        "{}",
        out.content
    );
    // The host's cap wins over a larger request.
    let out = registry()
        .call(
            "web_fetch",
            json!({ "url": server.url("/"), "max_chars": 5000 }),
            &ctx,
        )
        .await;
    assert!(
        out.content.contains("[… 700 more characters not shown]"),
        "{}",
        out.content
    );
}

#[tokio::test]
async fn the_response_is_read_only_up_to_the_byte_limit() {
    let server = Server::start(|_| Reply::Endless {
        content_type: "text/plain".into(),
        fill: b'x',
    })
    .await;
    let ctx = allowing(
        &[&server],
        WebPolicy::new()
            .with_max_response_bytes(100_000)
            .with_max_chars(1_000_000),
    );
    let out = fetch(&ctx, &server.url("/endless")).await;
    assert!(!out.is_error, "{}", out.content);
    assert!(
        out.content
            .contains("Note: the response is larger than 100000 bytes; only that much was read.")
    );
    let (_, body) = out.content.split_once("\n\n").unwrap();
    let body = body.strip_suffix("\n[End of external content]").unwrap();
    assert_eq!(body, "x".repeat(100_000));
}

#[tokio::test]
async fn a_redirect_from_an_allowed_host_to_loopback_is_refused() {
    let target = Server::start(|_| Reply::ok("text/plain", "internal secret")).await;
    let port = target.port();
    let allowed = Server::start(move |request| match request.target.as_str() {
        "/plain" => Reply::redirect(302, &format!("http://127.0.0.1:{port}/admin")),
        "/decimal" => Reply::redirect(301, &format!("http://2130706433:{port}/admin")),
        "/name" => Reply::redirect(307, &format!("http://localhost:{port}/admin")),
        "/mapped" => Reply::redirect(308, &format!("http://[::ffff:127.0.0.1]:{port}/admin")),
        _ => Reply::redirect(303, &format!("//127.0.0.1:{port}/admin")),
    })
    .await;
    let ctx = allowing(&[&allowed], WebPolicy::new());
    for path in ["/plain", "/decimal", "/name", "/mapped", "/relative"] {
        let out = fetch(&ctx, &allowed.url(path)).await;
        assert!(out.is_error, "{path}: {}", out.content);
        assert!(
            out.content.contains("only public addresses may be reached"),
            "{path}: {}",
            out.content
        );
    }
    assert_eq!(allowed.requests().len(), 5);
    assert!(
        target.requests().is_empty(),
        "the redirect target was contacted"
    );
}

#[tokio::test]
async fn redirects_between_allowed_hosts_are_followed_at_most_five_times() {
    let end = Server::start(|_| Reply::ok("text/plain", "arrived")).await;
    let end_url = end.url("/end");
    let hops = Server::start(move |request| {
        let n: u32 = request
            .target
            .trim_start_matches("/hop/")
            .parse()
            .unwrap_or(0);
        if n == 0 {
            Reply::redirect(302, &end_url)
        } else {
            Reply::redirect(302, &format!("/hop/{}", n - 1))
        }
    })
    .await;
    let ctx = allowing(&[&hops, &end], WebPolicy::new());
    // Four hops and the jump to the end server: five redirects.
    let out = fetch(&ctx, &hops.url("/hop/4")).await;
    assert!(!out.is_error, "{}", out.content);
    assert!(out.content.contains(&format!("URL: {}", end.url("/end"))));
    assert!(out.content.contains("arrived"));
    let out = fetch(&ctx, &hops.url("/hop/5")).await;
    assert!(out.is_error);
    assert!(
        out.content.contains("more than 5 redirects"),
        "{}",
        out.content
    );
}

#[tokio::test]
async fn loopback_outside_the_allow_list_is_never_contacted() {
    let server = Server::start(|_| Reply::ok("text/plain", "hi")).await;
    let other_port = Server::start(|_| Reply::ok("text/plain", "hi")).await;
    let ctx = allowing(&[&other_port], WebPolicy::new());
    for url in [
        server.url("/"),
        format!("http://localhost:{}/", server.port()),
        format!("http://0x7f.0.0.1:{}/", server.port()),
        format!("http://[::1]:{}/", server.port()),
    ] {
        let out = fetch(&ctx, &url).await;
        assert!(out.is_error, "{url}");
        assert!(out.content.contains("loopback"), "{url}: {}", out.content);
    }
    let out = fetch(
        &ToolContext::new().with_state(WebPolicy::new()),
        &other_port.url("/"),
    )
    .await;
    assert!(out.is_error);
    assert!(server.requests().is_empty());
    assert!(other_port.requests().is_empty());
}

#[tokio::test]
async fn only_http_and_https_urls_are_fetched() {
    let ctx = ToolContext::new().with_state(WebPolicy::new());
    for url in ["file:///etc/passwd", "ftp://example.com/", "not a url"] {
        let out = fetch(&ctx, url).await;
        assert!(out.is_error, "{url}");
    }
    let out = fetch(&ctx, "file:///etc/passwd").await;
    assert!(
        out.content.contains("only http and https URLs are allowed"),
        "{}",
        out.content
    );
}

#[tokio::test]
async fn a_server_that_never_answers_times_out() {
    let server = Server::start(|_| Reply::Silent).await;
    let ctx = allowing(
        &[&server],
        WebPolicy::new().with_timeout(std::time::Duration::from_millis(300)),
    );
    let out = fetch(&ctx, &server.url("/")).await;
    assert!(out.is_error);
    assert!(out.content.contains("timed out"), "{}", out.content);
}

#[tokio::test]
async fn the_tool_is_off_until_the_host_enables_it() {
    let registry = registry();
    let tool = registry.get("web_fetch").unwrap();
    assert_eq!(tool.spec().category, Some(ToolCategory::NetworkRead));
    let out = registry
        .call(
            "web_fetch",
            json!({ "url": "https://example.com/" }),
            &ToolContext::new(),
        )
        .await;
    assert!(out.is_error);
    assert!(
        out.content
            .contains("it needs a `toolsmith_builtins::web::WebPolicy` in its context"),
        "{}",
        out.content
    );
}

fn page_fixture(name: &str) -> String {
    let path = format!("{}/tests/fixtures/web/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// A loopback server answering `/<name>` with the HTML fixture `name`.
async fn serving_fixtures() -> Server {
    Server::start(|request| {
        let name = request.target.trim_start_matches('/').to_string();
        Reply::ok("text/html; charset=utf-8", page_fixture(&name))
    })
    .await
}

/// `web_fetch` with `args`, bounded in time, which must succeed.
async fn fetch_with(ctx: &ToolContext, args: serde_json::Value) -> ToolOutput {
    let out = tokio::time::timeout(
        std::time::Duration::from_secs(60),
        registry().call("web_fetch", args, ctx),
    )
    .await
    .expect("web_fetch returned in time");
    assert!(!out.is_error, "{}", out.content);
    out
}

/// The content between the head and the closing line.
fn body_of(out: &ToolOutput) -> &str {
    let (_, body) = out.content.split_once("\n\n").unwrap();
    body.strip_suffix("\n[End of external content]").unwrap()
}

/// What the article of `article_page.html` says: all of it must reach the model.
const ARTICLE: &[&str] = &[
    "Why the river flooded",
    "By Ada Marsh, environment reporter.",
    "For the third time in a decade, the River Wend burst its banks",
    "Residents of Mill Lane, Tanner's Row",
    "What the engineers found",
    "the sluice at Harlow Weir had jammed half closed",
    "The sluice had last been serviced in 2019",
    "The flood wall along the quay held",
    "luck is not a flood defence",
    "The Environment Agency said that it would publish its report",
];

/// The boilerplate around it: none of it may reach the model.
const BOILERPLATE: &[&str] = &[
    "Skip to content",
    "cookies",
    "Manage preferences",
    "The Riverside Gazette.",
    "Sport",
    "Search the Gazette",
    "Share on Twitter",
    "Email this story",
    "Tagged:",
    "Related stories",
    "Council approves the new footbridge",
    "Great article",
    "Most read",
    "Sign up for our daily briefing",
    "All rights reserved",
    "Privacy policy",
    "TRACKING-SCRIPT",
    "NOSCRIPT-PIXEL",
    "font-family",
];

#[tokio::test]
async fn a_pages_main_content_is_kept_and_its_boilerplate_dropped() {
    let server = serving_fixtures().await;
    let ctx = allowing(&[&server], WebPolicy::new());
    let out = fetch_with(&ctx, json!({ "url": server.url("/article_page.html") })).await;
    assert!(
        out.content
            .contains("\nTitle: Why the river flooded | The Riverside Gazette\n"),
        "{}",
        out.content
    );
    let body = body_of(&out);
    assert!(body.starts_with("# Why the river flooded\n\n"), "{body}");
    assert!(body.contains("## What the engineers found"), "{body}");
    assert!(
        body.contains("> We were lucky that the wall held"),
        "{body}"
    );
    for kept in ARTICLE {
        assert!(body.contains(kept), "`{kept}` is missing:\n{body}");
    }
    for dropped in BOILERPLATE {
        assert!(
            !body.contains(dropped),
            "`{dropped}` reached the model:\n{body}"
        );
    }
    assert_eq!(out.metadata["extractor"], "markdown");
    assert_eq!(out.metadata["main_content"], true);
}

#[tokio::test]
async fn extract_mode_text_gives_the_same_content_without_markup() {
    let server = serving_fixtures().await;
    let ctx = allowing(&[&server], WebPolicy::new());
    let url = server.url("/article_page.html");
    let out = fetch_with(&ctx, json!({ "url": url, "extract_mode": "text" })).await;
    let body = body_of(&out);
    assert!(
        body.starts_with("Why the river flooded\n\nBy Ada Marsh"),
        "{body}"
    );
    assert!(
        body.contains("\n- The sluice had last been serviced in 2019"),
        "{body}"
    );
    for kept in ARTICLE {
        assert!(body.contains(kept), "`{kept}` is missing:\n{body}");
    }
    for dropped in BOILERPLATE {
        assert!(
            !body.contains(dropped),
            "`{dropped}` reached the model:\n{body}"
        );
    }
    for markup in ["#", "*", "](", "> ", "<"] {
        assert!(!body.contains(markup), "`{markup}` in text mode:\n{body}");
    }
    assert_eq!(out.metadata["extractor"], "text");
    // The spelling other agents give the parameter means the same.
    let camel = fetch_with(&ctx, json!({ "url": url, "extractMode": "text" })).await;
    assert_eq!(body_of(&camel), body);
}

#[tokio::test]
async fn a_page_without_a_main_element_falls_back_sensibly() {
    let server = serving_fixtures().await;
    let ctx = allowing(&[&server], WebPolicy::new());
    // Table layout, no `main`, `article` or landmark: the cell of prose is
    // found by its paragraphs, the link column and the link bars are not.
    let out = fetch_with(&ctx, json!({ "url": server.url("/no_main_element.html") })).await;
    let body = body_of(&out);
    assert!(body.starts_with("**Brewing a dry stout**\n\n"), "{body}");
    for kept in [
        "A dry stout needs little more than pale malt",
        "Mash at sixty-six degrees",
        "Ferment cool, at about eighteen degrees",
    ] {
        assert!(body.contains(kept), "`{kept}` is missing:\n{body}");
    }
    for dropped in [
        "Home",
        "Pale ale",
        "Barley wine",
        "webmaster",
        "Last updated",
    ] {
        assert!(
            !body.contains(dropped),
            "`{dropped}` reached the model:\n{body}"
        );
    }
    assert_eq!(out.metadata["main_content"], true);

    // No prose at all (a directory listing): no block stands out, so the
    // whole page is kept, less its navigation and footer.
    let out = fetch_with(&ctx, json!({ "url": server.url("/link_directory.html") })).await;
    let body = body_of(&out);
    assert!(
        body.starts_with("# Index of /releases/\n\n| Name"),
        "{body}"
    );
    for release in ["0.1.0", "0.2.0", "0.3.0"] {
        assert!(
            body.contains(&format!(
                "[toolsmith-{release}.tar.gz](toolsmith-{release}.tar.gz)"
            )),
            "{body}"
        );
    }
    assert!(!body.contains("mirror"), "{body}");
    assert_eq!(out.metadata["main_content"], false);
}

#[tokio::test]
async fn extract_mode_is_optional_and_names_its_two_choices() {
    let registry = registry();
    let tool = registry.get("web_fetch").unwrap();
    let schema = &tool.spec().input_schema;
    assert_eq!(schema["required"], json!(["url"]));
    let mode = &schema["properties"]["extract_mode"];
    assert!(
        mode["description"]
            .as_str()
            .unwrap()
            .contains("\"markdown\" (default)"),
        "{mode}"
    );
    let choices: Vec<&str> = schema["$defs"]["ExtractMode"]["oneOf"]
        .as_array()
        .unwrap()
        .iter()
        .map(|choice| choice["const"].as_str().unwrap())
        .collect();
    assert_eq!(choices, ["markdown", "text"]);
    let out = registry
        .call(
            "web_fetch",
            json!({ "url": "https://example.com/", "extract_mode": "html" }),
            &ToolContext::new().with_state(WebPolicy::new()),
        )
        .await;
    assert!(out.is_error);
    assert!(out.content.contains("extract_mode"), "{}", out.content);
}

/// A resolver that records every name it is asked for and answers
/// 127.0.0.1, where the test's servers listen.
#[derive(Clone, Default)]
struct RecordingDns {
    asked: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

#[toolsmith::async_trait]
impl toolsmith_builtins::net::Resolve for RecordingDns {
    async fn resolve(&self, host: &str, port: u16) -> std::io::Result<Vec<std::net::SocketAddr>> {
        self.asked.lock().unwrap().push(host.to_owned());
        Ok(vec![std::net::SocketAddr::from(([127, 0, 0, 1], port))])
    }
}

#[tokio::test]
async fn local_names_are_refused_before_any_lookup_or_connection() {
    let server = Server::start(|_| Reply::ok("text/plain", "internal page")).await;
    let other = Server::start(|_| Reply::ok("text/plain", "other")).await;
    let port = server.port();
    let dns = RecordingDns::default();
    // The allow list names another loopback port only.
    let net = NetPolicy::new()
        .allow(&format!("127.0.0.1:{}", other.port()))
        .unwrap()
        .with_resolver(dns.clone());
    let ctx = ToolContext::new().with_state(WebPolicy::new().with_net(net));
    for host in [
        "localhost",
        "app.localhost",
        "printer.local",
        "db.internal",
        "nas.home.arpa",
        "intranet",
    ] {
        let out = fetch(&ctx, &format!("http://{host}:{port}/")).await;
        assert!(out.is_error, "{host}: {}", out.content);
        assert!(
            out.content.contains(&format!("`{host}` leads to")),
            "{host}: {}",
            out.content
        );
        assert!(
            out.content.contains("by its name alone"),
            "{host}: {}",
            out.content
        );
    }
    assert!(
        dns.asked.lock().unwrap().is_empty(),
        "a local name was looked up"
    );
    assert!(server.requests().is_empty(), "the server was contacted");

    // Named in the allow list, the same name is looked up and fetched.
    let net = NetPolicy::new()
        .allow(&format!("intranet:{port}"))
        .unwrap()
        .with_resolver(dns.clone());
    let ctx = ToolContext::new().with_state(WebPolicy::new().with_net(net));
    let out = fetch(&ctx, &format!("http://intranet:{port}/")).await;
    assert!(!out.is_error, "{}", out.content);
    assert!(out.content.contains("internal page"), "{}", out.content);
    assert_eq!(*dns.asked.lock().unwrap(), ["intranet"]);
    assert_eq!(server.requests().len(), 1);
}

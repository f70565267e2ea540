//! Failures of the web tools that may pass on a later try are classified
//! as such (rate limited, unavailable, network), against real servers on
//! loopback, and a retry layer acts on them.
#![cfg(feature = "web")]

mod web_support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::AsyncReadExt;
use toolsmith::exec::meta;
use toolsmith::pipeline::{Pipeline, Retry};
use toolsmith::{ErrorKind, ToolContext, ToolError, ToolFilter, ToolOutput, ToolRegistry};
use toolsmith_builtins::net::NetPolicy;
use toolsmith_builtins::web::{HttpPolicy, SearchConfig, SearchError, Searxng, WebPolicy};
use web_support::{Reply, Server};

fn registry(pipeline: Pipeline) -> ToolRegistry {
    ToolRegistry::from_inventory(&ToolFilter::default().names(["web_fetch", "http_request"]))
        .unwrap()
        .with_pipeline(pipeline)
}

/// A context whose guard allows exactly this loopback port.
fn allowing(port: u16) -> ToolContext {
    let net = NetPolicy::new()
        .allow(&format!("127.0.0.1:{port}"))
        .unwrap();
    ToolContext::new()
        .with_state(
            WebPolicy::new()
                .with_net(net.clone())
                .with_timeout(Duration::from_secs(10)),
        )
        .with_state(
            HttpPolicy::new(["127.0.0.1"])
                .with_net(net)
                .with_timeout(Duration::from_secs(10)),
        )
}

async fn call(registry: &ToolRegistry, name: &str, args: Value, ctx: &ToolContext) -> ToolOutput {
    tokio::time::timeout(Duration::from_secs(30), registry.call(name, args, ctx))
        .await
        .expect("the call finished")
}

fn status(code: u16, headers: &[(&str, &str)], body: &str) -> Reply {
    Reply::Fixed {
        status: code,
        headers: headers
            .iter()
            .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
            .collect(),
        body: body.as_bytes().to_vec(),
    }
}

#[tokio::test]
async fn a_429_is_rate_limited_with_its_retry_after() {
    let server = Server::start(|_| status(429, &[("Retry-After", "7")], "slow down")).await;
    let ctx = allowing(server.port());
    let registry = registry(Pipeline::new());
    let out = call(
        &registry,
        "web_fetch",
        json!({"url": server.url("/")}),
        &ctx,
    )
    .await;
    assert!(out.is_error);
    assert_eq!(
        out.metadata.read(&meta::ERROR_KIND),
        Some(ErrorKind::RateLimited)
    );
    assert!(out.content.contains("HTTP 429"), "{}", out.content);
    assert!(out.content.contains("try again in 7 s"), "{}", out.content);
    let error = registry
        .try_call("web_fetch", json!({"url": server.url("/")}), &ctx)
        .await
        .unwrap_err();
    let toolsmith::CallError::Tool {
        error: ToolError::Transient { retry_after, .. },
        ..
    } = error
    else {
        panic!("{error:?}")
    };
    assert_eq!(retry_after, Some(Duration::from_secs(7)));
}

#[tokio::test]
async fn gateway_and_service_errors_are_unavailable_and_http_request_keeps_its_text() {
    for code in [502, 503, 504] {
        let server = Server::start(move |_| status(code, &[], "down for maintenance")).await;
        let ctx = allowing(server.port());
        let registry = registry(Pipeline::new());
        let out = call(
            &registry,
            "web_fetch",
            json!({"url": server.url("/")}),
            &ctx,
        )
        .await;
        assert_eq!(
            out.metadata.read(&meta::ERROR_KIND),
            Some(ErrorKind::Unavailable),
            "{code}: {}",
            out.content
        );
        assert!(
            out.content.contains(&format!("HTTP {code}")),
            "{}",
            out.content
        );
        // http_request shows the answer as before, its kind now said.
        let args = json!({"method": "GET", "url": server.url("/api")});
        let out = call(&registry, "http_request", args, &ctx).await;
        assert_eq!(
            out.metadata.read(&meta::ERROR_KIND),
            Some(ErrorKind::Unavailable)
        );
        assert!(
            out.content.contains(&format!("Status: {code}")),
            "{}",
            out.content
        );
        assert!(
            out.content.contains("down for maintenance"),
            "{}",
            out.content
        );
    }
    // Other error statuses are answers, not passing failures.
    let server = Server::start(|_| status(404, &[], "no such page")).await;
    let ctx = allowing(server.port());
    let out = call(
        &registry(Pipeline::new()),
        "web_fetch",
        json!({"url": server.url("/")}),
        &ctx,
    )
    .await;
    assert!(!out.is_error, "{}", out.content);
    assert!(out.content.contains("Status: 404"), "{}", out.content);
}

#[tokio::test]
async fn a_refused_connection_is_a_network_failure() {
    // A port that was just free: nothing listens there.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let ctx = allowing(port);
    let out = call(
        &registry(Pipeline::new()),
        "web_fetch",
        json!({ "url": format!("http://127.0.0.1:{port}/") }),
        &ctx,
    )
    .await;
    assert_eq!(
        out.metadata.read(&meta::ERROR_KIND),
        Some(ErrorKind::Network),
        "{}",
        out.content
    );
    assert!(
        out.content.contains("the request to `http://127.0.0.1:"),
        "{}",
        out.content
    );
}

#[tokio::test]
async fn a_connection_closed_before_the_answer_is_a_network_failure() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let mut head = [0u8; 1024];
            let _ = stream.read(&mut head).await;
            drop(stream);
        }
    });
    let ctx = allowing(port);
    let out = call(
        &registry(Pipeline::new()),
        "web_fetch",
        json!({ "url": format!("http://127.0.0.1:{port}/") }),
        &ctx,
    )
    .await;
    server.abort();
    assert_eq!(
        out.metadata.read(&meta::ERROR_KIND),
        Some(ErrorKind::Network),
        "{}",
        out.content
    );
}

#[tokio::test]
async fn a_retry_layer_gets_past_a_passing_outage_of_a_read_only_fetch() {
    let seen = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&seen);
    let server = Server::start(move |_| {
        if count.fetch_add(1, Ordering::SeqCst) == 0 {
            status(503, &[], "busy")
        } else {
            Reply::ok("text/plain", "fine now")
        }
    })
    .await;
    let ctx = allowing(server.port());
    let retry = Retry::new().with_backoff(Duration::ZERO, Duration::ZERO);
    let registry = registry(Pipeline::new().layer(retry));
    let out = call(
        &registry,
        "web_fetch",
        json!({"url": server.url("/")}),
        &ctx,
    )
    .await;
    assert!(out.content.contains("fine now"), "{}", out.content);
    assert_eq!(out.metadata.read(&meta::ATTEMPTS), Some(2));
    // http_request may change things: it is not retried.
    seen.store(0, Ordering::SeqCst);
    let args = json!({"method": "POST", "url": server.url("/api"), "body": "x"});
    let out = call(&registry, "http_request", args, &ctx).await;
    assert_eq!(
        out.metadata.read(&meta::ERROR_KIND),
        Some(ErrorKind::Unavailable)
    );
    assert_eq!(seen.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn search_backends_that_are_busy_or_unreachable_are_classified_with_their_texts() {
    for (code, kind) in [(429, ErrorKind::RateLimited), (503, ErrorKind::Unavailable)] {
        let server = Server::start(move |_| status(code, &[], "try later")).await;
        let error = tokio::time::timeout(
            Duration::from_secs(30),
            SearchConfig::new(Searxng::new(server.url("/"))).search("x", 3),
        )
        .await
        .unwrap()
        .unwrap_err();
        let text = error.to_string();
        assert_eq!(
            text,
            format!("the searxng search backend answered {code}: try later")
        );
        let error = ToolError::from(error);
        assert_eq!(error.kind(), kind);
        assert_eq!(error.to_string(), text);
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let error = tokio::time::timeout(
        Duration::from_secs(30),
        SearchConfig::new(Searxng::new(format!("http://127.0.0.1:{port}/"))).search("x", 3),
    )
    .await
    .unwrap()
    .unwrap_err();
    assert!(matches!(error, SearchError::Network { .. }), "{error}");
    assert!(
        error
            .to_string()
            .starts_with("the searxng search request failed: ")
    );
    assert_eq!(ToolError::from(error).kind(), ErrorKind::Network);
}

//! What our server tells its clients unasked, over HTTP on loopback: that
//! the tool list changed (our own client then swaps the server's tools in
//! its registry), and that a resource a client subscribed to changed (with
//! `resources/subscribe`, or on a `subscriptions/listen` stream of protocol
//! 2026-07-28).

#[path = "../raw_http.rs"]
mod raw_http;

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tk::mcp::{HttpOptions, McpClients, McpConfig, McpServer, ResourceSource};
use tk::{CancellationToken, ToolRegistry, async_trait, tool};

/// Say hello.
#[tool(read_only)]
async fn hello() -> &'static str {
    "hello"
}

/// Say goodbye.
#[tool(read_only)]
async fn goodbye() -> &'static str {
    "goodbye"
}

/// Wait, within a bound, until `registry`'s names are `expected`.
async fn names_become(registry: &ToolRegistry, expected: &[&str]) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while registry.names() != expected {
        assert!(
            Instant::now() < deadline,
            "the client's tools stayed {:?}, not {expected:?}",
            registry.names()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A registry holding `hello`, served over HTTP on loopback, and clients
/// of it (server `up`, not yet connected) mounting into `mounted`.
struct Served {
    served: Arc<ToolRegistry>,
    mounted: Arc<ToolRegistry>,
    clients: McpClients,
    shutdown: CancellationToken,
    server: tokio::task::JoinHandle<std::io::Result<()>>,
}

async fn serve_hello() -> Served {
    let served = Arc::new(ToolRegistry::new());
    served.register(HelloTool).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let shutdown = CancellationToken::new();
    let server = tokio::spawn(
        McpServer::new(Arc::clone(&served))
            .serve_http(listener, HttpOptions::default().shutdown(shutdown.clone())),
    );
    let config: McpConfig =
        format!(r#"{{"mcpServers": {{"up": {{"url": "http://127.0.0.1:{port}/mcp"}}}}}}"#)
            .parse()
            .unwrap();
    let mounted = Arc::new(ToolRegistry::new());
    let clients = McpClients::new(config, &mounted);
    Served {
        served,
        mounted,
        clients,
        shutdown,
        server,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_to_the_served_registry_reaches_a_connected_client() {
    let Served {
        served,
        mounted,
        clients,
        shutdown,
        server,
    } = serve_hello().await;
    let outcomes = clients.connect().await;
    assert!(matches!(outcomes[0].1, Ok(1)), "{outcomes:?}");
    assert_eq!(mounted.names(), ["mcp_up_hello"]);

    served.register(GoodbyeTool).unwrap();
    names_become(&mounted, &["mcp_up_goodbye", "mcp_up_hello"]).await;
    served.unregister("hello");
    names_become(&mounted, &["mcp_up_goodbye"]).await;

    clients.disconnect().await;
    shutdown.cancel();
    server.await.unwrap().unwrap();
}

/// One note, `note://today`.
struct Notes;

#[async_trait]
impl ResourceSource for Notes {
    fn resources(&self) -> Vec<Value> {
        vec![json!({"uri": "note://today", "name": "today"})]
    }

    async fn read(&self, uri: &str) -> Result<Value, String> {
        Ok(json!({"contents": [{"uri": uri, "text": "buy milk"}]}))
    }
}

#[test]
fn only_subscribed_sessions_hear_that_a_resource_changed() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let server = McpServer::new(Arc::new(ToolRegistry::new())).with_resources(Notes);
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    runtime.spawn(server.clone().serve_http(listener, HttpOptions::default()));

    let (watching, other) = (raw_http::open_session(&url), raw_http::open_session(&url));
    let subscribe = |session: &str, uri: &str| {
        let request = json!({"jsonrpc": "2.0", "id": 2, "method": "resources/subscribe",
            "params": {"uri": uri}});
        let (status, response) = raw_http::post(&url, &[("Mcp-Session-Id", session)], &request);
        assert_eq!(status, 200, "{response}");
    };
    subscribe(&watching, "note://today");
    // Both hear about `note://end`, sent last: proof each stream was read
    // past the update one of them must not hear.
    subscribe(&watching, "note://end");
    subscribe(&other, "note://end");
    let watching_stream = raw_http::listen(&url, &watching);
    let other_stream = raw_http::listen(&url, &other);

    assert_eq!(runtime.block_on(server.resource_updated("note://today")), 1);
    assert_eq!(
        runtime.block_on(server.resource_updated("note://elsewhere")),
        0
    );
    assert_eq!(runtime.block_on(server.resource_updated("note://end")), 2);

    let (heard, not_heard) = (watching_stream.finish(), other_stream.finish());
    for uri in ["note://today", "note://end"] {
        assert!(heard.contains(uri), "{uri}: {heard}");
    }
    assert!(not_heard.contains("note://end"), "{not_heard}");
    assert!(!not_heard.contains("note://today"), "{not_heard}");
}

#[test]
fn a_2026_listen_stream_hears_of_the_resources_it_names() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let server = McpServer::new(Arc::new(ToolRegistry::new())).with_resources(Notes);
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    runtime.spawn(server.clone().serve_http(listener, HttpOptions::default()));

    // Protocol 2026-07-28 has no `resources/subscribe`: a stream names
    // the resources it wants to hear of.
    let watching = raw_http::listen_2026(
        &url,
        json!({"resourceSubscriptions": ["note://today", "note://end"]}),
    );
    let other = raw_http::listen_2026(&url, json!({"resourceSubscriptions": ["note://end"]}));

    assert_eq!(runtime.block_on(server.resource_updated("note://today")), 1);
    assert_eq!(
        runtime.block_on(server.resource_updated("note://elsewhere")),
        0
    );
    assert_eq!(runtime.block_on(server.resource_updated("note://end")), 2);

    let (heard, not_heard) = (watching.finish(), other.finish());
    // The acknowledgment says what the stream will hear of.
    assert!(
        heard.contains(r#""resourceSubscriptions":["note://today","note://end"]"#),
        "{heard}"
    );
    let updates = |text: &str| text.matches("notifications/resources/updated").count();
    assert_eq!(updates(&heard), 2, "{heard}");
    assert_eq!(updates(&not_heard), 1, "{not_heard}");
    assert!(heard.contains(r#""uri":"note://today""#), "{heard}");
    assert!(
        !not_heard.contains(r#""uri":"note://today""#),
        "{not_heard}"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn an_unmounted_server_stays_down_when_word_of_changes_was_on_its_way() {
    tokio::time::timeout(Duration::from_secs(30), async {
        let Served {
            served,
            mounted,
            clients,
            shutdown,
            server,
        } = serve_hello().await;
        let link = clients.server("up").unwrap();
        // Unmounted at once, each time at another point of the change
        // stream's start and with word of a change on its way: the listing
        // that word asks for must not connect again.
        for delay in 0..20 {
            link.refresh().await.unwrap();
            // Word of a change on its way as the client unmounts.
            if delay % 2 == 0 {
                served.register(GoodbyeTool).unwrap();
            } else {
                served.unregister("goodbye");
            }
            for _ in 0..delay {
                tokio::task::yield_now().await;
            }
            link.unmount().await;
            tokio::time::sleep(Duration::from_millis(100)).await;
            assert!(
                !link.is_connected().await,
                "the unmounted server was started again (after {delay} yields)"
            );
            assert!(mounted.names().is_empty(), "{:?}", mounted.names());
        }
        shutdown.cancel();
        server.await.unwrap().unwrap();
    })
    .await
    .expect("the test ran within its time");
}

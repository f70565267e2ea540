//! A change to a served registry reaches a connected client: our server
//! tells it the tool list changed, and our client, connected over HTTP on
//! loopback, swaps the server's tools in its own registry.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tk::mcp::{HttpOptions, McpClients, McpConfig, McpServer};
use tk::{CancellationToken, ToolRegistry, tool};

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_to_the_served_registry_reaches_a_connected_client() {
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

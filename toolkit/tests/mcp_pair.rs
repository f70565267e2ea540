//! The in-process MCP pair: a served registry mounted in another over an
//! in-memory pipe reads as the direct calls do, and stops cleanly.
#![cfg(feature = "mcp")]

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use toolsmith::mcp::McpServer;
use toolsmith::testing::mcp_pair;
use toolsmith::{ToolContext, ToolError, ToolRegistry, data, tool};

/// A reading.
#[data(Serialize, JsonSchema)]
pub struct Reading {
    /// Degrees.
    celsius: i64,
    /// Where.
    city: String,
}

/// Read the temperature.
#[tool(read_only)]
async fn temperature(city: String) -> Reading {
    Reading { celsius: 21, city }
}

/// Divide two numbers.
#[tool(read_only)]
async fn divide(a: i64, b: i64) -> Result<i64, ToolError> {
    if b == 0 {
        return Err(ToolError::failed("b must not be 0"));
    }
    Ok(a / b)
}

async fn bounded<F: std::future::Future>(body: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(30), body)
        .await
        .expect("the test ran within its time")
}

fn served() -> Arc<ToolRegistry> {
    let served = Arc::new(ToolRegistry::new());
    served.register(TemperatureTool).unwrap();
    served.register(DivideTool).unwrap();
    served
}

#[tokio::test]
async fn a_call_through_the_pair_reads_as_the_direct_call() {
    bounded(async {
        let served = served();
        let pair = mcp_pair("here", McpServer::new(Arc::clone(&served)))
            .await
            .unwrap();
        let ctx = ToolContext::new();
        for (name, args) in [
            ("temperature", json!({"city": "Oslo"})),
            ("divide", json!({"a": "9", "b": 3})),
            ("divide", json!({"a": 1, "b": 0})),
        ] {
            let direct = served.call(name, args.clone(), &ctx).await;
            let mounted = pair
                .registry
                .call(&format!("mcp_here_{name}"), args, &ctx)
                .await;
            assert_eq!(mounted.content, direct.content, "{name}");
            assert_eq!(mounted.is_error, direct.is_error, "{name}");
            // A value that is not an object travels as `{"result": value}`
            // and comes back as the value itself.
            let sent = direct
                .structured
                .as_deref()
                .map(|s| s.get("result").filter(|_| name == "divide").unwrap_or(s));
            assert_eq!(mounted.structured.as_deref(), sent, "{name}");
        }
        pair.shutdown().await;
    })
    .await;
}

#[tokio::test]
async fn the_server_stops_when_the_pair_shuts_down() {
    bounded(async {
        let served = served();
        let pair = mcp_pair("here", McpServer::new(Arc::clone(&served)))
            .await
            .unwrap();
        assert!(
            Arc::strong_count(&served) > 1,
            "the server holds the registry"
        );
        pair.shutdown().await;
        // The server's task ends with the pipe and lets go of the registry.
        while Arc::strong_count(&served) > 1 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
}

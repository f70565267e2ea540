//! Tools that run as tasks (`#[tool(task)]`), served by our server and
//! called by our client: a mounted tool waits for its task (answering its
//! questions), a host can start, poll and cancel one, and a task tool's
//! definition says it runs as a task.

#[path = "../peers.rs"]
mod peers;
#[path = "../tasks.rs"]
#[allow(dead_code)]
mod tasks;

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Map, json};
use tk::mcp::{Elicitation, ElicitationRequest, Elicitor, McpClients, McpConfig};
use tk::schema::DefinitionFormat;
use tk::{TaskSupport, ToolContext, ToolRegistry};

struct Yes;

#[tk::async_trait]
impl Elicitor for Yes {
    async fn elicit(
        &self,
        _request: ElicitationRequest,
    ) -> Result<Elicitation, Box<dyn std::error::Error + Send + Sync>> {
        let mut content = Map::new();
        content.insert("confirm".into(), json!(true));
        Ok(Elicitation::Accept(content))
    }
}

#[test]
fn a_task_tool_says_so_in_its_definition() {
    let registry = ToolRegistry::new();
    for tool in tasks::tools() {
        registry.register_arc(tool).unwrap();
    }
    let support = |name: &str| registry.get(name).unwrap().spec().task_support;
    assert_eq!(support("slow_compute"), TaskSupport::Optional);
    assert_eq!(support("failing_job"), TaskSupport::Required);
    assert_eq!(support("greet"), TaskSupport::Forbidden);
    let definitions = registry.definitions(DefinitionFormat::Mcp);
    let slow = definitions
        .iter()
        .find(|d| d["name"] == "slow_compute")
        .unwrap();
    assert_eq!(slow["execution"]["taskSupport"], "optional");
    let greet = definitions.iter().find(|d| d["name"] == "greet").unwrap();
    assert!(greet.get("execution").is_none(), "{greet}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_client_waits_for_polls_and_cancels_tasks() {
    let server = peers::fixture_http(&[]);
    let config = McpConfig::from_json(
        &json!({"mcpServers": {"peer": {"url": server.url, "type": "streamableHttp"}}}),
    )
    .unwrap();
    let registry = Arc::new(ToolRegistry::new());
    let clients = McpClients::new(config, &registry).with_elicitor(Yes);
    for (_, outcome) in clients.connect().await {
        outcome.expect("connected");
    }
    let ctx = ToolContext::new();
    let call = |name: &str, args: serde_json::Value| {
        let (registry, ctx) = (Arc::clone(&registry), ctx.clone());
        let name = format!("mcp_peer_{name}");
        async move {
            tokio::time::timeout(Duration::from_secs(20), registry.call(&name, args, &ctx))
                .await
                .expect("answered in time")
        }
    };
    // Waited for, as any call.
    let out = call("slow_compute", json!({"seconds": 0.2, "label": "x"})).await;
    assert!(
        !out.is_error && out.content.contains("computed x"),
        "{}",
        out.content
    );
    // The task's question answered by the host's elicitor.
    let out = call("confirm_delete", json!({"filename": "a.txt"})).await;
    assert!(out.content.contains("deleted a.txt"), "{}", out.content);
    // Asked first in a round, then a task: the answer reaches the result.
    let out = call("test_tool_with_task", json!({"work_seconds": 0.3})).await;
    assert!(
        !out.is_error && out.content.contains("Hello, stranger!"),
        "{}",
        out.content
    );
    // A tool's failure is the task's result, marked as an error.
    let out = call("failing_job", json!({})).await;
    assert!(
        out.is_error && out.content.contains("the job failed"),
        "{}",
        out.content
    );

    // Started, polled and cancelled by the host.
    let link = clients.server("peer").unwrap();
    let id = link
        .start_task("slow_compute", json!({"seconds": 60}))
        .await
        .unwrap();
    assert_eq!(link.task(&id).await.unwrap()["status"], "working");
    link.cancel_task(&id).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let status = link.task(&id).await.unwrap()["status"].clone();
        if status == "cancelled" {
            break;
        }
        assert!(Instant::now() < deadline, "the task stayed {status}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        link.start_task("greet", json!({"name": "a"}))
            .await
            .is_err()
    );
    clients.disconnect().await;
}

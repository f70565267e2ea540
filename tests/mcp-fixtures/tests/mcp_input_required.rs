//! A served tool asking its client something, whatever the protocol
//! version and the server's mode: on protocol 2026-07-28 through
//! input-required results our client answers (with the host's elicitor and
//! sampler) and calls again, stateful or stateless; a stateless server
//! refuses at once when the client's older protocol cannot carry the
//! question, instead of leaving the call to time out.

#[path = "../peers.rs"]
mod peers;
#[path = "../raw_http.rs"]
mod raw_http;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};
use tk::mcp::{
    Elicitation, ElicitationKind, ElicitationRequest, Elicitor, McpClients, McpConfig, Sampled,
    Sampler, SamplingRequest,
};
use tk::{ToolContext, ToolRegistry};

/// The host's user: answers every form's one field, and counts the questions.
struct User(Arc<AtomicUsize>);

#[tk::async_trait]
impl Elicitor for User {
    async fn elicit(
        &self,
        request: ElicitationRequest,
    ) -> Result<Elicitation, Box<dyn std::error::Error + Send + Sync>> {
        self.0.fetch_add(1, Ordering::SeqCst);
        let ElicitationKind::Form { schema } = &request.kind else {
            return Ok(Elicitation::Decline);
        };
        let mut content = Map::new();
        for field in schema["properties"].as_object().into_iter().flatten() {
            let answer = if field.0 == "color" { "blue" } else { "Ada" };
            content.insert(field.0.clone(), json!(answer));
        }
        Ok(Elicitation::Accept(content))
    }
}

struct Model;

#[tk::async_trait]
impl Sampler for Model {
    async fn sample(
        &self,
        _request: SamplingRequest,
    ) -> Result<Sampled, Box<dyn std::error::Error + Send + Sync>> {
        Ok(Sampled::new("Paris", "test-model"))
    }
}

fn text(out: &tk::ToolOutput) -> String {
    out.content.to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_client_answers_the_rounds_of_a_stateful_and_a_stateless_server() {
    for mode in [&[][..], &["--stateless"][..]] {
        let server = peers::fixture_http(mode);
        let config = McpConfig::from_json(
            &json!({"mcpServers": {"peer": {"url": server.url, "type": "streamableHttp"}}}),
        )
        .unwrap();
        let registry = Arc::new(ToolRegistry::new());
        let asked = Arc::new(AtomicUsize::new(0));
        let clients = McpClients::new(config, &registry)
            .with_elicitor(User(Arc::clone(&asked)))
            .with_sampler(Model);
        for (_, outcome) in clients.connect().await {
            outcome.expect("connected");
        }
        let ctx = ToolContext::new();
        let call = |name: &str| {
            let registry = Arc::clone(&registry);
            let ctx = ctx.clone();
            let name = format!("mcp_peer_{name}");
            async move {
                tokio::time::timeout(
                    Duration::from_secs(20),
                    registry.call(&name, json!({}), &ctx),
                )
                .await
                .expect("answered in time")
            }
        };
        // Two rounds of questions, the first answer carried in the state.
        let out = call("test_input_required_result_multi_round").await;
        assert!(!out.is_error, "{mode:?}: {}", text(&out));
        assert!(text(&out).contains("Ada likes blue"), "{}", text(&out));
        assert_eq!(asked.load(Ordering::SeqCst), 2, "each question asked once");
        // Three questions at once; roots are not offered by this client, so
        // the tool's question for them fails with a clear error.
        let out = call("test_input_required_result_sampling").await;
        assert!(text(&out).contains("Paris"), "{}", text(&out));
        // A prompt asks as a tool does.
        let prompt = registry
            .names()
            .into_iter()
            .find(|n| n.contains("test_input_required_result_prompt"))
            .expect("the prompt is mounted");
        let prompt = prompt.trim_start_matches("mcp_peer_").to_owned();
        let out = call(&prompt).await;
        assert!(
            text(&out).contains("Use this context: Ada"),
            "{}",
            text(&out)
        );
        let out = call("test_input_required_result_list_roots").await;
        assert!(out.is_error, "{}", text(&out));
        assert!(
            text(&out).contains("client's roots capability"),
            "{}",
            text(&out)
        );
        clients.disconnect().await;
    }
}

#[test]
fn a_stateless_server_refuses_at_once_what_an_older_client_cannot_be_asked() {
    let server = peers::fixture_http(&["--stateless"]);
    let mut init = raw_http::initialize();
    init["params"]["capabilities"] = json!({"elicitation": {}});
    let (status, response) = raw_http::post(&server.url, &[], &init);
    assert_eq!(status, 200, "{response}");
    let started = Instant::now();
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "test_input_required_result_elicitation", "arguments": {}}});
    let (status, response) = raw_http::post(
        &server.url,
        &[("MCP-Protocol-Version", "2025-11-25")],
        &call,
    );
    assert_eq!(status, 200, "{response}");
    assert!(started.elapsed() < Duration::from_secs(5));
    let body: Value = serde_json::from_str(&response[response.find('{').unwrap()..]).unwrap();
    assert_eq!(body["result"]["isError"], true, "{body}");
    let message = body["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        message.contains("keeps no sessions") && message.contains("2026-07-28"),
        "{message}"
    );
}

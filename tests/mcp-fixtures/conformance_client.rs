//! The client the MCP conformance suite's client scenarios drive:
//! `mcp-fixture-client URL` connects with `toolsmith::mcp::McpClients`
//! (streamable HTTP), mounts the server's tools and calls each once with
//! arguments made from its schema, printing what came back. Its user takes
//! whatever defaults a server's form offers.
//!
//! In the suite's `json-schema-2020-12-preservation` scenario (named in
//! `MCP_CONFORMANCE_SCENARIO`) the echo tool is given the input schema of
//! the scenario's other tool as mounted, so the suite can see it whole.
//! Where the suite names the calls to make (`toolCalls` in
//! `MCP_CONFORMANCE_CONTEXT`), their arguments are used.

use std::sync::Arc;

use tk::mcp::{
    AuthorizationPrompt, AuthorizationRedirect, Authorizer, Elicitation, ElicitationRequest,
    Elicitor, McpClients, McpConfig,
};
use tk::serde_json::{Map, Value, json};
use tk::{ToolContext, ToolRegistry};

/// Arguments satisfying `schema`'s required properties: numbers count up
/// from 2, strings say "test", booleans are true.
fn arguments_for(schema: &Value) -> Value {
    let mut args = Map::new();
    let required = schema["required"].as_array().cloned().unwrap_or_default();
    for (i, name) in required.iter().filter_map(Value::as_str).enumerate() {
        let value = match schema["properties"][name]["type"].as_str() {
            Some("number" | "integer") => json!(i + 2),
            Some("boolean") => json!(true),
            Some("array") => json!([]),
            Some("object") => json!({}),
            _ => json!("test"),
        };
        args.insert(name.to_owned(), value);
    }
    Value::Object(args)
}

/// The arguments the suite asks for, by tool (`toolCalls` in
/// `MCP_CONFORMANCE_CONTEXT`).
fn named_calls() -> Map<String, Value> {
    let context: Value = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|c| tk::serde_json::from_str(&c).ok())
        .unwrap_or_default();
    let calls = context["toolCalls"].as_array().cloned().unwrap_or_default();
    calls
        .into_iter()
        .filter_map(|call| Some((call["name"].as_str()?.to_owned(), call["arguments"].clone())))
        .collect()
}

/// Accepts a form with the defaults its schema offers; declines one without.
struct Defaults;

#[tk::async_trait]
impl Elicitor for Defaults {
    async fn elicit(
        &self,
        request: ElicitationRequest,
    ) -> Result<Elicitation, Box<dyn std::error::Error + Send + Sync>> {
        let defaults = request.defaults();
        Ok(if defaults.is_empty() {
            Elicitation::Decline
        } else {
            Elicitation::Accept(defaults)
        })
    }
}

/// The client id metadata document the suite's authorization servers
/// expect a client to name when they support such documents.
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";

/// The `oauth` block of a sign-in scenario: the client the suite
/// registered beforehand, when its context names one, and the client id
/// metadata document to use where the authorization server takes one.
fn oauth_block() -> Value {
    let context: Value = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|c| tk::serde_json::from_str(&c).ok())
        .unwrap_or_default();
    let mut block = json!({"clientMetadataUrl": CLIENT_METADATA_URL});
    for (from, to) in [("client_id", "clientId"), ("client_secret", "clientSecret")] {
        if let Some(value) = context.get(from).and_then(Value::as_str) {
            block[to] = json!(value);
        }
    }
    block
}

/// The user of the suite's sign-in scenarios: its authorization server
/// approves at once, so the page is requested and its redirect taken.
struct Approves;

#[tk::async_trait]
impl Authorizer for Approves {
    fn redirect_uri(&self) -> String {
        "http://127.0.0.1:3000/callback".into()
    }

    async fn authorize(
        &self,
        prompt: AuthorizationPrompt,
    ) -> Result<AuthorizationRedirect, Box<dyn std::error::Error + Send + Sync>> {
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(std::time::Duration::from_secs(10))
            .build()?;
        let page = http.get(&prompt.url).send().await?;
        let location = page
            .headers()
            .get("location")
            .ok_or("the authorization page did not redirect")?
            .to_str()?;
        Ok(AuthorizationRedirect::from_url(location)?)
    }
}

#[tokio::main]
async fn main() {
    let Some(url) = std::env::args()
        .next_back()
        .filter(|a| a.starts_with("http"))
    else {
        eprintln!("usage: mcp-fixture-client URL");
        std::process::exit(2);
    };
    let mut entry = json!({"url": url, "type": "streamableHttp"});
    let signs_in = std::env::var("MCP_CONFORMANCE_SCENARIO").is_ok_and(|s| s.starts_with("auth/"));
    if signs_in {
        entry["oauth"] = oauth_block();
    }
    let config = McpConfig::from_json(&json!({"mcpServers": {"peer": entry}}))
        .expect("a valid configuration");
    let registry = Arc::new(ToolRegistry::new());
    let clients = McpClients::new(config, &registry)
        .with_elicitor(Defaults)
        .with_authorizer(Approves);
    for (server, outcome) in clients.connect().await {
        println!("{server}: {outcome:?}");
        if outcome.is_err() {
            std::process::exit(1);
        }
    }
    // The SDK opens the stream for server-initiated messages (the GET of
    // streamable HTTP) beside the first requests. The suite's servers send
    // their elicitation there and drop it when the stream is not open yet,
    // so give it a moment before the first call.
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let ctx = ToolContext::new();
    let echoes_schemas = std::env::var("MCP_CONFORMANCE_SCENARIO")
        .is_ok_and(|s| s == "json-schema-2020-12-preservation");
    let named_calls = named_calls();
    for spec in registry.specs() {
        let remote = spec.name.strip_prefix("mcp_peer_").unwrap_or(&spec.name);
        let args = match registry.get("mcp_peer_json_schema_2020_12_tool") {
            Some(focal) if echoes_schemas && spec.name == "mcp_peer_json_schema_echo" => {
                json!({"schema": focal.spec().input_schema})
            }
            _ => named_calls
                .get(remote)
                .cloned()
                .unwrap_or_else(|| arguments_for(&spec.input_schema)),
        };
        let out = registry.call(&spec.name, args, &ctx).await;
        println!(
            "{} -> {}{}",
            spec.name,
            if out.is_error { "error: " } else { "" },
            out.content
        );
    }
    clients.disconnect().await;
}

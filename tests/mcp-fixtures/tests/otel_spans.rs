//! The `execute_tool` spans as an OpenTelemetry backend receives them:
//! exported by the OpenTelemetry SDK (to memory) through
//! `tracing-opentelemetry`. A direct call and a runner's call are described
//! as the GenAI conventions say, a failure has an error status; and a call
//! of a mounted MCP tool continues into the server that serves it, and from
//! there into a further server, as one trace.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use opentelemetry::trace::{SpanKind, Status, TraceContextExt, TracerProvider as _};
use opentelemetry::{KeyValue, Value};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use serde_json::json;
use tk::exec::{Runner, ToolCall};
use tk::mcp::{HttpOptions, McpClients, McpConfig, McpServer};
use tk::{CancellationToken, ToolContext, ToolError, ToolRegistry, tool};
use tracing_opentelemetry::OpenTelemetrySpanExt;
use tracing_subscriber::layer::SubscriberExt;

/// Divide one whole number by another.
///
/// Rounds toward zero.
#[tool(read_only)]
async fn divide(a: i64, b: i64) -> Result<i64, ToolError> {
    if b == 0 {
        return Err(ToolError::failed("cannot divide by zero"));
    }
    Ok(a / b)
}

/// Say a word back.
#[tool(read_only)]
async fn echo(word: String) -> String {
    word
}

/// The spans every test exports to, through the one global subscriber
/// (servers' tasks run on any thread). Tests tell theirs apart by tool name
/// or call id.
fn exporter() -> &'static InMemorySpanExporter {
    static EXPORTER: OnceLock<(InMemorySpanExporter, SdkTracerProvider)> = OnceLock::new();
    &EXPORTER
        .get_or_init(|| {
            let exporter = InMemorySpanExporter::default();
            let provider = SdkTracerProvider::builder()
                .with_simple_exporter(exporter.clone())
                .build();
            let layer = tracing_opentelemetry::layer().with_tracer(provider.tracer("otel_spans"));
            tracing::subscriber::set_global_default(
                tracing_subscriber::Registry::default().with(layer),
            )
            .expect("no other global subscriber in this test binary");
            (exporter, provider)
        })
        .0
}

fn spans_named(name: &str) -> Vec<SpanData> {
    exporter()
        .get_finished_spans()
        .unwrap()
        .into_iter()
        .filter(|span| span.name == name)
        .collect()
}

fn attribute<'a>(span: &'a SpanData, key: &str) -> Option<&'a Value> {
    span.attributes
        .iter()
        .find(|kv: &&KeyValue| kv.key.as_str() == key)
        .map(|kv| &kv.value)
}

fn text(span: &SpanData, key: &str) -> Option<String> {
    attribute(span, key).map(|v| v.as_str().into_owned())
}

fn with_call_id<'a>(spans: &'a [SpanData], id: &str) -> &'a SpanData {
    spans
        .iter()
        .find(|s| text(s, "gen_ai.tool.call.id").as_deref() == Some(id))
        .unwrap_or_else(|| panic!("no span for the call {id}"))
}

/// A successful call's span: named, INTERNAL, with the GenAI attributes,
/// status unset, no error type, and neither arguments nor result.
fn assert_described(span: &SpanData, id: &str) {
    assert_eq!(span.name, "execute_tool divide");
    assert_eq!(span.span_kind, SpanKind::Internal);
    assert_eq!(
        text(span, "gen_ai.operation.name").as_deref(),
        Some("execute_tool")
    );
    assert_eq!(text(span, "gen_ai.tool.name").as_deref(), Some("divide"));
    assert_eq!(text(span, "gen_ai.tool.call.id").as_deref(), Some(id));
    assert_eq!(text(span, "gen_ai.tool.type").as_deref(), Some("function"));
    assert_eq!(
        text(span, "gen_ai.tool.description").as_deref(),
        Some("Divide one whole number by another.")
    );
    assert_eq!(span.status, Status::Unset);
    assert!(attribute(span, "error.type").is_none());
    for key in ["gen_ai.tool.call.arguments", "gen_ai.tool.call.result"] {
        assert!(attribute(span, key).is_none(), "{key} is recorded");
    }
    // The bridge's own fields become the span's name, kind and status, not attributes.
    assert!(
        span.attributes
            .iter()
            .all(|kv| !kv.key.as_str().starts_with("otel."))
    );
}

fn assert_failed(span: &SpanData, error_type: &str, description: &str) {
    assert_eq!(text(span, "error.type").as_deref(), Some(error_type));
    match &span.status {
        Status::Error { description: d } => {
            assert!(d.contains(description), "status description {d:?}");
        }
        other => panic!("status {other:?}, not an error"),
    }
}

fn divisions() -> Arc<ToolRegistry> {
    let registry = Arc::new(ToolRegistry::new());
    registry.register(DivideTool).unwrap();
    registry
}

#[tokio::test]
async fn a_direct_call_has_a_genai_span_and_a_failure_an_error_status() {
    exporter();
    let registry = divisions();
    let ctx = |id: &str| ToolContext::new().with_call_id(id);
    let ok = registry
        .call("divide", json!({"a": 7, "b": "2"}), &ctx("direct-ok"))
        .await;
    assert_eq!(ok.content, "3");
    let by_zero = registry
        .call("divide", json!({"a": 1, "b": 0}), &ctx("direct-zero"))
        .await;
    assert!(by_zero.is_error);
    let invalid = registry
        .call(
            "divide",
            json!({"a": "seven", "b": 2}),
            &ctx("direct-invalid"),
        )
        .await;
    assert!(invalid.is_error);

    let spans = spans_named("execute_tool divide");
    assert_described(with_call_id(&spans, "direct-ok"), "direct-ok");
    assert_failed(
        with_call_id(&spans, "direct-zero"),
        "failed",
        "cannot divide by zero",
    );
    assert_failed(
        with_call_id(&spans, "direct-invalid"),
        "invalid_arguments",
        "invalid arguments for 'divide' at a",
    );
    // Not the value the model sent.
    let Status::Error { description } = &with_call_id(&spans, "direct-invalid").status else {
        unreachable!()
    };
    assert!(!description.contains("seven"), "{description}");
    for id in ["direct-zero", "direct-invalid"] {
        assert_eq!(with_call_id(&spans, id).span_kind, SpanKind::Internal);
    }
}

#[tokio::test]
async fn a_runners_call_has_the_same_span() {
    exporter();
    let calls = vec![
        ToolCall::new("runner-ok", "divide", json!({"a": 9, "b": 3})),
        ToolCall::new("runner-zero", "divide", json!({"a": 9, "b": 0})),
    ];
    let results = Runner::new(divisions())
        .run(calls, &ToolContext::new())
        .await;
    assert_eq!(results.calls.len(), 2);

    let spans = spans_named("execute_tool divide");
    assert_described(with_call_id(&spans, "runner-ok"), "runner-ok");
    assert_failed(
        with_call_id(&spans, "runner-zero"),
        "failed",
        "cannot divide by zero",
    );
}

/// Serve `registry` over streamable HTTP on a loopback port; the URL.
async fn serve(registry: Arc<ToolRegistry>, shutdown: &CancellationToken) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(
        McpServer::new(registry)
            .serve_http(listener, HttpOptions::default().shutdown(shutdown.clone())),
    );
    format!("http://127.0.0.1:{port}/mcp")
}

/// Mount the server at `url` as `name` in `registry`.
async fn mount(name: &str, url: &str, registry: &Arc<ToolRegistry>) -> McpClients {
    let config =
        McpConfig::from_json(&json!({"mcpServers": {name: {"url": url, "toolTimeout": 20}}}))
            .unwrap();
    let clients = McpClients::new(config, registry);
    for (server, outcome) in clients.connect().await {
        assert!(outcome.is_ok(), "{server}: {outcome:?}");
    }
    clients
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trace_goes_through_a_served_tool_into_a_further_server() {
    exporter();
    let shutdown = CancellationToken::new();
    // The further server: `echo`.
    let further = Arc::new(ToolRegistry::new());
    further.register(EchoTool).unwrap();
    let further_url = serve(further, &shutdown).await;
    // The middle server serves the further server's tool, mounted.
    let middle = Arc::new(ToolRegistry::new());
    let middle_clients = mount("far", &further_url, &middle).await;
    let middle_name = middle.names()[0].clone();
    let middle_url = serve(Arc::clone(&middle), &shutdown).await;
    // The client mounts the middle server's tool.
    let client = Arc::new(ToolRegistry::new());
    let clients = mount("near", &middle_url, &client).await;
    let client_name = client.names()[0].clone();

    let turn = tracing::info_span!("agent_turn");
    let turn_context = turn.context().span().span_context().clone();
    let ctx = ToolContext::new();
    let call = client.call(&client_name, json!({"word": "hop"}), &ctx);
    let output = tokio::time::timeout(
        Duration::from_secs(30),
        tracing::Instrument::instrument(call, turn.clone()),
    )
    .await
    .expect("the call came back in time");
    assert!(!output.is_error, "{}", output.content);
    assert_eq!(output.content, "hop");

    let one = |name: &str| {
        let spans = spans_named(name);
        assert_eq!(spans.len(), 1, "spans named {name}: {spans:?}");
        spans.into_iter().next().unwrap()
    };
    let at_client = one(&format!("execute_tool {client_name}"));
    let at_middle = one(&format!("execute_tool {middle_name}"));
    let at_further = one("execute_tool echo");
    let trace_id = turn_context.trace_id();
    for span in [&at_client, &at_middle, &at_further] {
        assert_eq!(span.span_context.trace_id(), trace_id, "{}", span.name);
        assert_eq!(span.status, Status::Unset, "{}", span.name);
    }
    assert_eq!(at_client.parent_span_id, turn_context.span_id());
    assert!(!at_client.parent_span_is_remote);
    // Each server's span is a child of its caller's, across the wire.
    assert_eq!(at_middle.parent_span_id, at_client.span_context.span_id());
    assert!(at_middle.parent_span_is_remote);
    assert_eq!(at_further.parent_span_id, at_middle.span_context.span_id());
    assert!(at_further.parent_span_is_remote);
    assert_eq!(
        text(&at_further, "gen_ai.tool.name").as_deref(),
        Some("echo")
    );
    drop(turn);

    clients.disconnect().await;
    middle_clients.disconnect().await;
    shutdown.cancel();
}

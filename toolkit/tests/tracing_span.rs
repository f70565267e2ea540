//! Every call has an `execute_tool` span named and described as
//! OpenTelemetry's conventions for generative AI say: the tool's name, the
//! call id, the tool type, and the kind of failure when there is one.

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::json;
use toolsmith::exec::{Runner, ToolCall};
use toolsmith::{ToolContext, ToolRegistry, tool};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

/// Wait a number of seconds (not really).
#[tool(read_only)]
async fn pause(seconds: u32) -> String {
    format!("paused {seconds}")
}

/// A span's name and its fields.
type SpanRecord = (String, BTreeMap<String, String>);

/// Records every span's fields by span id.
#[derive(Default, Clone)]
struct Recorder {
    next: Arc<AtomicU64>,
    spans: Arc<Mutex<BTreeMap<u64, SpanRecord>>>,
}

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.0.insert(field.name().to_owned(), value.to_string());
    }
}

impl Subscriber for Recorder {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, attrs: &Attributes<'_>) -> Id {
        let id = self.next.fetch_add(1, Ordering::SeqCst) + 1;
        let mut fields = BTreeMap::new();
        attrs.record(&mut Fields(&mut fields));
        self.spans
            .lock()
            .unwrap()
            .insert(id, (attrs.metadata().name().to_owned(), fields));
        Id::from_u64(id)
    }
    fn record(&self, span: &Id, values: &Record<'_>) {
        if let Some((_, fields)) = self.spans.lock().unwrap().get_mut(&span.into_u64()) {
            values.record(&mut Fields(fields));
        }
    }
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, _: &Event<'_>) {}
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

#[test]
fn each_call_has_a_span_with_its_facts() {
    let recorder = Recorder::default();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    tracing::subscriber::with_default(recorder.clone(), || {
        runtime.block_on(async {
            let registry = Arc::new(ToolRegistry::new());
            registry.register(PauseTool).unwrap();
            Runner::new(registry)
                .run(
                    vec![
                        ToolCall::new("c1", "pause", json!({"seconds": "5"})),
                        ToolCall::new("c2", "pause", json!({"seconds": "six"})),
                    ],
                    &ToolContext::new(),
                )
                .await
        })
    });
    let spans = recorder.spans.lock().unwrap();
    let calls: Vec<&BTreeMap<String, String>> = spans
        .values()
        .filter(|(name, _)| name == "execute_tool")
        .map(|(_, fields)| fields)
        .collect();
    assert_eq!(calls.len(), 2);
    let first = calls
        .iter()
        .find(|f| f["gen_ai.tool.call.id"] == "c1")
        .expect("span for c1");
    assert_eq!(first["otel.name"], "execute_tool pause");
    assert_eq!(first["gen_ai.operation.name"], "execute_tool");
    assert_eq!(first["gen_ai.tool.name"], "pause");
    assert_eq!(first["gen_ai.tool.type"], "function");
    assert_eq!(
        first["gen_ai.tool.description"],
        "Wait a number of seconds (not really)."
    );
    assert!(!first.contains_key("error.type"));
    let second = calls
        .iter()
        .find(|f| f["gen_ai.tool.call.id"] == "c2")
        .expect("span for c2");
    assert_eq!(second["error.type"], "invalid_arguments");
}

/// Changes nothing.
struct Quiet;

#[async_trait::async_trait]
impl toolsmith::exec::Hook for Quiet {}

#[test]
fn a_failure_a_layer_made_a_result_keeps_its_kind_and_hides_the_arguments() {
    let recorder = Recorder::default();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    tracing::subscriber::with_default(recorder.clone(), || {
        runtime.block_on(async {
            let registry = Arc::new(ToolRegistry::new());
            registry.register(PauseTool).unwrap();
            // The hooks layer hands every failure on as the text the model reads.
            Runner::new(registry)
                .with_hook(Quiet)
                .run(
                    vec![ToolCall::new("c1", "pause", json!({"seconds": "a secret"}))],
                    &ToolContext::new(),
                )
                .await
        })
    });
    let spans = recorder.spans.lock().unwrap();
    let call = spans
        .values()
        .find(|(name, _)| name == "execute_tool")
        .map(|(_, fields)| fields)
        .expect("a span for the call");
    assert_eq!(call["error.type"], "invalid_arguments");
    assert_eq!(call["otel.status_code"], "ERROR");
    assert!(
        !call["otel.status_description"].contains("secret"),
        "{}",
        call["otel.status_description"]
    );
}

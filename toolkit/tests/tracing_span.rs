//! Every call the runner makes has a `tool_call` span with the tool's name,
//! the call id, the casts applied, the outcome and the duration.

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
                        ToolCall::new("c2", "pause", json!({"seconds": 6})),
                    ],
                    &ToolContext::new(),
                )
                .await
        })
    });
    let spans = recorder.spans.lock().unwrap();
    let calls: Vec<&BTreeMap<String, String>> = spans
        .values()
        .filter(|(name, _)| name == "tool_call")
        .map(|(_, fields)| fields)
        .collect();
    assert_eq!(calls.len(), 2);
    let first = calls
        .iter()
        .find(|f| f["call_id"] == "c1")
        .expect("span for c1");
    assert_eq!(first["tool"], "pause");
    assert_eq!(first["outcome"], "success");
    assert!(first["duration_ms"].parse::<u64>().is_ok());
    assert_eq!(first["casts"], r#"["seconds: string \"5\" -> integer"]"#);
    let second = calls
        .iter()
        .find(|f| f["call_id"] == "c2")
        .expect("span for c2");
    assert_eq!(second["casts"], "[]");
}

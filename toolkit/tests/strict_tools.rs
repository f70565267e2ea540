//! Strict mode asked for by a tool (`#[tool(strict)]`): rendered as
//! OpenAI's and Anthropic's `"strict": true` with a schema each can
//! enforce, and sent non-strict, with one warning, when the schema cannot
//! be strict.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use toolsmith::schema::render_definition;
use toolsmith::{DefinitionFormat, Tool, tool};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Metadata, Subscriber};

/// Book a flight.
#[tool(strict)]
async fn book_flight(
    /// Where from.
    from: String,
    /// Where to.
    to: String,
    /// How many people fly.
    passengers: u8,
    /// Anything the crew should know.
    note: Option<String>,
) -> String {
    format!("{from}-{to} x{passengers} {note:?}")
}

/// Look up a flight.
#[tool]
async fn find_flight(number: String) -> String {
    number
}

/// Set the weight of each term.
#[tool(strict)]
async fn set_weights(weights: HashMap<String, u32>) -> usize {
    weights.len()
}

/// A node of a tree.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct Node {
    /// The node's label.
    label: String,
    /// Its children.
    children: Vec<Node>,
}

/// Plant a tree.
#[tool(strict)]
async fn plant(tree: Node) -> String {
    format!("{} with {} children", tree.label, tree.children.len())
}

#[test]
fn a_strict_tool_is_strict_for_openai_chat_and_responses() {
    warnings();
    let spec = BookFlightTool.spec();
    assert!(spec.strict);
    let chat = render_definition(spec, DefinitionFormat::OpenAi, false);
    let function = &chat["function"];
    assert_eq!(function["strict"], json!(true));
    let parameters = &function["parameters"];
    assert_eq!(parameters["additionalProperties"], json!(false));
    assert_eq!(
        parameters["required"],
        json!(["from", "to", "passengers", "note"])
    );
    // Left out, it is sent as `null`.
    assert_eq!(
        parameters["properties"]["note"]["type"],
        json!(["string", "null"])
    );
    // The same schema OpenAiStrict sends for every tool.
    let all_strict = render_definition(spec, DefinitionFormat::OpenAiStrict, false);
    assert_eq!(*parameters, all_strict["function"]["parameters"]);

    let responses = render_definition(spec, DefinitionFormat::OpenAiResponses, false);
    assert_eq!(responses["strict"], json!(true));
    assert_eq!(responses["parameters"], *parameters);
}

#[test]
fn a_strict_tool_gets_anthropic_strict_tool_use() {
    warnings();
    let anthropic = render_definition(BookFlightTool.spec(), DefinitionFormat::Anthropic, false);
    assert_eq!(anthropic["strict"], json!(true));
    let schema = &anthropic["input_schema"];
    assert_eq!(schema["additionalProperties"], json!(false));
    // Optional stays optional: Anthropic does not need every property required.
    assert_eq!(schema["required"], json!(["from", "to", "passengers"]));
    // Numeric bounds are not taken by strict tool use: they become words.
    let passengers = &schema["properties"]["passengers"];
    assert_eq!(passengers.get("minimum"), None);
    assert_eq!(passengers.get("maximum"), None);
    assert_eq!(
        passengers["description"],
        json!("How many people fly. (minimum: 0, maximum: 255)")
    );
}

#[test]
fn a_tool_that_does_not_ask_is_not_strict() {
    warnings();
    let spec = FindFlightTool.spec();
    assert!(!spec.strict);
    let chat = render_definition(spec, DefinitionFormat::OpenAi, false);
    assert_eq!(chat["function"].get("strict"), None);
    assert_eq!(chat["function"]["parameters"], spec.input_schema);
    let responses = render_definition(spec, DefinitionFormat::OpenAiResponses, false);
    assert_eq!(responses["strict"], json!(false));
    let anthropic = render_definition(spec, DefinitionFormat::Anthropic, false);
    assert_eq!(anthropic.get("strict"), None);
}

#[test]
fn a_map_falls_back_to_non_strict_with_one_warning() {
    let warnings = warnings();
    let spec = SetWeightsTool.spec();
    let chat = render_definition(spec, DefinitionFormat::OpenAi, false);
    // Rendered again: no second warning.
    render_definition(spec, DefinitionFormat::OpenAi, true);
    let responses = render_definition(spec, DefinitionFormat::OpenAiResponses, false);
    let anthropic = render_definition(spec, DefinitionFormat::Anthropic, false);
    // Sent as generated: the map keeps its free-form keys.
    assert_eq!(chat["function"].get("strict"), None);
    assert_eq!(chat["function"]["parameters"], spec.input_schema);
    assert_eq!(
        spec.input_schema["properties"]["weights"]["additionalProperties"]["type"],
        json!("integer")
    );
    assert_eq!(responses["strict"], json!(false));
    assert_eq!(responses["parameters"], spec.input_schema);
    assert_eq!(anthropic.get("strict"), None);
    assert_eq!(anthropic["input_schema"], spec.input_schema);
    // Once for OpenAI, once for Anthropic, each naming the reason.
    let seen = warnings.about("set_weights");
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert!(
        seen.iter()
            .all(|m| m.contains("/properties/weights takes free-form keys")),
        "{seen:?}"
    );
}

#[test]
fn a_recursive_type_is_strict_for_openai_but_not_for_anthropic() {
    warnings();
    let spec = PlantTool.spec();
    let chat = render_definition(spec, DefinitionFormat::OpenAi, false);
    assert_eq!(chat["function"]["strict"], json!(true));
    let anthropic = render_definition(spec, DefinitionFormat::Anthropic, false);
    assert_eq!(anthropic.get("strict"), None);
    assert_eq!(anthropic["input_schema"], spec.input_schema);
}

#[test]
fn gemini_and_mcp_have_no_strict_mode() {
    warnings();
    let spec = BookFlightTool.spec();
    for format in [DefinitionFormat::Gemini, DefinitionFormat::Mcp] {
        let def: Value = render_definition(spec, format, false);
        assert_eq!(def.get("strict"), None, "{format:?}");
    }
}

/// The warnings logged by every test in this file.
///
/// Installed for the whole process, and by each test before it renders:
/// tracing remembers whether a log line has a listener the first time the
/// line is reached, and a listener installed for one thread only while
/// another test reaches the line first can be missed (the warning is then
/// lost and the count is wrong).
fn warnings() -> &'static Warnings {
    static WARNINGS: std::sync::OnceLock<Warnings> = std::sync::OnceLock::new();
    WARNINGS.get_or_init(|| {
        let warnings = Warnings::default();
        tracing::subscriber::set_global_default(warnings.clone())
            .expect("no other subscriber in this test binary");
        warnings
    })
}

/// Counts the warnings logged, with their messages.
#[derive(Default, Clone)]
struct Warnings {
    next: Arc<AtomicUsize>,
    seen: Arc<Mutex<Vec<String>>>,
}

impl Warnings {
    /// The warnings that name `tool`.
    fn about(&self, tool: &str) -> Vec<String> {
        let seen = self.seen.lock().unwrap();
        seen.iter().filter(|m| m.contains(tool)).cloned().collect()
    }
}

struct Message<'a>(&'a mut String);

impl Visit for Message<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            *self.0 = format!("{value:?}");
        }
    }
}

impl Subscriber for Warnings {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        *metadata.level() <= Level::WARN
    }
    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(self.next.fetch_add(1, Ordering::SeqCst) as u64 + 1)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        if *event.metadata().level() == Level::WARN {
            let mut message = String::new();
            event.record(&mut Message(&mut message));
            self.seen.lock().unwrap().push(message);
        }
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

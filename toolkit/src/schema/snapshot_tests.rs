//! Every dialect rendered for one tool that has every shape that matters
//! (nested structs, a plain and a documented enum, optional scalar and
//! struct, a defaulted field, a map, a recursive type), pinned as insta
//! snapshots in `snapshots/` and checked against each provider's rules.

use std::collections::HashMap;

use schemars::JsonSchema;
use serde_json::{Map, Value};

use super::generate::schema_for_args;
use super::{DefinitionFormat, render_definition};
use crate::tool::ToolSpec;

/// Size limits of one directory walk.
#[derive(JsonSchema)]
#[allow(dead_code)]
struct Bounds {
    /// Smallest size in bytes.
    min_size: u64,
    /// Largest size in bytes, if any.
    max_size: Option<u64>,
}

/// Where to look.
#[derive(JsonSchema)]
#[allow(dead_code)]
struct Location {
    /// Directory, relative to the workspace.
    dir: String,
    /// How many levels to descend.
    depth: Option<u8>,
    bounds: Bounds,
}

/// Which entries to keep.
#[derive(JsonSchema)]
#[allow(dead_code)]
struct Filter {
    /// Glob the name must match.
    glob: String,
    tags: Vec<String>,
}

#[derive(JsonSchema)]
#[serde(rename_all = "snake_case")]
#[allow(dead_code)]
enum Order {
    Name,
    Size,
    Modified,
}

/// How entries are drawn.
#[derive(JsonSchema)]
#[serde(rename_all = "snake_case")]
#[allow(dead_code)]
enum Style {
    /// One name per line.
    Plain,
    /// Names with sizes and dates.
    Detailed,
}

/// A node of an outline.
#[derive(JsonSchema)]
#[allow(dead_code)]
struct Tree {
    label: String,
    children: Vec<Tree>,
}

fn first_page() -> u32 {
    1
}

#[derive(JsonSchema)]
#[allow(dead_code)]
struct Args {
    /// Text to look for.
    #[schemars(length(min = 1))]
    query: String,
    location: Location,
    /// Sort order.
    order: Order,
    style: Style,
    /// Most results to return.
    limit: Option<u32>,
    /// Page to return.
    #[serde(default = "first_page")]
    #[schemars(range(min = 1))]
    page: u32,
    filter: Option<Filter>,
    /// Weight of each tag.
    weights: HashMap<String, u32>,
    /// The outline to file results under.
    outline: Tree,
}

const FORMATS: [(&str, DefinitionFormat); 6] = [
    ("openai_chat", DefinitionFormat::OpenAi),
    ("openai_responses", DefinitionFormat::OpenAiResponses),
    ("openai_strict", DefinitionFormat::OpenAiStrict),
    ("anthropic", DefinitionFormat::Anthropic),
    ("gemini", DefinitionFormat::Gemini),
    ("mcp", DefinitionFormat::Mcp),
];

fn spec() -> ToolSpec {
    ToolSpec::new(
        "find_entries",
        "Find entries in the workspace.\n\nResults come back one per line.",
        schema_for_args::<Args>(),
    )
}

fn snapshot(name: &str, value: &Value) {
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| insta::assert_json_snapshot!(name, value));
}

#[test]
fn every_dialect_matches_its_snapshot() {
    let spec = spec();
    snapshot("find_entries.schema", &spec.input_schema);
    for (name, format) in FORMATS {
        snapshot(
            &format!("find_entries.{name}"),
            &render_definition(&spec, format, false),
        );
    }
}

#[test]
fn rendering_is_deterministic() {
    for (name, format) in FORMATS {
        for compact in [false, true] {
            let once = serde_json::to_string(&render_definition(&spec(), format, compact));
            let twice = serde_json::to_string(&render_definition(&spec(), format, compact));
            assert_eq!(once.unwrap(), twice.unwrap(), "{name}");
        }
    }
}

/// Every schema object in `schema`, with its path, outermost first.
fn schemas<'a>(schema: &'a Value, path: String, out: &mut Vec<(String, &'a Map<String, Value>)>) {
    let Value::Object(map) = schema else {
        return;
    };
    out.push((path.clone(), map));
    for (keyword, value) in map {
        match (keyword.as_str(), value) {
            ("properties" | "$defs", Value::Object(named)) => {
                for (name, sub) in named {
                    schemas(sub, format!("{path}/{keyword}/{name}"), out);
                }
            }
            ("anyOf" | "oneOf" | "allOf", Value::Array(branches)) => {
                for (i, sub) in branches.iter().enumerate() {
                    schemas(sub, format!("{path}/{keyword}/{i}"), out);
                }
            }
            ("items" | "additionalProperties", sub) => {
                schemas(sub, format!("{path}/{keyword}"), out)
            }
            _ => {}
        }
    }
}

fn all_schemas(schema: &Value) -> Vec<(String, &Map<String, Value>)> {
    let mut out = Vec::new();
    schemas(schema, String::new(), &mut out);
    out
}

#[test]
fn strict_closes_every_object_and_makes_optional_properties_nullable() {
    let spec = spec();
    // The map cannot be strict, so the tool is sent as it is...
    let rendered = render_definition(&spec, DefinitionFormat::OpenAiStrict, false);
    assert_eq!(rendered["function"]["strict"], Value::Bool(false));
    assert_eq!(rendered["function"]["parameters"], spec.input_schema);
    // ...and the rewrite it would have had closes every object, the map too.
    let strict = super::dialect::openai_strict(&spec.input_schema);
    let parameters = &strict;
    let mut objects = 0;
    for (path, map) in all_schemas(parameters) {
        for keyword in [
            "oneOf",
            "allOf",
            "const",
            "default",
            "title",
            "format",
            "minLength",
        ] {
            assert!(!map.contains_key(keyword), "{keyword} at {path}");
        }
        if map.contains_key("$ref") {
            assert_eq!(map.len(), 1, "$ref with siblings at {path}");
        }
        let is_object = map.get("type") == Some(&Value::String("object".into()));
        if !is_object {
            continue;
        }
        objects += 1;
        assert_eq!(map["additionalProperties"], Value::Bool(false), "{path}");
        let names: Vec<Value> = map["properties"]
            .as_object()
            .unwrap()
            .keys()
            .map(|k| Value::String(k.clone()))
            .collect();
        assert_eq!(map["required"], Value::Array(names), "{path}");
    }
    // Args, Location, Bounds, Filter, Tree, and the map.
    assert_eq!(objects, 6);
    let properties = &parameters["properties"];
    for optional in ["limit", "page", "filter"] {
        assert!(accepts_null(&properties[optional]), "{optional}");
    }
    for required in ["query", "location", "order", "style", "weights", "outline"] {
        assert!(!accepts_null(&properties[required]), "{required}");
    }
    let location = &parameters["$defs"]["Location"]["properties"];
    assert!(accepts_null(&location["depth"]));
    assert!(!accepts_null(&location["dir"]));
    // Recursion stays a reference to the definition.
    assert_eq!(
        parameters["$defs"]["Tree"]["properties"]["children"]["items"],
        serde_json::json!({"$ref": "#/$defs/Tree"})
    );
}

/// `null` as a type, or a `{"type": "null"}` branch.
fn accepts_null(schema: &Value) -> bool {
    let null = Value::String("null".into());
    match (&schema["type"], &schema["anyOf"]) {
        (Value::Array(kinds), _) => kinds.contains(&null),
        (_, Value::Array(branches)) => branches.iter().any(|b| b["type"] == null),
        _ => false,
    }
}

#[test]
fn gemini_uses_only_what_gemini_accepts_and_cuts_recursion() {
    const ACCEPTED: &[&str] = &[
        "type",
        "format",
        "description",
        "nullable",
        "enum",
        "properties",
        "required",
        "items",
        "minItems",
        "maxItems",
        "minimum",
        "maximum",
        "minLength",
        "maxLength",
        "pattern",
        "minProperties",
        "maxProperties",
        "anyOf",
    ];
    let gemini = render_definition(&spec(), DefinitionFormat::Gemini, false);
    let parameters = &gemini["parameters"];
    for (path, map) in all_schemas(parameters) {
        for keyword in map.keys() {
            assert!(ACCEPTED.contains(&keyword.as_str()), "{keyword} at {path}");
        }
        assert!(!map["type"].is_array(), "type array at {path}");
        if let Some(Value::Array(values)) = map.get("enum") {
            assert!(values.iter().all(Value::is_string), "{path}");
        }
        if let Some(Value::Object(properties)) = map.get("properties") {
            assert!(!properties.is_empty(), "{path}");
            assert_eq!(map["type"], Value::String("object".into()), "{path}");
        }
    }
    let properties = &parameters["properties"];
    assert_eq!(properties["limit"]["nullable"], Value::Bool(true));
    assert_eq!(properties["filter"]["nullable"], Value::Bool(true));
    assert_eq!(properties["filter"]["type"], Value::String("object".into()));
    assert_eq!(
        properties["style"]["enum"],
        serde_json::json!(["plain", "detailed"])
    );
    let nested = &properties["outline"]["properties"]["children"]["items"];
    let cut = &nested["properties"]["children"]["items"];
    assert_eq!(cut["type"], Value::String("object".into()));
    assert!(
        cut["description"]
            .as_str()
            .unwrap()
            .ends_with("(recursive Tree; structure as above)")
    );
    assert!(cut.get("properties").is_none());
}

#[test]
fn schemas_that_need_no_rewrite_pass_through() {
    let spec = spec();
    let schema = &spec.input_schema;
    let chat = render_definition(&spec, DefinitionFormat::OpenAi, false);
    assert_eq!(&chat["function"]["parameters"], schema);
    let responses = render_definition(&spec, DefinitionFormat::OpenAiResponses, false);
    assert_eq!(&responses["parameters"], schema);
    assert_eq!(responses["strict"], Value::Bool(false));
    let anthropic = render_definition(&spec, DefinitionFormat::Anthropic, false);
    assert_eq!(&anthropic["input_schema"], schema);
    let mcp = render_definition(&spec, DefinitionFormat::Mcp, false);
    assert_eq!(&mcp["inputSchema"], schema);
    assert!(mcp["inputSchema"].get("$schema").is_none());
}

#[test]
fn recursive_schemas_render_in_every_dialect() {
    let schema = serde_json::json!({
        "type": "object",
        "properties": {"next": {"$ref": "#"}, "a": {"$ref": "#/$defs/A"}},
        "$defs": {
            "A": {"type": "object", "properties": {"b": {"$ref": "#/$defs/B"}}},
            "B": {"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}}},
        },
    });
    let spec = ToolSpec::new("loops", "Loops.", schema);
    for (name, format) in FORMATS {
        let definition = render_definition(&spec, format, false);
        assert!(definition.is_object(), "{name}");
    }
    let gemini = render_definition(&spec, DefinitionFormat::Gemini, false);
    assert!(!gemini.to_string().contains("$ref"));
}

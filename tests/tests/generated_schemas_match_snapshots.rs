//! The schemas and provider definitions `#[tool]` generates, pinned as insta
//! snapshots in `tests/snapshots/` and checked field by field where the
//! rule matters: descriptions, required lists, bounds, defaults, enums, `$defs`.

use serde_json::{Value, json};
use tk::{DefinitionFormat, Tool, ToolRegistry};
use toolsmith_tests::attributes::{CreateAccountTool, ExecTool, FetchTool};
use toolsmith_tests::collections::{CountNodesTool, ListsAndMapsTool, PaintTool, TagItemTool};
use toolsmith_tests::naming::ReadFileTool;
use toolsmith_tests::numbers::{IntegerWidthsTool, PingTool, ScalarsTool};
use toolsmith_tests::returns::WeatherTool;
use toolsmith_tests::whole::SearchTool;

/// Snapshots live in `tests/snapshots/`, named without the module prefix.
fn snapshot(name: &str, value: &Value) {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path("../snapshots");
    settings.set_prepend_module_to_snapshot(false);
    settings.bind(|| insta::assert_json_snapshot!(name, value));
}

fn input_schema(tool: impl Tool) -> Value {
    tool.spec().input_schema.clone()
}

fn definition(tool: impl Tool, format: DefinitionFormat) -> Value {
    let registry = ToolRegistry::new();
    registry.register(tool).expect("the tool registers");
    registry.definitions(format)[0].clone().into_value()
}

#[test]
fn input_schemas_match_their_snapshots() {
    snapshot("integer_widths.input", &input_schema(IntegerWidthsTool));
    snapshot("scalars.input", &input_schema(ScalarsTool));
    snapshot("ping.input", &input_schema(PingTool));
    snapshot("lists_and_maps.input", &input_schema(ListsAndMapsTool));
    snapshot("paint.input", &input_schema(PaintTool));
    snapshot("tag_item.input", &input_schema(TagItemTool));
    snapshot("count_nodes.input", &input_schema(CountNodesTool));
    snapshot("search.input", &input_schema(SearchTool));
    snapshot("create_account.input", &input_schema(CreateAccountTool));
}

#[test]
fn provider_definitions_match_their_snapshots() {
    snapshot(
        "read_file.openai",
        &definition(ReadFileTool, DefinitionFormat::OpenAi),
    );
    snapshot(
        "read_file.mcp",
        &definition(ReadFileTool, DefinitionFormat::Mcp),
    );
    snapshot(
        "exec.openai",
        &definition(ExecTool, DefinitionFormat::OpenAi),
    );
    snapshot(
        "fetch_page.mcp",
        &definition(FetchTool, DefinitionFormat::Mcp),
    );
    snapshot(
        "weather.mcp",
        &definition(WeatherTool, DefinitionFormat::Mcp),
    );
}

#[test]
fn argument_schemas_are_closed_objects_without_title_or_dialect() {
    for schema in [
        input_schema(IntegerWidthsTool),
        input_schema(PingTool),
        input_schema(SearchTool),
        input_schema(TagItemTool),
    ] {
        assert_eq!(schema["type"], json!("object"), "{schema}");
        assert_eq!(schema["additionalProperties"], json!(false), "{schema}");
        assert!(schema.get("title").is_none(), "{schema}");
        assert!(schema.get("$schema").is_none(), "{schema}");
    }
    assert_eq!(input_schema(PingTool)["properties"], json!({}));
}

#[test]
fn doc_comments_describe_tools_and_parameters() {
    let spec = ReadFileTool.spec();
    assert_eq!(
        spec.description,
        "Read a text file from the workspace.\n\nLines come back as `LINE|CONTENT`."
    );
    let properties = &spec.input_schema["properties"];
    assert_eq!(
        properties["path"]["description"],
        json!("Path relative to the workspace.")
    );
    assert_eq!(
        properties["offset"]["description"],
        json!("First line to return, 1-based.")
    );
    assert_eq!(
        properties["limit"]["description"],
        json!("How many lines at most.")
    );
}

#[test]
fn options_and_defaults_are_not_required() {
    assert_eq!(
        input_schema(ReadFileTool)["required"],
        json!(["path"]),
        "offset has a default and limit is an Option"
    );
    assert_eq!(
        input_schema(CreateAccountTool)["required"],
        json!(["handle", "age", "tags"])
    );
    assert_eq!(
        input_schema(ListsAndMapsTool)["required"],
        json!(["tags", "counts", "switches"])
    );
    assert_eq!(input_schema(SearchTool)["required"], json!(["query"]));
}

#[test]
fn integer_widths_carry_their_natural_bounds() {
    let properties = &input_schema(IntegerWidthsTool)["properties"];
    let bounded = [
        ("a_i8", json!(-128), json!(127)),
        ("a_i16", json!(-32768), json!(32767)),
        ("a_u8", json!(0), json!(255)),
        ("a_u16", json!(0), json!(65535)),
    ];
    for (name, min, max) in bounded {
        assert_eq!(properties[name]["type"], json!("integer"), "{name}");
        assert_eq!(properties[name]["minimum"], min, "{name}");
        assert_eq!(properties[name]["maximum"], max, "{name}");
    }
    // Wider types are bounded by their `format` (the validator reads it);
    // the unsigned ones also say they cannot be negative.
    let formats = [
        ("a_i32", "int32"),
        ("a_i64", "int64"),
        ("a_isize", "int"),
        ("a_u32", "uint32"),
        ("a_u64", "uint64"),
        ("a_usize", "uint"),
    ];
    for (name, format) in formats {
        assert_eq!(properties[name]["type"], json!("integer"), "{name}");
        assert_eq!(properties[name]["format"], json!(format), "{name}");
    }
    for name in ["a_u32", "a_u64", "a_usize"] {
        assert_eq!(properties[name]["minimum"], json!(0), "{name}");
    }
}

#[test]
fn scalar_types_map_to_json_types() {
    let properties = &input_schema(ScalarsTool)["properties"];
    assert_eq!(properties["ratio"]["type"], json!("number"));
    assert_eq!(properties["ratio"]["format"], json!("float"));
    assert_eq!(properties["precise"]["type"], json!("number"));
    assert_eq!(properties["precise"]["format"], json!("double"));
    assert_eq!(properties["verbose"]["type"], json!("boolean"));
    assert_eq!(properties["label"]["type"], json!("string"));
    assert_eq!(properties["path"]["type"], json!("string"));
}

#[test]
fn arg_attributes_become_schema_keywords() {
    let schema = input_schema(CreateAccountTool);
    let p = &schema["properties"];
    // `rename` changes the name the model sees; the Rust name is gone.
    assert!(p.get("user_handle").is_none());
    assert_eq!(p["handle"]["minLength"], json!(3));
    assert_eq!(p["handle"]["maxLength"], json!(16));
    assert_eq!(p["handle"]["pattern"], json!("^[a-z][a-z0-9_]*$"));
    assert_eq!(p["age"]["minimum"], json!(13));
    assert_eq!(p["age"]["maximum"], json!(130));
    assert_eq!(p["tags"]["minItems"], json!(1));
    assert_eq!(p["tags"]["maxItems"], json!(3));
    // `description` wins over the doc comment.
    assert_eq!(
        p["greeting"]["description"],
        json!("How to greet the user.")
    );
    assert_eq!(p["greeting"]["default"], json!("Hello"));
    assert_eq!(p["home"]["default"], json!("/home/guest"));
    assert_eq!(p["quota"]["default"], json!(0.5));
    assert_eq!(p["quota"]["minimum"], json!(0.0));
    assert_eq!(p["quota"]["maximum"], json!(1.0));
    assert_eq!(p["expires_in_days"]["default"], json!(30));
    assert_eq!(p["expires_in_days"]["minimum"], json!(1));
}

#[test]
fn unit_enums_are_string_choices() {
    let schema = input_schema(PaintTool);
    let color = &schema["$defs"]["Color"];
    let choices: Vec<Value> = color["oneOf"]
        .as_array()
        .map(|branches| branches.iter().map(|b| b["const"].clone()).collect())
        .or_else(|| color["enum"].as_array().cloned())
        .expect("Color is a list of choices");
    assert_eq!(choices, [json!("red"), json!("green"), json!("deep_blue")]);
    assert_eq!(schema["required"], json!(["color"]));
}

#[test]
fn nested_and_recursive_structs_live_in_defs() {
    let tag_item = input_schema(TagItemTool);
    let defs = tag_item["$defs"].as_object().expect("tag_item has $defs");
    assert!(defs.contains_key("Meta") && defs.contains_key("Person"));
    assert_eq!(defs["Meta"]["required"], json!(["flags", "level"]));
    assert_eq!(defs["Meta"]["properties"]["level"]["maximum"], json!(9));

    let count_nodes = input_schema(CountNodesTool);
    let tree = &count_nodes["$defs"]["Tree"];
    assert_eq!(
        tree["properties"]["children"]["items"]["$ref"],
        json!("#/$defs/Tree"),
        "the recursive type refers to itself: {tree}"
    );
}

#[test]
fn a_flattened_struct_is_the_whole_argument_schema() {
    let schema = input_schema(SearchTool);
    let names: Vec<&String> = schema["properties"]
        .as_object()
        .expect("properties")
        .keys()
        .collect();
    assert_eq!(names, ["query", "limit", "kinds"]);
    assert_eq!(schema["properties"]["limit"]["default"], json!(10));
    assert_eq!(schema["properties"]["limit"]["maximum"], json!(50));
    assert_eq!(schema["properties"]["query"]["minLength"], json!(1));
}

#[test]
fn structured_results_have_an_output_schema_and_text_results_do_not() {
    let output = WeatherTool
        .spec()
        .output_schema
        .clone()
        .expect("Weather is an object");
    assert_eq!(output["type"], json!("object"));
    assert_eq!(output["required"], json!(["city", "celsius", "sky"]));
    assert_eq!(
        output["properties"]["celsius"]["description"],
        json!("Temperature in degrees Celsius.")
    );
    assert!(ReadFileTool.spec().output_schema.is_none());
    assert!(
        definition(ReadFileTool, DefinitionFormat::Mcp)
            .get("outputSchema")
            .is_none()
    );
    assert_eq!(
        definition(WeatherTool, DefinitionFormat::Mcp)["outputSchema"],
        output
    );
}

#[test]
fn definitions_have_each_providers_shape() {
    let openai = definition(ReadFileTool, DefinitionFormat::OpenAi);
    assert_eq!(openai["type"], json!("function"));
    assert_eq!(openai["function"]["name"], json!("read_file"));
    assert_eq!(openai["function"]["parameters"], input_schema(ReadFileTool));

    let mcp = definition(FetchTool, DefinitionFormat::Mcp);
    assert_eq!(mcp["name"], json!("fetch_page"));
    assert_eq!(mcp["inputSchema"], input_schema(FetchTool));
    assert_eq!(
        mcp["annotations"],
        json!({
            "readOnlyHint": true,
            "destructiveHint": false,
            "idempotentHint": true,
            "openWorldHint": true,
        })
    );
}

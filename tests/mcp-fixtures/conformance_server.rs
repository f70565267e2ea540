//! The server the MCP conformance suite and the peer clients test: the
//! fixture tools, resources and prompts the suite calls by fixed names,
//! written as any tool is, served by `toolsmith::mcp::McpServer`.
//!
//! `mcp-fixture-server --http PORT [--stateless]` serves streamable HTTP at
//! `http://127.0.0.1:PORT/mcp`; `mcp-fixture-server --stdio` serves stdio;
//! `--page-size N` cuts `tools/list` into pages of N; `--only-bad-calls`
//! serves the tools of `bad_calls.rs` alone (no resources, no prompts); `--deny-dangerous` runs served
//! calls through a pipeline that refuses the tools the `RequireForDangerous`
//! policy holds back.

#[path = "bad_calls.rs"]
mod bad_calls;
#[path = "input_required.rs"]
mod input_required;
#[path = "replicas.rs"]
mod replicas;
#[path = "tasks.rs"]
mod tasks;

use std::sync::Arc;
use std::time::Duration;

use tk::exec::ApprovalPolicy;
use tk::mcp::{ClientSession, HttpOptions, McpServer, PromptSource, ResourceSource};
use tk::pipeline::{Approval, Pipeline};
use tk::serde_json::{Map, Value, json};
use tk::{
    Arguments, Attachment, Progress, Tool, ToolContext, ToolError, ToolOutput, ToolRegistry,
    ToolSpec, async_trait, tool,
};

/// A 1x1 red PNG.
const IMAGE: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
/// A minimal WAV file.
const AUDIO: &str = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";

/// Tests simple text content response.
#[tool(read_only)]
async fn test_simple_text() -> &'static str {
    "This is a simple text response for testing."
}

/// Tests image content response.
#[tool(read_only)]
async fn test_image_content() -> ToolOutput {
    ToolOutput::default().with_image(IMAGE, "image/png")
}

/// Tests audio content response.
#[tool(read_only)]
async fn test_audio_content() -> ToolOutput {
    ToolOutput::default().with_attachment(Attachment::Audio {
        data: AUDIO.into(),
        mime_type: "audio/wav".into(),
    })
}

/// Tests a parameter mirrored in an HTTP header (`Mcp-Param-Region`).
#[tool(read_only)]
async fn test_header_param(
    /// Where to route the call.
    #[arg(header = "Region")]
    region: String,
) -> String {
    format!("routed to {region}")
}

fn text_resource(uri: &str, mime: &str, text: &str) -> Attachment {
    Attachment::Resource {
        uri: uri.into(),
        mime_type: Some(mime.into()),
        text: Some(text.into()),
        blob: None,
    }
}

/// Tests embedded resource content response.
#[tool(read_only)]
async fn test_embedded_resource() -> ToolOutput {
    ToolOutput::default().with_attachment(text_resource(
        "test://embedded-resource",
        "text/plain",
        "This is an embedded resource content.",
    ))
}

/// Tests response with multiple content types (text, image, resource).
#[tool(read_only)]
async fn test_multiple_content_types() -> ToolOutput {
    ToolOutput::text("Multiple content types test:")
        .with_image(IMAGE, "image/png")
        .with_attachment(text_resource(
            "test://mixed-content-resource",
            "application/json",
            r#"{"test":"data","value":123}"#,
        ))
}

/// Tests tool that emits log messages during execution.
#[tool(read_only)]
async fn test_tool_with_logging(session: &ClientSession) -> &'static str {
    session.log("info", "Tool execution started").await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    session.log("info", "Tool processing data").await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    session.log("info", "Tool execution completed").await;
    "Tool with logging executed successfully"
}

/// Tests SSE polling: ends the event stream of its call and answers at
/// once; the answer waits for the client to come back for it.
#[tool(read_only)]
async fn test_reconnection(session: &ClientSession) -> &'static str {
    session.close_stream();
    "Reconnection test completed"
}

/// Tests tool that reports progress notifications.
#[tool(read_only)]
async fn test_tool_with_progress(ctx: &ToolContext) -> &'static str {
    for step in [0.0, 50.0, 100.0] {
        ctx.report_progress(
            Progress::new(step)
                .with_total(100.0)
                .with_message(format!("Completed step {step} of 100")),
        );
        if step < 100.0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    "Progress reported: 3 steps"
}

/// Tests error response handling.
#[tool(read_only)]
async fn test_error_handling() -> Result<String, ToolError> {
    Err(ToolError::failed(
        "This tool intentionally returns an error for testing",
    ))
}

/// Tests server-initiated sampling (LLM completion request).
#[tool(read_only)]
async fn test_sampling(
    session: &ClientSession,
    /// The prompt to send to the LLM.
    prompt: String,
) -> Result<String, ToolError> {
    let result = session
        .sample(json!({
            "messages": [{"role": "user", "content": {"type": "text", "text": prompt}}],
            "maxTokens": 100
        }))
        .await?;
    let text = result["content"]["text"].as_str().unwrap_or("No response");
    Ok(format!("LLM response: {text}"))
}

async fn elicit(
    session: &ClientSession,
    message: &str,
    schema: Value,
) -> Result<String, ToolError> {
    let result = session
        .elicit(json!({"mode": "form", "message": message, "requestedSchema": schema}))
        .await?;
    let content = result.get("content").cloned().unwrap_or(json!({}));
    Ok(format!(
        "Elicitation completed: action={}, content={content}",
        result["action"].as_str().unwrap_or("")
    ))
}

/// Tests server-initiated elicitation (user input request).
#[tool(read_only)]
async fn test_elicitation(
    session: &ClientSession,
    /// The message to show the user.
    message: String,
) -> Result<String, ToolError> {
    let schema = json!({"type": "object", "properties": {
        "response": {"type": "string", "description": "User's response"}
    }, "required": ["response"]});
    elicit(session, &message, schema).await
}

/// Tests elicitation with default values per SEP-1034.
#[tool(read_only)]
async fn test_elicitation_sep1034_defaults(session: &ClientSession) -> Result<String, ToolError> {
    let schema = json!({"type": "object", "properties": {
        "name": {"type": "string", "description": "User name", "default": "John Doe"},
        "age": {"type": "integer", "description": "User age", "default": 30},
        "score": {"type": "number", "description": "User score", "default": 95.5},
        "status": {"type": "string", "description": "User status", "enum": ["active", "inactive", "pending"], "default": "active"},
        "verified": {"type": "boolean", "description": "Verification status", "default": true}
    }, "required": []});
    elicit(
        session,
        "Please review and update the form fields with defaults",
        schema,
    )
    .await
}

/// Tests elicitation with enum schema improvements per SEP-1330.
#[tool(read_only)]
async fn test_elicitation_sep1330_enums(session: &ClientSession) -> Result<String, ToolError> {
    let schema = json!({"type": "object", "properties": {
        "untitledSingle": {"type": "string", "description": "Select one option", "enum": ["option1", "option2", "option3"]},
        "titledSingle": {"type": "string", "description": "Select one option with titles", "oneOf": [
            {"const": "value1", "title": "First Option"},
            {"const": "value2", "title": "Second Option"},
            {"const": "value3", "title": "Third Option"}
        ]},
        "legacyEnum": {"type": "string", "description": "Select one option (legacy)", "enum": ["opt1", "opt2", "opt3"], "enumNames": ["Option One", "Option Two", "Option Three"]},
        "untitledMulti": {"type": "array", "description": "Select multiple options", "minItems": 1, "maxItems": 3,
            "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
        "titledMulti": {"type": "array", "description": "Select multiple options with titles", "minItems": 1, "maxItems": 3,
            "items": {"anyOf": [
                {"const": "value1", "title": "First Choice"},
                {"const": "value2", "title": "Second Choice"},
                {"const": "value3", "title": "Third Choice"}
            ]}}
    }, "required": []});
    elicit(
        session,
        "Please select options from the enum fields",
        schema,
    )
    .await
}

/// Today's weather somewhere.
#[derive(tk::serde::Serialize, tk::schemars::JsonSchema)]
#[serde(crate = "tk::serde")]
#[schemars(crate = "tk::schemars")]
struct Weather {
    /// The city.
    city: String,
    /// Degrees Celsius.
    celsius: i32,
}

/// Reports the weather in a city (a structured result with an output schema).
#[tool(read_only, idempotent, open_world)]
async fn weather(
    /// The city.
    city: String,
) -> Weather {
    Weather { city, celsius: 21 }
}

/// The weather in a city for the next days (a list: its output schema and
/// structured content are wrapped under `result`).
#[tool(read_only, idempotent, open_world)]
async fn forecast(
    /// The city.
    city: String,
    /// How many days.
    #[arg(maximum = 7)]
    days: u32,
) -> Vec<Weather> {
    (0..days)
        .map(|day| Weather {
            city: city.clone(),
            celsius: 21 - i32::try_from(day).unwrap_or(0),
        })
        .collect()
}

/// Echoes back the input (the round-trip benchmark's tool).
#[tool(read_only, idempotent)]
async fn echo(
    /// Message to echo.
    message: String,
) -> String {
    format!("Echo: {message}")
}

/// Sleeps, reporting progress each tick, until done or cancelled.
#[tool(read_only)]
async fn slow(
    ctx: &ToolContext,
    /// Seconds to sleep.
    #[arg(maximum = 60)]
    seconds: u64,
) -> Result<String, ToolError> {
    for tick in 0..seconds * 10 {
        ctx.report_progress(Progress::new(tick as f64).with_total((seconds * 10) as f64));
        tokio::select! {
            () = tokio::time::sleep(Duration::from_millis(100)) => {}
            () = ctx.cancellation().cancelled() => return Err(ToolError::Cancelled),
        }
    }
    Ok(format!("slept {seconds}s"))
}

/// Reports progress `beats` times, one every `every_ms`, then is silent
/// for `silent_ms` before it answers; stops when cancelled.
#[tool(read_only)]
async fn pulse(
    ctx: &ToolContext,
    /// How many progress reports to send.
    #[arg(maximum = 1000)]
    beats: u64,
    /// Milliseconds before each report.
    #[arg(maximum = 10000)]
    every_ms: u64,
    /// Milliseconds of silence after the last report.
    #[arg(maximum = 60000)]
    silent_ms: u64,
) -> Result<String, ToolError> {
    let wait = |ms: u64| async move {
        tokio::select! {
            () = tokio::time::sleep(Duration::from_millis(ms)) => Ok(()),
            () = ctx.cancellation().cancelled() => Err(ToolError::Cancelled),
        }
    };
    for beat in 1..=beats {
        wait(every_ms).await?;
        ctx.report_progress(Progress::new(beat as f64).with_total(beats as f64));
    }
    wait(silent_ms).await?;
    Ok(format!("{beats} beats"))
}

/// Waits until the call is cancelled, then writes `cancelled` to `marker`.
#[tool(read_only)]
async fn wait_for_cancel(
    ctx: &ToolContext,
    /// The file to write once cancelled.
    marker: String,
) -> Result<String, ToolError> {
    tokio::select! {
        () = ctx.cancellation().cancelled() => {
            std::fs::write(&marker, "cancelled").map_err(ToolError::failed)?;
            Err(ToolError::Cancelled)
        }
        () = tokio::time::sleep(Duration::from_secs(60)) => Ok("never cancelled".into()),
    }
}

/// Stops the whole server process at once, as a crash would.
#[tool(destructive)]
async fn crash() -> &'static str {
    std::process::exit(3)
}

/// A tool added at run time by `grow`.
struct Grown(ToolSpec);

#[async_trait]
impl Tool for Grown {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }

    async fn call(&self, _args: Arguments, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text(format!("I am {}", self.0.name)))
    }
}

/// Adds a tool named `grown_N` and tells the client the list changed.
#[tool]
async fn grow(registry: &Arc<ToolRegistry>, session: &ClientSession) -> Result<String, ToolError> {
    let name = format!(
        "grown_{}",
        registry
            .names()
            .iter()
            .filter(|n| n.starts_with("grown_"))
            .count()
            + 1
    );
    let spec = ToolSpec::new(
        name.clone(),
        "A tool added at run time.",
        json!({"type": "object", "properties": {}}),
    );
    registry.register(Grown(spec)).map_err(ToolError::failed)?;
    session.notify_tool_list_changed().await?;
    Ok(format!("added {name}"))
}

/// The JSON Schema 2020-12 fixture: its schema has `$schema`, `$defs` and
/// `additionalProperties`, which must reach the client unchanged, so it is
/// written by hand.
struct JsonSchema202012(ToolSpec);

#[async_trait]
impl Tool for JsonSchema202012 {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }

    async fn call(&self, args: Arguments, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text(format!(
            "JSON Schema 2020-12 tool called with: {}",
            args.into_json()
        )))
    }
}

fn json_schema_tool() -> JsonSchema202012 {
    JsonSchema202012(ToolSpec::new(
        "json_schema_2020_12_tool",
        "Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)",
        json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": {"address": {"type": "object", "properties": {"street": {"type": "string"}, "city": {"type": "string"}}}},
            "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
            "additionalProperties": false
        }),
    ))
}

struct Resources;

#[async_trait]
impl ResourceSource for Resources {
    fn resources(&self) -> Vec<Value> {
        vec![
            json!({"uri": "test://static-text", "name": "static-text", "title": "Static Text Resource", "description": "A static text resource for testing", "mimeType": "text/plain"}),
            json!({"uri": "test://static-binary", "name": "static-binary", "title": "Static Binary Resource", "description": "A static binary resource (image) for testing", "mimeType": "image/png"}),
            json!({"uri": "test://watched-resource", "name": "watched-resource", "title": "Watched Resource", "description": "A resource that can be subscribed to", "mimeType": "text/plain"}),
        ]
    }

    fn templates(&self) -> Vec<Value> {
        vec![
            json!({"uriTemplate": "test://template/{id}/data", "name": "template", "title": "Resource Template", "description": "A resource template with parameter substitution", "mimeType": "application/json"}),
        ]
    }

    async fn read(&self, uri: &str) -> Result<Value, String> {
        let text = |text: &str, mime: &str| json!({"contents": [{"uri": uri, "mimeType": mime, "text": text}]});
        match uri {
            "test://static-text" => Ok(text(
                "This is the content of the static text resource.",
                "text/plain",
            )),
            "test://watched-resource" => Ok(text("Watched resource content", "text/plain")),
            "test://static-binary" => {
                Ok(json!({"contents": [{"uri": uri, "mimeType": "image/png", "blob": IMAGE}]}))
            }
            _ => {
                let id = uri
                    .strip_prefix("test://template/")
                    .and_then(|rest| rest.strip_suffix("/data"))
                    .filter(|id| !id.is_empty() && !id.contains('/'))
                    .ok_or_else(|| format!("no resource `{uri}`"))?;
                let data =
                    json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")});
                Ok(text(&data.to_string(), "application/json"))
            }
        }
    }
}

struct Prompts;

#[async_trait]
impl PromptSource for Prompts {
    fn prompts(&self) -> Vec<Value> {
        vec![
            json!({"name": "test_simple_prompt", "title": "Simple Test Prompt", "description": "A simple prompt without arguments"}),
            json!({"name": "test_prompt_with_arguments", "title": "Prompt With Arguments", "description": "A prompt with required arguments", "arguments": [
                {"name": "arg1", "description": "First test argument", "required": true},
                {"name": "arg2", "description": "Second test argument", "required": true}
            ]}),
            json!({"name": "test_prompt_with_embedded_resource", "title": "Prompt With Embedded Resource", "description": "A prompt that includes an embedded resource", "arguments": [
                {"name": "resourceUri", "description": "URI of the resource to embed", "required": true}
            ]}),
            json!({"name": "test_prompt_with_image", "title": "Prompt With Image", "description": "A prompt that includes image content"}),
            json!({"name": "test_input_required_result_prompt", "description": "A prompt that asks the user for its context first"}),
        ]
    }

    async fn get_asking(
        &self,
        name: &str,
        arguments: Map<String, Value>,
        session: &ClientSession,
    ) -> Result<Value, String> {
        if name != "test_input_required_result_prompt" {
            return self.get(name, arguments).await;
        }
        let form = json!({
            "message": "What context should the prompt use?",
            "requestedSchema": {
                "type": "object",
                "properties": {"context": {"type": "string"}},
                "required": ["context"]
            }
        });
        let answer = session
            .ask("user_context", "elicitation/create", form)
            .await
            .map_err(|e| e.to_string())?;
        let context = answer["content"]["context"].as_str().unwrap_or("none");
        Ok(
            json!({"messages": [{"role": "user", "content": {"type": "text", "text": format!("Use this context: {context}")}}]}),
        )
    }

    async fn get(&self, name: &str, arguments: Map<String, Value>) -> Result<Value, String> {
        let text = |t: String| json!({"role": "user", "content": {"type": "text", "text": t}});
        let arg = |key: &str| {
            arguments
                .get(key)
                .and_then(Value::as_str)
                .map(str::to_owned)
                .ok_or_else(|| format!("the prompt `{name}` needs the argument `{key}`"))
        };
        let messages = match name {
            "test_simple_prompt" => vec![text("This is a simple prompt for testing.".into())],
            "test_prompt_with_arguments" => vec![text(format!(
                "Prompt with arguments: arg1='{}', arg2='{}'",
                arg("arg1")?,
                arg("arg2")?
            ))],
            "test_prompt_with_embedded_resource" => vec![
                json!({"role": "user", "content": {"type": "resource", "resource": {
                    "uri": arg("resourceUri")?, "mimeType": "text/plain", "text": "Embedded resource content for testing."
                }}}),
                text("Please process the embedded resource above.".into()),
            ],
            "test_prompt_with_image" => vec![
                json!({"role": "user", "content": {"type": "image", "data": IMAGE, "mimeType": "image/png"}}),
                text("Please analyze the image above.".into()),
            ],
            _ => return Err(format!("no prompt `{name}`")),
        };
        Ok(json!({"messages": messages}))
    }
}

fn registry() -> Arc<ToolRegistry> {
    let registry = ToolRegistry::new();
    let tools: Vec<Arc<dyn Tool>> = vec![
        Arc::new(TestSimpleTextTool),
        Arc::new(TestImageContentTool),
        Arc::new(TestAudioContentTool),
        Arc::new(TestHeaderParamTool),
        Arc::new(TestEmbeddedResourceTool),
        Arc::new(TestMultipleContentTypesTool),
        Arc::new(TestToolWithLoggingTool),
        Arc::new(TestToolWithProgressTool),
        Arc::new(TestReconnectionTool),
        Arc::new(TestErrorHandlingTool),
        Arc::new(TestSamplingTool),
        Arc::new(TestElicitationTool),
        Arc::new(TestElicitationSep1034DefaultsTool),
        Arc::new(TestElicitationSep1330EnumsTool),
        Arc::new(EchoTool),
        Arc::new(WeatherTool),
        Arc::new(ForecastTool),
        Arc::new(SlowTool),
        Arc::new(PulseTool),
        Arc::new(CrashTool),
        Arc::new(WaitForCancelTool),
        Arc::new(GrowTool),
        Arc::new(json_schema_tool()),
    ];
    let tools = tools
        .into_iter()
        .chain(input_required::tools())
        .chain(replicas::tools())
        .chain(tasks::tools());
    for tool in tools.chain(bad_calls::tools()) {
        registry
            .register_arc(tool)
            .expect("fixture tools are valid");
    }
    Arc::new(registry)
}

// One client per stdio process: a single-threaded runtime answers without
// handing work between threads.
#[tokio::main(flavor = "current_thread")]
async fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let only_bad_calls = args.iter().any(|a| a == "--only-bad-calls");
    let registry = if only_bad_calls {
        bad_calls::registry()
    } else {
        registry()
    };
    let server = McpServer::new(Arc::clone(&registry))
        .with_context(ToolContext::new().with_state(registry))
        .with_name("mcp-conformance-test-server", "1.0.0");
    let server = if only_bad_calls {
        server
    } else {
        server.with_resources(Resources).with_prompts(Prompts)
    };
    let server = match args.iter().position(|a| a == "--page-size") {
        Some(i) => server.with_page_size(args.get(i + 1).and_then(|n| n.parse().ok()).unwrap_or(5)),
        None => server,
    };
    // `--tasks-per-caller N`: at most N tasks running per caller.
    let server = match args.iter().position(|a| a == "--tasks-per-caller") {
        Some(i) => server.with_task_limits(
            args.get(i + 1).and_then(|n| n.parse().ok()).unwrap_or(1),
            tk::mcp::DEFAULT_TASKS_IN_ALL,
        ),
        None => server,
    };
    let server = if args.iter().any(|a| a == "--deny-dangerous") {
        server.with_pipeline(
            Pipeline::new().layer(Approval::deny(ApprovalPolicy::RequireForDangerous)),
        )
    } else {
        server
    };
    match args.first().map(String::as_str) {
        Some("--stdio") => server.serve_stdio().await,
        Some("--http") => {
            let port: u16 = args.get(1).and_then(|p| p.parse().ok()).unwrap_or(0);
            let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
            // The parent reads the port from this line.
            println!("listening on http://{}/mcp", listener.local_addr()?);
            let stateless = args.iter().any(|a| a == "--stateless");
            server
                .serve_http(listener, HttpOptions::default().stateless(stateless))
                .await
        }
        _ => {
            eprintln!(
                "usage: mcp-fixture-server (--stdio | --http PORT [--stateless]) [--page-size N] [--only-bad-calls] [--deny-dangerous]"
            );
            std::process::exit(2);
        }
    }
}

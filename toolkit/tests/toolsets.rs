//! Toolsets: tools combined, prefixed, renamed, filtered, hidden and their
//! parameters transformed as groups, and offered per call context.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use toolsmith::pipeline::Pipeline;
use toolsmith::toolset::{ArgTransform, Toolset, ToolsetError};
use toolsmith::{
    Arguments, DefinitionFormat, ErrorKind, Tool, ToolContext, ToolError, ToolOutput, ToolRegistry,
    ToolSpec, async_trait, tool,
};

/// Read part of a file.
#[tool(read_only)]
async fn read_file(
    /// The folder everything is relative to.
    root: String,
    /// The file.
    path: String,
    /// The first line, 1-based.
    #[arg(default = 1, minimum = 1)]
    offset: u64,
    /// How many lines at most.
    limit: Option<u32>,
) -> String {
    format!("{root}/{path} from {offset} limit {limit:?}")
}

/// Write a file.
#[tool]
async fn write_file(
    /// The folder everything is relative to.
    root: String,
    /// The file.
    path: String,
    /// What to write.
    text: String,
) -> String {
    format!("wrote {} bytes to {root}/{path}", text.len())
}

/// Send a message.
#[tool]
async fn send(
    /// To whom.
    to: String,
    /// What to say.
    body: String,
) -> String {
    format!("to {to}: {body}")
}

async fn with_timeout<F: std::future::Future>(f: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(20), f)
        .await
        .expect("the test took too long")
}

fn files() -> Toolset {
    Toolset::new()
        .with_tool(ReadFileTool)
        .with_tool(WriteFileTool)
        .prefix("fs_")
        .transform_arg_everywhere("root", ArgTransform::fixed(json!("/srv")))
}

#[test]
fn the_schema_shows_what_the_model_may_send() {
    let toolbox = files()
        .rename("fs_read_file", "open")
        .transform_arg(
            "open",
            "path",
            ArgTransform::new()
                .rename("file")
                .describe("The file to open."),
        )
        .transform_arg("open", "limit", ArgTransform::new().default(json!(20)))
        .build()
        .unwrap();
    assert_eq!(toolbox.names(), ["open", "fs_write_file"]);
    let open = &toolbox.tools()[0];
    let schema = &open.spec().input_schema;
    let properties = schema["properties"].as_object().unwrap();
    let names: Vec<&str> = properties.keys().map(String::as_str).collect();
    // Hidden: gone from both; renamed: renamed in both, in its place.
    let original = ReadFileTool.spec().input_schema["properties"]
        .as_object()
        .unwrap()
        .keys()
        .filter(|k| *k != "root")
        .map(|k| if k == "path" { "file" } else { k.as_str() })
        .collect::<Vec<_>>();
    assert_eq!(names, original);
    assert_eq!(names.len(), 3);
    assert_eq!(schema["required"], json!(["file"]));
    assert_eq!(properties["file"]["description"], "The file to open.");
    // A new default is shown, and makes the parameter optional.
    assert_eq!(properties["limit"]["default"], 20);
    assert_eq!(open.spec().description, ReadFileTool.spec().description);

    let write = &toolbox.tools()[1];
    assert_eq!(
        write.spec().input_schema["required"],
        json!(["path", "text"])
    );
    // The original is untouched.
    assert!(
        ReadFileTool.spec().input_schema["properties"]
            .get("root")
            .is_some()
    );
}

#[tokio::test]
async fn a_transformed_tool_is_cast_validated_and_called_as_the_original() {
    with_timeout(async {
        let toolbox = files()
            .transform_arg("fs_read_file", "path", ArgTransform::new().rename("file"))
            .transform_arg(
                "fs_read_file",
                "limit",
                ArgTransform::new().default(json!(20)),
            )
            .build()
            .unwrap();
        let registry = ToolRegistry::new();
        toolbox.register(&registry).unwrap();
        let ctx = ToolContext::new();

        // Cast as usual ("3" for an integer), the default filled in, the
        // fixed value given, the renamed parameter put back.
        let out = registry
            .call(
                "fs_read_file",
                json!({"file": "a.txt", "offset": "3"}),
                &ctx,
            )
            .await;
        assert!(!out.is_error, "{}", out.content);
        assert_eq!(out.content, "/srv/a.txt from 3 limit Some(20)");

        // Validation against the new schema: minimum still holds.
        let out = registry
            .call("fs_read_file", json!({"file": "a.txt", "offset": 0}), &ctx)
            .await;
        assert!(out.is_error);
        assert!(out.content.contains("offset"), "{}", out.content);

        // The hidden parameter cannot be set: an unknown parameter.
        let out = registry
            .call(
                "fs_read_file",
                json!({"file": "a.txt", "root": "/etc"}),
                &ctx,
            )
            .await;
        assert!(out.is_error);
        assert_eq!(
            out.metadata.read(&toolsmith::exec::meta::ERROR_KIND),
            Some(ErrorKind::InvalidArguments)
        );
        assert!(
            out.content.contains("root is not a parameter"),
            "{}",
            out.content
        );

        // Nor can a renamed one under its old name.
        let out = registry
            .call("fs_read_file", json!({"file": "a.txt", "path": "b"}), &ctx)
            .await;
        assert!(out.is_error);
        assert!(
            out.content.contains("path is not a parameter"),
            "{}",
            out.content
        );

        // The required renamed parameter is required under its new name.
        let out = registry.call("fs_read_file", json!({}), &ctx).await;
        assert!(out.content.contains("file is required"), "{}", out.content);
    })
    .await;
}

/// A tool whose schema lets unknown keys through (as many MCP servers'
/// do), recording what it receives.
struct Permissive {
    spec: ToolSpec,
    seen: Arc<Mutex<Vec<Value>>>,
}

#[async_trait]
impl Tool for Permissive {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    async fn call(&self, args: Arguments, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let args = args.into_json();
        self.seen.lock().unwrap().push(args.clone());
        Ok(args.to_string().into())
    }
}

#[tokio::test]
async fn a_hidden_parameter_is_never_passed_through_even_when_the_schema_allows_extras() {
    with_timeout(async {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let spec = ToolSpec::new(
            "query",
            "Query a database.",
            json!({
                "type": "object",
                "properties": {"db": {"type": "string"}, "sql": {"type": "string"}},
                "required": ["db", "sql"]
            }),
        );
        let toolbox = Toolset::new()
            .with_tool(Permissive {
                spec,
                seen: Arc::clone(&seen),
            })
            .transform_arg("query", "db", ArgTransform::fixed(json!("prod")))
            .build()
            .unwrap();
        let registry = ToolRegistry::new();
        toolbox.register(&registry).unwrap();
        let ctx = ToolContext::new();
        let out = registry
            .call("query", json!({"sql": "select 1", "db": "admin"}), &ctx)
            .await;
        assert!(out.is_error);
        assert!(
            out.content.contains("db is not a parameter"),
            "{}",
            out.content
        );
        let out = registry
            .call("query", json!({"sql": "select 1"}), &ctx)
            .await;
        assert_eq!(out.content, r#"{"sql":"select 1","db":"prod"}"#);
        assert_eq!(seen.lock().unwrap().len(), 1, "the refused call never ran");
    })
    .await;
}

/// Who the agent acts for.
struct Role(&'static str);

#[tokio::test]
async fn tools_are_offered_per_context_and_hidden_reversibly() {
    with_timeout(async {
        let messaging = Toolset::new()
            .with_tool(SendTool)
            // Only the support agent may message people.
            .prepare(|ctx, _spec| ctx.agent_id() == Some("support"));
        let toolbox = Toolset::combine([files(), messaging])
            // Writing only for admins, whatever the agent.
            .prepare(|ctx, spec| {
                spec.name != "fs_write_file" || ctx.state::<Role>().is_some_and(|r| r.0 == "admin")
            })
            .build()
            .unwrap();
        let registry = ToolRegistry::new().with_pipeline(Pipeline::new().layer(toolbox.gate()));
        toolbox.register(&registry).unwrap();
        /// A tool outside the toolbox is left alone.
        #[tool]
        async fn clock() -> &'static str {
            "noon"
        }
        registry.register(ClockTool).unwrap();

        let guest = ToolContext::new()
            .with_agent_id("coder")
            .with_state(Role("guest"));
        let admin = ToolContext::new()
            .with_agent_id("support")
            .with_state(Role("admin"));
        assert_eq!(toolbox.offered(&guest), ["fs_read_file"]);
        assert_eq!(
            toolbox.offered(&admin),
            ["fs_read_file", "fs_write_file", "send"]
        );

        let names = |defs: Vec<toolsmith::Definition>| -> Vec<String> {
            defs.iter()
                .map(|d| d["function"]["name"].as_str().unwrap().to_owned())
                .collect()
        };
        assert_eq!(
            names(toolbox.definitions(&registry, &guest, DefinitionFormat::OpenAi)),
            ["clock", "fs_read_file"]
        );
        assert_eq!(
            names(toolbox.definitions(&registry, &admin, DefinitionFormat::OpenAi)),
            ["clock", "fs_read_file", "fs_write_file", "send"]
        );

        // What a context is not offered, it cannot call.
        let out = registry
            .call("send", json!({"to": "bob", "body": "hi"}), &guest)
            .await;
        assert!(out.is_error);
        assert_eq!(
            out.metadata.read(&toolsmith::exec::meta::ERROR_KIND),
            Some(ErrorKind::Refused)
        );
        assert!(out.content.contains("not available"), "{}", out.content);
        let out = registry
            .call("send", json!({"to": "bob", "body": "hi"}), &admin)
            .await;
        assert_eq!(out.content, "to bob: hi");
        assert_eq!(
            registry.call("clock", json!({}), &guest).await.content,
            "noon"
        );

        // Hidden for everyone, then shown again; the registry never changes.
        let generation = registry.generation();
        assert!(toolbox.hide("send"));
        assert!(!toolbox.is_offered("send", &admin));
        assert!(
            registry
                .call("send", json!({"to": "a", "body": "b"}), &admin)
                .await
                .is_error
        );
        assert!(toolbox.show("send"));
        assert!(toolbox.is_offered("send", &admin));
        assert_eq!(registry.generation(), generation);
        assert_eq!(registry.len(), 4);
        assert!(!toolbox.hide("nothing_like_it"));
    })
    .await;
}

#[test]
fn hidden_at_first_filtered_and_taken_from_a_registry() {
    let registry = ToolRegistry::new();
    registry.register(ReadFileTool).unwrap();
    registry.register(WriteFileTool).unwrap();
    registry.register(SendTool).unwrap();
    let read_only = Toolset::from_registry(&registry)
        .filter(|spec| spec.annotations.read_only)
        .build()
        .unwrap();
    assert_eq!(read_only.names(), ["read_file"]);
    // Unchanged tools are the registry's own, not copies.
    assert!(Arc::ptr_eq(
        &read_only.tools()[0],
        &registry.get("read_file").unwrap()
    ));

    let toolbox = Toolset::new()
        .with_tool(SendTool)
        .hide(["send"])
        .build()
        .unwrap();
    let ctx = ToolContext::new();
    assert!(toolbox.is_hidden("send"));
    assert!(toolbox.offered(&ctx).is_empty());
    toolbox.show("send");
    assert_eq!(toolbox.offered(&ctx), ["send"]);
}

#[test]
fn mistakes_are_reported_when_built() {
    let err = |set: Toolset| set.build().unwrap_err();
    assert_eq!(
        err(files().rename("read_file", "x")),
        ToolsetError::UnknownTool("read_file".into())
    );
    assert!(matches!(
        err(files().transform_arg("fs_read_file", "root", ArgTransform::new().rename("x"))),
        ToolsetError::UnknownParameter { parameter, .. } if parameter == "root"
    ));
    assert!(matches!(
        err(Toolset::new()
            .with_tool(SendTool)
            .transform_arg("send", "to", ArgTransform::new().hide())),
        ToolsetError::HiddenWithoutValue { parameter, .. } if parameter == "to"
    ));
    // An optional parameter may be hidden without a value: it is never sent.
    assert!(
        files()
            .transform_arg("fs_read_file", "limit", ArgTransform::new().hide())
            .build()
            .is_ok()
    );
    assert!(matches!(
        err(Toolset::new()
            .with_tool(ReadFileTool)
            .transform_arg("read_file", "offset", ArgTransform::fixed(json!("soon")))),
        ToolsetError::InvalidValue { reason, .. } if reason.contains("offset")
    ));
    assert!(matches!(
        err(Toolset::new()
            .with_tool(SendTool)
            .transform_arg("send", "to", ArgTransform::new().rename("body"))),
        ToolsetError::ParameterClash { parameter, .. } if parameter == "body"
    ));
    assert_eq!(
        err(Toolset::combine([files(), files()])),
        ToolsetError::Duplicate("fs_read_file".into())
    );
    assert_eq!(
        err(Toolset::new().with_tool(SendTool).prefix("bad name ")),
        ToolsetError::InvalidName("bad name send".into())
    );
}

#[tokio::test]
async fn a_fixed_value_is_cast_once_as_a_models_would_be() {
    with_timeout(async {
        let toolbox = Toolset::new()
            .with_tool(ReadFileTool)
            .transform_arg("read_file", "offset", ArgTransform::fixed(json!("7")))
            .build()
            .unwrap();
        let registry = ToolRegistry::new();
        toolbox.register(&registry).unwrap();
        let out = registry
            .call(
                "read_file",
                json!({"root": "r", "path": "p"}),
                &ToolContext::new(),
            )
            .await;
        assert_eq!(out.content, "r/p from 7 limit None");
    })
    .await;
}

#[tokio::test]
async fn transformed_tools_are_robust() {
    with_timeout(async {
        let toolbox = files()
            .transform_arg("fs_read_file", "path", ArgTransform::new().rename("file"))
            .transform_arg(
                "fs_read_file",
                "limit",
                ArgTransform::new().default(json!(20)),
            )
            .build()
            .unwrap();
        let registry = ToolRegistry::new();
        toolbox.register(&registry).unwrap();
        for name in toolbox.names() {
            toolsmith::testing::Robustness::new(&registry, &name)
                .cases(80)
                .seed(3)
                .assert()
                .await;
        }
    })
    .await;
}

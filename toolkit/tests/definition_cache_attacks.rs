//! Attacks on the shared renderings of tool definitions: each tool's
//! definition is rendered once and kept (a `#[tool]`'s in a static every
//! registry of the program shares, any other tool's with its registry
//! entry). No attack may make a registry serve a rendering of a spec other
//! than the one its tool has now: a tool changed under the same name
//! (replaced, removed and registered again, re-listed by a mounted MCP
//! server), a tool a toolset shows otherwise (renamed, prefixed,
//! described, a parameter described), another registry's view of the same
//! `#[tool]`, threads rendering at once. A source that keeps changing its
//! tools may not make the renderings pile up, and an unchanged one keeps
//! the bytes a model is sent identical.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};

use serde_json::{Value, json};
use toolsmith::schema::render_definition;
use toolsmith::toolset::{ArgTransform, Toolset};
use toolsmith::{
    Arguments, DeferredTools, Definition, DefinitionFormat, Tool, ToolContext, ToolError,
    ToolOutput, ToolRegistry, ToolSpec, async_trait, tool,
};

/// Greet someone by name.
#[tool(read_only)]
async fn greet(
    /// Who to greet.
    name: String,
) -> String {
    format!("hello {name}")
}

/// Count the words of a text. Only this file's thread test renders it.
#[tool(read_only)]
async fn count_words(
    /// The text.
    text: String,
) -> usize {
    text.split_whitespace().count()
}

/// A tool known only by its spec, as a mounted one is, that counts its drops.
struct Shifty {
    spec: ToolSpec,
    dropped: Arc<AtomicUsize>,
}

impl Shifty {
    fn new(name: &str, version: usize, dropped: &Arc<AtomicUsize>) -> Self {
        Self {
            spec: shifty_spec(name, version),
            dropped: Arc::clone(dropped),
        }
    }
}

fn shifty_spec(name: &str, version: usize) -> ToolSpec {
    ToolSpec::new(
        name.to_owned(),
        format!("Version {version} of the tool. It changes."),
        json!({
            "type": "object",
            "properties": {format!("p{version}"): {"type": "string", "description": format!("v{version}")}},
        }),
    )
}

impl Drop for Shifty {
    fn drop(&mut self) {
        self.dropped.fetch_add(1, Ordering::SeqCst);
    }
}

#[async_trait]
impl Tool for Shifty {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn call(&self, _args: Arguments, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text("ok"))
    }
}

fn shifty(name: &str, version: usize, dropped: &Arc<AtomicUsize>) -> Arc<dyn Tool> {
    Arc::new(Shifty::new(name, version, dropped))
}

/// The name a definition of any format carries.
fn name_of(definition: &Value) -> &str {
    definition
        .get("function")
        .unwrap_or(definition)
        .get("name")
        .and_then(Value::as_str)
        .expect("a definition has a name")
}

/// Every list the registry serves, in every format, full and compact, is
/// the rendering of the spec each tool has now.
fn assert_current(registry: &ToolRegistry, label: &str) -> usize {
    let mut checked = 0;
    for format in DefinitionFormat::ALL {
        for compact in [false, true] {
            let served = if compact {
                registry.definitions_compact(format)
            } else {
                registry.definitions(format)
            };
            let specs = registry.specs();
            assert_eq!(served.len(), specs.len(), "{label} {format:?}");
            for (definition, spec) in served.iter().zip(&specs) {
                assert_eq!(
                    **definition,
                    render_definition(spec, format, compact),
                    "{label}: {} in {format:?} (compact {compact})",
                    spec.name
                );
                checked += 1;
            }
        }
    }
    checked
}

#[test]
fn a_tool_changed_under_its_name_is_served_as_it_is_now() {
    let dropped = Arc::new(AtomicUsize::new(0));
    let registry = ToolRegistry::new();
    registry.register(GreetTool).unwrap();
    registry
        .register_arc(shifty("shifty", 1, &dropped))
        .unwrap();
    assert_current(&registry, "first");

    // Replaced in one step, as a refreshed MCP server's tools are.
    registry
        .replace(|n| n == "shifty", vec![shifty("shifty", 2, &dropped)])
        .unwrap();
    assert_current(&registry, "replaced");
    assert!(
        registry.definitions(DefinitionFormat::Mcp)[1]
            .to_string()
            .contains("Version 2")
    );

    // Removed, then registered again with another spec.
    registry.unregister("shifty").unwrap();
    assert_current(&registry, "removed");
    registry
        .register_arc(shifty("shifty", 3, &dropped))
        .unwrap();
    assert_current(&registry, "registered again");
    assert!(
        registry.definitions(DefinitionFormat::Mcp)[1]
            .to_string()
            .contains("Version 3")
    );
}

#[test]
fn a_toolsets_view_of_a_tool_leaks_neither_into_the_tool_nor_another_registry() {
    let original = GreetTool.spec().clone();
    let views: Vec<(&str, Toolset)> = vec![
        ("prefixed", Toolset::new().with_tool(GreetTool).prefix("x_")),
        (
            "renamed",
            Toolset::new()
                .with_tool(GreetTool)
                .rename("greet", "salute"),
        ),
        (
            "described",
            Toolset::new()
                .with_tool(GreetTool)
                .describe("greet", "Say hello. Warmly."),
        ),
        (
            "parameter described",
            Toolset::new().with_tool(GreetTool).transform_arg(
                "greet",
                "name",
                ArgTransform::new().describe("The person's first name."),
            ),
        ),
        (
            "parameter renamed",
            Toolset::new().with_tool(GreetTool).transform_arg(
                "greet",
                "name",
                ArgTransform::new().rename("who"),
            ),
        ),
    ];
    // Each view is rendered before the plain tool, so a view that reached
    // the tool's shared renderings would be what the plain registry shows.
    let mut registries = Vec::new();
    for (label, set) in views {
        let registry = ToolRegistry::new();
        set.build().unwrap().register(&registry).unwrap();
        assert_current(&registry, label);
        registries.push((label, registry));
    }
    let plain = ToolRegistry::new();
    plain.register(GreetTool).unwrap();
    assert_current(&plain, "plain");
    for format in DefinitionFormat::ALL {
        assert_eq!(
            *plain.definitions(format)[0],
            render_definition(&original, format, false)
        );
    }

    let shown = |label: &str| -> Value {
        let (_, registry) = registries.iter().find(|(l, _)| *l == label).unwrap();
        registry.definitions(DefinitionFormat::Mcp)[0]
            .clone()
            .into_value()
    };
    assert_eq!(name_of(&shown("prefixed")), "x_greet");
    assert_eq!(name_of(&shown("renamed")), "salute");
    assert_eq!(shown("described")["description"], "Say hello. Warmly.");
    assert_eq!(
        shown("parameter described")["inputSchema"]["properties"]["name"]["description"],
        "The person's first name.",
        "a parameter's new description is what the model is shown"
    );
    assert!(shown("parameter renamed")["inputSchema"]["properties"]["who"].is_object());
    // Every registry still shows the plain tool as it is.
    assert_current(&plain, "plain, after the views");
}

#[test]
fn threads_rendering_at_once_share_one_rendering_of_the_spec() {
    const THREADS: usize = 8;
    let barrier = Barrier::new(THREADS);
    let lists: Vec<Vec<Definition>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..THREADS)
            .map(|_| {
                scope.spawn(|| {
                    let registry = ToolRegistry::new();
                    registry.register(CountWordsTool).unwrap();
                    barrier.wait();
                    DefinitionFormat::ALL
                        .iter()
                        .flat_map(|&format| {
                            [
                                registry.definitions(format)[0].clone(),
                                registry.definitions_compact(format)[0].clone(),
                            ]
                        })
                        .collect()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let spec = CountWordsTool.spec();
    for list in &lists {
        for (index, definition) in list.iter().enumerate() {
            assert!(Definition::ptr_eq(definition, &lists[0][index]));
            let format = DefinitionFormat::ALL[index / 2];
            assert_eq!(
                **definition,
                render_definition(spec, format, index % 2 == 1)
            );
        }
    }
}

#[test]
fn a_source_that_keeps_changing_its_tools_leaves_no_rendering_behind() {
    const CHANGES: usize = 300;
    let dropped = Arc::new(AtomicUsize::new(0));
    let registry = Arc::new(ToolRegistry::new());
    registry.register(GreetTool).unwrap();
    let deferred = DeferredTools::new().defer_prefix("mcp_");
    let ctx = ToolContext::new().with_session_key("s");
    for version in 0..CHANGES {
        let tools = vec![
            shifty("mcp_a", version, &dropped),
            shifty("mcp_b", version, &dropped),
        ];
        registry.replace(|n| n.starts_with("mcp_"), tools).unwrap();
        // Every cache that could keep an old set alive is filled.
        for format in DefinitionFormat::ALL {
            let _ = registry.definitions(format);
            let _ = registry.definitions_compact(format);
            let _ = registry.definitions_for(&["mcp_a"], format);
            let _ = deferred.definitions(&registry, format, &ctx);
        }
    }
    // Every tool but the two mounted now is gone, with its renderings.
    assert_eq!(dropped.load(Ordering::SeqCst), 2 * (CHANGES - 1));
    assert_current(&registry, "after the changes");
}

#[test]
fn a_refresh_that_finds_nothing_new_sends_the_same_bytes() {
    let dropped = Arc::new(AtomicUsize::new(0));
    let registry = ToolRegistry::new();
    let spec = |properties: Value| {
        ToolSpec::new(
            "mcp_s_find",
            "Find things.",
            json!({"type": "object", "properties": properties}),
        )
    };
    let a_first = json!({"a": {"type": "string"}, "b": {"type": "integer"}});
    let b_first = json!({"b": {"type": "integer"}, "a": {"type": "string"}});
    let tool = |properties: &Value| -> Arc<dyn Tool> {
        Arc::new(Shifty {
            spec: spec(properties.clone()),
            dropped: Arc::clone(&dropped),
        })
    };
    registry.register_arc(tool(&a_first)).unwrap();
    let before: Vec<Vec<u8>> = DefinitionFormat::ALL
        .iter()
        .map(|&f| serde_json::to_vec(&*registry.definitions(f)).unwrap())
        .collect();
    let generation = registry.generation();
    // The same tools listed again, the same tool listed with its keys in
    // another order: neither is a change.
    for properties in [&a_first, &b_first, &a_first] {
        registry
            .replace(|n| n.starts_with("mcp_"), vec![tool(properties)])
            .unwrap();
        assert_eq!(registry.generation(), generation, "not announced");
        let after: Vec<Vec<u8>> = DefinitionFormat::ALL
            .iter()
            .map(|&f| serde_json::to_vec(&*registry.definitions(f)).unwrap())
            .collect();
        assert!(
            before == after,
            "a refresh with nothing new changed the bytes sent"
        );
    }
}

#[cfg(feature = "mcp")]
mod mounted {
    use std::time::Duration;

    use toolsmith::mcp::McpServer;
    use toolsmith::testing::mcp_pair;

    use super::*;

    async fn bounded<F: std::future::Future>(body: F) -> F::Output {
        tokio::time::timeout(Duration::from_secs(60), body)
            .await
            .expect("the test ran within its time")
    }

    /// Wait (bounded by the test's time) until `registry` shows the mounted
    /// tool with `text` in its MCP definition.
    async fn until_shown(registry: &ToolRegistry, name: &str, text: &str) {
        loop {
            let shown = registry
                .definitions_for(&[name], DefinitionFormat::Mcp)
                .first()
                .map(ToString::to_string)
                .unwrap_or_default();
            if shown.contains(text) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    #[tokio::test]
    async fn a_server_that_changes_a_tool_under_its_name_is_shown_changed() {
        bounded(async {
            let dropped = Arc::new(AtomicUsize::new(0));
            let served = Arc::new(ToolRegistry::new());
            served.register_arc(shifty("shifty", 1, &dropped)).unwrap();
            let pair = mcp_pair("srv", McpServer::new(Arc::clone(&served)))
                .await
                .unwrap();
            until_shown(&pair.registry, "mcp_srv_shifty", "Version 1").await;
            assert_current(&pair.registry, "mounted");
            // Description and schema change under the same name, then go
            // back to what they were: each listing is the one shown.
            for version in [2, 3, 1, 4] {
                served
                    .replace(|n| n == "shifty", vec![shifty("shifty", version, &dropped)])
                    .unwrap();
                let text = format!("Version {version} ");
                until_shown(&pair.registry, "mcp_srv_shifty", &text).await;
                assert_current(&pair.registry, &text);
                let mounted = pair.registry.definitions(DefinitionFormat::OpenAi);
                let parameters = &mounted[0]["function"]["parameters"]["properties"];
                assert!(
                    parameters[format!("p{version}")].is_object(),
                    "{parameters}"
                );
                assert_eq!(parameters.as_object().unwrap().len(), 1, "{parameters}");
            }
            pair.shutdown().await;
        })
        .await;
    }

    #[tokio::test]
    async fn a_paged_tool_list_is_the_registrys_list_whole() {
        bounded(async {
            let dropped = Arc::new(AtomicUsize::new(0));
            let served = Arc::new(ToolRegistry::new());
            for i in 0..23 {
                served
                    .register_arc(shifty(&format!("t{i:02}"), i, &dropped))
                    .unwrap();
            }
            let server = McpServer::new(Arc::clone(&served)).with_page_size(5);
            let pair = mcp_pair("srv", server).await.unwrap();
            until_shown(&pair.registry, "mcp_srv_t22", "Version 22").await;
            assert_eq!(pair.registry.len(), 23);
            assert_current(&pair.registry, "paged");
            let sent: Vec<Value> = served
                .definitions(DefinitionFormat::Mcp)
                .iter()
                .map(|d| d.clone().into_value())
                .collect();
            for (mounted, sent) in pair.registry.specs().iter().zip(&sent) {
                assert_eq!(*mounted.description, *sent["description"].as_str().unwrap());
                assert_eq!(mounted.input_schema, sent["inputSchema"]);
            }
            pair.shutdown().await;
        })
        .await;
    }
}

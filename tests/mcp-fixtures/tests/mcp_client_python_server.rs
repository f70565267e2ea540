//! Our MCP client against a server written with the official Python SDK
//! (`python_server.py`): servers added and removed while the host runs, a
//! server whose resource or prompt lists fail or hang, `enabledTools` over
//! tools, resources and prompts, a stdio server's `env`, and a nanobot-style
//! YAML configuration file read from disk.
//!
//! The Python SDK comes from `scripts/mcp_peers.sh`.

#[path = "../peers.rs"]
mod peers;

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tk::mcp::{McpClients, McpConfig, ServerConfig};
use tk::{ToolContext, ToolRegistry};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Metadata, Subscriber};

/// Every test's body runs within this, so a server that hangs fails the
/// test instead of holding up the suite.
async fn bounded<T>(test: impl Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(120), test)
        .await
        .expect("the test did not finish within 120 s")
}

/// `python_server.py` run by the Python with the `mcp` package, as a server
/// entry, with `extra` keys and arguments.
fn python_server(args: &[&str], extra: Value) -> Value {
    let script = peers::root().join("tests/mcp-fixtures/python_server.py");
    let mut all = vec![json!(script)];
    all.extend(args.iter().map(|a| json!(a)));
    let mut server = json!({"command": peers::python(), "args": all, "toolTimeout": 20});
    for (k, v) in extra.as_object().unwrap() {
        server[k] = v.clone();
    }
    server
}

fn server(name: &str, args: &[&str], extra: Value) -> ServerConfig {
    ServerConfig::from_json(name, &python_server(args, extra)).unwrap()
}

async fn call(registry: &ToolRegistry, name: &str, args: Value) -> tk::ToolOutput {
    registry.call(name, args, &ToolContext::new()).await
}

/// The mounted names that start with `prefix`.
fn names(registry: &ToolRegistry, prefix: &str) -> Vec<String> {
    registry
        .names()
        .into_iter()
        .filter(|n| n.starts_with(prefix))
        .collect()
}

/// A host's own tool, named as a server's tool would be mounted.
#[tk::tool(read_only)]
async fn mcp_clash_echo() -> &'static str {
    "the host's own"
}

/// Whether the process `pid` is still there (running, or exited and not
/// yet waited for).
fn process_exists(pid: &str) -> bool {
    std::path::Path::new("/proc").join(pid).exists()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_added_at_run_time_is_mounted_called_and_removed() {
    bounded(async {
        let registry = Arc::new(ToolRegistry::new());
        let clients = McpClients::new(McpConfig::default(), &registry);
        assert!(clients.servers().is_empty());

        // Added: every tool, resource and prompt arrives in one change.
        let before = registry.generation();
        let mounted = clients
            .add_server(server("py", &[], json!({})))
            .await
            .unwrap();
        assert_eq!(registry.generation(), before + 1);
        let all = names(&registry, "mcp_py_");
        assert_eq!(mounted, all.len());
        for expected in [
            "mcp_py_env",
            "mcp_py_pid",
            "mcp_py_echo",
            "mcp_py_resource_hello",
            "mcp_py_resource_note",
            "mcp_py_prompt_greet",
        ] {
            assert!(all.iter().any(|n| n == expected), "{expected}: {all:?}");
        }
        assert_eq!(clients.servers(), ["py"]);
        assert_eq!(clients.connected().await, ["py"]);

        let echo = call(&registry, "mcp_py_echo", json!({"text": "hello"})).await;
        assert_eq!(echo.content, "hello", "{echo:?}");
        let pid = call(&registry, "mcp_py_pid", json!({})).await.content;
        assert!(process_exists(&pid), "{pid}");

        // A second server of the same name is refused; the first stays.
        let twice = clients
            .add_server(server("py", &[], json!({})))
            .await
            .unwrap_err();
        assert!(twice.contains("already there"), "{twice}");
        assert_eq!(names(&registry, "mcp_py_"), all);

        // Removed: everything leaves in one change, and the process has
        // exited by the time `remove_server` returns.
        let before = registry.generation();
        assert!(clients.remove_server("py").await);
        assert_eq!(registry.generation(), before + 1);
        assert!(registry.is_empty(), "{:?}", registry.names());
        assert!(
            !process_exists(&pid),
            "the server's process {pid} is still there"
        );
        assert!(clients.servers().is_empty());
        let gone = call(&registry, "mcp_py_echo", json!({"text": "hello"})).await;
        assert!(gone.is_error, "{gone:?}");
        assert!(!clients.remove_server("py").await);

        // The name is free again: a new process answers.
        clients
            .add_server(server("py", &[], json!({})))
            .await
            .unwrap();
        let again = call(&registry, "mcp_py_pid", json!({})).await.content;
        assert_ne!(again, pid);
        assert!(process_exists(&again));
        assert!(clients.remove_server("py").await);
        assert!(!process_exists(&again));
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn removing_one_server_leaves_the_others_and_a_failed_add_leaves_nothing() {
    bounded(async {
        let config = McpConfig::from_json(&json!({"mcpServers": {
            "kept": python_server(&[], json!({"enabledTools": ["echo"]}))
        }}))
        .unwrap();
        let registry = Arc::new(ToolRegistry::new());
        let clients = McpClients::new(config, &registry);
        assert!(clients.connect().await[0].1.is_ok());
        clients
            .add_server(server("extra", &[], json!({"enabledTools": ["pid"]})))
            .await
            .unwrap();
        assert_eq!(
            registry.names(),
            [
                "mcp_extra_pid",
                "mcp_kept_echo",
                "mcp_kept_prompt_echo",
                "mcp_kept_resource_echo"
            ]
        );
        let extra = call(&registry, "mcp_extra_pid", json!({})).await.content;

        // A configured server can be removed like an added one.
        assert!(clients.remove_server("kept").await);
        assert_eq!(registry.names(), ["mcp_extra_pid"]);
        assert_eq!(clients.servers(), ["extra"]);
        assert!(process_exists(&extra));

        // A server that cannot start is not kept and mounts nothing.
        let before = registry.generation();
        let missing = ServerConfig::from_json(
            "missing",
            &json!({"command": peers::root().join("no-such-server")}),
        )
        .unwrap();
        let err = clients.add_server(missing).await.unwrap_err();
        assert!(err.contains("cannot start"), "{err}");
        assert_eq!(clients.servers(), ["extra"]);
        assert_eq!(registry.generation(), before);

        // Nor is one whose tools would take the names of tools already
        // there: the host's own tool stays.
        registry.register(McpClashEchoTool).unwrap();
        let before = registry.generation();
        let err = clients
            .add_server(server(
                "clash",
                &[],
                json!({"enabledTools": ["echo", "pid"]}),
            ))
            .await
            .unwrap_err();
        assert!(err.contains("`mcp_clash_echo`"), "{err}");
        assert_eq!(registry.generation(), before);
        assert_eq!(registry.names(), ["mcp_clash_echo", "mcp_extra_pid"]);
        let own = call(&registry, "mcp_clash_echo", json!({})).await;
        assert_eq!(own.content, "the host's own");
        assert_eq!(clients.servers(), ["extra"]);

        clients.disconnect().await;
        assert!(!process_exists(&extra));
    })
    .await;
}

/// A warning logged while a test runs: its `server` field and its message.
type Warning = (String, String);

/// Collects warnings.
#[derive(Clone, Default)]
struct Warnings(Arc<Mutex<Vec<Warning>>>);

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
}

impl Subscriber for Warnings {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        *metadata.level() <= Level::WARN
    }
    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        let mut fields = BTreeMap::new();
        event.record(&mut Fields(&mut fields));
        let server = fields.remove("server").unwrap_or_default();
        let message = fields.remove("message").unwrap_or_default();
        self.0.lock().unwrap().push((server, message));
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

#[test]
fn a_server_whose_resources_or_prompts_cannot_be_listed_keeps_its_tools() {
    let warnings = Warnings::default();
    // One thread, so every task the client spawns logs to this subscriber.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let _logging = tracing::subscriber::set_default(warnings.clone());
    // With one subscriber in the process, tracing asks the default of
    // whichever thread first reaches a log statement whether it is wanted,
    // and keeps the answer: another test's thread, with no subscriber,
    // would switch this test's warnings off for good (one run in two when
    // all of this file's tests run together). With a second one alive,
    // every registered subscriber is asked.
    let _second = tracing::Dispatch::new(tracing::subscriber::NoSubscriber::default());
    runtime.block_on(bounded(async {
        let registry = Arc::new(ToolRegistry::new());
        let clients = McpClients::new(McpConfig::default(), &registry);

        // Both lists fail: the tools are mounted, and the resource
        // templates, which list apart from the resources.
        clients
            .add_server(server(
                "broken",
                &["--fail", "resources", "--fail", "prompts"],
                json!({}),
            ))
            .await
            .unwrap();
        assert_eq!(
            names(&registry, "mcp_broken_"),
            [
                "mcp_broken_echo",
                "mcp_broken_env",
                "mcp_broken_pid",
                "mcp_broken_resource_note"
            ]
        );
        let echo = call(&registry, "mcp_broken_echo", json!({"text": "still"})).await;
        assert_eq!(echo.content, "still", "{echo:?}");
        let note = call(&registry, "mcp_broken_resource_note", json!({"id": "7"})).await;
        assert_eq!(note.content, "note 7", "{note:?}");
        {
            let logged = warnings.0.lock().unwrap();
            for what in ["resources", "prompts"] {
                let expected = format!(
                    "the MCP server `broken` could not list its {what}: Mcp error: -32603: the {what} index is offline; its {what} are left out, its tools kept"
                );
                assert!(
                    logged
                        .iter()
                        .any(|(server, message)| server == "broken" && *message == expected),
                    "{expected:?} not in {logged:?}"
                );
            }
        }

        // Only the prompts fail: the resources are there.
        clients
            .add_server(server("noprompts", &["--fail", "prompts"], json!({})))
            .await
            .unwrap();
        let mounted = names(&registry, "mcp_noprompts_");
        assert!(mounted.iter().any(|n| n == "mcp_noprompts_resource_hello"));
        assert!(!mounted.iter().any(|n| n.starts_with("mcp_noprompts_prompt_")));

        // A list that never comes is given up after `toolTimeout`, with the
        // tools kept.
        clients
            .add_server(server(
                "slow",
                &["--hang", "prompts", "--hang", "resources"],
                json!({"toolTimeout": 1}),
            ))
            .await
            .unwrap();
        assert_eq!(
            names(&registry, "mcp_slow_"),
            [
                "mcp_slow_echo",
                "mcp_slow_env",
                "mcp_slow_pid",
                "mcp_slow_resource_note"
            ]
        );
        let echo = call(&registry, "mcp_slow_echo", json!({"text": "after"})).await;
        assert_eq!(echo.content, "after", "{echo:?}");
        {
            let logged = warnings.0.lock().unwrap();
            let expected = "the MCP server `slow` did not list its prompts within 1s; its prompts are left out, its tools kept";
            assert!(
                logged.iter().any(|(_, message)| message == expected),
                "{expected:?} not in {logged:?}"
            );
        }
        clients.disconnect().await;
    }));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn enabled_tools_picks_tools_resources_and_prompts_by_raw_or_mounted_name() {
    bounded(async {
        let registry = Arc::new(ToolRegistry::new());
        let clients = McpClients::new(McpConfig::default(), &registry);
        // `echo` is a tool, a resource and a prompt: the raw name takes all
        // three. A mounted name takes one item of its kind.
        let enabled = json!({"enabledTools": [
            "echo", "mcp_py_resource_hello", "mcp_py_prompt_greet", "mcp_py_resource_note"
        ]});
        clients
            .add_server(server("py", &[], enabled))
            .await
            .unwrap();
        assert_eq!(
            registry.names(),
            [
                "mcp_py_echo",
                "mcp_py_prompt_echo",
                "mcp_py_prompt_greet",
                "mcp_py_resource_echo",
                "mcp_py_resource_hello",
                "mcp_py_resource_note"
            ]
        );
        let greet = call(&registry, "mcp_py_prompt_greet", json!({"who": "Ada"})).await;
        assert!(greet.content.contains("Greet Ada warmly."), "{greet:?}");
        let hello = call(&registry, "mcp_py_resource_hello", json!({})).await;
        assert_eq!(hello.content, "hello from the resource", "{hello:?}");
        assert!(clients.remove_server("py").await);

        // Raw names of resources and prompts, and nothing for `[]`.
        clients
            .add_server(server(
                "py",
                &[],
                json!({"enabledTools": ["greet", "hello", "note"]}),
            ))
            .await
            .unwrap();
        assert_eq!(
            registry.names(),
            [
                "mcp_py_prompt_greet",
                "mcp_py_resource_hello",
                "mcp_py_resource_note"
            ]
        );
        assert!(clients.remove_server("py").await);
        let none = clients
            .add_server(server("py", &[], json!({"enabledTools": []})))
            .await
            .unwrap();
        assert_eq!(none, 0);
        assert!(registry.is_empty(), "{:?}", registry.names());
        clients.disconnect().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stdio_servers_env_reaches_its_process() {
    bounded(async {
        let registry = Arc::new(ToolRegistry::new());
        let clients = McpClients::new(McpConfig::default(), &registry);
        let env = json!({"env": {"TOOLSMITH_FIXTURE_TOKEN": "from the config", "TOOLSMITH_FIXTURE_PORT": 8080}});
        clients
            .add_server(server("py", &[], env))
            .await
            .unwrap();
        for (name, value) in [
            ("TOOLSMITH_FIXTURE_TOKEN", "from the config"),
            ("TOOLSMITH_FIXTURE_PORT", "8080"),
            ("TOOLSMITH_FIXTURE_UNSET", "<unset>"),
        ] {
            let out = call(&registry, "mcp_py_env", json!({"name": name})).await;
            assert_eq!(out.content, value, "{name}: {out:?}");
        }
        clients.disconnect().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_nanobot_yaml_file_configures_real_servers() {
    bounded(async {
        let dir = std::env::temp_dir().join(format!("mcp-yaml-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let script = peers::root().join("tests/mcp-fixtures/python_server.py");
        let path = dir.join("config.yaml");
        // nanobot's spelling: `mcp_servers`, `enabled_tools`, `tool_timeout`.
        std::fs::write(
            &path,
            format!(
                "# as nanobot writes it
mcp_servers:
  my_server:
    command: {python}
    args: [{script}]
    enabled_tools: [env, greet]
    tool_timeout: 15
    env:
      TOOLSMITH_FIXTURE_TOKEN: from YAML
",
                python = peers::python().display(),
                script = script.display()
            ),
        )
        .unwrap();
        let config = McpConfig::from_path(&path).unwrap();
        assert_eq!(config.servers[0].tool_timeout, Duration::from_secs(15));
        let registry = Arc::new(ToolRegistry::new());
        let clients = McpClients::new(config, &registry);
        assert_eq!(clients.connect().await[0].1, Ok(2));
        assert_eq!(
            registry.names(),
            ["mcp_my_server_env", "mcp_my_server_prompt_greet"]
        );
        let out = call(
            &registry,
            "mcp_my_server_env",
            json!({"name": "TOOLSMITH_FIXTURE_TOKEN"}),
        )
        .await;
        assert_eq!(out.content, "from YAML", "{out:?}");
        clients.disconnect().await;
        let _ = std::fs::remove_dir_all(&dir);
    })
    .await;
}

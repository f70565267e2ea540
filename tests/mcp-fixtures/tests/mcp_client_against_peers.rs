//! Our MCP client against servers nobody here wrote: the reference
//! `server-everything` over stdio, streamable HTTP and SSE, and
//! `server-filesystem` over stdio; and against our fixture server for the
//! failures (crash, hang, list changes, a server not up yet) and a script
//! that sends malformed messages.
//!
//! The peers come from `scripts/mcp_peers.sh`.

#[path = "../peers.rs"]
mod peers;

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tk::mcp::{McpClients, McpConfig};
use tk::{Attachment, ToolContext, ToolRegistry};

async fn mount(servers: Value) -> (Arc<ToolRegistry>, McpClients) {
    let config = McpConfig::from_json(&json!({"mcpServers": servers})).unwrap();
    let registry = Arc::new(ToolRegistry::new());
    let clients = McpClients::new(config, &registry);
    for (server, outcome) in clients.connect().await {
        outcome.unwrap_or_else(|e| panic!("{server}: {e}"));
    }
    (registry, clients)
}

async fn call(registry: &ToolRegistry, name: &str, args: Value) -> tk::ToolOutput {
    registry.call(name, args, &ToolContext::new()).await
}

fn everything_stdio(extra: Value) -> Value {
    let script = peers::npm_script("@modelcontextprotocol/server-everything", "dist/index.js");
    let mut server = json!({"command": peers::node(), "args": [script, "stdio"]});
    for (k, v) in extra.as_object().unwrap() {
        server[k] = v.clone();
    }
    json!({"everything": server})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everything_over_stdio_lists_calls_reads_and_times_out() {
    let (registry, clients) = mount(everything_stdio(json!({"toolTimeout": 2}))).await;
    let names = registry.names();
    for expected in [
        "mcp_everything_echo",
        "mcp_everything_get-sum",
        "mcp_everything_get-tiny-image",
        "mcp_everything_get-structured-content",
        "mcp_everything_prompt_simple-prompt",
        "mcp_everything_prompt_args-prompt",
    ] {
        assert!(
            names.iter().any(|n| n == expected),
            "{expected} missing from {names:?}"
        );
    }

    // Tools: called under their original names, arguments cast leniently first.
    let echo = call(&registry, "mcp_everything_echo", json!({"message": "hi"})).await;
    assert_eq!(echo.content, "Echo: hi");
    let sum = call(
        &registry,
        "mcp_everything_get-sum",
        json!({"a": "2", "b": 3}),
    )
    .await;
    assert!(!sum.is_error && sum.content.contains('5'), "{sum:?}");

    // Annotations cross over.
    let spec = registry.get("mcp_everything_echo").unwrap().spec().clone();
    assert!(spec.annotations.read_only && !spec.annotations.destructive);

    // Images and structured content are carried.
    let image = call(&registry, "mcp_everything_get-tiny-image", json!({})).await;
    assert_eq!(image.images.len(), 1, "{image:?}");
    assert_eq!(image.images[0].mime_type, "image/png");
    let weather = call(
        &registry,
        "mcp_everything_get-structured-content",
        json!({"location": "New York"}),
    )
    .await;
    let structured = weather.structured.as_deref().expect("structured content");
    assert!(structured.get("temperature").is_some(), "{structured}");
    assert!(
        registry
            .get("mcp_everything_get-structured-content")
            .unwrap()
            .spec()
            .output_schema
            .is_some()
    );

    // Invalid arguments never reach the server: the registry explains.
    let missing = call(&registry, "mcp_everything_get-sum", json!({"a": 1})).await;
    assert!(
        missing.is_error && missing.content.contains('b'),
        "{missing:?}"
    );

    // Prompts are tools whose arguments are parameters.
    let prompt_spec = registry
        .get("mcp_everything_prompt_args-prompt")
        .unwrap()
        .spec()
        .clone();
    assert_eq!(prompt_spec.input_schema["required"], json!(["city"]));
    assert!(prompt_spec.annotations.read_only);
    let prompt = call(
        &registry,
        "mcp_everything_prompt_args-prompt",
        json!({"city": "Lisbon"}),
    )
    .await;
    assert!(
        !prompt.is_error && prompt.content.contains("Lisbon"),
        "{prompt:?}"
    );
    let simple = call(&registry, "mcp_everything_prompt_simple-prompt", json!({})).await;
    assert!(simple.content.starts_with("user: "), "{simple:?}");

    // A resource the server added at run time (a gzipped file) is a read-only tool.
    let gz = call(&registry, "mcp_everything_gzip-file-as-resource", json!({"name": "notes.txt.gz", "data": "data:text/plain;base64,aGVsbG8gd29ybGQ=", "outputType": "resource"})).await;
    assert!(!gz.is_error, "{gz:?}");
    assert!(
        gz.attachments
            .iter()
            .any(|a| matches!(a, Attachment::Resource { .. })),
        "{gz:?}"
    );

    // A call silent for longer than toolTimeout (its one progress report
    // comes after 6 s) becomes an error result, and the server still
    // answers after.
    let slow = call(
        &registry,
        "mcp_everything_trigger-long-running-operation",
        json!({"duration": 6, "steps": 1}),
    )
    .await;
    assert!(
        slow.is_error && slow.content.contains("did not finish within 2 s"),
        "{slow:?}"
    );
    let again = call(
        &registry,
        "mcp_everything_echo",
        json!({"message": "after"}),
    )
    .await;
    assert_eq!(again.content, "Echo: after");
    clients.disconnect().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everything_resources_become_read_only_tools() {
    // Resources the server lists at start: run with a resource it registers.
    let (registry, clients) = mount(everything_stdio(json!({}))).await;
    let resources: Vec<String> = registry
        .names()
        .into_iter()
        .filter(|n| n.starts_with("mcp_everything_resource_"))
        // Listed resources take no parameters; templates (tested below) do.
        .filter(|n| registry.get(n).unwrap().spec().input_schema["properties"] == json!({}))
        .collect();
    assert!(
        !resources.is_empty(),
        "no resources in {:?}",
        registry.names()
    );
    for name in &resources {
        let tool = registry.get(name).unwrap();
        assert!(tool.spec().annotations.read_only);
        let out = call(&registry, name, json!({})).await;
        assert!(!out.is_error, "{name}: {out:?}");
        assert!(
            !out.content.is_empty() || !out.attachments.is_empty(),
            "{name}: {out:?}"
        );
    }
    clients.disconnect().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everything_over_streamable_http_and_sse() {
    let script = peers::npm_script("@modelcontextprotocol/server-everything", "dist/index.js");
    let http = peers::node_http(&script, &["streamableHttp"], peers::free_port(), "/mcp");
    let sse = peers::node_http(&script, &["sse"], peers::free_port(), "/sse");
    // The transports are inferred from the URLs.
    let (registry, clients) =
        mount(json!({"web": {"url": http.url}, "old": {"url": sse.url}})).await;
    for server in ["web", "old"] {
        let echo = call(
            &registry,
            &format!("mcp_{server}_echo"),
            json!({"message": server}),
        )
        .await;
        assert_eq!(echo.content, format!("Echo: {server}"), "{echo:?}");
        let sum = call(
            &registry,
            &format!("mcp_{server}_get-sum"),
            json!({"a": 40, "b": 2}),
        )
        .await;
        assert!(sum.content.contains("42"), "{sum:?}");
        let prompt = call(
            &registry,
            &format!("mcp_{server}_prompt_args-prompt"),
            json!({"city": "Oslo"}),
        )
        .await;
        assert!(prompt.content.contains("Oslo"), "{prompt:?}");
    }
    clients.disconnect().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filesystem_over_stdio_reads_lists_and_refuses() {
    let dir = std::env::temp_dir().join(format!("mcp-fs-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::fs::write(dir.join("hello.txt"), "hello from the workspace\n").unwrap();
    let dir = dir.canonicalize().unwrap();
    let script = peers::npm_script("@modelcontextprotocol/server-filesystem", "dist/index.js");
    // The allowed directory is given as `.`: the server finds it through `cwd`.
    let (registry, clients) = mount(json!({"fs": {
        "command": peers::node(), "args": [script, "."], "cwd": dir,
        "enabledTools": ["read_text_file", "mcp_fs_list_directory", "write_file"]
    }}))
    .await;
    // Only the enabled tools, by raw or wrapped name.
    let tools: Vec<String> = registry.names();
    assert_eq!(
        tools,
        [
            "mcp_fs_list_directory",
            "mcp_fs_read_text_file",
            "mcp_fs_write_file"
        ]
    );
    let write = registry.get("mcp_fs_write_file").unwrap().spec().clone();
    assert!(!write.annotations.read_only);

    let read = call(
        &registry,
        "mcp_fs_read_text_file",
        json!({"path": dir.join("hello.txt")}),
    )
    .await;
    assert!(
        !read.is_error && read.content.contains("hello from the workspace"),
        "{read:?}"
    );
    let list = call(&registry, "mcp_fs_list_directory", json!({"path": dir})).await;
    assert!(
        list.content.contains("hello.txt") && list.content.contains("sub"),
        "{list:?}"
    );
    let wrote = call(
        &registry,
        "mcp_fs_write_file",
        json!({"path": dir.join("new.txt"), "content": "made"}),
    )
    .await;
    assert!(!wrote.is_error, "{wrote:?}");
    assert_eq!(
        std::fs::read_to_string(dir.join("new.txt")).unwrap(),
        "made"
    );
    // The server's refusal (a path outside its roots) is an error result.
    let outside = call(
        &registry,
        "mcp_fs_read_text_file",
        json!({"path": "/etc/hostname"}),
    )
    .await;
    assert!(outside.is_error, "{outside:?}");
    clients.disconnect().await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filesystem_images_reach_the_model_as_images_not_as_base64_text() {
    let dir = std::env::temp_dir().join(format!("mcp-fs-media-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // 150 kB of "image": the server only reads and encodes the bytes.
    let bytes: Vec<u8> = (0..150_000u32).map(|i| (i * 7919 % 251) as u8).collect();
    std::fs::write(dir.join("photo.png"), &bytes).unwrap();
    let dir = dir.canonicalize().unwrap();
    let script = peers::npm_script("@modelcontextprotocol/server-filesystem", "dist/index.js");
    let (registry, clients) = mount(json!({"fs": {
        "command": peers::node(), "args": [script, "."], "cwd": dir,
        "enabledTools": ["read_media_file"]
    }}))
    .await;
    // It answers with the image and structured content that mirrors it,
    // base64 and all, and no text.
    let read = tokio::time::timeout(
        Duration::from_secs(60),
        call(
            &registry,
            "mcp_fs_read_media_file",
            json!({"path": dir.join("photo.png")}),
        ),
    )
    .await
    .expect("the call ends");
    assert!(
        !read.is_error,
        "{}",
        &read.content[..read.content.len().min(300)]
    );
    assert_eq!(read.images.len(), 1);
    assert_eq!(read.images[0].mime_type, "image/png");
    assert_eq!(read.images[0].data.len(), 200_000);
    // The model reads a note, not 200,000 characters of JSON.
    assert_eq!(
        read.content,
        "(mcp_fs_read_media_file returned 1 image and no text)"
    );
    clients.disconnect().await;
    let _ = std::fs::remove_dir_all(&dir);
}

fn fixture_stdio(extra: Value) -> Value {
    let mut server = json!({"command": peers::fixture_server(), "args": ["--stdio"]});
    for (k, v) in extra.as_object().unwrap() {
        server[k] = v.clone();
    }
    json!({"fx": server})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashed_server_is_an_error_then_restarted_and_a_hung_one_times_out() {
    let (registry, clients) = mount(fixture_stdio(json!({"toolTimeout": 1}))).await;
    let crashed = call(&registry, "mcp_fx_crash", json!({})).await;
    assert!(
        crashed.is_error && crashed.content.contains("closed the connection"),
        "{crashed:?}"
    );
    // The next call starts the server again.
    let echo = call(&registry, "mcp_fx_echo", json!({"message": "back"})).await;
    assert_eq!(echo.content, "Echo: back", "{echo:?}");
    // A server that does not answer (nor report progress) is timed out
    // at its toolTimeout, as any tool is; the session survives.
    let hung = call(
        &registry,
        "mcp_fx_pulse",
        json!({"beats": 0, "every_ms": 0, "silent_ms": 20_000}),
    )
    .await;
    assert_eq!(
        hung.content,
        "Error: Tool 'mcp_fx_pulse' failed: the tool did not finish within 1 s and was stopped\n\n[Analyze the error above and try a different approach.]"
    );
    let echo = call(&registry, "mcp_fx_echo", json!({"message": "still"})).await;
    assert_eq!(echo.content, "Echo: still");
    // The server's own failure is an error result with its message.
    let failed = call(&registry, "mcp_fx_test_error_handling", json!({})).await;
    assert!(
        failed.is_error && failed.content.contains("intentionally returns an error"),
        "{failed:?}"
    );
    clients.disconnect().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn audio_embedded_resources_and_mixed_content_are_carried() {
    let (registry, clients) = mount(fixture_stdio(json!({}))).await;
    let audio = call(&registry, "mcp_fx_test_audio_content", json!({})).await;
    assert!(
        matches!(&audio.attachments[..], [Attachment::Audio { mime_type, .. }] if mime_type == "audio/wav"),
        "{audio:?}"
    );
    let embedded = call(&registry, "mcp_fx_test_embedded_resource", json!({})).await;
    assert_eq!(embedded.content, "This is an embedded resource content.");
    assert!(
        matches!(&embedded.attachments[..], [Attachment::Resource { uri, .. }] if uri == "test://embedded-resource")
    );
    let mixed = call(&registry, "mcp_fx_test_multiple_content_types", json!({})).await;
    assert!(
        mixed.content.starts_with("Multiple content types test:"),
        "{mixed:?}"
    );
    assert_eq!((mixed.images.len(), mixed.attachments.len()), (1, 1));
    let weather = call(&registry, "mcp_fx_weather", json!({"city": "Oslo"})).await;
    assert_eq!(
        weather.structured.as_deref(),
        Some(&json!({"city": "Oslo", "celsius": 21}))
    );
    let spec = registry.get("mcp_fx_weather").unwrap().spec().clone();
    assert!(
        spec.output_schema.is_some() && spec.annotations.open_world && spec.annotations.idempotent
    );
    // Resources and prompts of our own server, too.
    let text = call(&registry, "mcp_fx_resource_static-text", json!({})).await;
    assert_eq!(
        text.content,
        "This is the content of the static text resource."
    );
    let binary = call(&registry, "mcp_fx_resource_static-binary", json!({})).await;
    assert!(
        binary
            .content
            .starts_with("[resource test://static-binary (image/png)"),
        "{binary:?}"
    );
    let prompt = call(&registry, "mcp_fx_prompt_test_prompt_with_image", json!({})).await;
    assert_eq!(prompt.images.len(), 1);
    assert!(
        prompt
            .content
            .ends_with("user: Please analyze the image above."),
        "{prompt:?}"
    );
    clients.disconnect().await;
}

/// Collects the progress a call reports.
#[derive(Default)]
struct Reports(std::sync::Mutex<Vec<(f64, Option<f64>)>>);

impl tk::ProgressReporter for Reports {
    fn report(&self, progress: tk::Progress) {
        self.0
            .lock()
            .unwrap()
            .push((progress.progress, progress.total));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_servers_progress_reaches_the_callers_context() {
    let mut servers = fixture_stdio(json!({}));
    servers["everything"] = everything_stdio(json!({}))["everything"].clone();
    let (registry, clients) = mount(servers).await;
    for (tool, args, expected) in [
        (
            "mcp_fx_test_tool_with_progress",
            json!({}),
            vec![
                (0.0, Some(100.0)),
                (50.0, Some(100.0)),
                (100.0, Some(100.0)),
            ],
        ),
        (
            "mcp_everything_trigger-long-running-operation",
            json!({"duration": 1, "steps": 2}),
            vec![(1.0, Some(2.0)), (2.0, Some(2.0))],
        ),
    ] {
        let reports = Arc::new(Reports::default());
        let ctx = ToolContext::new().with_progress_reporter(reports.clone());
        let out = registry.call(tool, args, &ctx).await;
        assert!(!out.is_error, "{out:?}");
        // Every report sent before the answer has arrived when the call returns.
        assert_eq!(*reports.0.lock().unwrap(), expected, "{tool}");
    }
    clients.disconnect().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_list_changed_notification_refreshes_the_registry() {
    let (registry, clients) = mount(fixture_stdio(json!({"enabledTools": ["*"]}))).await;
    assert!(!registry.contains("mcp_fx_grown_1"));
    let before = registry.len();
    let out = call(&registry, "mcp_fx_grow", json!({})).await;
    assert_eq!(out.content, "added grown_1", "{out:?}");
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !registry.contains("mcp_fx_grown_1") {
        assert!(
            std::time::Instant::now() < deadline,
            "the new tool never appeared: {:?}",
            registry.names()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(registry.len(), before + 1);
    let grown = call(&registry, "mcp_fx_grown_1", json!({})).await;
    assert_eq!(grown.content, "I am grown_1");

    // Unmounting takes the server's tools out; the next connect brings them back.
    assert_eq!(clients.connected().await, ["fx"]);
    clients.server("fx").unwrap().unmount().await;
    assert!(registry.is_empty(), "{:?}", registry.names());
    assert!(clients.connected().await.is_empty());
    assert!(clients.connect().await[0].1.is_ok());
    assert!(registry.contains("mcp_fx_echo"));
    clients.disconnect().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_not_up_yet_is_retried_on_the_next_connect() {
    let port = peers::free_port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let config =
        McpConfig::from_json(&json!({"mcpServers": {"late": {"url": url, "toolTimeout": 5}}}))
            .unwrap();
    let registry = Arc::new(ToolRegistry::new());
    let clients = McpClients::new(config, &registry);
    let first = clients.connect().await;
    assert!(first[0].1.is_err(), "{first:?}");
    assert!(registry.is_empty());
    let _server = {
        let mut child = std::process::Command::new(peers::fixture_server())
            .args(["--http", &port.to_string()])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(child.stdout.take().unwrap()),
            &mut line,
        )
        .unwrap();
        peers::Running {
            child,
            url: url.clone(),
        }
    };
    let second = clients.connect().await;
    assert!(matches!(second[0].1, Ok(n) if n > 10), "{second:?}");
    let echo = call(&registry, "mcp_late_echo", json!({"message": "late"})).await;
    assert_eq!(echo.content, "Echo: late");
    clients.disconnect().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn configured_headers_reach_the_server() {
    // The server refuses foreign browser origins, so a configured `Origin`
    // header shows whether headers are sent: a foreign one is refused, a
    // local one accepted.
    let server = peers::fixture_http(&[]);
    let config = McpConfig::from_json(&json!({"mcpServers": {
        "foreign": {"url": server.url, "headers": {"Origin": "http://evil.example"}, "toolTimeout": 5},
        "local": {"url": server.url, "headers": {"Origin": "http://localhost:3000"}, "toolTimeout": 5}
    }}))
    .unwrap();
    let registry = Arc::new(ToolRegistry::new());
    let clients = McpClients::new(config, &registry);
    let outcomes = clients.connect().await;
    assert!(
        outcomes[0].1.as_ref().is_err_and(|e| e.contains("403")),
        "{outcomes:?}"
    );
    assert!(outcomes[1].1.is_ok(), "{outcomes:?}");
    assert!(registry.contains("mcp_local_echo") && !registry.contains("mcp_foreign_echo"));
    clients.disconnect().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_sse_endpoint_on_another_origin_is_refused() {
    let port = peers::free_port();
    let script = peers::root().join("tests/mcp-fixtures/foreign_endpoint_sse.py");
    let _server = {
        let child = std::process::Command::new("python3")
            .arg(script)
            .arg(port.to_string())
            .spawn()
            .unwrap();
        let running = peers::Running {
            child,
            url: String::new(),
        };
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        running
    };
    let config = McpConfig::from_json(
        &json!({"mcpServers": {"sly": {"url": format!("http://127.0.0.1:{port}/sse")}}}),
    )
    .unwrap();
    let registry = Arc::new(ToolRegistry::new());
    let clients = McpClients::new(config, &registry);
    let outcome = clients.connect().await;
    let error = outcome[0].1.as_ref().unwrap_err();
    assert!(error.contains("another origin"), "{error}");
    assert!(registry.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_messages_never_bring_the_host_down() {
    let script = peers::root().join("tests/mcp-fixtures/malformed_server.py");
    let (registry, clients) =
        mount(json!({"bad": {"command": "python3", "args": [script], "toolTimeout": 3}})).await;
    // Resources are mounted though the server does not know resource templates.
    assert_eq!(
        registry.names(),
        ["mcp_bad_fine", "mcp_bad_garbled", "mcp_bad_resource_a"]
    );
    let note = call(&registry, "mcp_bad_resource_a", json!({})).await;
    assert_eq!(note.content, "note a", "{note:?}");
    let garbled = call(&registry, "mcp_bad_garbled", json!({})).await;
    assert!(garbled.is_error, "{garbled:?}");
    let fine = call(&registry, "mcp_bad_fine", json!({})).await;
    assert_eq!(fine.content, "still here", "{fine:?}");
    clients.disconnect().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everything_resource_templates_become_tools_with_their_variables() {
    let (registry, clients) = mount(everything_stdio(json!({}))).await;
    let text = "mcp_everything_resource_Dynamic_Text_Resource";
    let blob = "mcp_everything_resource_Dynamic_Blob_Resource";
    for name in [text, blob] {
        let spec = registry
            .get(name)
            .unwrap_or_else(|| panic!("{name} missing from {:?}", registry.names()))
            .spec()
            .clone();
        assert!(spec.annotations.read_only && spec.annotations.idempotent);
        assert_eq!(spec.input_schema["required"], json!(["resourceId"]));
        let parameter = &spec.input_schema["properties"]["resourceId"];
        assert_eq!(parameter["type"], "string");
        let described = parameter["description"].as_str().unwrap();
        assert!(described.contains("Dynamic"), "{described}");
        assert!(
            spec.description.contains("demo://resource/dynamic/"),
            "{}",
            spec.description
        );
    }

    // The server's text for the URI the arguments make.
    let three = call(&registry, text, json!({"resourceId": "3"})).await;
    assert!(!three.is_error, "{three:?}");
    assert!(
        three
            .content
            .starts_with("Resource 3: This is a plaintext resource"),
        "{three:?}"
    );
    assert!(three.attachments.is_empty(), "{three:?}");

    // A binary resource travels as an attachment with a summary, as a
    // listed resource's does.
    let binary = call(&registry, blob, json!({"resourceId": "2"})).await;
    assert!(!binary.is_error, "{binary:?}");
    assert!(
        binary
            .content
            .starts_with("[resource demo://resource/dynamic/blob/2 (text/plain), "),
        "{binary:?}"
    );
    match &binary.attachments[..] {
        [
            Attachment::Resource {
                uri,
                blob: Some(data),
                text: None,
                ..
            },
        ] => {
            assert_eq!(uri, "demo://resource/dynamic/blob/2");
            assert!(!data.is_empty());
        }
        other => panic!("{other:?}"),
    }

    // Hostile values stay inside their segment: the server is asked for
    // `1%3Fx%3Dy` and `1%2F2`, not for resource 1, and refuses them, naming
    // the URI it was asked for.
    for (hostile, sent) in [("1?x=y", "1%3Fx%3Dy"), ("1/2", "1%2F2")] {
        let out = call(&registry, text, json!({"resourceId": hostile})).await;
        assert!(out.is_error, "{hostile}: {out:?}");
        assert!(
            out.content.contains(&format!(
                "Unknown resource: demo://resource/dynamic/text/{sent}"
            )),
            "{hostile}: {out:?}"
        );
    }
    // A dot segment, plain or in a value a server may decode, is refused
    // before anything is sent.
    for hostile in ["..", "../1", "1/../2", "%2E%2E"] {
        let out = call(&registry, text, json!({"resourceId": hostile})).await;
        assert!(
            out.is_error && out.content.contains("dot segment"),
            "{hostile}: {out:?}"
        );
    }
    // A missing variable is refused by validation.
    let missing = call(&registry, text, json!({})).await;
    assert!(
        missing.is_error && missing.content.contains("resourceId"),
        "{missing:?}"
    );
    // The server still answers after all that; a number the model sends
    // for the id is cast to its text.
    let again = call(&registry, text, json!({"resourceId": 5})).await;
    assert!(again.content.starts_with("Resource 5: "), "{again:?}");
    clients.disconnect().await;
}

/// The host's model in these tests: answers with the last message reversed,
/// fails when asked to, and keeps what it was asked.
#[derive(Default)]
struct Reverser {
    asked: std::sync::Mutex<Vec<tk::mcp::SamplingRequest>>,
}

#[tk::async_trait]
impl tk::mcp::Sampler for Reverser {
    async fn sample(
        &self,
        request: tk::mcp::SamplingRequest,
    ) -> Result<tk::mcp::Sampled, Box<dyn std::error::Error + Send + Sync>> {
        self.asked.lock().unwrap().push(request.clone());
        let last = request.messages.last().ok_or("nothing to answer")?;
        if last.text.contains("please fail") {
            return Err("the model is offline".into());
        }
        if last.text.contains("please panic") {
            panic!("the sampler broke");
        }
        Ok(tk::mcp::Sampled::new(
            last.text.chars().rev().collect::<String>(),
            "reverser-1",
        ))
    }
}

/// Shares one `Reverser` between the test and the clients.
struct Shared(Arc<Reverser>);

#[tk::async_trait]
impl tk::mcp::Sampler for Shared {
    async fn sample(
        &self,
        request: tk::mcp::SamplingRequest,
    ) -> Result<tk::mcp::Sampled, Box<dyn std::error::Error + Send + Sync>> {
        self.0.sample(request).await
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sampler_answers_the_servers_sampling_requests() {
    let config =
        McpConfig::from_json(&json!({"mcpServers": everything_stdio(json!({"toolTimeout": 10}))}))
            .unwrap();
    let registry = Arc::new(ToolRegistry::new());
    let model = Arc::new(Reverser::default());
    let clients = McpClients::new(config, &registry).with_sampler(Shared(Arc::clone(&model)));
    for (server, outcome) in clients.connect().await {
        outcome.unwrap_or_else(|e| panic!("{server}: {e}"));
    }
    // The server offers the tool only to clients that declare sampling.
    let tool = "mcp_everything_trigger-sampling-request";
    assert!(registry.contains(tool), "{:?}", registry.names());

    let out = call(
        &registry,
        tool,
        json!({"prompt": "hello world", "maxTokens": 42}),
    )
    .await;
    assert!(!out.is_error, "{out:?}");
    let json_text = out
        .content
        .strip_prefix("LLM sampling result: \n")
        .unwrap_or_else(|| panic!("{out:?}"));
    let result: Value = serde_json::from_str(json_text).unwrap();
    let asked = "Resource trigger-sampling-request context: hello world";
    assert_eq!(
        result["content"]["text"],
        asked.chars().rev().collect::<String>()
    );
    assert_eq!(result["model"], "reverser-1");
    assert_eq!(result["role"], "assistant");
    {
        let requests = model.asked.lock().unwrap();
        let request = requests.last().unwrap();
        assert_eq!(request.server, "everything");
        assert_eq!(request.messages.len(), 1);
        assert_eq!(request.messages[0].role, "user");
        assert_eq!(request.messages[0].text, asked);
        assert_eq!(
            request.system_prompt.as_deref(),
            Some("You are a helpful test server.")
        );
        assert_eq!(request.max_tokens, 42);
        assert_eq!(request.temperature, Some(0.7));
    }

    // The sampler's failure, and even its panic, reach the server as an
    // error it reports; the session goes on.
    for (prompt, expected) in [
        ("please fail", "the model is offline"),
        ("please panic", "sampler crashed"),
    ] {
        let out = call(&registry, tool, json!({"prompt": prompt})).await;
        assert!(
            out.is_error && out.content.contains(expected),
            "{prompt}: {out:?}"
        );
    }
    let again = call(&registry, tool, json!({"prompt": "abc"})).await;
    assert!(
        !again.is_error && again.content.contains("cba"),
        "{again:?}"
    );
    clients.disconnect().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_sampler_sampling_is_neither_offered_nor_done() {
    let mut servers = fixture_stdio(json!({"toolTimeout": 10}));
    servers["everything"] = everything_stdio(json!({}))["everything"].clone();
    let (registry, clients) = mount(servers).await;
    // server-everything sees no sampling capability and leaves its tool out.
    let tool = "mcp_everything_trigger-sampling-request";
    assert!(!registry.contains(tool), "{:?}", registry.names());
    let absent = call(&registry, tool, json!({"prompt": "hi"})).await;
    assert!(absent.is_error, "{absent:?}");
    // A server that asks anyway is refused at once, and says so.
    let refused = call(&registry, "mcp_fx_test_sampling", json!({"prompt": "hi"})).await;
    assert!(refused.is_error, "{refused:?}");
    assert!(refused.content.contains("sampling"), "{refused:?}");
    let echo = call(&registry, "mcp_fx_echo", json!({"message": "still"})).await;
    assert_eq!(echo.content, "Echo: still");
    clients.disconnect().await;
}

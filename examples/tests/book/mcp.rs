//! Chapter: consuming MCP servers. The configuration the chapter shows is
//! the file it includes, parsed here.

use std::time::Duration;

use toolsmith::mcp::{EnabledTools, McpConfig, Transport};

#[test]
fn the_chapters_configuration_parses_as_described() {
    let text = include_str!("../../mcp_config/claude_desktop_config.json");
    let config: McpConfig = text.parse().unwrap();
    let server = |name: &str| config.servers.iter().find(|s| s.name == name).unwrap();

    // A command means stdio; the defaults apply.
    assert!(
        matches!(&server("files").transport, Transport::Stdio { command, .. } if command == "npx")
    );
    assert_eq!(server("files").tool_timeout, Duration::from_secs(30));
    assert_eq!(server("files").enabled_tools, EnabledTools::All);

    // Any other URL means streamable HTTP, with its headers and limits.
    let search = server("search");
    assert!(
        matches!(&search.transport, Transport::StreamableHttp { headers, .. }
        if headers["Authorization"] == "Bearer YOUR-TOKEN")
    );
    assert_eq!(search.tool_timeout, Duration::from_secs(60));
    assert_eq!(
        search.enabled_tools,
        EnabledTools::Only(vec!["query".into()])
    );

    // A URL ending in /sse means the older HTTP+SSE transport.
    assert!(matches!(&server("legacy").transport, Transport::Sse { .. }));
}

#[test]
fn a_wrong_key_names_the_server_and_the_key() {
    let error = r#"{"mcpServers": {"files": {"command": "x", "tolTimeout": 5}}}"#
        .parse::<McpConfig>()
        .unwrap_err();
    assert_eq!(error.server, "files");
    assert_eq!(error.key, "tolTimeout");
}

#[test]
fn the_server_chapters_configuration_starts_the_example_over_stdio() {
    let text = include_str!("../../mcp_config/serve_workspace.json");
    let config: McpConfig = text.parse().unwrap();
    assert!(matches!(&config.servers[0].transport,
        Transport::Stdio { command, args, .. }
            if command.ends_with("examples/mcp_server") && args == &["/path/to/workspace"]));
}

// ANCHOR: sampler
use toolsmith::mcp::{Sampled, Sampler, SamplingRequest};

/// Answers the servers' sampling requests. It stands in for the host's
/// model client here: it answers with the first words of the conversation.
struct FirstWords;

#[toolsmith::async_trait]
impl Sampler for FirstWords {
    async fn sample(
        &self,
        request: SamplingRequest,
    ) -> Result<Sampled, Box<dyn std::error::Error + Send + Sync>> {
        let conversation: Vec<String> = request
            .messages
            .iter()
            .map(|m| format!("{}: {}", m.role, m.text))
            .collect();
        // A real host sends the conversation, `request.system_prompt` and
        // `request.max_tokens` to its model; an error here reaches the
        // server as the answer to its request.
        let limit = usize::try_from(request.max_tokens)?;
        let words: Vec<&str> = conversation
            .iter()
            .flat_map(|line| line.split_whitespace())
            .take(limit)
            .collect();
        Ok(Sampled::new(words.join(" "), "first-words"))
    }
}
// ANCHOR_END: sampler

#[tokio::test]
async fn the_chapters_sampler_answers_from_the_conversation() {
    use std::sync::Arc;
    use toolsmith::ToolRegistry;
    use toolsmith::mcp::McpClients;

    let config: McpConfig = include_str!("../../mcp_config/claude_desktop_config.json")
        .parse()
        .unwrap();
    // ANCHOR: with_sampler
    let registry = Arc::new(ToolRegistry::new());
    let clients = McpClients::new(config, &registry).with_sampler(FirstWords);
    // ANCHOR_END: with_sampler
    assert_eq!(clients.servers().len(), 3);

    let request = SamplingRequest::from_params(
        "files",
        serde_json::json!({
            "messages": [{"role": "user", "content": {"type": "text", "text": "Name three rivers"}}],
            "maxTokens": 3
        }),
    );
    let answer = FirstWords.sample(request).await.unwrap();
    assert_eq!(answer.text, "user: Name three");
    assert_eq!(answer.model, "first-words");
}

#[tokio::test]
async fn the_chapters_sign_in_setup_reads_and_builds() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir().unwrap();
    let token_file = dir.path().join("mcp-tokens.json");
    // ANCHOR: oauth
    use std::sync::Arc;
    use toolsmith::ToolRegistry;
    use toolsmith::mcp::{FileTokenStore, LoopbackAuthorizer, McpClients, McpConfig};

    let config: McpConfig = r#"{"mcpServers": {"crm": {
        "url": "https://crm.example.com/mcp",
        "oauth": {
            "scopes": ["crm.read"],
            "clientName": "My agent",
            "clientMetadataUrl": "https://agent.example.com/oauth/client.json"
        }
    }}}"#
        .parse()?;
    // The user signs in in their browser; the redirect comes back to a
    // port on 127.0.0.1 that the authorizer listens on.
    let authorizer = LoopbackAuthorizer::bind(|url: &str| {
        println!("Sign in to continue: {url}");
        Ok(())
    })
    .await?;
    let registry = Arc::new(ToolRegistry::new());
    let clients = McpClients::new(config, &registry)
        .with_authorizer(authorizer)
        .with_token_store(FileTokenStore::new(&token_file));
    // ANCHOR_END: oauth
    let oauth = clients
        .server("crm")
        .unwrap()
        .config()
        .oauth
        .clone()
        .unwrap();
    assert_eq!(oauth.scopes, ["crm.read"]);
    assert_eq!(oauth.client_id, None, "registers itself");
    assert_eq!(
        oauth.client_metadata_url.as_deref(),
        Some("https://agent.example.com/oauth/client.json"),
        "or names its metadata document where that is taken"
    );
    Ok(())
}

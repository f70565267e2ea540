//! Mount the MCP servers of a Claude Desktop / Cursor configuration file as
//! tools, list them, and optionally call one.
//!
//! ```text
//! cargo run --example mcp_client -- claude_desktop_config.json
//! cargo run --example mcp_client -- config.json mcp_files_workspace_info '{}'
//! ```

use std::sync::Arc;

use toolsmith::mcp::{McpClients, McpConfig};
use toolsmith::{DefinitionFormat, ToolContext, ToolRegistry};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.first() else {
        eprintln!("usage: mcp_client CONFIG.json [TOOL [JSON-ARGUMENTS]]");
        std::process::exit(2);
    };
    let config: McpConfig = std::fs::read_to_string(path)?.parse()?;
    let registry = Arc::new(ToolRegistry::new());
    let clients = McpClients::new(config, &registry);
    for (server, outcome) in clients.connect().await {
        match outcome {
            Ok(count) => println!("{server}: {count} tools"),
            Err(e) => println!("{server}: not connected: {e}"),
        }
    }
    for definition in registry.definitions(DefinitionFormat::OpenAi).iter() {
        let function = &definition["function"];
        let description = function["description"].as_str().unwrap_or_default();
        let first_line = description.lines().next().unwrap_or_default();
        println!(
            "- {}: {first_line}",
            function["name"].as_str().unwrap_or_default()
        );
    }
    if let Some(tool) = args.get(1) {
        let arguments = match args.get(2) {
            Some(json) => serde_json::from_str(json)?,
            None => serde_json::json!({}),
        };
        let out = registry.call(tool, arguments, &ToolContext::new()).await;
        println!(
            "{}{}",
            if out.is_error { "error: " } else { "" },
            out.content
        );
    }
    clients.disconnect().await;
    Ok(())
}

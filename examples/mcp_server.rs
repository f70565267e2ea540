//! An MCP server serving the built-in tools for one workspace: put it in
//! Claude Desktop's (or Cursor's) configuration and its tools appear there.
//!
//! ```text
//! cargo build --release --example mcp_server
//! target/release/examples/mcp_server /path/to/workspace               # stdio
//! target/release/examples/mcp_server /path/to/workspace --http 8931   # http://127.0.0.1:8931/mcp
//! target/release/examples/mcp_server /path/to/workspace --http 8931 --stateless
//! ```
//!
//! `--stateless` keeps no session between requests, so several of these
//! processes can stand behind one load balancer. Only loopback host names
//! are accepted (against DNS rebinding) unless `--allow-host NAME` adds the
//! names the balancer forwards.
//!
//! It serves the file and search tools of `toolsmith-builtins` (`read_file`,
//! `write_file`, `edit_file`, `list_dir`, `glob`, `grep`, `notebook_edit`),
//! which cannot leave the workspace, and this example's `workspace_info`.
//! The shell and network built-ins stay out: they need a policy the person
//! running the server has to choose.

use std::path::PathBuf;
use std::sync::Arc;

use toolsmith::mcp::{HttpOptions, McpServer};
use toolsmith::{ToolContext, ToolError, ToolFilter, ToolRegistry, tool};
use toolsmith_builtins::Workspace;

// Link the built-ins: their tools register themselves like any `#[tool]`.
toolsmith::link_tools!(toolsmith_builtins);

/// Where this server works: the workspace root and its top-level entries.
#[tool(read_only, idempotent, category = filesystem_read)]
async fn workspace_info(workspace: &Workspace) -> Result<String, ToolError> {
    let mut names: Vec<String> = std::fs::read_dir(workspace.root())
        .map_err(ToolError::failed)?
        .filter_map(|entry| entry.ok())
        .map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            match entry.file_type() {
                Ok(kind) if kind.is_dir() => format!("{name}/"),
                _ => name,
            }
        })
        .collect();
    names.sort();
    Ok(format!(
        "workspace: {}\n{}",
        workspace.root().display(),
        names.join("\n")
    ))
}

fn usage() -> ! {
    eprintln!("usage: mcp_server WORKSPACE [--http PORT [--stateless] [--allow-host NAME]...]");
    std::process::exit(2)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(root) = args.first().map(PathBuf::from) else {
        usage()
    };
    let http_port = args.iter().position(|a| a == "--http").map(|i| {
        args.get(i + 1)
            .and_then(|p| p.parse::<u16>().ok())
            .unwrap_or_else(|| usage())
    });
    let workspace = Workspace::new(&root)
        .map_err(|e| format!("the workspace {} is unusable: {e}", root.display()))?;
    let registry = ToolRegistry::from_inventory(
        &ToolFilter::default()
            .module_prefix("toolsmith_builtins")
            .names(toolsmith_builtins::FILE_TOOLS),
    )?;
    registry.register(WorkspaceInfoTool)?;
    let registry = Arc::new(registry);
    let context = ToolContext::new()
        .with_workspace(workspace.root())
        .with_state(workspace);
    let server = McpServer::new(registry)
        .with_name("toolsmith-builtins", env!("CARGO_PKG_VERSION"))
        .with_instructions("Tools for the files of one workspace; paths are relative to it.")
        .with_context(context);
    match http_port {
        // Standard output is the protocol's: nothing else may be printed there.
        None => server.serve_stdio().await?,
        Some(port) => {
            let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
            eprintln!("serving http://{}/mcp", listener.local_addr()?);
            let stateless = args.iter().any(|a| a == "--stateless");
            let mut options = HttpOptions::default().stateless(stateless);
            let extra_hosts: Vec<&String> = args
                .windows(2)
                .filter(|pair| pair[0] == "--allow-host")
                .map(|pair| &pair[1])
                .collect();
            if !extra_hosts.is_empty() {
                let mut hosts = options.allowed_hosts.clone();
                hosts.extend(extra_hosts.into_iter().cloned());
                options = options.allowed_hosts(hosts);
            }
            server.serve_http(listener, options).await?;
        }
    }
    Ok(())
}

//! Tools defined in configuration: a composed tool and a command tool from
//! `tools.toml`, and a plugin tool from an executable in `plugins/`.
//!
//! Run it with `cargo run --example config_tools`.

use std::path::Path;

use serde_json::json;
use toolsmith::{ToolContext, ToolRegistry};
use toolsmith_builtins::Workspace;
use toolsmith_builtins::config::{PluginDir, PluginOptions, ToolsFile};
use toolsmith_builtins::shell::ShellPolicy;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let here = Path::new(env!("CARGO_MANIFEST_DIR")).join("config_tools");
    let registry = ToolRegistry::new();

    // Errors name the file, the tool and the field; nothing is half-loaded.
    let tools = ToolsFile::new(here.join("tools.toml"));
    let plugins = PluginDir::new(here.join("plugins"), PluginOptions::default());
    println!("from tools.toml: {:?}", tools.load_into(&registry)?);
    println!("from plugins/: {:?}", plugins.load_into(&registry).await?);
    if let Some(shout) = registry.get("shout") {
        let spec = shout.spec();
        println!(
            "shout is read-only: {}, risk {:?}, timeout {:?}",
            spec.annotations.read_only,
            spec.risk_level(),
            spec.timeout
        );
    }

    // Command tools run in the workspace, and only once a shell policy is set.
    let ctx = ToolContext::new()
        .with_state(Workspace::new(&here)?)
        .with_state(ShellPolicy::new());

    let calls = [
        ("plan_trip", json!({"city": "Lisbon", "days": "3"})),
        ("count_lines", json!({"file": "tools.toml"})),
        // A value that tries to escape its place is just a (missing) file name.
        ("count_lines", json!({"file": "x; echo escaped"})),
        ("shout", json!({"text": "hello"})),
    ];
    for (name, arguments) in calls {
        let out = registry.call(name, arguments, &ctx).await;
        println!("{name}: {}", out.content.trim_end());
    }
    Ok(())
}

//! Tools defined at run time rather than in Rust: composed tools (an
//! instruction for the agent), command tools (a shell command template) and
//! plugin tools (an external program speaking JSON over stdin and stdout).
//!
//! All of them are ordinary [`Tool`]s: their JSON Schema is built from the
//! declared parameters, so the registry casts and validates their arguments
//! like any other tool's. A definition that is wrong is reported with the
//! file, the tool and the field ([`ConfigError`]).
//!
//! Command tools run through the same guards as `exec` and, like it, refuse
//! to run until the host puts a [`ShellPolicy`](crate::shell::ShellPolicy)
//! in the context's state. Composed tools change nothing and need nothing.
//! Plugins are loaded from a directory with [`PluginDir`].
//!
//! ```
//! use toolsmith::{ToolContext, ToolRegistry};
//! use toolsmith_builtins::config::ToolsFile;
//! use serde_json::json;
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let dir = tempfile::tempdir().unwrap();
//! let path = dir.path().join("tools.json");
//! std::fs::write(&path, r#"{"tools": [{
//!     "name": "summarize_url",
//!     "description": "Fetch a URL and return a 3-point summary",
//!     "action": "Fetch {{url}} and write a 3-point summary of it",
//!     "parameters": {"url": {"type": "string", "description": "The page"}}
//! }]}"#).unwrap();
//!
//! let registry = ToolRegistry::new();
//! let file = ToolsFile::new(&path);
//! file.load_into(&registry).unwrap();
//! let out = registry.call("summarize_url", json!({"url": "https://example.com"}), &ToolContext::new()).await;
//! assert!(out.content.ends_with("Fetch https://example.com and write a 3-point summary of it"));
//! # }
//! ```

mod command;
mod composed;
mod error;
mod file;
mod params;
pub mod plugin;
mod source;
pub(crate) mod template;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use toolsmith::{Tool, ToolRegistry};

pub use command::CommandTool;
pub use composed::ComposedTool;
pub use error::{ConfigError, ConfigErrors};
pub use file::{load_file, parse_definitions, parse_json_str};
pub use params::{Param, ParamType, Params};
pub use plugin::{PluginDir, PluginOptions, PluginTool, load_plugin};

use params::Place;
use template::Template;

/// A file of tool definitions and the tools it put in a registry, so it can
/// be loaded again after it changed: its old tools are replaced by the new
/// ones in one step.
#[derive(Debug)]
pub struct ToolsFile {
    path: PathBuf,
    owned: source::Owned,
}

impl ToolsFile {
    /// The definitions in the file at `path` (JSON, or TOML for `.toml`).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self {
            path: path.into(),
            owned: source::Owned::default(),
        }
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Read the file and put its tools in `registry`, replacing the ones an
    /// earlier load put there. Returns the names now loaded. On any error
    /// the registry is left as it was.
    pub fn load_into(&self, registry: &ToolRegistry) -> Result<Vec<String>, ConfigErrors> {
        let tools = load_file(&self.path)?;
        self.owned.replace(registry, tools).map_err(|e| {
            ConfigError::in_file(self.path.display().to_string(), e.to_string()).into()
        })
    }
}

/// A command tool from its parsed definition; a template that would let a
/// value escape its place is reported at the `command` field.
fn command_tool(
    name: String,
    description: String,
    params: Params,
    template: Template,
    timeout_secs: Option<u64>,
    place: &Place<'_>,
    errors: &mut Vec<ConfigError>,
) -> Option<Arc<dyn Tool>> {
    match CommandTool::new(name, description, params, template, timeout_secs) {
        Ok(tool) => Some(Arc::new(tool)),
        Err(message) => {
            errors.push(place.error("command", message));
            None
        }
    }
}

//! Plugin tools: an external executable, in any language, that describes
//! its tools and answers calls as JSON lines over stdin and stdout (see
//! [`protocol`] for the exchange).
//!
//! A plugin that crashes, hangs or prints garbage gives an error result, and
//! its process is started afresh on the next call.

mod process;
pub mod protocol;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use toolsmith::{
    Arguments, Tool, ToolContext, ToolError, ToolOutput, ToolRegistry, ToolSpec, async_trait,
};

use super::error::{ConfigError, ConfigErrors};
use super::source::Owned;
use process::{Fault, Plugin};

/// How plugins are run.
#[derive(Debug, Clone)]
pub struct PluginOptions {
    /// How long a plugin may take to answer one request before it is
    /// stopped (and restarted on the next call).
    pub timeout: Duration,
}

impl Default for PluginOptions {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(30),
        }
    }
}

/// One tool of a plugin.
#[derive(Debug)]
pub struct PluginTool {
    spec: ToolSpec,
    plugin: Arc<Plugin>,
    /// How long one call may take: the tool's own timeout, else the plugin's.
    timeout: Duration,
}

impl PluginTool {
    /// The plugin executable that serves this tool.
    pub fn executable(&self) -> &Path {
        self.plugin.path()
    }
}

#[async_trait]
impl Tool for PluginTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn call(&self, args: Arguments, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let name = self.spec.name.as_ref();
        let arguments = args.into_json();
        let response = self
            .plugin
            .request(self.timeout, |id| {
                protocol::call_request(id, name, arguments)
            })
            .await
            .map_err(|fault| {
                let next = match fault {
                    Fault::Busy(_) => "try again later",
                    _ => "it will be restarted on the next call",
                };
                ToolError::failed(format!(
                    "the plugin {} {fault}; {next}",
                    self.plugin.path().display()
                ))
            })?;
        protocol::read_output(&response).map_err(|e| {
            ToolError::failed(format!(
                "the plugin {} answered badly: {e}",
                self.plugin.path().display()
            ))
        })
    }
}

/// Start the plugin at `path`, ask for its tools, and keep the process for their calls.
pub async fn load_plugin(
    path: impl AsRef<Path>,
    options: &PluginOptions,
) -> Result<Vec<Arc<dyn Tool>>, ConfigErrors> {
    let path = path.as_ref();
    let label = path.display().to_string();
    let plugin = Arc::new(Plugin::new(path));
    let response = plugin
        .request(options.timeout, protocol::describe_request)
        .await
        .map_err(|fault: Fault| {
            ConfigError::in_file(
                &label,
                format!("the plugin {fault} when asked to describe its tools"),
            )
        })?;
    let described = protocol::read_description(&response, &label).map_err(ConfigErrors)?;
    Ok(described
        .into_iter()
        .map(|tool| {
            let mut spec = ToolSpec::new(tool.name, tool.description, tool.input_schema)
                .with_annotations(tool.annotations);
            if let Some(category) = tool.category {
                spec = spec.with_category(category);
            }
            // A declared timeout is also the tool's own, for the runner.
            if let Some(timeout) = tool.timeout {
                spec = spec.with_timeout(timeout);
            }
            let timeout = tool.timeout.unwrap_or(options.timeout);
            Arc::new(PluginTool {
                spec,
                plugin: Arc::clone(&plugin),
                timeout,
            }) as Arc<dyn Tool>
        })
        .collect())
}

/// A directory of plugin executables, loaded into a registry at run time
/// and loaded again when plugins are added, changed or removed.
///
/// Every executable file in the directory (hidden files aside) is a plugin.
#[derive(Debug)]
pub struct PluginDir {
    dir: PathBuf,
    options: PluginOptions,
    owned: Owned,
}

impl PluginDir {
    /// The plugins in `dir`, run with `options`.
    pub fn new(dir: impl Into<PathBuf>, options: PluginOptions) -> Self {
        Self {
            dir: dir.into(),
            options,
            owned: Owned::default(),
        }
    }

    /// The executables in the directory, sorted by name.
    pub fn executables(&self) -> Result<Vec<PathBuf>, ConfigError> {
        let label = self.dir.display().to_string();
        let entries = std::fs::read_dir(&self.dir).map_err(|e| {
            ConfigError::in_file(&label, format!("cannot read the plugin directory: {e}"))
        })?;
        let mut found: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|entry| entry.path())
            .filter(|path| {
                let hidden = path
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with('.'));
                !hidden && is_executable(path)
            })
            .collect();
        found.sort();
        Ok(found)
    }

    /// Start every plugin, collect their tools and put them in `registry`
    /// in place of the ones an earlier load put there. On any error (a
    /// plugin that does not start, a bad description, a name taken twice)
    /// the registry is left as it was and every problem is reported.
    pub async fn load_into(&self, registry: &ToolRegistry) -> Result<Vec<String>, ConfigErrors> {
        let mut tools: Vec<Arc<dyn Tool>> = Vec::new();
        let mut errors = Vec::new();
        for path in self.executables()? {
            match load_plugin(&path, &self.options).await {
                Ok(found) => {
                    for tool in found {
                        if tools.iter().any(|t| t.spec().name == tool.spec().name) {
                            errors.push(
                                ConfigError::in_file(
                                    path.display().to_string(),
                                    "another plugin already has a tool of this name",
                                )
                                .tool(tool.spec().name.to_string())
                                .field("name"),
                            );
                        } else {
                            tools.push(tool);
                        }
                    }
                }
                Err(ConfigErrors(found)) => errors.extend(found),
            }
        }
        if !errors.is_empty() {
            return Err(ConfigErrors(errors));
        }
        self.owned
            .replace(registry, tools)
            .map_err(|e| ConfigError::in_file(self.dir.display().to_string(), e.to_string()).into())
    }
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

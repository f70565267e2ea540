//! The default tools of an agent for one workspace, set up in one call.

use std::path::PathBuf;

use toolsmith::{RegistryError, ToolContext, ToolFilter, ToolRegistry};

use crate::fs::FileState;
use crate::sandbox::Workspace;
#[cfg(all(feature = "shell", unix))]
use crate::shell::ShellPolicy;
#[cfg(feature = "web")]
use crate::web::WebPolicy;

/// What [`default_tools`] sets up. The default: the file and search tools
/// with a [`FileState`] (edits of files the session did not read are
/// refused), `web_fetch` under the default [`WebPolicy`] (public
/// addresses only), and no `exec`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct DefaultTools {
    /// Remember what the session read (see [`FileState`]). On by default.
    pub file_state: bool,
    /// `exec`, under this policy. `None`, the default, leaves it out:
    /// running commands is something a host turns on.
    #[cfg(all(feature = "shell", unix))]
    pub shell: Option<ShellPolicy>,
    /// `web_fetch`, under this policy; `None` leaves it out.
    #[cfg(feature = "web")]
    pub web: Option<WebPolicy>,
}

impl Default for DefaultTools {
    fn default() -> Self {
        Self {
            file_state: true,
            #[cfg(all(feature = "shell", unix))]
            shell: None,
            #[cfg(feature = "web")]
            web: Some(WebPolicy::new()),
        }
    }
}

impl DefaultTools {
    /// Also offer `exec`, under `policy`.
    #[cfg(all(feature = "shell", unix))]
    pub fn with_shell(mut self, policy: ShellPolicy) -> Self {
        self.shell = Some(policy);
        self
    }

    /// Leave `web_fetch` out.
    #[cfg(feature = "web")]
    pub fn without_web(mut self) -> Self {
        self.web = None;
        self
    }

    /// Do not remember what the session read.
    pub fn without_file_state(mut self) -> Self {
        self.file_state = false;
        self
    }
}

/// Why [`default_tools`] could not set the tools up.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// The workspace cannot be used (it does not exist, or is no directory).
    #[error("the workspace cannot be used: {0}")]
    Workspace(#[from] std::io::Error),
    /// The tools could not be registered.
    #[error(transparent)]
    Registry(#[from] RegistryError),
}

/// A registry with the default tools and a context holding what they need,
/// for an agent working in `workspace`: one call instead of putting each
/// tool's state into the context by hand. The context is one session's
/// (its [`FileState`] remembers that session's reads): make one per
/// conversation with the same registry by calling this again, or clone the
/// context's parts yourself.
///
/// ```
/// use toolsmith_builtins::{DefaultTools, default_tools};
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let dir = tempfile::tempdir().unwrap();
/// std::fs::write(dir.path().join("notes.md"), "tea\n").unwrap();
/// let (registry, ctx) = default_tools(dir.path(), DefaultTools::default()).unwrap();
/// assert!(registry.contains("read_file") && registry.contains("web_fetch"));
/// assert!(!registry.contains("exec"), "exec is off until enabled");
///
/// let out = registry
///     .call("read_file", serde_json::json!({"path": "notes.md"}), &ctx)
///     .await;
/// assert_eq!(out.content.trim(), "1|tea");
/// # }
/// ```
pub fn default_tools(
    workspace: impl Into<PathBuf>,
    config: DefaultTools,
) -> Result<(ToolRegistry, ToolContext), SetupError> {
    let workspace = Workspace::new(workspace.into())?;
    let mut names: Vec<&str> = crate::FILE_TOOLS.to_vec();
    let mut ctx = ToolContext::new()
        .with_workspace(workspace.root())
        .with_state(workspace);
    if config.file_state {
        ctx = ctx.with_state(FileState::new());
    }
    #[cfg(all(feature = "shell", unix))]
    if let Some(policy) = config.shell {
        names.push("exec");
        ctx = ctx.with_state(policy);
    }
    #[cfg(feature = "web")]
    if let Some(policy) = config.web {
        names.push("web_fetch");
        ctx = ctx.with_state(policy);
    }
    // Named tools are taken whatever their risk, and only this crate's.
    let filter = ToolFilter::default()
        .module_prefix(env!("CARGO_CRATE_NAME"))
        .names(names);
    Ok((ToolRegistry::from_inventory(&filter)?, ctx))
}
